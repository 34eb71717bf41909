//! The five sorted permutations of the quads.
//!
//! SPO, PSO, POS, OSP and OPS: every pattern's constants are the leading
//! columns of one of them. SOP is not stored: a lookup with subject and
//! object bound is OSP's, and the one order only SOP gives, a subject's
//! triples by object, is a subject's few rows sorted. On BSBM 10M it cost
//! 2.86 bytes per triple (its object column, cut by subject, is the least
//! compressible of all), a tenth of the index.
//!
//! Each permutation stores every quad as a row `(c0, c1, c2, g)`, where `c0 c1 c2`
//! are subject, predicate and object in the permutation's order and `g` is the
//! graph. Rows are sorted and cut into blocks of [`BLOCK_ROWS`] rows; each column of
//! a block is compressed on its own (see [`codec`]). The block directory (first
//! and last row, row count, byte ranges) is held in memory for binary search;
//! block bytes are read through mmap and decoded on demand.

mod block_search;
pub mod codec;
mod reader;
mod writer;

pub(crate) use block_search::partition;
pub use reader::{BlockCache, Lookup, PermutationReader, ScanIter, DEFAULT_BLOCK_CACHE_BYTES};
pub use writer::PermutationWriter;

use crate::Id;

/// Rows per block: small enough that counting a bound prefix decodes little,
/// large enough that compression sees long runs.
pub const BLOCK_ROWS: usize = 4 * 1024;

/// A row in storage order: three triple positions in permutation order, then graph.
pub type Row = [u64; 4];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permutation {
    Spo,
    Pso,
    Pos,
    Osp,
    Ops,
}

impl Permutation {
    /// How many permutations are stored: the length of arrays indexed by
    /// `perm as usize`.
    pub const COUNT: usize = Permutation::ALL.len();

    pub const ALL: [Permutation; 5] = [
        Permutation::Spo,
        Permutation::Pso,
        Permutation::Pos,
        Permutation::Osp,
        Permutation::Ops,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Permutation::Spo => "spo",
            Permutation::Pso => "pso",
            Permutation::Pos => "pos",
            Permutation::Osp => "osp",
            Permutation::Ops => "ops",
        }
    }

    /// Triple positions (0 = subject, 1 = predicate, 2 = object) in column order.
    pub fn order(self) -> [usize; 3] {
        match self {
            Permutation::Spo => [0, 1, 2],
            Permutation::Pso => [1, 0, 2],
            Permutation::Pos => [1, 2, 0],
            Permutation::Osp => [2, 0, 1],
            Permutation::Ops => [2, 1, 0],
        }
    }

    /// The storage row of a quad given as `[s, p, o, g]`.
    #[inline]
    pub fn row_of(self, quad: [u64; 4]) -> Row {
        let [a, b, c] = self.order();
        [quad[a], quad[b], quad[c], quad[3]]
    }

    /// The quad `[s, p, o, g]` of a storage row.
    #[inline]
    pub fn quad_of(self, row: Row) -> [u64; 4] {
        let mut quad = [0; 4];
        for (column, &position) in self.order().iter().enumerate() {
            quad[position] = row[column];
        }
        quad[3] = row[3];
        quad
    }

    /// Whether the triple positions `positions` (in any order) are this
    /// permutation's leading columns.
    pub fn leads_with(self, positions: &[usize]) -> bool {
        let mask = |positions: &[usize]| positions.iter().fold(0u8, |m, &i| m | 1 << i);
        mask(&self.order()[..positions.len().min(3)]) == mask(positions)
    }

    /// The permutation that has the given positions (in any order) as its leading
    /// columns, preferring `next` as the column right after them. Every set
    /// of bound positions leads some permutation; `next` is only a preference
    /// (with the subject bound, no permutation has the object next).
    pub fn for_bound(bound: &[usize], next: Option<usize>) -> Permutation {
        let candidates = || Permutation::ALL.into_iter().filter(|p| p.leads_with(bound));
        candidates()
            .find(|p| next.is_none_or(|n| p.order().get(bound.len()) == Some(&n)))
            .or_else(|| candidates().next())
            .unwrap_or(Permutation::Spo)
    }
}

/// A batch of scanned rows: four columns in the permutation's column order
/// (the graph column last), sorted on all four.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub columns: [Vec<Id>; 4],
}

impl Batch {
    pub fn len(&self) -> usize {
        self.columns[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, i: usize) -> Row {
        [0, 1, 2, 3].map(|c| self.columns[c][i].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_set_leads_a_permutation() {
        let sets: [&[usize]; 8] = [&[], &[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]];
        for bound in sets {
            for next in [None, Some(0), Some(1), Some(2)] {
                let perm = Permutation::for_bound(bound, next);
                let mut leading = perm.order()[..bound.len()].to_vec();
                leading.sort_unstable();
                assert_eq!(leading, bound, "{bound:?} next {next:?}: {perm:?}");
                let next_is_free = next.is_some_and(|n| !bound.contains(&n));
                // Only "subject bound, object next" (SOP's order) has no permutation.
                if next_is_free && (bound, next) != (&[0][..], Some(2)) && bound.len() < 3 {
                    assert_eq!(
                        perm.order().get(bound.len()),
                        next.as_ref(),
                        "{bound:?} {next:?}"
                    );
                }
            }
        }
        // Subject and object bound: OSP, with the predicate after them.
        assert_eq!(Permutation::for_bound(&[0, 2], None), Permutation::Osp);
        for perm in Permutation::ALL {
            let quad = [1, 2, 3, 4];
            assert_eq!(perm.quad_of(perm.row_of(quad)), quad);
        }
    }
}
