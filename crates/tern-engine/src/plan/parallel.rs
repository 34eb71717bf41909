//! Whether a basic graph pattern's join tree runs as copies on all cores,
//! and building them (see `exec::ParallelPipelines`).
//!
//! The tree is copied once per core when the rows expected along its
//! driving path (the probe sides and merged inputs down to the scan that
//! starts it) are many. Each copy's driving scan reads some morsels of the
//! pattern's rows, cut where the value after the pattern's constants
//! changes (a subject's rows stay together) at about equal row counts and
//! dealt out in turn, and the joins above it see those rows only:
//!
//! - an index join looks up its copy's rows only;
//! - a hash join whose build side has the driving scan's variable (the
//!   one its morsels are cut on) is partitioned: each copy keeps the build
//!   rows of its morsels' values only (`MorselFilter`), so the copies
//!   share the hashing and the table's memory (they each read the build
//!   side's input, which costs far less than hashing it);
//! - any other build side is built by every copy again, so copies are
//!   made only when those sides are small against the path;
//! - a merge join with a scan sorted on the same variable as the driving
//!   scan (a star of patterns on one subject) is co-partitioned: that scan
//!   reads the same morsels' values, so each copy merges its own part of
//!   both; a merge join on anything else keeps the tree on one core.
//!
//! Plans for the first rows (ASK, LIMIT) and lone scans stay on one core:
//! copies run in rounds, and would make more rows than are read, or only
//! reorder a scan whose rows are decoded on all cores anyway.

use super::bgp::{FilterPlacement, Leaf, Leaves, Morsel, RowRange};
use super::join_order::{Estimator, JoinTree};
use super::planner::Planner;
use crate::exec::{BoxedOperator, Measured, ParallelPipelines, PatternRows};
use crate::expr::Scope;
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use std::sync::Arc;
use tern_index::{Index, Row};

/// Rows expected along the driving path below which one core does it:
/// a copy costs a plan and a round of hand-overs per batch.
pub(super) const PARALLEL_MIN_ROWS: u64 = 50_000;
/// Most rows of hash-join build sides every copy builds again.
const MOST_COPIED_BUILD_ROWS: u64 = 200_000;
/// Those rows are at most this share of the path's rows.
const MOST_COPIED_SHARE: u64 = 4;
/// The tree's output is at most this share of the rows along its path.
/// Its rows go through the rounds to one consumer on one core, and writing
/// them is memory-bound: a join that makes many rows cheaply (WatDiv's
/// follows-of-follows, 1.5 M rows of a hash join counted above) ran 1.8x
/// slower as two copies, while joins that work per row (lookups) gain.
const MOST_OUTPUT_SHARE: u64 = 2;
/// Rows of the driving pattern a morsel has about, at least...
const MORSEL_ROWS: u64 = 512;
/// ...but each copy gets at most this many morsels (and at least one).
const MORSELS_PER_COPY: usize = 8;

