//! FILTER EXISTS as a semi join and FILTER NOT EXISTS as an anti join: the
//! pattern is evaluated once, its solutions are indexed on the variables it
//! shares with the filtered rows, and each filtered row is kept or dropped by
//! one lookup (see the planner's `exists` for when this equals evaluating the
//! pattern per row).

use super::condition::Condition;
use super::profile::OperatorInfo;
use super::solution_index::{Keep, SolutionIndex};
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::expr::Scope;
use crate::expr::{expression_variables, is_blank_variable};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::Expression;
use std::sync::Arc;
use tern_index::Id;

pub struct SemiJoin {
    ctx: Arc<QueryContext>,
    /// What its materialized state costs, in the query's memory account.
    memory: MemoryCharge,
    outer: BoxedOperator,
    /// The pattern, until its solutions are in `table`.
    pattern: Option<BoxedOperator>,
    table: Option<SolutionIndex>,
    /// NOT EXISTS: keep the rows without a matching solution.
    anti: bool,
    /// (outer column, pattern column) of each shared variable.
    shared: Vec<(usize, usize)>,
    /// Pattern columns that only the residual condition reads.
    extra: Vec<usize>,
    /// Filters of the pattern that read outer variables, over the outer
    /// row followed by the `extra` columns of a solution.
    residual: Option<Condition>,
    /// Whether the residual condition's value is a function of the row
    /// (no RAND(), BNODE(), EXISTS): solutions equal on the columns kept
    /// then pass or fail it alike, and only one of them is kept.
    residual_of_row: bool,
}

impl SemiJoin {
    /// Keeps the rows of `outer` for which `pattern` has a compatible
    /// solution passing `residual` (with `anti`, the other rows).
    pub fn new(
        ctx: Arc<QueryContext>,
        outer: BoxedOperator,
        pattern: BoxedOperator,
        residual: Option<Expression>,
        anti: bool,
        scope: Arc<Scope>,
    ) -> SemiJoin {
        let outer_vars = outer.variables();
        let pattern_vars = pattern.variables();
        // Blank nodes of the pattern are its own, whatever the outer rows
        // call theirs.
        let shared: Vec<(usize, usize)> = outer_vars
            .iter()
            .enumerate()
            .filter(|(_, v)| !is_blank_variable(v))
            .filter_map(|(o, v)| Some((o, pattern_vars.iter().position(|p| p == v)?)))
            .collect();
        let mut extra = Vec::new();
        let mut residual_of_row = false;
        let residual = residual.map(|expression| {
            // The columns the condition reads (all of them when it is not a
            // function of the row: an EXISTS inside may read any).
            let mut read = FxHashSet::default();
            residual_of_row = expression_variables(&expression, &mut read).is_some();
            let mut variables = outer_vars.to_vec();
            for (column, v) in pattern_vars.iter().enumerate() {
                let needed = !residual_of_row || read.contains(v);
                if !outer_vars.contains(v) && !is_blank_variable(v) && needed {
                    extra.push(column);
                    variables.push(v.clone());
                }
            }
            Condition::new(ctx.clone(), expression, &variables, scope)
        });
        SemiJoin {
            memory: ctx.memory_charge(),
            ctx,
            outer,
            pattern: Some(pattern),
            table: None,
            anti,
            shared,
            extra,
            residual,
            residual_of_row,
        }
    }

    fn build(&self, pattern: &mut dyn Operator) -> Result<SolutionIndex, EngineError> {
        let columns: Vec<usize> = self
            .shared
            .iter()
            .map(|&(_, p)| p)
            .chain(self.extra.iter().copied())
            .collect();
        // Without a residual condition only the distinct keys matter (the
        // row is its key); with no columns at all, one solution stands for
        // all. With a condition that is a function of the row, only the
        // distinct rows of the columns kept: `NOT EXISTS { ?d dc:creator
        // ?e ; dcterms:issued ?y FILTER(?y > ?py) }` keeps an author's
        // years, not each of a prolific author's ten thousand papers,
        // which every filtered row of theirs would check again.
        let keep = match (&self.residual, columns.len()) {
            (None, _) | (_, 0) => Keep::OnePerGroup,
            _ if self.residual_of_row => Keep::DistinctRows,
            _ => Keep::All,
        };
        let next_rows = |rows: &mut Vec<Id>| {
            let Some(batch) = pattern.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            for i in 0..batch.len {
                rows.extend(columns.iter().map(|&c| batch.columns[c][i]));
            }
            Ok(Some(batch.len))
        };
        let charge = |bytes| self.memory.set(bytes);
        SolutionIndex::build(columns.len(), self.shared.len(), keep, next_rows, charge)
    }

