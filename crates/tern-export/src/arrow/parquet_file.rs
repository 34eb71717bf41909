//! A Parquet file whose row groups are encoded where their rows are
//! gathered, on all cores, and put into the file in order by a thread of
//! its own.
//!
//! Each run of rows (one or more jobs of the export's pipeline, 8K rows of
//! a scan each) is gathered by a fork ([`ParquetRun`]) into batches of its
//! own and encoded (dictionaries, levels, pages, compression) into row
//! groups of its own (`row_group.rs`), numbered in the order the runs were
//! made; the file's thread appends them in that order, which costs a copy
//! of their bytes. Only the file hands the encoder's bytes on
//! ([`ParquetFile::ready_bytes`], called between the runs' outputs), so
//! they reach the output in the order they were written, as soon as they
//! are: runs of several jobs that carried the bytes written before them to
//! their end held 43.6 MB of them at once (heaptrack, BSBM 10M).
//!
//! Encoding is half of a Parquet export's work. Done by one thread for
//! every run, it kept the cores 1.55 busy out of 2 while the gatherers
//! waited for it: a full export of BSBM 10M took 8.65 s (median of 5,
//! 7.50-9.21), and 6.34 s (6.28-7.47) once each run encoded its own row
//! groups, at 1.86 cores. The price is smaller row groups: one per run,
//! 1,308 of about 7.7K rows for BSBM 10M instead of 331 of 30K, and a
//! footer of 1.35 MB instead of 0.34, for a file 0.6% larger.
//!
//! A file may not have more than 32,767 row groups, so a large one's runs
//! grow ([`scale_after`]): the first 4,096 are a job each, the next 4,096
//! 32K rows (4 jobs, on one core), and so on. Runs of 8 jobs from the
//! start were measured too: 424 row groups for BSBM 10M, no faster, but
//! 25-30 MB more of the server's memory, which the C allocator had freed
//! and kept (bench/README.md, nineteenth session).
//!
//! Batches the file is given itself (`tern dump`, which gathers on one
//! thread while it decodes on others) go to its thread to be encoded into
//! a row group in progress there, so that their gathering and encoding
//! still overlap; those row groups grow in the same way.
//!
//! Pages are compressed with LZ4 (`LZ4_RAW`, which pyarrow, polars and
//! DuckDB read): Snappy was a sixth of the export's CPU time, and LZ4 made
//! files of the same size (392 MB for BSBM 10M) in 7.99 s instead of 8.68
//! (medians of 5). Zstandard made them a third smaller (246 MB) but took
//! 8.79 s.
//!
//! Memory: per run in flight, its batch being gathered and its row group
//! encoded, compressed, up to a run's rows or 3 MiB of the column
//! writers' memory (times the run's growth, up to 32 MiB); row groups of
//! runs that ended before the run ahead of them, one waiting in the
//! channel; and the footer, held until the end as its row groups'
//! serialized entries (about 0.93 KB a row group of BSBM's `SELECT *`,
//! `parquet_footer.rs`).

use super::file_writer::FileWriter;
use super::row_group::{EncodedRowGroup, RowGroupColumns, RowGroupLimits, RowGroups};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::file::properties::WriterProperties;
use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Bytes of a column chunk's minimum and maximum kept in the footer. The
/// file holds every row group's footer entry until the end, and a job's
/// rows make a row group of their own (12K for BSBM 100M): with page
/// statistics, page indexes and whole values (a review's text as a
/// maximum), a full Parquet export of BSBM 100M peaked 233 MB over the
/// server's idle RSS, where TSV peaks 115.
const STATISTICS_BYTES: usize = 64;

/// Row groups of a file at one size before they grow. Parquet readers and
/// the writer allow 32,767 row groups in a file (a row group's ordinal is
/// an i16): with a row group per run of 8K rows, as the first 4,096 runs
/// are, a result of more than 268M rows could not be written at all. Each
/// later 4,096 are [`TIER_GROWTH`] times larger, so that 28,672 row groups
/// hold 4096 x 8K x (1 + 4 + ... + 4^6), 183G rows, and a result of up to
/// 33.5M rows is written as before.
const ROW_GROUPS_PER_TIER: u64 = 4096;
/// How much larger a file's row groups get at each tier. Larger row groups
/// cost memory (a run's is held until it ends, about 40 bytes a row of
/// BSBM): 8 a tier reached 4M-row runs after 2.4G rows, 4 reaches 512K-row
/// runs after 700M and 2M-row runs after 2.8G.
const TIER_GROWTH: usize = 4;
/// Rows of a run at the first size: a job of `tern serve`'s export
/// pipeline (its `JOB_ROWS`).
const FIRST_RUN_ROWS: usize = 8 * 1024;