impl Planner {
    /// `tree` as copies on all cores, each reading morsels of its driving
    /// pattern, or `None` where one core is better (see the module).
    /// Filters are placed in every copy alike, and `filters` is left as
    /// building the tree once leaves it.
    pub(super) fn parallel_join_tree(
        &self,
        tree: &JoinTree,
        leaves: &Leaves,
        estimator: &Estimator,
        filters: &mut FilterPlacement,
        scope: &Arc<Scope>,
    ) -> Result<Option<BoxedOperator>, EngineError> {
        let parts = ParallelPipelines::parts(&self.ctx);
        if parts < 2 || self.first_rows() != 0 || matches!(tree, JoinTree::Scan(_)) {
            return Ok(None);
        }
        let Some(path) = DrivingPath::of(tree, estimator) else {
            return Ok(None);
        };
        let Leaf::Pattern((rows, variables, pattern)) = leaves.get(path.leaf) else {
            return Ok(None);
        };
        // The variable the morsels are cut on.
        let key = pattern.sorted_column().map(|c| &variables[c]);
        let mut partitioned_builds = Vec::new();
        let mut copied_rows = 0u64;
        for &(side, rows) in &path.builds {
            let mut bound = FxHashSet::default();
            tree_variables(side, leaves, &mut bound);
            match key {
                Some(key) if bound.contains(key) => {
                    partitioned_builds.push(side as *const JoinTree as usize)
                }
                _ => copied_rows = copied_rows.saturating_add(rows),
            }
        }
        let from_rows = self.ctx.parallel_from_rows().unwrap_or(PARALLEL_MIN_ROWS);
        let output = estimator.rows(tree).round() as u64;
        if path.rows < from_rows
            || (from_rows > 0 && output.saturating_mul(MOST_OUTPUT_SHARE) > path.rows)
            || copied_rows > MOST_COPIED_BUILD_ROWS
            || copied_rows.saturating_mul(MOST_COPIED_SHARE) > path.rows
        {
            return Ok(None);
        }
        let Some(morsels) = self.morsels(pattern, *rows, parts)? else {
            return Ok(None);
        };
        // The values other inputs are cut on: those of the driving rows.
        // Beyond its first and last rows they join nothing, and where the
        // driving scan is a range of one kind of subject (reviews), the
        // other input's other subjects (offers with dates too) would all
        // go to the first or last copy.
        let mut values = morsels.clone();
        let ends = self
            .ctx
            .index
            .scan_ends(pattern.perm, pattern.prefix(), pattern.scan_range)?;
        if let (Some((first, last)), Some(tail)) = (ends, values.len().checked_sub(1)) {
            values[0].0 = first;
            values[tail].1 = last;
        }
        // The merged scans read the same values of the driving variable.
        let column = pattern.prefix().len();
        let mut scans = vec![(path.leaf, morsels.clone())];
        for (leaf, merged_on) in &path.merged {
            let Leaf::Pattern((_, variables, merged)) = leaves.get(*leaf) else {
                return Ok(None);
            };
            let sorted_on = merged.sorted_column().map(|c| &variables[c]);
            if key != Some(merged_on) || sorted_on != Some(merged_on) {
                return Ok(None);
            }
            let Some(same_values) = same_values(merged, &values, column) else {
                return Ok(None);
            };
            scans.push((*leaf, same_values));
        }
        let parts = parts.min(morsels.len());
        let unplaced = filters.clone();
        let mut copies = Vec::with_capacity(parts);
        for part in 0..parts {
            *filters = unplaced.clone();
            let dealt = |morsels: &[RowRange]| dealt_to(morsels, part, parts);
            let key_ranges = dealt(&values)
                .iter()
                .map(|(from, to)| (from[column], to[column]))
                .collect();
            let copy = Leaves {
                morsel: Some(Morsel {
                    scans: scans.iter().map(|(leaf, m)| (*leaf, dealt(m))).collect(),
                    part: (part, parts),
                    partitioned_builds: partitioned_builds.clone(),
                    key: key.cloned(),
                    key_ranges,
                }),
                ..*leaves
            };
            let mut placed = |operator| filters.place(&self.ctx, operator, scope);
            copies.push(self.build_join_tree(tree, &copy, estimator, &mut placed)?);
        }
        let parallel = ParallelPipelines::new(self.ctx.clone(), copies);
        let estimate = estimator.rows(tree).round() as u64;
        Ok(Some(Box::new(Measured::new(
            Box::new(parallel),
            Some(estimate),
        ))))
    }

    /// The pattern's rows cut into morsels for `parts` copies; `None` when
    /// they have too few values to cut.
    fn morsels(
        &self,
        pattern: &PatternRows,
        rows: u64,
        parts: usize,
    ) -> Result<Option<Vec<RowRange>>, EngineError> {
        let Some((lo, hi)) = Index::bounds(pattern.prefix(), pattern.scan_range) else {
            return Ok(None);
        };
        let wanted = (rows / MORSEL_ROWS).clamp(parts as u64, (parts * MORSELS_PER_COPY) as u64);
        let cuts = self.ctx.index.split_scan(
            pattern.perm,
            pattern.prefix(),
            pattern.scan_range,
            wanted as usize,
        )?;
        if cuts.is_empty() {
            return Ok(None);
        }
        let mut morsels = Vec::with_capacity(cuts.len() + 1);
        let mut from = lo;
        for &cut in &cuts {
            morsels.push((from, predecessor(cut)));
            from = cut;
        }
        morsels.push((from, hi));
        Ok(Some(morsels))
    }
}

