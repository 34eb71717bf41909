//! A Parquet file's footer, kept as the bytes it will be written as: each
//! row group's entry is serialized when the row group is appended, and the
//! footer is those entries spliced into the footer of the same file with
//! no row groups.
//!
//! Why: the parquet crate's file writer holds every row group's metadata
//! (`RowGroupMetaData`, with its column chunks' statistics, encodings and
//! paths) until it writes the footer, about 4 KB a row group of a BSBM
//! `SELECT *` against 0.93 KB serialized; at BSBM 100M (6,292 row groups)
//! that was the part of a Parquet export's memory that grew with the
//! result. The entries are cut out of footers the crate serialized itself
//! (its Thrift writer is private), so the footer is byte for byte the one
//! the crate would have written (a test in `file_writer.rs` checks that).

use super::thrift_fields::{self, struct_fields, Malformed};
use parquet::errors::ParquetError;
use parquet::file::metadata::{
    FileMetaData, ParquetMetaData, ParquetMetaDataWriter, RowGroupMetaData,
};
use parquet::schema::types::SchemaDescPtr;
use std::ops::Range;

/// Fields of Parquet's `FileMetaData` that the row groups change.
const NUM_ROWS: i16 = 3;
const ROW_GROUPS: i16 = 4;
/// What begins a Parquet file, and ends it after the footer's length.
pub(super) const MAGIC: &[u8; 4] = b"PAR1";

/// Why a footer could not be made: a bug (the bytes are the parquet
/// crate's own).
#[derive(Debug, thiserror::Error)]
pub(super) enum FooterError {
    #[error("serializing Parquet metadata: {0}")]
    Parquet(#[from] ParquetError),
    #[error(transparent)]
    Thrift(#[from] Malformed),
    #[error("Parquet metadata without a field {0} where it belongs")]
    MissingField(i16),
}

pub(super) struct ParquetFooter {
    /// The Thrift `FileMetaData` of the file with no row groups (schema,
    /// key-value metadata, who wrote it, column orders).
    empty: Vec<u8>,
    /// Where, in `empty`, the count of rows and the list of row groups are.
    num_rows: Range<usize>,
    row_groups: Range<usize>,
    schema: SchemaDescPtr,
    /// The entries of the row groups appended so far, one after another.
    entries: Vec<u8>,
    count: usize,
    rows: i64,
}

impl ParquetFooter {
    /// `empty_file` is what the parquet crate writes for the file with no
    /// row groups: magic, footer, its length, magic.
    pub(super) fn new(
        empty_file: &[u8],
        schema: SchemaDescPtr,
    ) -> Result<ParquetFooter, FooterError> {
        let empty = empty_file[MAGIC.len()..empty_file.len() - 4 - MAGIC.len()].to_vec();
        let (fields, _) = struct_fields(&empty)?;
        let value_of = |id| {
            fields
                .iter()
                .find(|field| field.id == id)
                .map(|field| field.value.clone())
                .ok_or(FooterError::MissingField(id))
        };
        let num_rows = value_of(NUM_ROWS)?;
        let row_groups = value_of(ROW_GROUPS)?;
        if num_rows.end > row_groups.start {
            return Err(FooterError::MissingField(NUM_ROWS));
        }
        Ok(ParquetFooter {
            num_rows,
            row_groups,
            empty,
            schema,
            entries: Vec::new(),
            count: 0,
            rows: 0,
        })
    }

    /// Row groups appended so far.
    pub(super) fn row_groups(&self) -> usize {
        self.count
    }

    /// Adds `row_group`'s entry, serialized by the crate in the footer of
    /// a file of that row group alone.
    pub(super) fn push(&mut self, row_group: RowGroupMetaData) -> Result<(), FooterError> {
        let rows = row_group.num_rows();
        let alone = ParquetMetaData::new(
            FileMetaData::new(1, rows, None, None, self.schema.clone(), None),
            vec![row_group],
        );
        let mut footer = Vec::new();
        ParquetMetaDataWriter::new(&mut footer, &alone).finish()?;
        let (fields, _) = struct_fields(&footer)?;
        let list = fields
            .iter()
            .find(|field| field.id == ROW_GROUPS)
            .ok_or(FooterError::MissingField(ROW_GROUPS))?;
        // The list's header (one struct) is its first byte.
        self.entries
            .extend_from_slice(&footer[list.value.start + 1..list.value.end]);
        self.count += 1;
        self.rows += rows;
        Ok(())
    }

    /// The footer to `out`: the metadata, its length and the magic that
    /// ends the file.
    pub(super) fn write(self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.empty[..self.num_rows.start]);
        thrift_fields::write_i64(self.rows, out);
        out.extend_from_slice(&self.empty[self.num_rows.end..self.row_groups.start]);
        thrift_fields::write_list_header(self.count, thrift_fields::STRUCT, out);
        out.extend_from_slice(&self.entries);
        out.extend_from_slice(&self.empty[self.row_groups.end..]);
        let len = (out.len() - start) as u32;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(MAGIC);
    }
}
