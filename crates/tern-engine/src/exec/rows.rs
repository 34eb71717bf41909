//! Helpers for operators that look at whole solutions: compatibility and
//! merging of rows under SPARQL's rules for unbound variables.

use oxrdf::Variable;
use tern_index::Id;

/// For each column of a combined schema, its column in the left and in the
/// right input.
pub type Sources = Vec<(Option<usize>, Option<usize>)>;

/// Rules for combining solutions.
pub struct Solution;

impl Solution {
    /// The union of two schemas, left variables first, and for each output
    /// column its position in the left and in the right input.
    pub fn merge_schemas(left: &[Variable], right: &[Variable]) -> (Vec<Variable>, Sources) {
        let mut variables = left.to_vec();
        let mut sources: Vec<(Option<usize>, Option<usize>)> =
            (0..left.len()).map(|i| (Some(i), None)).collect();
        for (j, v) in right.iter().enumerate() {
            match left.iter().position(|l| l == v) {
                Some(i) => sources[i].1 = Some(j),
                None => {
                    variables.push(v.clone());
                    sources.push((None, Some(j)));
                }
            }
        }
        (variables, sources)
    }

    /// Whether two rows agree on every shared variable bound in both.
    pub fn compatible(left: &[Id], right: &[Id], shared: &[(usize, usize)]) -> bool {
        shared.iter().all(|&(l, r)| {
            let (a, b) = (left[l], right[r]);
            a == Id::UNDEFINED || b == Id::UNDEFINED || a == b
        })
    }

    /// The merged row of two compatible rows.
    pub fn merge(left: &[Id], right: &[Id], sources: &[(Option<usize>, Option<usize>)]) -> Vec<Id> {
        sources
            .iter()
            .map(|&source| Solution::merged(left, right, source))
            .collect()
    }

    /// One column of the merged row: the left value where bound, else the
    /// right one.
    pub fn merged(left: &[Id], right: &[Id], (l, r): (Option<usize>, Option<usize>)) -> Id {
        let a = l.map_or(Id::UNDEFINED, |i| left[i]);
        if a != Id::UNDEFINED {
            a
        } else {
            r.map_or(Id::UNDEFINED, |j| right[j])
        }
    }
}

/// Rows of a materialized input, indexed by their values on some columns, for
/// joins, OPTIONAL and MINUS. Rows with an unbound key column cannot be hashed:
/// they are kept aside and checked against every probe.
///
/// The index is the rows' key hashes, sorted: building it is one pass and a
/// sort, with no allocation per row or per key (a hash map of keys to row
/// lists allocated three times per row, and freeing those was as slow).
/// Rows whose keys merely share a hash come out as candidates too; every
/// caller checks the rows it gets.
pub struct RowTable {
    pub rows: Vec<Vec<Id>>,
    key_columns: Vec<usize>,
    /// (hash of the key, row) of the rows whose key is bound, sorted.
    keyed: Vec<(u64, u32)>,
    /// `directory[b]`: where in `keyed` the hashes with `b` as their top
    /// bits start, so that a probe finds its hash without a binary search
    /// (which cost most of a probe in large tables); about one row per
    /// bucket.
    directory: Vec<u32>,
    /// Shifts a hash right to its bucket.
    shift: u32,
    unkeyed: Vec<u32>,
}

/// Rows from which the index is sorted on all cores.
const PARALLEL_SORT_ROWS: usize = 64 * 1024;

fn key_hash(key: impl Iterator<Item = Id>) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = rustc_hash::FxBuildHasher.build_hasher();
    for id in key {
        hasher.write_u64(id.0);
    }
    hasher.finish()
}

impl RowTable {
    pub fn new(rows: Vec<Vec<Id>>, key_columns: Vec<usize>) -> RowTable {
        let mut keyed = Vec::with_capacity(rows.len());
        let mut unkeyed = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            if key_columns.iter().any(|&c| row[c] == Id::UNDEFINED) {
                unkeyed.push(i as u32);
            } else {
                keyed.push((key_hash(key_columns.iter().map(|&c| row[c])), i as u32));
            }
        }
        if keyed.len() >= PARALLEL_SORT_ROWS {
            use rayon::slice::ParallelSliceMut;
            keyed.par_sort_unstable();
        } else {
            keyed.sort_unstable();
        }
        let bits = (usize::BITS - keyed.len().leading_zeros()).max(1);
        let shift = u64::BITS - bits;
        let mut directory = Vec::with_capacity((1 << bits) + 1);
        let mut at = 0;
        for bucket in 0..=(1u64 << bits) {
            while at < keyed.len() && keyed[at].0 >> shift < bucket {
                at += 1;
            }
            directory.push(at as u32);
        }
        RowTable {
            rows,
            key_columns,
            keyed,
            directory,
            shift,
            unkeyed,
        }
    }

    /// Indexes of rows that may be compatible with a probe whose key values
    /// (in the order of this table's key columns) are `key`.
    pub fn candidates(&self, key: &[Id]) -> impl Iterator<Item = u32> + '_ {
        debug_assert_eq!(key.len(), self.key_columns.len());
        let (keyed, unkeyed, all) = if key.contains(&Id::UNDEFINED) {
            (
                &self.keyed[..0],
                &self.unkeyed[..0],
                0..self.rows.len() as u32,
            )
        } else {
            let hash = key_hash(key.iter().copied());
            let bucket = (hash >> self.shift) as usize;
            let in_bucket =
                &self.keyed[self.directory[bucket] as usize..self.directory[bucket + 1] as usize];
            let start = in_bucket.partition_point(|&(h, _)| h < hash);
            let end = start + in_bucket[start..].partition_point(|&(h, _)| h == hash);
            (&in_bucket[start..end], &self.unkeyed[..], 0..0)
        };
        keyed
            .iter()
            .map(|&(_, i)| i)
            .chain(unkeyed.iter().copied())
            .chain(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_built_in_parts_find_every_matching_row() {
        // Large enough to be built on several threads; column 1 unbound in
        // some rows.
        let rows: Vec<Vec<Id>> = (0..50_000u64)
            .map(|i| {
                let second = if i % 97 == 0 {
                    Id::UNDEFINED
                } else {
                    Id(i % 1000)
                };
                vec![Id(i % 5000), second]
            })
            .collect();
        let table = RowTable::new(rows.clone(), vec![0, 1]);
        for probe in [[Id(7), Id(7)], [Id(4321), Id(321)], [Id(4999), Id(999)]] {
            let mut found: Vec<u32> = table.candidates(&probe).collect();
            found.retain(|&i| Solution::compatible(&probe, &rows[i as usize], &[(0, 0), (1, 1)]));
            let expected: Vec<u32> = (0..rows.len() as u32)
                .filter(|&i| Solution::compatible(&probe, &rows[i as usize], &[(0, 0), (1, 1)]))
                .collect();
            found.sort_unstable();
            assert_eq!(found, expected, "probe {probe:?}");
            assert!(!expected.is_empty());
        }
    }
}