/// The morsels copy `part` of `parts` reads: every `parts`-th, starting
/// with its own number. Dealt out in turn, so that where the pattern's rows
/// change in kind (a country's producers, then its persons) every copy
/// gets some of each.
fn dealt_to(morsels: &[RowRange], part: usize, parts: usize) -> Vec<RowRange> {
    morsels
        .iter()
        .enumerate()
        .filter(|(i, _)| i % parts == part)
        .map(|(_, &morsel)| morsel)
        .collect()
}

/// For a pattern merged with the driving one on the variable in `column`
/// of the driving morsels' rows (the one after their constants): the
/// morsels of its own rows with the same values there, within its own
/// bounds (possibly empty). `None` if the pattern's rows are not sorted on
/// that variable right after its constants.
fn same_values(merged: &PatternRows, morsels: &[RowRange], column: usize) -> Option<Vec<RowRange>> {
    let (lo, hi) = Index::bounds(merged.prefix(), merged.scan_range)?;
    let own = merged.prefix().len();
    if own >= 3 || column >= 3 {
        return None;
    }
    Some(
        morsels
            .iter()
            .map(|(from, to)| {
                let mut first = lo;
                first[own] = from[column];
                first[own + 1..].fill(0);
                let mut last = hi;
                last[own] = to[column];
                last[own + 1..].fill(u64::MAX);
                (first.max(lo), last.min(hi))
            })
            .collect(),
    )
}

/// From the root of a join tree down the inputs that stream (index joins'
/// left inputs, hash joins' probe sides, merge joins' inputs other than a
/// lone scan) to the scan that starts it.
struct DrivingPath<'t> {
    leaf: usize,
    /// Rows expected out of every operator on the path.
    rows: u64,
    /// The build sides of hash joins on it, with the rows expected of each.
    builds: Vec<(&'t JoinTree, u64)>,
    /// Scans merged with the path, and the variable each is merged on.
    merged: Vec<(usize, Variable)>,
}

impl<'t> DrivingPath<'t> {
    /// `None` when a merge join on the path has no lone scan for an input.
    fn of(tree: &'t JoinTree, estimator: &Estimator) -> Option<DrivingPath<'t>> {
        let estimate = |t: &JoinTree| estimator.rows(t).round() as u64;
        let mut rows = 0u64;
        let mut builds = Vec::new();
        let mut merged = Vec::new();
        let mut node = tree;
        loop {
            rows = rows.saturating_add(estimate(node));
            node = match node {
                JoinTree::Scan(leaf) => {
                    return Some(DrivingPath {
                        leaf: *leaf,
                        rows,
                        builds,
                        merged,
                    })
                }
                JoinTree::Index(left, _) => left,
                // The larger side is probed, as `build_join_tree` does.
                JoinTree::Hash(a, b) => {
                    let (probe, build) = match estimate(a) < estimate(b) {
                        true => (b, a),
                        false => (a, b),
                    };
                    builds.push((build.as_ref(), estimate(build)));
                    probe
                }
                JoinTree::Merge(a, b, key) => match (a.as_ref(), b.as_ref()) {
                    (_, JoinTree::Scan(leaf)) => {
                        merged.push((*leaf, key.clone()));
                        a
                    }
                    (JoinTree::Scan(leaf), _) => {
                        merged.push((*leaf, key.clone()));
                        b
                    }
                    _ => return None,
                },
            };
        }
    }
}

/// The variables the leaves of `tree` bind.
fn tree_variables<'a>(tree: &JoinTree, leaves: &Leaves<'a>, out: &mut FxHashSet<&'a Variable>) {
    match tree {
        JoinTree::Scan(leaf) => out.extend(leaves.variables(*leaf)),
        JoinTree::Index(left, leaf) => {
            tree_variables(left, leaves, out);
            out.extend(leaves.variables(*leaf));
        }
        JoinTree::Hash(a, b) | JoinTree::Merge(a, b, _) => {
            tree_variables(a, leaves, out);
            tree_variables(b, leaves, out);
        }
    }
}

/// The row just below `row`, in the order of index rows.
fn predecessor(mut row: Row) -> Row {
    for c in (0..row.len()).rev() {
        if row[c] > 0 {
            row[c] -= 1;
            row[c + 1..].fill(u64::MAX);
            return row;
        }
    }
    row
}
