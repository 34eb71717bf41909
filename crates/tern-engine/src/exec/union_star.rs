//! Looking up many patterns of a [`UnionOfPatterns`] that share their
//! bound subject (or object) with one read of that node's triples.
//!
//! `?x a ub:Person` is 43 patterns: `?x a C` for each subclass, `?x p ?y`
//! for each property whose domain gives a person, `?y p ?x` for each range.
//! Looked up for one `?x`, that is 43 index lookups, most finding nothing;
//! the triples of `?x` itself (its SPO rows, and its OPS rows for the
//! patterns where it is the object) are a few dozen rows read once, each
//! matched against the patterns with its predicate. A node with many
//! triples (a department is the object of thousands) is read this way only
//! while its rows are few against the lookups they replace.

use super::pattern_rows::PatternRows;
use super::scan::{GraphScope, PatternTerm};
use super::union_of_patterns::{BranchValue, UnionBranch};
use crate::context::QueryContext;
use crate::EngineError;
use rustc_hash::FxHashMap;
use tern_index::{Id, Index, MergedLookup, Permutation, ScanRange};

/// Fewest patterns read together (fewer: looked up one by one).
const MIN_PATTERNS: usize = 4;
/// Rows of a node read, at most, per lookup replaced.
const ROWS_PER_LOOKUP: u64 = 16;

/// The patterns whose bound position is the subject (or the object),
/// by predicate.
#[derive(Default)]
struct Star {
    by_predicate: FxHashMap<Id, Vec<usize>>,
    any_predicate: Vec<usize>,
    patterns: usize,
}

/// For one output column of the union: which patterns a read of the
/// node's triples answers, and which are looked up one by one.
pub struct StarLookup {
    subject: Star,
    object: Star,
    /// Patterns looked up one by one.
    pub others: Vec<usize>,
    readers: [Option<MergedLookup>; Permutation::COUNT],
}

impl StarLookup {
    /// Whether any patterns are read together (else all are `others`).
    pub fn has_stars(&self) -> bool {
        self.subject.patterns > 0 || self.object.patterns > 0
    }

    /// The stars of output column `column`, when at least one is worth it.
    pub fn of(branches: &[UnionBranch], column: usize) -> StarLookup {
        let mut star = StarLookup {
            subject: Star::default(),
            object: Star::default(),
            others: Vec::new(),
            readers: Default::default(),
        };
        for (b, branch) in branches.iter().enumerate() {
            let BranchValue::Column(pc) = branch.output[column] else {
                star.others.push(b);
                continue;
            };
            let terms = branch.pattern.terms;
            let at = |i: usize| terms[i] == PatternTerm::Variable(pc);
            let group = match () {
                _ if branch.pattern.graph != GraphScope::Default => None,
                _ if at(0) => Some(&mut star.subject),
                _ if at(2) => Some(&mut star.object),
                _ => None,
            };
            let Some(group) = group else {
                star.others.push(b);
                continue;
            };
            match terms[1] {
                PatternTerm::Constant(p) => group.by_predicate.entry(p).or_default().push(b),
                PatternTerm::Variable(_) => group.any_predicate.push(b),
            }
            group.patterns += 1;
        }
        // A star of too few patterns is looked up pattern by pattern.
        for which in [0, 1] {
            let group = if which == 0 {
                &mut star.subject
            } else {
                &mut star.object
            };
            if group.patterns < MIN_PATTERNS {
                let moved = std::mem::take(group);
                star.others
                    .extend(moved.by_predicate.into_values().flatten());
                star.others.extend(moved.any_predicate);
            }
        }
        star.others.sort_unstable();
        star
    }

    /// Reads the triples of `value` where it is the subject (and where it is
    /// the object) and calls `each` with every pattern each matches and
    /// the pattern's row. Patterns whose read would cost more than their
    /// lookups are returned, to be looked up one by one.
    pub fn read(
        &mut self,
        ctx: &QueryContext,
        branches: &[UnionBranch],
        value: Id,
        row_out: &mut Vec<Id>,
        mut each: impl FnMut(usize, &[Id]) -> Result<(), EngineError>,
    ) -> Result<Vec<usize>, EngineError> {
        let mut fallback = Vec::new();
        for (star, perm) in [
            (&self.subject, Permutation::Spo),
            (&self.object, Permutation::Ops),
        ] {
            if star.patterns == 0 {
                continue;
            }
            let rows = ctx.index.count(perm, &[value], ScanRange::ALL)?;
            if rows > star.patterns as u64 * ROWS_PER_LOOKUP {
                fallback.extend(star.by_predicate.values().flatten());
                fallback.extend(&star.any_predicate);
                continue;
            }
            let Some((lo, hi)) = Index::bounds(&[value], ScanRange::ALL) else {
                continue;
            };
            let reader = self.readers[perm as usize].get_or_insert_with(|| ctx.index.lookup(perm));
            let mut last_triples: FxHashMap<usize, Option<[u64; 3]>> = FxHashMap::default();
            let mut error = None;
            reader.rows(lo, hi, |stored| {
                if error.is_some() {
                    return;
                }
                let quad = perm.quad_of(stored);
                let candidates = star
                    .by_predicate
                    .get(&Id(quad[1]))
                    .into_iter()
                    .flatten()
                    .chain(&star.any_predicate);
                for &b in candidates {
                    let branch = &branches[b];
                    let constants_agree = branch
                        .pattern
                        .terms
                        .iter()
                        .zip(&quad)
                        .all(|(t, &v)| !matches!(t, PatternTerm::Constant(k) if k.0 != v));
                    if !constants_agree {
                        continue;
                    }
                    // The stored row, filled as the pattern's own scan
                    // would fill it.
                    let mut pattern: PatternRows = branch.pattern;
                    pattern.perm = perm;
                    row_out.clear();
                    row_out.resize(branch.width, Id::UNDEFINED);
                    let last = last_triples.entry(b).or_default();
                    if pattern.fill(ctx, stored, last, row_out) {
                        if let Err(e) = each(b, row_out) {
                            error = Some(e);
                            return;
                        }
                    }
                }
            })?;
            if let Some(e) = error {
                return Err(e);
            }
        }
        fallback.sort_unstable();
        Ok(fallback)
    }
}
