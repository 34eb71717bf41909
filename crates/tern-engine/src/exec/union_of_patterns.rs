//! A union of stored triple patterns, deduplicated on its output variables
//! and looked up with some of them bound: what the inference rewriting
//! makes of a pattern the schema extends (a class with its subclasses,
//! domains and ranges; a property with its subproperties, inverses and
//! symmetric reading), each pattern read with the sameAs synonyms of its
//! values.
//!
//! Looked up for the values of one row, each pattern is one index lookup
//! (one per synonym of a bound value), so a join with a few rows reads a
//! few index entries per pattern instead of every instance of a class.
//! Branches that are no single pattern (an intersection's join, a
//! transitive closure, VALUES) are read whole at the first lookup and
//! probed in memory.
//!
//! The rows of one lookup are distinct: a union under DISTINCT (the
//! entailed graph is a set) gives each solution once whichever branches
//! derive it.

use super::pattern_rows::PatternRows;
use super::scan::{GraphScope, PatternTerm};
use super::union_star::StarLookup;
use super::BoxedOperator;
use crate::context::{QueryContext, SynonymTable};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::{Id, MergedLookup, Tag};

/// Most output variables of a union of triple patterns (subject,
/// predicate, object and graph).
pub const MAX_UNION_WIDTH: usize = 4;

/// One output row, padded with [`Id::UNDEFINED`].
pub type UnionRow = [Id; MAX_UNION_WIDTH];

/// Where one output column of a branch takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BranchValue {
    /// The pattern's column (one per variable of the pattern).
    Column(usize),
    /// A constant (the branch binds the variable to it, as `BIND` would).
    Constant(Id),
}

/// One stored triple pattern of the union.
#[derive(Debug, Clone)]
pub struct UnionBranch {
    pub pattern: PatternRows,
    /// Columns of the pattern's rows (its variables, hidden ones included).
    pub width: usize,
    /// For each output column, where its value comes from.
    pub output: Vec<BranchValue>,
    /// Pattern columns whose values stand for every sameAs synonym.
    pub synonyms: Vec<usize>,
    /// Pattern columns whose rows are dropped when the value is a literal
    /// (a triple read backwards gives no literal subject).
    pub not_literal: Vec<usize>,
    /// Estimated rows (the pattern's, before synonyms).
    pub rows: u64,
}

/// The union, ready to be looked up.
pub struct UnionOfPatterns {
    pub variables: Vec<Variable>,
    pub branches: Vec<UnionBranch>,
    /// Branches planned as operators (joins, paths, VALUES), read whole at
    /// the first lookup; their variables are matched to the output by name.
    pub(super) complex: Vec<BoxedOperator>,
    complex_rows: Option<ComplexRows>,
    pub(super) synonyms: Option<Arc<SynonymTable>>,
    /// One reader per branch and permutation, each keeping the block it
    /// read last.
    readers: Vec<[Option<MergedLookup>; tern_index::Permutation::COUNT]>,
    /// Per output column, the patterns read together when it alone is
    /// bound (made at the first such lookup).
    stars: Vec<Option<StarLookup>>,
    /// The branches, most rows first.
    by_rows_descending: Vec<usize>,
    pub(super) first_literal: Option<Id>,
    pub lookups: Arc<AtomicU64>,
}

/// The complex branches' rows, distinct, with an index per column.
struct ComplexRows {
    rows: Vec<UnionRow>,
    /// Per output column (built on first use): value → rows; rows with the
    /// column unbound match any value and are listed under UNDEFINED.
    by_column: Vec<Option<FxHashMap<Id, Vec<u32>>>>,
}

impl UnionOfPatterns {
    pub fn new(
        ctx: &QueryContext,
        variables: Vec<Variable>,
        branches: Vec<UnionBranch>,
        complex: Vec<BoxedOperator>,
    ) -> UnionOfPatterns {
        assert!(
            variables.len() <= MAX_UNION_WIDTH,
            "a union of triple patterns"
        );
        let readers = branches.iter().map(|_| Default::default()).collect();
        let mut by_rows_descending: Vec<usize> = (0..branches.len()).collect();
        by_rows_descending.sort_by_key(|&b| std::cmp::Reverse(branches[b].rows));
        UnionOfPatterns {
            variables,
            branches,
            complex,
            complex_rows: None,
            synonyms: ctx.synonyms.get().cloned(),
            readers,
            stars: (0..MAX_UNION_WIDTH).map(|_| None).collect(),
            by_rows_descending,
            first_literal: ctx.index.first_literal().ok(),
            lookups: Arc::default(),
        }
    }