/// How much larger than the first (a job's 8K rows a run, or
/// 64K rows in the file's own row groups) the row groups
/// made after `made` others are.
fn scale_after(made: u64) -> usize {
    let tier = (made / ROW_GROUPS_PER_TIER).min(7) as u32;
    TIER_GROWTH.pow(tier)
}

/// What the encoder is told about a run: its batches to encode, or its row
/// groups encoded already, in order, then that it is over; after the last
/// run, that the file is.
enum Part {
    Batch(RecordBatch),
    RowGroup(EncodedRowGroup),
    RunEnd,
    FileEnd,
}

/// A numbered part: the number of the run it belongs to.
type Numbered = (u64, Part);

pub(super) struct ParquetFile(Encoder);

enum Encoder {
    Thread {
        parts: SyncSender<Numbered>,
        /// Bytes of what the encoder has written, in order; the footer
        /// last.
        bytes: Receiver<Vec<u8>>,
        /// The number of the next run (this writer's own batches are runs
        /// too).
        next_run: u64,
        columns: Arc<RowGroupColumns>,
        /// Taken when the thread is joined.
        thread: Option<JoinHandle<()>>,
    },
    /// Encoding on the caller's thread (when no thread could be started);
    /// such a file does not fork.
    Here(Box<FileState>),
}

/// The file being written, and the row group in progress of the batches
/// encoded where the file is.
struct FileState {
    file: FileWriter,
    row_groups: RowGroups,
}

/// The rows of one run, gathered and encoded on any core into row groups
/// of its own, which go to the encoder under the run's number; the bytes
/// the encoder had written when the run was made go out at its end.
pub(super) struct ParquetRun {
    parts: SyncSender<Numbered>,
    run: u64,
    row_groups: RowGroups,
    ended: bool,
}

impl ParquetFile {
    /// A file of `schema`; `out` gets the bytes it begins with.
    pub(super) fn new(schema: &SchemaRef, out: &mut Vec<u8>) -> ParquetFile {
        let (mut file, factory) = FileWriter::new(schema, properties());
        out.append(&mut file.take_bytes());
        let columns = Arc::new(RowGroupColumns::new(factory, schema.clone()));
        let state = FileState {
            file,
            row_groups: RowGroups::new(Arc::clone(&columns), RowGroupLimits::scaled(1)),
        };
        // Shared, so that the file is still here if no thread starts.
        let handed = Arc::new(Mutex::new(Some(state)));
        let for_thread = Arc::clone(&handed);
        let (parts, to_encode) = mpsc::sync_channel::<Numbered>(1);
        let (send_bytes, bytes) = mpsc::channel::<Vec<u8>>();
        let spawned = std::thread::Builder::new()
            .name("tern-parquet".to_owned())
            .spawn(move || {
                if let Some(state) = for_thread.lock().unwrap().take() {
                    encode_all(state, to_encode, send_bytes);
                }
            });
        match spawned {
            Ok(thread) => ParquetFile(Encoder::Thread {
                parts,
                bytes,
                next_run: 0,
                columns,
                thread: Some(thread),
            }),
            Err(_) => {
                let state = handed.lock().unwrap().take();
                let state = state.expect("the file no thread took");
                ParquetFile(Encoder::Here(Box::new(state)))
            }
        }
    }

    /// A run for the rows after those written so far; `None` where the
    /// file is encoded on the caller's thread.
    pub(super) fn fork(&mut self) -> Option<ParquetRun> {
        let Encoder::Thread {
            parts,
            next_run,
            columns,
            ..
        } = &mut self.0
        else {
            return None;
        };
        let run = *next_run;
        *next_run += 1;
        Some(ParquetRun {
            parts: parts.clone(),
            run,
            row_groups: RowGroups::new(
                Arc::clone(columns),
                RowGroupLimits::scaled(scale_after(run)),
            ),
            ended: false,
        })
    }

    /// The rows the next run is best given: any (a job's) while the file's
    /// row groups are at their first size, then a row group's at the
    /// next run's size.
    pub(super) fn rows_per_run(&self) -> usize {
        let Encoder::Thread { next_run, .. } = &self.0 else {
            return 1;
        };
        match scale_after(*next_run) {
            1 => 1,
            scale => FIRST_RUN_ROWS * scale,
        }
    }

    /// Hands `batch` to the encoder, which encodes it into its row group
    /// in progress (the file's own batches overlap their gathering with
    /// their encoding); what the encoder has written goes to `out`.
    pub(super) fn write(&mut self, batch: RecordBatch, out: &mut Vec<u8>) {
        let Some(mut run) = self.fork() else {
            if let Encoder::Here(state) = &mut self.0 {
                state.encode(&batch);
                out.append(&mut state.file.take_bytes());
            }
            return;
        };
        if !run.send(Part::Batch(batch)) {
            // The encoder is gone: it panicked.
            drop(run);
            self.rethrow();
        }
        run.end();
        self.ready_bytes(out);
    }

