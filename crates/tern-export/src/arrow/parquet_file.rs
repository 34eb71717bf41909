//! A Parquet file whose row groups are encoded on a thread of their own,
//! fed record batches by the thread that gathers the rows.
//!
//! Encoding (dictionaries, levels, pages, Snappy) was about half of a
//! Parquet export's time, all of it on the one thread that also gathers the
//! rows, since row groups go into the file in order: a full export of BSBM
//! 10M used 1.1 of 2 cores. The encoder now takes small batches through a
//! channel of one and encodes them into the row group in progress while the
//! next are gathered; finished row groups come back as bytes, in order.
//!
//! Memory: the batch being gathered, one waiting, one being encoded (each
//! up to 1 MiB of text, the IPC stream's batch size), and the row group in
//! progress, held encoded and compressed, up to [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] of the Parquet writer's memory.
//! Row groups stay large, as readers want them, without a large batch of
//! text behind each: rows gathered in 16 MiB batches that were each a row
//! group held a full export of BSBM 10M at 127 MB over idle.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type FileWriter = ArrowWriter<Vec<u8>>;

/// Rows of a row group at most (a few in tests, so that files of a few
/// batches have several).
const ROW_GROUP_ROWS: usize = if cfg!(test) { 1000 } else { 64 * 1024 };
/// Memory of the row group in progress (its encoded pages, dictionaries
/// and keys not yet encoded) after which it is ended.
const ROW_GROUP_BYTES: usize = 4 << 20;

pub(super) struct ParquetFile(Encoder);

enum Encoder {
    Thread {
        batches: SyncSender<RecordBatch>,
        /// Bytes of finished row groups, in order; the footer last.
        bytes: Receiver<Vec<u8>>,
        /// Taken when the thread is joined.
        thread: Option<JoinHandle<()>>,
    },
    /// Encoding on the caller's thread (when no thread could be started).
    Here(Box<FileWriter>),
}

impl ParquetFile {
    /// A file of `schema`; `out` gets the bytes it begins with.
    pub(super) fn new(schema: &SchemaRef, out: &mut Vec<u8>) -> ParquetFile {
        use parquet::basic::Compression;
        use parquet::file::properties::WriterProperties;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(concat!("tern ", env!("CARGO_PKG_VERSION")).to_owned())
            .build();
        let mut writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties))
            .expect("the schema is one Parquet can hold");
        out.append(writer.inner_mut());
        // Shared, so that the writer is still here if no thread starts.
        let handed = Arc::new(Mutex::new(Some(writer)));
        let for_thread = Arc::clone(&handed);
        let (batches, to_encode) = mpsc::sync_channel::<RecordBatch>(1);
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
                batches,
                bytes,
                thread: Some(thread),
            }),
            Err(_) => {
                let writer = handed.lock().unwrap().take();
                let writer = writer.expect("the writer no thread took");
                ParquetFile(Encoder::Here(Box::new(writer)))
            }
        }
    }

    /// Hands `batch` to the encoder; the row groups it has finished go to
    /// `out`.
    pub(super) fn write(&mut self, batch: RecordBatch, out: &mut Vec<u8>) {
        let handed = match &mut self.0 {
            Encoder::Thread { batches, .. } => batches.send(batch).is_ok(),
            Encoder::Here(writer) => {
                encode(writer, &batch);
                out.append(writer.inner_mut());
                return;
            }
        };
        if !handed {
            // The encoder is gone: it panicked.
            self.rethrow();
        }
        if let Encoder::Thread { bytes, .. } = &self.0 {
            for mut encoded in bytes.try_iter() {
                out.append(&mut encoded);
            }
        }
    }

    /// The last row group and the footer (row groups' offsets and
    /// statistics, the schema) to `out`.
    pub(super) fn finish(self, out: &mut Vec<u8>) {
        match self.0 {
            Encoder::Thread {
                batches,
                bytes,
                thread,
            } => {
                drop(batches);
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

/// The encoder's loop: batches into row groups until the sender is gone,
/// then the footer. The bytes of each finished row group go back as soon
/// as it is written; nothing is sent once the receiver is gone (the query
/// was dropped), and the loop ends with the batches.
fn encode_all(
    mut writer: FileWriter,
    batches: Receiver<RecordBatch>,
    bytes: mpsc::Sender<Vec<u8>>,
) {
    for batch in batches {
        encode(&mut writer, &batch);
        if !writer.inner().is_empty() {
            let _ = bytes.send(std::mem::take(writer.inner_mut()));
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
