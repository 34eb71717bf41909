//! One sorted run of changes, in all five permutation orders, and the
//! stack of runs a snapshot sees.

use crate::permutation::{Permutation, Row};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::sync::Arc;

/// Changes from which a run's orders are sorted in parallel.
const PARALLEL_SORT_FROM: usize = 50_000;

/// One change to one quad `[s, p, o, g]` (raw IDs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Change {
    pub quad: [u64; 4],
    pub insert: bool,
}

/// Effective changes sorted in each permutation's row order. A quad appears
/// at most once per run.
#[derive(Debug, Default)]
pub struct Run {
    rows: [Vec<(Row, bool)>; Permutation::COUNT],
    /// Per permutation, the signed number of changes before each position
    /// (one more entry than rows): counting a range is two lookups.
    net_before: [Vec<i64>; Permutation::COUNT],
    /// Per permutation, which two-column prefixes the run may have: an index
    /// join looks up one prefix per left row, and most runs have nothing
    /// under most prefixes, which this says without a binary search.
    prefixes: [PrefixFilter; Permutation::COUNT],
    /// Net change of the number of quads per predicate, for statistics.
    predicate_net: Vec<(u64, i64)>,
    /// Net change of the number of quads per graph.
    graph_net: Vec<(u64, i64)>,
}

impl Run {
    /// A run of `changes`, each effective against the state before it (so
    /// changes to one quad alternate between insert and delete). An even
    /// number of changes to a quad cancels out; an odd number leaves the
    /// last one.
    pub fn of(changes: &[Change]) -> Run {
        let mut last: FxHashMap<[u64; 4], (bool, usize)> = FxHashMap::default();
        for change in changes {
            let entry = last.entry(change.quad).or_insert((change.insert, 0));
            entry.0 = change.insert;
            entry.1 += 1;
        }
        let net: Vec<(Row, bool)> = last
            .into_iter()
            .filter(|(_, (_, n))| n % 2 == 1)
            .map(|(quad, (insert, _))| (quad, insert))
            .collect();
        Run::from_quads(net)
    }

    /// A run of `changes` that each change a different quad (no netting
    /// needed: a large write skips a hash of all its changes).
    pub fn of_distinct(changes: &[Change]) -> Run {
        Run::from_quads(changes.iter().map(|c| (c.quad, c.insert)).collect())
    }

    fn from_quads(quads: Vec<([u64; 4], bool)>) -> Run {
        let sorted = |perm: Permutation| {
            let mut rows: Vec<(Row, bool)> = quads
                .iter()
                .map(|&(quad, insert)| (perm.row_of(quad), insert))
                .collect();
            rows.sort_unstable_by_key(|r| r.0);
            rows
        };
        // A large write's five orders are sorted on all cores.
        let rows = if quads.len() >= PARALLEL_SORT_FROM {
            let rows: Vec<Vec<(Row, bool)>> =
                Permutation::ALL.into_par_iter().map(sorted).collect();
            rows.try_into().expect("five orders")
        } else {
            Permutation::ALL.map(sorted)
        };
        Run::from_rows(rows)
    }

    /// A run of rows already sorted in each permutation's order.
    fn from_rows(rows: [Vec<(Row, bool)>; Permutation::COUNT]) -> Run {
        let spo = &rows[Permutation::Spo as usize];
        let net_by = |column: usize| {
            let mut net: FxHashMap<u64, i64> = FxHashMap::default();
            for &(row, insert) in spo {
                *net.entry(row[column]).or_default() += if insert { 1 } else { -1 };
            }
            sorted_nonzero(net)
        };
        let net_before = std::array::from_fn(|p| {
            let mut sums = Vec::with_capacity(rows[p].len() + 1);
            let mut sum = 0i64;
            sums.push(0);
            for &(_, insert) in &rows[p] {
                sum += if insert { 1 } else { -1 };
                sums.push(sum);
            }
            sums
        });
        let prefixes = std::array::from_fn(|p| PrefixFilter::of(&rows[p]));
        Run {
            predicate_net: net_by(1),
            graph_net: net_by(3),
            rows,
            net_before,
            prefixes,
        }
    }

    /// `older` then `newer` as one run: a quad changed in both was changed
    /// back (changes alternate), so the two cancel out. Each permutation's
    /// rows are merged in one pass (both runs are sorted already).
    pub fn merge(older: &Run, newer: &Run) -> Run {
        Run::from_rows(std::array::from_fn(|p| {
            merge_sorted(&older.rows[p], &newer.rows[p])
        }))
    }

