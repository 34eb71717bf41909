//! Helpers for operators that look at whole solutions: compatibility and
//! merging of rows under SPARQL's rules for unbound variables.

use oxrdf::Variable;
use rustc_hash::FxHashMap;
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
            .map(|&(l, r)| {
                let a = l.map_or(Id::UNDEFINED, |i| left[i]);
                if a != Id::UNDEFINED {
                    a
                } else {
                    r.map_or(Id::UNDEFINED, |j| right[j])
                }
            })
            .collect()
    }
}

/// Rows of a materialized input, indexed by their values on some columns, for
/// joins, OPTIONAL and MINUS. Rows with an unbound key column cannot be hashed:
/// they are kept aside and checked against every probe.
pub struct RowTable {
    pub rows: Vec<Vec<Id>>,
    /// The key index, split by key hash so that the parts are built on all
    /// cores at once.
    parts: Vec<FxHashMap<Vec<Id>, Vec<u32>>>,
    unkeyed: Vec<u32>,
}

/// Rows below which the table is built on one thread.
const PARALLEL_BUILD_ROWS: usize = 16 * 1024;

fn part_of(key: &[Id], parts: usize) -> usize {
    use std::hash::BuildHasher;
    // The high bits: the maps inside use the low ones.
    ((rustc_hash::FxBuildHasher.hash_one(key) >> 40) as usize) % parts
}

impl RowTable {
    pub fn new(rows: Vec<Vec<Id>>, key_columns: Vec<usize>) -> RowTable {
        use rayon::prelude::*;
        let key = |row: &[Id]| -> Vec<Id> { key_columns.iter().map(|&c| row[c]).collect() };
        let unkeyed: Vec<u32> = (0..rows.len() as u32)
            .filter(|&i| {
                key_columns
                    .iter()
                    .any(|&c| rows[i as usize][c] == Id::UNDEFINED)
            })
            .collect();
        let parts = if rows.len() < PARALLEL_BUILD_ROWS {
            1
        } else {
            rayon::current_num_threads().clamp(1, 16)
        };
        let parts: Vec<FxHashMap<Vec<Id>, Vec<u32>>> = (0..parts)
            .into_par_iter()
            .map(|part| {
                let mut map: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
                for (i, row) in rows.iter().enumerate() {
                    let k = key(row);
                    if k.contains(&Id::UNDEFINED) || (parts > 1 && part_of(&k, parts) != part) {
                        continue;
                    }
                    map.entry(k).or_default().push(i as u32);
                }
                map
            })
            .collect();
        RowTable {
            rows,
            parts,
            unkeyed,
        }
    }

    /// Indexes of rows that may be compatible with a probe whose key values
    /// (in the order of this table's key columns) are `key`.
    pub fn candidates(&self, key: &[Id]) -> Vec<u32> {
        if key.contains(&Id::UNDEFINED) {
            return (0..self.rows.len() as u32).collect();
        }
        let part = if self.parts.len() > 1 {
            part_of(key, self.parts.len())
        } else {
            0
        };
        let mut out: Vec<u32> = self.parts[part].get(key).cloned().unwrap_or_default();
        out.extend_from_slice(&self.unkeyed);
        out
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
            let mut found = table.candidates(&probe);
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
