//! A Parquet file whose row groups are encoded on a thread of their own,
//! fed record batches by the threads that gather the rows.
//!
//! Encoding (dictionaries, levels, pages, compression) was about half of
//! a Parquet export's time. Row groups go into the file in order, so one
//! encoder takes small batches through a channel and encodes them into the
//! row group in progress while the next are gathered.
//!
//! The batches are gathered on all cores, as the IPC stream's are: each
//! run of rows (a job of the export's pipeline) is gathered by a fork
//! ([`ParquetRun`]) into batches of its own, numbered in the order the
//! runs were made; the encoder puts them back in that order. The encoder's
//! bytes reach the output through the runs too: each run made takes the
//! bytes encoded so far and writes them where its rows would have gone, so
//! that the file's bytes stay in the encoder's order whichever run ends
//! first. Gathering on one core cannot grow with the cores; on two, where
//! decoding the next batch already overlapped it, a full export of BSBM
//! 10M took about as long either way but held 103-110 MB over idle instead
//! of 114-120.
//!
//! Pages are compressed with LZ4 (`LZ4_RAW`, which pyarrow, polars and
//! DuckDB read): Snappy was a sixth of the export's CPU time, and LZ4 made
//! files of the same size (392 MB for BSBM 10M) in 7.99 s instead of 8.68
//! (medians of 5). Zstandard made them a third smaller (246 MB) but took
//! 8.79 s.
//!
//! Memory: the batches being gathered (one per run in flight), one waiting
//! in the channel, those of runs that ended before the run ahead of them,
//! and the row group in progress, held encoded and compressed, up to
//! [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`] of the Parquet writer's
//! memory (3 MiB rather than 4 took a full export of BSBM 10M from 105 to
//! 102 MB over idle, most of it the vocabulary cache filling).
//! Row groups stay large, as readers want them, without a large batch of
//! text behind each: rows gathered in 16 MiB batches that were each a row
//! group held a full export of BSBM 10M at 127 MB over idle.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type FileWriter = ArrowWriter<Vec<u8>>;

/// Rows of a row group at most (a few in tests, so that files of a few
/// batches have several).
const ROW_GROUP_ROWS: usize = if cfg!(test) { 1000 } else { 64 * 1024 };
/// Memory of the row group in progress (its encoded pages, dictionaries
/// and keys not yet encoded) after which it is ended.
const ROW_GROUP_BYTES: usize = 3 << 20;

/// What the encoder is told about a run: its batches in order, then that
/// it is over; after the last run, that the file is.
enum Part {
    Batch(RecordBatch),
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
        /// Taken when the thread is joined.
        thread: Option<JoinHandle<()>>,
    },
    /// Encoding on the caller's thread (when no thread could be started);
    /// such a file does not fork.
    Here(Box<FileWriter>),
}

/// The rows of one run, gathered on any core: its batches go to the
/// encoder under the run's number; the bytes the encoder had written when
/// the run was made go out at its end.
pub(super) struct ParquetRun {
    parts: SyncSender<Numbered>,
    run: u64,
    earlier_bytes: Vec<u8>,
    ended: bool,
}