    /// Whether the pattern has a solution compatible with `row` (that
    /// passes the residual condition).
    fn matches(
        table: &mut SolutionIndex,
        shared: &[(usize, usize)],
        residual: Option<&Condition>,
        ctx: &QueryContext,
        row: &[Id],
    ) -> Result<bool, EngineError> {
        let mut mask = 0u32;
        let mut key = Vec::with_capacity(shared.len());
        for (c, &(o, _)) in shared.iter().enumerate() {
            if row[o] != Id::UNDEFINED {
                mask |= 1 << c;
                key.push(row[o]);
            }
        }
        table.prepare(mask, ctx)?;
        let candidates = table.candidates(mask, &key);
        let Some(residual) = residual else {
            return Ok(!candidates.is_empty());
        };
        let shared_count = shared.len();
        let mut merged = row.to_vec();
        for i in candidates.iter() {
            let solution = table.row(i);
            merged.truncate(row.len());
            for (c, &(o, _)) in shared.iter().enumerate() {
                merged[o] = solution[c];
            }
            merged.extend_from_slice(&solution[shared_count..]);
            if residual.is_true(&merged)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl Operator for SemiJoin {
    fn variables(&self) -> &[Variable] {
        self.outer.variables()
    }

    fn describe(&self) -> OperatorInfo {
        let name = if self.anti { "AntiJoin" } else { "SemiJoin" };
        let on: Vec<Variable> = self
            .shared
            .iter()
            .map(|&(o, _)| self.outer.variables()[o].clone())
            .collect();
        let mut detail = if on.is_empty() {
            "no shared variables".to_owned()
        } else {
            format!("on {}", super::variable_list(&on))
        };
        if let Some(residual) = &self.residual {
            detail.push_str(&format!(" where {residual}"));
        }
        OperatorInfo::new(name, detail)
    }

    fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.outer.as_ref()];
        children.extend(self.pattern.as_deref().map(|p| p as &dyn Operator));
        children
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.outer.save(stash)?;
        let table = match (self.table.take(), self.pattern.as_mut()) {
            (Some(table), _) => OperatorState::stashed(stash.put(table)),
            (None, Some(pattern)) => pattern.save(stash)?,
            (None, None) => return Err(bad_state("semi join without its pattern")),
        };
        Ok(OperatorState::new(Vec::new(), vec![streamed, table]))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let [streamed, table] = state.into_children()?;
        self.outer.restore(streamed, stash)?;
        match (table.stashed, self.pattern.as_mut()) {
            (Some(handle), _) => {
                self.table = Some(stash.take(handle)?);
                self.pattern = None;
                Ok(())
            }
            (None, Some(pattern)) => pattern.restore(table, stash),
            (None, None) => Err(bad_state("semi join without its pattern")),
        }
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        loop {
            let Some(batch) = self.outer.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            // Built on the first outer row: no outer rows, no pattern to
            // evaluate.
            if let Some(mut pattern) = self.pattern.take() {
                self.table = Some(self.build(pattern.as_mut())?);
            }
            let table = self.table.as_mut().expect("built above");
            if table.count() == 0 && !self.anti {
                return Ok(None);
            }
            let out = batch.retain_rows(|row| {
                let found =
                    Self::matches(table, &self.shared, self.residual.as_ref(), &self.ctx, row)?;
                Ok(found != self.anti)
            })?;
            // Nothing kept: go on, unless the outer side paused or the turn
            // is over.
            if out.len > 0 || batch.len == 0 || self.ctx.should_yield() {
                return Ok(Some(out));
            }
        }
    }
}
