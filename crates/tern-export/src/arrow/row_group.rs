//! One Parquet row group encoded where its rows are gathered: record
//! batches go into a column writer per leaf (dictionaries, levels, pages,
//! compression), and closing them gives column chunks that the file
//! appends whole, in order, on whichever thread keeps the file.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::file::writer::SerializedRowGroupWriter;
use std::sync::Arc;

/// Rows of a row group after which it is ended, at the first size of a
/// file's row groups (a few in tests, so that files of a few batches have
/// several).
const ROW_GROUP_ROWS: usize = if cfg!(test) { 1000 } else { 64 * 1024 };
/// Memory of a row group in progress (its encoded pages, dictionaries and
/// keys not yet encoded) after which it is ended, at the first size.
const ROW_GROUP_BYTES: usize = 3 << 20;
/// The writers' memory after which a row group ends, however large the
/// file's row groups have grown. The rows of a file's later runs grow
/// with it (8K rows times 4^k, `parquet_file.rs`): at BSBM's 40 bytes a
/// row, runs of 2M rows (past 2.8G rows) would hold 80 MB each, and 8M
/// (past 11G) 320 MB. With this cap a run makes several row groups
/// instead, and 32,767 row groups of 32 MiB still hold 1 TiB of encoded
/// Parquet (a full SELECT of Wikidata's 15G triples is about 600 GB).
const MAX_ROW_GROUP_BYTES: usize = 32 << 20;

/// When a row group in progress is full: its rows, or its writers'
/// memory. A file's later row groups are larger (see `parquet_file.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct RowGroupLimits {
    rows: usize,
    bytes: usize,
}

impl RowGroupLimits {
    /// [`ROW_GROUP_ROWS`] and [`ROW_GROUP_BYTES`], times `scale`; the
    /// bytes no more than [`MAX_ROW_GROUP_BYTES`].
    pub(super) fn scaled(scale: usize) -> RowGroupLimits {
        RowGroupLimits {
            rows: ROW_GROUP_ROWS.saturating_mul(scale),
            bytes: ROW_GROUP_BYTES
                .saturating_mul(scale)
                .min(MAX_ROW_GROUP_BYTES),
        }
    }
}

/// What makes the column writers of a file's row groups: shared by the
/// threads that encode them.
pub(super) struct RowGroupColumns {
    factory: ArrowRowGroupWriterFactory,
    /// The file's schema, whose fields say how each array is written (a
    /// batch's arrays may be plain UTF-8 where the file says dictionary).
    schema: SchemaRef,
}

impl RowGroupColumns {
    pub(super) fn new(factory: ArrowRowGroupWriterFactory, schema: SchemaRef) -> RowGroupColumns {
        RowGroupColumns { factory, schema }
    }
}

/// Row groups encoded one after another from the batches written: the
/// one in progress, ended once full or when asked.
pub(super) struct RowGroups {
    columns: Arc<RowGroupColumns>,
    /// The column writers of the row group in progress, and its rows.
    in_progress: Option<(Vec<ArrowColumnWriter>, usize)>,
    limits: RowGroupLimits,
}

impl RowGroups {
    pub(super) fn new(columns: Arc<RowGroupColumns>, limits: RowGroupLimits) -> RowGroups {
        RowGroups {
            columns,
            in_progress: None,
            limits,
        }
    }

    /// Row groups from now on end at `limits`.
    pub(super) fn set_limits(&mut self, limits: RowGroupLimits) {
        self.limits = limits;
    }

    /// Encodes `batch` into the row group in progress; that row group's
    /// column chunks once it is full (its [`RowGroupLimits`]). Encoding
    /// into memory fails only on a bug.
    pub(super) fn write(&mut self, batch: &RecordBatch) -> Option<EncodedRowGroup> {
        let columns = &self.columns;
        let (writers, rows) = self.in_progress.get_or_insert_with(|| {
            // The index only matters to encrypted files, which these are not.
            let writers = columns
                .factory
                .create_column_writers(0)
                .expect("column writers for a schema Parquet can hold");
            (writers, 0)
        });
        let mut writers_of_leaves = writers.iter_mut();
        for (field, array) in columns.schema.fields().iter().zip(batch.columns()) {
            let leaves = compute_leaves(field, array).expect("arrays of the file's schema");
            for leaf in leaves {
                let writer = writers_of_leaves.next().expect("a writer per leaf");
                writer.write(&leaf).expect("Parquet encoding into memory");
            }
        }
        *rows += batch.num_rows();
        let full = *rows >= self.limits.rows
            || writers.iter().map(|w| w.memory_size()).sum::<usize>() >= self.limits.bytes;
        if full {
            self.end()
        } else {
            None
        }
    }

    /// Ends the row group in progress, if any: its column chunks.
    pub(super) fn end(&mut self) -> Option<EncodedRowGroup> {
        let (writers, _) = self.in_progress.take()?;
        let chunks = writers
            .into_iter()
            .map(|writer| writer.close().expect("Parquet encoding into memory"))
            .collect();
        Some(EncodedRowGroup { chunks })
    }
}

/// A row group's column chunks, encoded.
pub(super) struct EncodedRowGroup {
    chunks: Vec<ArrowColumnChunk>,
}

impl EncodedRowGroup {
    /// Appends the column chunks, in order, to the file's `row_group`.
    pub(super) fn append_to(self, row_group: &mut SerializedRowGroupWriter<'_, Vec<u8>>) {
        for chunk in self.chunks {
            chunk
                .append_to_row_group(row_group)
                .expect("Parquet encoding into memory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Later row groups may have more rows, but no more memory than
    /// 32 MiB, however large the file gets.
    #[test]
    fn row_groups_grow_in_rows_but_not_past_their_memory_cap() {
        assert_eq!(
            RowGroupLimits::scaled(1),
            RowGroupLimits {
                rows: ROW_GROUP_ROWS,
                bytes: ROW_GROUP_BYTES
            }
        );
        assert_eq!(RowGroupLimits::scaled(4).bytes, 4 * ROW_GROUP_BYTES);
        for scale in [16, 4usize.pow(7), usize::MAX] {
            let limits = RowGroupLimits::scaled(scale);
            assert_eq!(limits.bytes, MAX_ROW_GROUP_BYTES);
            assert_eq!(limits.rows, ROW_GROUP_ROWS.saturating_mul(scale));
        }
    }
}