    /// What the encoder has written so far, in order, to `out`. Only the
    /// file hands the encoder's bytes on (its runs write none), so that
    /// whoever holds it puts them in the output in the order they were
    /// written, as soon as they are.
    pub(super) fn ready_bytes(&mut self, out: &mut Vec<u8>) {
        if let Encoder::Thread { bytes, .. } = &mut self.0 {
            for mut encoded in bytes.try_iter() {
                out.append(&mut encoded);
            }
        }
    }

    /// The last row group and the footer (row groups' offsets and
    /// statistics, the schema) to `out`, once every run made is over.
    pub(super) fn finish(self, out: &mut Vec<u8>) {
        match self.0 {
            Encoder::Thread {
                parts,
                bytes,
                next_run,
                thread,
                ..
            } => {
                // Nothing to do if the encoder is gone: joining it below
                // carries its panic on.
                let _ = parts.send((next_run, Part::FileEnd));
                drop(parts);
                for mut encoded in bytes.iter() {
                    out.append(&mut encoded);
                }
                if let Some(Err(panic)) = thread.map(JoinHandle::join) {
                    std::panic::resume_unwind(panic);
                }
            }
            Encoder::Here(state) => out.append(&mut state.finish()),
        }
    }

    /// Carries the encoder's panic on here, where a query's panics are
    /// caught.
    fn rethrow(&mut self) -> ! {
        if let Encoder::Thread { thread, .. } = &mut self.0 {
            if let Some(Err(panic)) = thread.take().map(JoinHandle::join) {
                std::panic::resume_unwind(panic);
            }
        }
        panic!("the Parquet encoder stopped");
    }
}

/// How Tern's Parquet files are written.
pub(super) fn properties() -> WriterProperties {
    use parquet::basic::Compression;
    use parquet::file::properties::EnabledStatistics;
    WriterProperties::builder()
        .set_compression(Compression::LZ4_RAW)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_statistics_truncate_length(Some(STATISTICS_BYTES))
        .set_offset_index_disabled(true)
        .set_created_by(concat!("tern ", env!("CARGO_PKG_VERSION")).to_owned())
        .build()
}

impl FileState {
    /// Adds `batch` to the row group in progress, which ends once full (at
    /// the limits of the file's size so far).
    fn encode(&mut self, batch: &RecordBatch) {
        let made = self.file.row_groups() as u64;
        self.row_groups
            .set_limits(RowGroupLimits::scaled(scale_after(made)));
        if let Some(chunks) = self.row_groups.write(batch) {
            self.file.append(chunks);
        }
    }

    /// Appends a row group encoded elsewhere, after the one in progress.
    fn append(&mut self, chunks: EncodedRowGroup) {
        self.end_row_group();
        self.file.append(chunks);
    }

    fn end_row_group(&mut self) {
        if let Some(chunks) = self.row_groups.end() {
            self.file.append(chunks);
        }
    }

    /// The rest of the file: the last row group and the footer.
    fn finish(mut self) -> Vec<u8> {
        self.end_row_group();
        self.file.finish()
    }
}

impl ParquetRun {
    /// Encodes one of the run's batches, into a row group of the run's own
    /// that goes to the encoder once full or at the run's end.
    pub(super) fn write(&mut self, batch: RecordBatch) {
        if let Some(chunks) = self.row_groups.write(&batch) {
            self.send_row_group(chunks);
        }
    }

    /// Ends the run: its last row group goes to the encoder, which may go
    /// on to the next run.
    pub(super) fn end(&mut self) {
        if let Some(chunks) = self.row_groups.end() {
            self.send_row_group(chunks);
        }
        self.end_run();
    }

    fn send_row_group(&self, chunks: EncodedRowGroup) {
        if !self.send(Part::RowGroup(chunks)) {
            // The file that made the run carries the encoder's panic on.
            panic!("the Parquet encoder stopped");
        }
    }

    fn end_run(&mut self) {
        if !std::mem::replace(&mut self.ended, true) {
            // A gone encoder is told nothing (its file rethrows).
            self.send(Part::RunEnd);
        }
    }

    /// Sends `part` under the run's number; false if the encoder is gone.
    fn send(&self, part: Part) -> bool {
        self.parts.send((self.run, part)).is_ok()
    }
}

