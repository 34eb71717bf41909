//! Rows of one width stored one after the other in one vector: what a
//! materialized input is held as (a join's build side, rows being
//! collected), with no allocation per row.

use super::Batch;
use crate::suspend::StashSize;
use tern_index::Id;

#[derive(Debug, Default, Clone)]
pub struct FlatRows {
    width: usize,
    values: Vec<Id>,
    len: usize,
}

impl FlatRows {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn row(&self, i: usize) -> &[Id] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[Id]> + '_ {
        (0..self.len).map(|i| self.row(i))
    }

    /// Appends the rows of `batch` (all of one width: that of the first
    /// batch appended).
    pub fn push_batch(&mut self, batch: &Batch) {
        if self.len == 0 {
            self.width = batch.columns.len();
        }
        debug_assert_eq!(batch.columns.len(), self.width);
        self.values.reserve(batch.len * self.width);
        for i in 0..batch.len {
            self.values.extend(batch.columns.iter().map(|c| c[i]));
        }
        self.len += batch.len;
    }

    /// Appends a row (of the width of the others, or the first row).
    pub fn push_row(&mut self, row: &[Id]) {
        if self.len == 0 {
            self.width = row.len();
        }
        debug_assert_eq!(row.len(), self.width);
        self.values.extend_from_slice(row);
        self.len += 1;
    }

    /// Appends `len` rows of this width, one after the other in `values`.
    pub fn extend_values(&mut self, width: usize, values: &[Id], len: usize) {
        if self.len == 0 {
            self.width = width;
        }
        debug_assert_eq!(values.len(), width * len);
        self.values.extend_from_slice(values);
        self.len += len;
    }

    /// One vector per row (for operators that move rows around whole).
    pub fn into_vecs(self) -> Vec<Vec<Id>> {
        if self.width == 0 {
            return vec![Vec::new(); self.len];
        }
        self.values.chunks(self.width).map(<[Id]>::to_vec).collect()
    }

    pub fn from_vecs(rows: Vec<Vec<Id>>) -> FlatRows {
        let width = rows.first().map_or(0, Vec::len);
        let mut values = Vec::with_capacity(rows.len() * width);
        for row in &rows {
            debug_assert_eq!(row.len(), width);
            values.extend_from_slice(row);
        }
        FlatRows {
            width,
            values,
            len: rows.len(),
        }
    }
}

impl StashSize for FlatRows {
    fn stash_bytes(&self) -> usize {
        self.values.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_as_they_were_pushed() {
        let mut batch = Batch::with_columns(3);
        for i in 0..5u64 {
            batch.push_row(&[Id(i), Id(10 + i), Id(20 + i)]);
        }
        let mut rows = FlatRows::default();
        rows.push_batch(&batch);
        rows.push_batch(&batch);
        assert_eq!(rows.len(), 10);
        assert_eq!(rows.row(7), &[Id(2), Id(12), Id(22)]);
        let vecs = rows.clone().into_vecs();
        assert_eq!(vecs[9], vec![Id(4), Id(14), Id(24)]);
        let back = FlatRows::from_vecs(vecs);
        assert!(back.iter().eq(rows.iter()));
        // Rows without columns (a join of patterns with no variables).
        let mut empty = FlatRows::default();
        let mut unit = Batch::with_columns(0);
        unit.len = 2;
        empty.push_batch(&unit);
        assert_eq!(empty.len(), 2);
        assert_eq!(empty.into_vecs(), vec![Vec::<Id>::new(); 2]);
    }
}