    pub fn len(&self) -> usize {
        self.rows[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows[0].is_empty()
    }

    /// Where the changes with `lo <= row <= hi` start and end in `perm`'s
    /// order.
    pub fn range_bounds(&self, perm: Permutation, lo: &Row, hi: &Row) -> (usize, usize) {
        if lo[..2] == hi[..2] && !self.prefixes[perm as usize].may_have(lo[0], lo[1]) {
            return (0, 0);
        }
        let rows = &self.rows[perm as usize];
        let start = rows.partition_point(|(r, _)| r < lo);
        let end = start + rows[start..].partition_point(|(r, _)| r <= hi);
        (start, end)
    }

    /// The `i`-th change in `perm`'s order.
    #[inline]
    pub fn row_at(&self, perm: Permutation, i: usize) -> (Row, bool) {
        self.rows[perm as usize][i]
    }

    /// The changes from position `start` to `end` in `perm`'s order.
    pub fn rows_from(&self, perm: Permutation, start: usize, end: usize) -> &[(Row, bool)] {
        &self.rows[perm as usize][start..end]
    }

    /// Signed number of changes whose first `k` columns lie in
    /// `[lo[..k], hi[..k]]`.
    pub fn count(&self, perm: Permutation, lo: &Row, hi: &Row, k: usize) -> i64 {
        if k >= 2 && lo[..2] == hi[..2] && !self.prefixes[perm as usize].may_have(lo[0], lo[1]) {
            return 0;
        }
        let rows = &self.rows[perm as usize];
        let start = rows.partition_point(|(r, _)| r[..k] < lo[..k]);
        let end = start + rows[start..].partition_point(|(r, _)| r[..k] <= hi[..k]);
        let sums = &self.net_before[perm as usize];
        sums[end] - sums[start]
    }

    /// All changes, in SPO order, as quads.
    pub fn changes(&self) -> impl Iterator<Item = Change> + '_ {
        self.rows[Permutation::Spo as usize]
            .iter()
            .map(|&(row, insert)| Change {
                quad: Permutation::Spo.quad_of(row),
                insert,
            })
    }

    pub fn predicate_net(&self) -> &[(u64, i64)] {
        &self.predicate_net
    }

    pub fn graph_net(&self) -> &[(u64, i64)] {
        &self.graph_net
    }

    /// Approximate heap bytes.
    pub fn bytes(&self) -> usize {
        let filters: usize = self.prefixes.iter().map(|f| f.bits.len() * 8).sum();
        self.len() * 6 * (std::mem::size_of::<(Row, bool)>() + std::mem::size_of::<i64>()) + filters
    }
}