impl Drop for ParquetRun {
    /// A run dropped before its end (its rows failed to decode) still
    /// lets the encoder go on, so that it does not wait for it forever.
    /// Its row group in progress is lost, and the file with it: the
    /// failure cuts the result with an error anyway.
    fn drop(&mut self) {
        self.end_run();
    }
}

/// The encoder's loop: runs' row groups into the file in the order of the
/// runs, until the file ends, then the footer. Parts of runs ahead of the
/// one being written wait. The bytes of what it writes go back as soon as
/// they are written; nothing is sent once the receiver is gone (the query
/// was dropped), and the loop also ends when every sender is gone.
fn encode_all(mut state: FileState, parts: Receiver<Numbered>, bytes: mpsc::Sender<Vec<u8>>) {
    let mut current = 0u64;
    let mut waiting: BTreeMap<u64, VecDeque<Part>> = BTreeMap::new();
    'parts: for (run, part) in parts {
        waiting.entry(run).or_default().push_back(part);
        while let Some(part) = waiting.get_mut(&current).and_then(VecDeque::pop_front) {
            match part {
                Part::Batch(batch) => state.encode(&batch),
                Part::RowGroup(chunks) => state.append(chunks),
                Part::RunEnd => {
                    waiting.remove(&current);
                    current += 1;
                }
                Part::FileEnd => break 'parts,
            }
            let written = state.file.take_bytes();
            if !written.is_empty() {
                let _ = bytes.send(written);
            }
        }
    }
    let _ = bytes.send(state.finish());
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// A file of one Int64 column read back: its row groups, and its
    /// numbers in order.
    fn numbers_in(file: Vec<u8>) -> (usize, Vec<i64>) {
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(file)).unwrap();
        let row_groups = reader.metadata().num_row_groups();
        let mut read = Vec::new();
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            let column = batch
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            read.extend(column.iter().map(Option::unwrap));
        }
        (row_groups, read)
    }

    fn numbers_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]))
    }

    /// A batch of the numbers in `range`.
    fn numbers(schema: &SchemaRef, range: std::ops::Range<i64>) -> RecordBatch {
        let values: Int64Array = range.collect();
        RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap()
    }

    /// Batches encoded on the encoder's thread come out whole, in the
    /// order they were written, in row groups that span batches.
    #[test]
    fn rows_come_out_in_the_order_they_were_written() {
        let schema = numbers_schema();
        let mut out = Vec::new();
        let mut file = ParquetFile::new(&schema, &mut out);
        let mut written = 0i64;
        for batch in 0..7 {
            let rows = 300 + 37 * batch;
            file.write(numbers(&schema, written..written + rows), &mut out);
            written += rows;
        }
        file.finish(&mut out);

        let (row_groups, read) = numbers_in(out);
        // 2,877 rows, a row group ended at each batch that takes it past
        // 1,000 rows.
        assert_eq!(row_groups, 3);
        assert_eq!(read, (0..written).collect::<Vec<_>>());
    }

    /// However many rows a result has, its file needs fewer row groups
    /// than Parquet allows (a run makes one row group, of a job's 8K rows
    /// at the first size); a result of up to 33.5M rows is written as
    /// before.
    #[test]
    fn row_groups_grow_before_a_file_needs_more_than_parquet_allows() {
        assert_eq!(scale_after(0), 1);
        assert_eq!(scale_after(ROW_GROUPS_PER_TIER - 1), 1);
        assert_eq!(scale_after(ROW_GROUPS_PER_TIER), TIER_GROWTH);
        let mut rows: u128 = 0;
        for made in 0..i16::MAX as u64 {
            rows += (FIRST_RUN_ROWS * scale_after(made)) as u128;
        }
        assert!(rows > 100_000_000_000, "{rows}");
    }

    /// A file's runs are a job each until it has made 4,096 of them, then
    /// a row group's rows at the next size; every row comes out in order.
    #[test]
    fn runs_grow_after_the_first_sizes_row_groups() {
        let schema = numbers_schema();
        let mut out = Vec::new();
        let mut file = ParquetFile::new(&schema, &mut out);
        let runs = ROW_GROUPS_PER_TIER as i64 + 3;
        for n in 0..runs {
            let expected = if n < ROW_GROUPS_PER_TIER as i64 {
                1
            } else {
                FIRST_RUN_ROWS * TIER_GROWTH
            };
            assert_eq!(file.rows_per_run(), expected, "before run {n}");
            let mut run = file.fork().unwrap();
            run.write(numbers(&schema, 2 * n..2 * n + 2));
            run.end();
            file.ready_bytes(&mut out);
        }
        file.finish(&mut out);

        let (row_groups, read) = numbers_in(out);
        assert_eq!(row_groups, runs as usize);
        assert_eq!(read, (0..2 * runs).collect::<Vec<_>>());
    }
}
