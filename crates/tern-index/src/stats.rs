//! Statistics computed while the permutations are written, for the optimizer and
//! for `tern stats`.

use crate::permutation::Row;
use serde::{Deserialize, Serialize};

pub(crate) const STATS_FILE: &str = "stats.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateStats {
    /// The predicate's ID (raw 64-bit value).
    pub predicate: u64,
    pub triples: u64,
    pub distinct_subjects: u64,
    pub distinct_objects: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statistics {
    /// Distinct quads (a triple in two graphs counts twice).
    pub triples: u64,
    pub distinct_subjects: u64,
    pub distinct_predicates: u64,
    pub distinct_objects: u64,
    /// Named graphs holding at least one triple.
    pub named_graphs: u64,
    /// Distinct objects that are inline values (numbers, dates, booleans).
    pub distinct_inline_values: u64,
    /// Per predicate, in ID order.
    pub predicates: Vec<PredicateStats>,
}

impl Statistics {
    pub fn predicate(&self, predicate: u64) -> Option<&PredicateStats> {
        self.predicates
            .binary_search_by_key(&predicate, |p| p.predicate)
            .ok()
            .map(|i| &self.predicates[i])
    }
}

/// Counts distinct values of leading columns from rows streamed in sorted order.
#[derive(Default)]
pub(crate) struct DistinctCounter {
    prev: Option<Row>,
    /// distinct[k]: distinct values of the first k+1 columns.
    pub distinct: [u64; 3],
}

impl DistinctCounter {
    /// Feeds the next row; returns the number of leading columns shared with the
    /// previous row (0 for the first).
    #[inline]
    pub fn push(&mut self, row: &Row) -> usize {
        let shared = match &self.prev {
            None => 0,
            Some(prev) => (0..3).take_while(|&c| prev[c] == row[c]).count(),
        };
        for k in shared..3 {
            self.distinct[k] += 1;
        }
        self.prev = Some(*row);
        shared
    }
}