impl ParquetFile {
    /// A file of `schema`; `out` gets the bytes it begins with.
    pub(super) fn new(schema: &SchemaRef, out: &mut Vec<u8>) -> ParquetFile {
        use parquet::basic::Compression;
        use parquet::file::properties::WriterProperties;
        let properties = WriterProperties::builder()
            .set_compression(Compression::LZ4_RAW)
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(concat!("tern ", env!("CARGO_PKG_VERSION")).to_owned())
            .build();
        let mut writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties))
            .expect("the schema is one Parquet can hold");
        out.append(writer.inner_mut());
        // Shared, so that the writer is still here if no thread starts.
        let handed = Arc::new(Mutex::new(Some(writer)));
        let for_thread = Arc::clone(&handed);
        let (parts, to_encode) = mpsc::sync_channel::<Numbered>(1);
        let (send_bytes, bytes) = mpsc::channel::<Vec<u8>>();
        let spawned = std::thread::Builder::new()
            .name("tern-parquet".to_owned())
            .spawn(move || {
                if let Some(writer) = for_thread.lock().unwrap().take() {
                    encode_all(writer, to_encode, send_bytes);
                }
            });
        match spawned {
            Ok(thread) => ParquetFile(Encoder::Thread {
                parts,
                bytes,
                next_run: 0,
                thread: Some(thread),
            }),
            Err(_) => {
                let writer = handed.lock().unwrap().take();
                let writer = writer.expect("the writer no thread took");
                ParquetFile(Encoder::Here(Box::new(writer)))
            }
        }
    }

    /// A run for the rows after those written so far; `None` where the
    /// file is encoded on the caller's thread.
    pub(super) fn fork(&mut self) -> Option<ParquetRun> {
        let Encoder::Thread {
            parts,
            bytes,
            next_run,
            ..
        } = &mut self.0
        else {
            return None;
        };
        let mut earlier_bytes = Vec::new();
        for mut encoded in bytes.try_iter() {
            earlier_bytes.append(&mut encoded);
        }
        let run = *next_run;
        *next_run += 1;
        Some(ParquetRun {
            parts: parts.clone(),
            run,
            earlier_bytes,
            ended: false,
        })
    }

    /// Hands `batch` to the encoder as a run of its own; what the encoder
    /// has written goes to `out`.
    pub(super) fn write(&mut self, batch: RecordBatch, out: &mut Vec<u8>) {
        let Some(mut run) = self.fork() else {
            if let Encoder::Here(writer) = &mut self.0 {
                encode(writer, &batch);
                out.append(writer.inner_mut());
            }
            return;
        };
        if !run.send(Part::Batch(batch)) {
            // The encoder is gone: it panicked.
            drop(run);
            self.rethrow();
        }
        run.end(out);
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
            Encoder::Here(writer) => {
                let mut rest = writer.into_inner().expect("Parquet encoding into memory");
                out.append(&mut rest);
            }
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

impl ParquetRun {
    /// Hands one of the run's batches to the encoder.
    pub(super) fn write(&mut self, batch: RecordBatch) {
        if !self.send(Part::Batch(batch)) {
            // The file that made the run carries the encoder's panic on.
            panic!("the Parquet encoder stopped");
        }
    }

    /// Ends the run: the encoder may go on to the next; the bytes it had
    /// written when the run was made go to `out`.
    pub(super) fn end(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.earlier_bytes);
        self.end_run();
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
    /// The bytes it carried are lost, and the file with them: the failure
    /// cuts the result with an error anyway.
    fn drop(&mut self) {
        self.end_run();
    }
}

/// The encoder's loop: runs' batches into row groups in the order of the
/// runs, until the file ends, then the footer. Parts of runs ahead of the
/// one being encoded wait. The bytes of what it writes go back as soon as
/// they are written; nothing is sent once the receiver is gone (the query
/// was dropped), and the loop also ends when every sender is gone.
fn encode_all(mut writer: FileWriter, parts: Receiver<Numbered>, bytes: mpsc::Sender<Vec<u8>>) {
    let mut current = 0u64;
    let mut waiting: BTreeMap<u64, VecDeque<Part>> = BTreeMap::new();
    'parts: for (run, part) in parts {
        waiting.entry(run).or_default().push_back(part);
        while let Some(part) = waiting.get_mut(&current).and_then(VecDeque::pop_front) {
            match part {
                Part::Batch(batch) => encode(&mut writer, &batch),
                Part::RunEnd => {
                    waiting.remove(&current);
                    current += 1;
                }
                Part::FileEnd => break 'parts,
            }
            if !writer.inner().is_empty() {
                let _ = bytes.send(std::mem::take(writer.inner_mut()));
            }
        }
    }
    let rest = writer.into_inner().expect("Parquet encoding into memory");
    let _ = bytes.send(rest);
}

/// Adds `batch` to the row group in progress, which ends at
/// [`ROW_GROUP_ROWS`] rows or [`ROW_GROUP_BYTES`]. Encoding into memory
/// fails only on a bug.
fn encode(writer: &mut FileWriter, batch: &RecordBatch) {
    writer.write(batch).expect("Parquet encoding into memory");
    if writer.memory_size() >= ROW_GROUP_BYTES {
        writer.flush().expect("Parquet encoding into memory");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Batches encoded on the encoder's thread come out whole, in the
    /// order they were written, in row groups that span batches.
    #[test]
    fn rows_come_out_in_the_order_they_were_written() {
        let schema: SchemaRef =
            Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let mut out = Vec::new();
        let mut file = ParquetFile::new(&schema, &mut out);
        let mut written = 0i64;
        for batch in 0..7 {
            let rows = 300 + 37 * batch;
            let values: Int64Array = (written..written + rows).collect();
            written += rows;
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap();
            file.write(batch, &mut out);
        }
        file.finish(&mut out);

        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(out)).unwrap();
        // 2,877 rows in row groups of 1,000.
        assert_eq!(reader.metadata().num_row_groups(), 3);
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
        assert_eq!(read, (0..written).collect::<Vec<_>>());
    }
}