    /// The planned complex branches (for EXPLAIN).
    pub fn complex(&self) -> &[BoxedOperator] {
        &self.complex
    }

    /// The estimated rows of the whole union (duplicates counted).
    pub fn estimated_rows(&self) -> u64 {
        let complex: u64 = self
            .complex
            .iter()
            .map(|c| c.estimated_rows().unwrap_or(0))
            .sum();
        self.branches.iter().map(|b| b.rows).sum::<u64>() + complex
    }

    /// Bytes its materialized state holds.
    pub fn memory(&self) -> u64 {
        self.complex_rows.as_ref().map_or(0, |c| {
            (c.rows.len() * std::mem::size_of::<UnionRow>()) as u64
        })
    }

    /// Appends to `out` the distinct rows that agree with `bound` (a value
    /// per output column, or `None`), and returns how many. A bound value
    /// is kept as it is in the row: under sameAs its synonyms are looked
    /// up, and the rows they find are rows of the value itself.
    pub fn lookup(
        &mut self,
        ctx: &QueryContext,
        bound: &[Option<Id>],
        out: &mut Vec<UnionRow>,
    ) -> Result<usize, EngineError> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let start = out.len();
        // With every column bound, the one possible row is the bound
        // values: the first pattern that has it answers (an instance check
        // of a class with many subclasses stops at the first that holds).
        let existence = bound.iter().all(Option::is_some);
        let found = |out: &Vec<UnionRow>| existence && out.len() > start;
        let mut bound_columns = bound.iter().enumerate().filter(|(_, v)| v.is_some());
        let stars_left = match (bound_columns.next(), bound_columns.next()) {
            (Some((column, Some(value))), None) if !existence && self.has_stars(column) => {
                Some(self.read_stars(ctx, column, *value, bound, out)?)
            }
            _ => None,
        };
        // Looked up one by one without a list of them made per lookup (a
        // join looks a union up once per row).
        let count = stars_left.as_ref().map_or(self.branches.len(), Vec::len);
        for i in 0..count {
            if found(out) {
                break;
            }
            let b = match &stars_left {
                Some(left) => left[i],
                // Larger patterns first: under an existence check, the one
                // most likely to hold the values.
                None if existence => self.by_rows_descending[i],
                None => i,
            };
            self.lookup_branch(ctx, b, bound, out)?;
        }
        if !self.complex.is_empty() && !found(out) {
            self.probe_complex(ctx, bound, out)?;
        }
        let found = &mut out[start..];
        found.sort_unstable();
        let distinct = dedup_sorted(found);
        out.truncate(start + distinct);
        Ok(distinct)
    }

    /// Whether some patterns are read together when output column `column`
    /// alone is bound (see [`StarLookup`]).
    fn has_stars(&mut self, column: usize) -> bool {
        self.stars[column]
            .get_or_insert_with(|| StarLookup::of(&self.branches, column))
            .has_stars()
    }

    /// The rows of the patterns that one read of `value`'s triples answers
    /// (see [`StarLookup`]), for each of its synonyms; returns the patterns
    /// left to look up one by one.
    fn read_stars(
        &mut self,
        ctx: &QueryContext,
        column: usize,
        value: Id,
        bound: &[Option<Id>],
        out: &mut Vec<UnionRow>,
    ) -> Result<Vec<usize>, EngineError> {
        let star = self.stars[column].get_or_insert_with(|| StarLookup::of(&self.branches, column));
        let synonyms = self.synonyms.as_deref();
        let values = synonyms
            .and_then(|t| t.class_of(value))
            .unwrap_or(std::slice::from_ref(&value));
        let (branches, first_literal) = (&self.branches, self.first_literal);
        let mut row_out = Vec::new();
        let mut left = star.others.clone();
        for &synonym in values {
            let fallback = star.read(ctx, branches, synonym, &mut row_out, |b, row| {
                let branch = &branches[b];
                // A synonym's triples count only where the pattern reads
                // synonyms.
                if synonym != value {
                    let BranchValue::Column(pc) = branch.output[column] else {
                        return Ok(());
                    };
                    if !branch.synonyms.contains(&pc) {
                        return Ok(());
                    }
                }
                emit(ctx, branch, bound, row, first_literal, synonyms, out)
            })?;
            left.extend(fallback);
        }
        left.sort_unstable();
        left.dedup();
        Ok(left)
    }

    fn lookup_branch(
        &mut self,
        ctx: &QueryContext,
        b: usize,
        bound: &[Option<Id>],
        out: &mut Vec<UnionRow>,
    ) -> Result<(), EngineError> {
        let branch = &self.branches[b];
        // The values each bound pattern column is looked up with; on the
        // stack (at most one per output column), as everything else here:
        // this runs once per pattern and row of a join.
        let mut fixed: [(usize, &[Id]); MAX_UNION_WIDTH] = [(0, &[]); MAX_UNION_WIDTH];
        let mut fixed_len = 0;
        let mut singles = [Id::UNDEFINED; MAX_UNION_WIDTH];
        for (single, value) in singles.iter_mut().zip(bound) {
            *single = value.unwrap_or(Id::UNDEFINED);
        }
        for (c, value) in bound.iter().enumerate() {
            let Some(value) = *value else { continue };
            match branch.output[c] {
                BranchValue::Constant(k) if k != value => return Ok(()),
                BranchValue::Constant(_) => {}
                BranchValue::Column(pc) => {
                    if branch.not_literal.contains(&pc)
                        && is_literal(ctx, self.first_literal, value)?
                    {
                        return Ok(());
                    }
                    let synonyms = match &self.synonyms {
                        Some(table) if branch.synonyms.contains(&pc) => table.class_of(value),
                        _ => None,
                    };
                    let values = synonyms.unwrap_or(std::slice::from_ref(&singles[c]));
                    match fixed[..fixed_len].iter().position(|(p, _)| *p == pc) {
                        // One pattern column for two output variables
                        // cannot happen (distinct variables), but two
                        // bindings of one column must agree.
                        Some(_) => return Ok(()),
                        None => {
                            fixed[fixed_len] = (pc, values);
                            fixed_len += 1;
                        }
                    }
                }
            }
        }
        let fixed = &fixed[..fixed_len];
        let mut row_out = [Id::UNDEFINED; MAX_UNION_WIDTH];
        let row_out = &mut row_out[..branch.width];
        let mut picks = [0usize; MAX_UNION_WIDTH];
        let picks = &mut picks[..fixed_len];
        let readers = &mut self.readers[b];
        let first_literal = self.first_literal;
        let synonyms = self.synonyms.as_deref();
        loop {
            let value_of = |pc: usize| {
                fixed
                    .iter()
                    .zip(picks.iter())
                    .find(|((p, _), _)| *p == pc)
                    .map(|((_, values), &k)| values[k])
            };
            let terms = branch.pattern.terms.map(|t| match t {
                PatternTerm::Variable(pc) => value_of(pc).map_or(t, PatternTerm::Constant),
                constant => constant,
            });
            let graph = match branch.pattern.graph {
                GraphScope::NamedVariable(pc) => {
                    value_of(pc).map_or(branch.pattern.graph, GraphScope::Named)
                }
                other => other,
            };
            let pattern = branch.pattern.bound_to(terms, graph);
            let mut error = None;
            pattern.lookup(ctx, readers, row_out, |row| {
                if error.is_some() {
                    return;
                }
                match emit(ctx, branch, bound, row, first_literal, synonyms, out) {
                    Ok(()) => {}
                    Err(e) => error = Some(e),
                }
            })?;
            if let Some(e) = error {
                return Err(e);
            }
            // The next combination of the bound columns' synonyms.
            let mut k = 0;
            while k < picks.len() {
                picks[k] += 1;
                if picks[k] < fixed[k].1.len() {
                    break;
                }
                picks[k] = 0;
                k += 1;
            }
            if k == picks.len() {
                return Ok(());
            }
        }
    }

    /// Adds the complex branches' rows that agree with `bound`, reading
    /// them whole first if not done yet.
    pub(super) fn probe_complex(
        &mut self,
        ctx: &QueryContext,
        bound: &[Option<Id>],
        out: &mut Vec<UnionRow>,
    ) -> Result<(), EngineError> {
        if self.complex_rows.is_none() {
            let rows = self.read_complex(ctx)?;
            self.complex_rows = Some(ComplexRows {
                by_column: vec![None; self.variables.len()],
                rows,
            });
        }
        let complex = self.complex_rows.as_mut().expect("read");
        let agrees = |row: &UnionRow| {
            bound
                .iter()
                .zip(row)
                .all(|(b, v)| b.is_none_or(|b| *v == Id::UNDEFINED || *v == b))
        };
        let Some(column) = bound.iter().position(Option::is_some) else {
            out.extend(complex.rows.iter().copied());
            return Ok(());
        };
        let rows = &complex.rows;
        let index = complex.by_column[column].get_or_insert_with(|| {
            let mut index: FxHashMap<Id, Vec<u32>> = FxHashMap::default();
            for (i, row) in rows.iter().enumerate() {
                index.entry(row[column]).or_default().push(i as u32);
            }
            index
        });
        let value = bound[column].expect("bound");
        for key in [value, Id::UNDEFINED] {
            for &i in index.get(&key).map(Vec::as_slice).unwrap_or_default() {
                let row = &rows[i as usize];
                if agrees(row) {
                    let mut row = *row;
                    for (slot, b) in row.iter_mut().zip(bound) {
                        if let Some(b) = b {
                            *slot = *b;
                        }
                    }
                    out.push(row);
                }
            }
            if key == Id::UNDEFINED {
                break;
            }
        }
        Ok(())
    }

    /// Every row of the complex branches, on the output columns, distinct.
    fn read_complex(&mut self, ctx: &QueryContext) -> Result<Vec<UnionRow>, EngineError> {
        let mut rows = Vec::new();
        for operator in &mut self.complex {
            let columns: Vec<Option<usize>> = self
                .variables
                .iter()
                .map(|v| operator.variables().iter().position(|x| x == v))
                .collect();
            // An empty batch is the end of a turn, not of the input: a
            // branch is read to its end here.
            while let Some(batch) = operator.next_batch()? {
                ctx.check()?;
                for i in 0..batch.len {
                    let mut row = [Id::UNDEFINED; MAX_UNION_WIDTH];
                    for (slot, column) in row.iter_mut().zip(&columns) {
                        if let Some(c) = column {
                            *slot = batch.columns[*c][i];
                        }
                    }
                    rows.push(row);
                }
            }
        }
        rows.sort_unstable();
        let distinct = dedup_sorted(&mut rows);
        rows.truncate(distinct);
        Ok(rows)
    }
}

