//! The Parquet file itself: row groups encoded elsewhere (`row_group.rs`)
//! appended in order after the magic that begins it, and the footer at the
//! end. It takes the place of the parquet crate's `SerializedFileWriter`,
//! which holds every row group's metadata until the footer: here each row
//! group's footer entry is serialized when the row group is appended
//! (`parquet_footer.rs`), so that a file's memory no longer grows by about
//! 4 KB a row group, but by its entry's bytes (0.93 KB for BSBM's
//! `SELECT *`).

use super::parquet_footer::{ParquetFooter, MAGIC};
use super::row_group::EncodedRowGroup;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr};
use parquet::file::writer::{SerializedRowGroupWriter, TrackedWrite};
use parquet::schema::types::{SchemaDescPtr, SchemaDescriptor};
use std::io::Write;
use std::sync::Arc;

pub(super) struct FileWriter {
    /// The file's bytes not yet taken; it counts every byte written, for
    /// the offsets in the footer.
    bytes: TrackedWrite<Vec<u8>>,
    schema: SchemaDescPtr,
    properties: WriterPropertiesPtr,
    footer: ParquetFooter,
}

impl FileWriter {
    /// A file of `schema`, written with `properties`, and what makes the
    /// column writers of its row groups. Fails only on a bug: everything
    /// is encoded into memory.
    pub(super) fn new(
        schema: &SchemaRef,
        properties: WriterProperties,
    ) -> (FileWriter, ArrowRowGroupWriterFactory) {
        // Arrow's writer makes the Parquet schema, puts the Arrow schema in
        // the key-value metadata, and makes the column writers' factory;
        // the footer it writes with no row groups is the one that the
        // row groups' entries go into.
        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties))
            .expect("the schema is one Parquet can hold");
        let (empty, factory) = writer
            .into_serialized_writer()
            .expect("Parquet encoding into memory");
        let parquet_schema = Arc::new(SchemaDescriptor::new(
            empty.schema_descr().root_schema_ptr(),
        ));
        let properties = Arc::clone(empty.properties());
        let empty = empty.into_inner().expect("Parquet encoding into memory");
        let footer = ParquetFooter::new(&empty, Arc::clone(&parquet_schema))
            .expect("the parquet crate's footer of a file with no row groups");
        let mut bytes = TrackedWrite::new(Vec::new());
        // Out at once, so that the file's first bytes go out with the
        // response's head.
        bytes.write_all(MAGIC).expect("writing into memory");
        bytes.flush().expect("writing into memory");
        let file = FileWriter {
            bytes,
            schema: parquet_schema,
            properties,
            footer,
        };
        (file, factory)
    }

    /// Row groups appended so far.
    pub(super) fn row_groups(&self) -> usize {
        self.footer.row_groups()
    }

    /// Appends a row group's column chunks after the file's bytes so far.
    pub(super) fn append(&mut self, group: EncodedRowGroup) {
        // Parquet readers and the crate allow 32,767 row groups (an i16
        // ordinal); `parquet_file.rs` makes larger ones before a file
        // needs more.
        let ordinal =
            i16::try_from(self.row_groups()).expect("Parquet holds at most 32,767 row groups");
        let mut row_group = SerializedRowGroupWriter::new(
            Arc::clone(&self.schema),
            Arc::clone(&self.properties),
            &mut self.bytes,
            ordinal,
            None,
        );
        group.append_to(&mut row_group);
        let metadata = row_group.close().expect("Parquet encoding into memory");
        let metadata = Arc::unwrap_or_clone(metadata);
        self.footer
            .push(metadata)
            .expect("a row group's metadata the parquet crate serializes");
    }

    /// The bytes written since the last call (some may wait in a buffer
    /// until more are written).
    pub(super) fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(self.bytes.inner_mut())
    }

    /// The rest of the file, its footer last.
    pub(super) fn finish(self) -> Vec<u8> {
        let mut rest = self.bytes.into_inner().expect("writing into memory");
        self.footer.write(&mut rest);
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrow::row_group::{RowGroupColumns, RowGroupLimits, RowGroups};
    use arrow_array::{DictionaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::file::writer::SerializedFileWriter;

    fn schema() -> SchemaRef {
        let iri = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        Arc::new(Schema::new(vec![
            Field::new("s", iri, true),
            Field::new("n", DataType::Int64, true),
            Field::new("x", DataType::Float64, true),
            Field::new("text", DataType::Utf8, true),
        ]))
    }

    /// Batches of every kind of column the test schema has, with gaps,
    /// and long texts whose statistics are cut.
    fn batches(schema: &SchemaRef) -> Vec<RecordBatch> {
        (0..5)
            .map(|b| {
                let rows = 700 + 131 * b;
                let iris: Vec<Option<String>> = (0..rows)
                    .map(|r| (r % 7 != 0).then(|| format!("http://e.org/{}", r % 40)))
                    .collect();
                let iris: DictionaryArray<arrow_array::types::Int32Type> =
                    iris.iter().map(Option::as_deref).collect();
                let numbers: Int64Array = (0..rows)
                    .map(|r| (r % 5 != 0).then_some(r as i64 * 3 - 100))
                    .collect();
                let doubles: Float64Array = (0..rows).map(|r| Some(r as f64 / 7.0)).collect();
                let texts: StringArray = (0..rows)
                    .map(|r| (r % 3 != 0).then(|| "ab".repeat(20 + r % 60)))
                    .collect();
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(iris),
                        Arc::new(numbers),
                        Arc::new(doubles),
                        Arc::new(texts),
                    ],
                )
                .unwrap()
            })
            .collect()
    }

    fn properties() -> WriterProperties {
        crate::arrow::parquet_file::properties()
    }

    /// Row groups encoded the same way, one file written by the parquet
    /// crate's file writer and one by this one: the same bytes, footer
    /// and all.
    #[test]
    fn writes_the_bytes_the_parquet_crate_writes() {
        let schema = schema();
        let encoded = |factory| {
            let columns = Arc::new(RowGroupColumns::new(factory, schema.clone()));
            let mut row_groups = RowGroups::new(columns, RowGroupLimits::scaled(1));
            let mut encoded: Vec<_> = batches(&schema)
                .iter()
                .filter_map(|batch| row_groups.write(batch))
                .collect();
            encoded.extend(row_groups.end());
            encoded
        };

        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties())).unwrap();
        let (mut theirs, factory) = writer.into_serialized_writer().unwrap();
        let groups = encoded(factory);
        assert!(groups.len() >= 3, "{}", groups.len());
        for group in groups {
            let mut row_group = theirs.next_row_group().unwrap();
            group.append_to(&mut row_group);
            row_group.close().unwrap();
        }
        let theirs: Vec<u8> = SerializedFileWriter::into_inner(theirs).unwrap();

        let (mut ours, factory) = FileWriter::new(&schema, properties());
        let mut bytes = Vec::new();
        for group in encoded(factory) {
            ours.append(group);
            bytes.append(&mut ours.take_bytes());
        }
        bytes.append(&mut ours.finish());

        assert_eq!(bytes.len(), theirs.len());
        assert!(bytes == theirs, "the files differ");
    }

    /// A file with no row groups is the crate's too.
    #[test]
    fn an_empty_file_is_the_crates() {
        let schema = schema();
        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties())).unwrap();
        let theirs = writer.into_inner().unwrap();
        let (ours, _) = FileWriter::new(&schema, properties());
        assert_eq!(ours.finish(), theirs);
    }
}