/// Two sorted lists of changes as one: equal rows cancel out (changes to
/// one quad alternate), unless both say the same, where the newer one wins.
fn merge_sorted(older: &[(Row, bool)], newer: &[(Row, bool)]) -> Vec<(Row, bool)> {
    let mut out = Vec::with_capacity(older.len() + newer.len());
    let (mut i, mut j) = (0, 0);
    while i < older.len() && j < newer.len() {
        match older[i].0.cmp(&newer[j].0) {
            Ordering::Less => {
                out.push(older[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(newer[j]);
                j += 1;
            }
            Ordering::Equal => {
                if older[i].1 == newer[j].1 {
                    // Not alternating: cannot come from effective
                    // changes, but the newer one is the truth.
                    out.push(newer[j]);
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&older[i..]);
    out.extend_from_slice(&newer[j..]);
    out
}

/// A Bloom filter of the two-column prefixes of a run's rows: 12 to 24
/// bits per row, 3 probes, under 1% false positives.
#[derive(Debug, Default)]
struct PrefixFilter {
    bits: Vec<u64>,
}

impl PrefixFilter {
    const PROBES: u64 = 3;

    /// Runs this short have no filter: a binary search over them is as
    /// quick as the probes, and a commit of a few changes skips building it.
    const MIN_ROWS: usize = 16;

    fn of(rows: &[(Row, bool)]) -> PrefixFilter {
        if rows.len() < Self::MIN_ROWS {
            return PrefixFilter { bits: Vec::new() };
        }
        // Sized by rows, not distinct prefixes (counting them is another
        // pass): more bits where rows share prefixes, fewer false positives.
        let words = (rows.len() * 12 / 64).next_power_of_two().max(1);
        let mut filter = PrefixFilter {
            bits: vec![0; words],
        };
        for (row, _) in rows {
            for bit in filter.probes(row[0], row[1]) {
                filter.bits[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
        filter
    }

    fn probes(&self, a: u64, b: u64) -> impl Iterator<Item = u64> {
        let mask = self.bits.len() as u64 * 64 - 1;
        let h = (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let step = h.rotate_left(31) | 1;
        (0..Self::PROBES).map(move |i| h.wrapping_add(i.wrapping_mul(step)) & mask)
    }

    fn may_have(&self, a: u64, b: u64) -> bool {
        self.bits.is_empty()
            || self
                .probes(a, b)
                .all(|bit| self.bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
    }
}

/// Largest run a commit makes by merging: larger merges run in the
/// background (`Store`'s run merger), so no commit waits for one. Merging
/// two runs of 400 K changes held every writer for 200 ms; one of this size
/// takes a few milliseconds.
pub const COMMIT_MERGE_LIMIT: usize = 1 << 16;

/// The runs of one snapshot, oldest first. Shared between snapshots.
#[derive(Debug, Clone, Default)]
pub struct Runs(pub Arc<[Arc<Run>]>);

impl Runs {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Run>> {
        self.0.iter()
    }

    /// Number of changes over all runs.
    pub fn changes(&self) -> usize {
        self.0.iter().map(|r| r.len()).sum()
    }

    pub fn bytes(&self) -> usize {
        self.0.iter().map(|r| r.bytes()).sum()
    }

    /// These runs and `newest` on top. Runs of similar size are merged so
    /// that there are O(log n) of them: each merge at least doubles a run,
    /// so a change is merged O(log n) times. Merges into a run larger than
    /// [`COMMIT_MERGE_LIMIT`] are left for [`pending_merge`](Self::pending_merge).
    pub fn push(&self, newest: Run) -> Runs {
        let mut runs: Vec<Arc<Run>> = self.0.to_vec();
        if !newest.is_empty() {
            runs.push(Arc::new(newest));
        }
        while runs.len() >= 2 {
            let n = runs.len();
            if !Self::should_merge(&runs[n - 2], &runs[n - 1])
                || runs[n - 2].len() + runs[n - 1].len() > COMMIT_MERGE_LIMIT
            {
                break;
            }
            let newer = runs.pop().expect("two runs");
            let older = runs.pop().expect("two runs");
            let merged = Run::merge(&older, &newer);
            if !merged.is_empty() {
                runs.push(Arc::new(merged));
            }
        }
        Runs(runs.into())
    }

    /// Whether two adjacent runs are of similar size (the older at most
    /// twice the newer): merged, they keep the number of runs logarithmic.
    fn should_merge(older: &Run, newer: &Run) -> bool {
        older.len() <= 2 * newer.len()
    }

    /// The oldest two adjacent runs of similar size that
    /// [`push`](Self::push) left unmerged because the merge is too large to
    /// make a commit wait for.
    pub fn pending_merge(&self) -> Option<(Arc<Run>, Arc<Run>)> {
        self.0
            .windows(2)
            .find(|pair| Self::should_merge(&pair[0], &pair[1]))
            .map(|pair| (pair[0].clone(), pair[1].clone()))
    }

    /// These runs with the adjacent `older` and `newer` replaced by
    /// `merged` (the two merged); `None` when they are no longer here side
    /// by side (a commit merged one of them, or a compaction took them).
    pub fn replaced(&self, older: &Arc<Run>, newer: &Arc<Run>, merged: Run) -> Option<Runs> {
        let at = self
            .0
            .windows(2)
            .position(|pair| Arc::ptr_eq(&pair[0], older) && Arc::ptr_eq(&pair[1], newer))?;
        let mut runs: Vec<Arc<Run>> = Vec::with_capacity(self.0.len() - 1);
        runs.extend(self.0[..at].iter().cloned());
        if !merged.is_empty() {
            runs.push(Arc::new(merged));
        }
        runs.extend(self.0[at + 2..].iter().cloned());
        Some(Runs(runs.into()))
    }

    /// These runs and `newest` on top, unmerged: a view that lives only as
    /// long as one update's operation.
    pub fn with_top(&self, newest: Run) -> Runs {
        if newest.is_empty() {
            return self.clone();
        }
        let mut runs: Vec<Arc<Run>> = self.0.to_vec();
        runs.push(Arc::new(newest));
        Runs(runs.into())
    }

    /// Signed number of changes in range, over all runs (see [`Run::count`]).
    pub fn count(&self, perm: Permutation, lo: &Row, hi: &Row, k: usize) -> i64 {
        self.0.iter().map(|r| r.count(perm, lo, hi, k)).sum()
    }

    /// Net change of quads per predicate over all runs, sorted.
    pub fn predicate_net(&self) -> Vec<(u64, i64)> {
        self.sum(Run::predicate_net)
    }

    /// Net change of quads per graph over all runs, sorted.
    pub fn graph_net(&self) -> Vec<(u64, i64)> {
        self.sum(Run::graph_net)
    }

    fn sum(&self, of: fn(&Run) -> &[(u64, i64)]) -> Vec<(u64, i64)> {
        let mut net: FxHashMap<u64, i64> = FxHashMap::default();
        for run in self.0.iter() {
            for &(key, n) in of(run) {
                *net.entry(key).or_default() += n;
            }
        }
        sorted_nonzero(net)
    }
}

fn sorted_nonzero(net: FxHashMap<u64, i64>) -> Vec<(u64, i64)> {
    let mut net: Vec<(u64, i64)> = net.into_iter().filter(|e| e.1 != 0).collect();
    net.sort_unstable();
    net
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(q: [u64; 4]) -> Change {
        Change {
            quad: q,
            insert: true,
        }
    }

    fn del(q: [u64; 4]) -> Change {
        Change {
            quad: q,
            insert: false,
        }
    }

    #[test]
    fn changes_to_one_quad_cancel_in_pairs() {
        assert_eq!(
            Run::of(&[ins([4, 5, 6, 0]), ins([1, 2, 3, 0])]).rows,
            Run::of_distinct(&[ins([4, 5, 6, 0]), ins([1, 2, 3, 0])]).rows
        );
        let run = Run::of(&[ins([1, 2, 3, 0]), del([1, 2, 3, 0]), ins([4, 5, 6, 0])]);
        assert_eq!(run.len(), 1);
        let all = run.rows_from(Permutation::Pos, 0, run.len());
        assert_eq!(all, &[([5, 6, 4, 0], true)]);
    }

    #[test]
    fn newest_run_decides_and_counts_add_up() {
        let runs = Runs::default()
            .push(Run::of(&[ins([1, 1, 1, 0]), ins([2, 1, 1, 0])]))
            .push(Run::of(&[del([1, 1, 1, 0])]))
            .push(Run::of(&[ins([1, 1, 1, 0]), del([9, 9, 9, 0])]));
        let mut cursor =
            crate::delta::ChangeCursor::new(&runs, Permutation::Spo, &[0; 4], &[u64::MAX; 4]);
        let all: Vec<(Row, bool)> = std::iter::from_fn(|| cursor.next_change()).collect();
        assert_eq!(
            all,
            vec![
                ([1, 1, 1, 0], true),
                ([2, 1, 1, 0], true),
                ([9, 9, 9, 0], false)
            ]
        );
        // Quad 9 was in the base: two inserts, one base row deleted.
        assert_eq!(runs.count(Permutation::Spo, &[0; 4], &[u64::MAX; 4], 0), 1);
        assert_eq!(runs.predicate_net(), vec![(1, 2), (9, -1)]);
    }

    fn inserts(from: u64, n: u64) -> Run {
        let changes: Vec<Change> = (from..from + n).map(|s| ins([s, 1, s, 0])).collect();
        Run::of_distinct(&changes)
    }

    fn all_changes(runs: &Runs) -> Vec<(Row, bool)> {
        let mut cursor =
            crate::delta::ChangeCursor::new(runs, Permutation::Spo, &[0; 4], &[u64::MAX; 4]);
        std::iter::from_fn(|| cursor.next_change()).collect()
    }

    #[test]
    fn a_commit_leaves_large_merges_pending_and_the_merge_keeps_the_data() {
        let half = (COMMIT_MERGE_LIMIT / 2 + 1) as u64;
        let runs = Runs::default()
            .push(inserts(0, half))
            .push(inserts(half, half));
        // Too large to merge at commit: two runs, one merge waiting.
        assert_eq!(runs.iter().count(), 2);
        let (older, newer) = runs.pending_merge().expect("a pending merge");
        // Small commits on top still merge among themselves.
        let runs = runs
            .push(Run::of(&[ins([1, 2, 3, 0])]))
            .push(Run::of(&[del([1, 2, 3, 0]), ins([7, 7, 7, 0])]));
        assert_eq!(runs.iter().count(), 3);
        let before = all_changes(&runs);
        let merged = runs
            .replaced(&older, &newer, Run::merge(&older, &newer))
            .expect("still side by side");
        assert_eq!(merged.iter().count(), 2);
        assert!(merged.pending_merge().is_none());
        assert_eq!(all_changes(&merged), before);
        // Runs that are no longer there are not replaced.
        let gone = Arc::new(inserts(0, 3));
        assert!(merged.replaced(&gone, &newer, inserts(0, 1)).is_none());
    }
}