/// The output rows of one stored row of a branch: bound values as they
/// were asked for, the others from the row, each value with synonyms once
/// per synonym.
pub(super) fn emit(
    ctx: &QueryContext,
    branch: &UnionBranch,
    bound: &[Option<Id>],
    row: &[Id],
    first_literal: Option<Id>,
    synonyms: Option<&SynonymTable>,
    out: &mut Vec<UnionRow>,
) -> Result<(), EngineError> {
    for &pc in &branch.not_literal {
        let value = row[pc];
        if value != Id::UNDEFINED && is_literal(ctx, first_literal, value)? {
            return Ok(());
        }
    }
    let mut base = [Id::UNDEFINED; MAX_UNION_WIDTH];
    // Output columns whose value stands for its synonyms.
    let mut expand: [Option<&[Id]>; MAX_UNION_WIDTH] = [None; MAX_UNION_WIDTH];
    for (c, source) in branch.output.iter().enumerate() {
        base[c] = match (bound[c], *source) {
            (Some(value), _) => value,
            (None, BranchValue::Constant(k)) => k,
            (None, BranchValue::Column(pc)) => {
                if branch.synonyms.contains(&pc) {
                    expand[c] = synonyms.and_then(|t| t.class_of(row[pc]));
                }
                row[pc]
            }
        };
    }
    if expand.iter().all(Option::is_none) {
        out.push(base);
        return Ok(());
    }
    // Every combination of the expanded columns' synonyms.
    let mut picks = [0usize; MAX_UNION_WIDTH];
    loop {
        let mut row = base;
        for c in 0..MAX_UNION_WIDTH {
            if let Some(class) = expand[c] {
                row[c] = class[picks[c]];
            }
        }
        out.push(row);
        let mut c = 0;
        while c < MAX_UNION_WIDTH {
            if let Some(class) = expand[c] {
                picks[c] += 1;
                if picks[c] < class.len() {
                    break;
                }
                picks[c] = 0;
            }
            c += 1;
        }
        if c == MAX_UNION_WIDTH {
            return Ok(());
        }
    }
}

/// Whether an ID is a literal: by its tag, or for the base vocabulary by
/// its position (literal keys sort after IRIs).
pub(super) fn is_literal(
    ctx: &QueryContext,
    first_literal: Option<Id>,
    id: Id,
) -> Result<bool, EngineError> {
    match (id.tag(), first_literal) {
        (Tag::Vocab, Some(first)) => Ok(id >= first),
        _ => ctx.is_literal(id),
    }
}

/// Removes adjacent repeats of a sorted slice in place; returns the
/// number of distinct rows, now at its front.
pub(super) fn dedup_sorted(rows: &mut [UnionRow]) -> usize {
    if rows.is_empty() {
        return 0;
    }
    let mut kept = 1;
    for i in 1..rows.len() {
        if rows[i] != rows[kept - 1] {
            rows[kept] = rows[i];
            kept += 1;
        }
    }
    kept
}
