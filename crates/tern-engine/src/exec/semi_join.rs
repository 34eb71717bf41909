//! FILTER EXISTS as a semi join and FILTER NOT EXISTS as an anti join: the
//! pattern is evaluated once, its solutions are indexed on the variables it
//! shares with the filtered rows, and each filtered row is kept or dropped by
//! one lookup (see the planner's `exists` for when this equals evaluating the
//! pattern per row).

use super::condition::Condition;
use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{MemoryCharge, QueryContext};
use crate::expr::is_blank_variable;
use crate::expr::Scope;
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use spargebra::algebra::Expression;
use std::collections::hash_map::Entry;
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
}

/// The pattern's solutions, cut to the shared columns then the extra ones,
/// indexed on the shared columns. Solutions always bind the shared
/// variables; filtered rows may not, so a probe with unbound variables
/// looks in an index on the bound ones only, built on first need.
pub struct SolutionIndex {
    stride: usize,
    shared: usize,
    /// Solutions kept (with no columns, at most one).
    count: usize,
    rows: Vec<Id>,
    /// By mask of the shared columns used: key values → row numbers.
    by_mask: FxHashMap<u32, FxHashMap<Vec<Id>, Vec<u32>>>,
    /// What the indexes built on first need cost.
    memory: Option<MemoryCharge>,
}

impl SolutionIndex {
    fn row(&self, i: u32) -> &[Id] {
        let start = i as usize * self.stride;
        &self.rows[start..start + self.stride]
    }

    fn bytes(&self) -> u64 {
        (self.rows.len() * 8 + self.count * (self.shared * 8 + 56)) as u64
    }

    /// Builds the index on the shared columns in `mask` if it is missing.
    fn ensure_index(&mut self, mask: u32, ctx: &QueryContext) -> Result<(), EngineError> {
        if !self.by_mask.contains_key(&mask) {
            let columns: Vec<usize> = (0..self.shared).filter(|c| mask >> c & 1 == 1).collect();
            let mut map: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
            for i in 0..self.count as u32 {
                let row = self.row(i);
                map.entry(columns.iter().map(|&c| row[c]).collect())
                    .or_default()
                    .push(i);
            }
            let bytes = self.bytes() * (self.by_mask.len() as u64 + 1);
            self.memory
                .get_or_insert_with(|| ctx.memory_charge())
                .set(bytes)?;
            self.by_mask.insert(mask, map);
        }
        Ok(())
    }
}

impl crate::suspend::StashSize for SolutionIndex {
    fn stash_bytes(&self) -> usize {
        self.bytes() as usize * self.by_mask.len().max(1)
    }
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
        let residual = residual.map(|expression| {
            let mut variables = outer_vars.to_vec();
            for (column, v) in pattern_vars.iter().enumerate() {
                if !outer_vars.contains(v) && !is_blank_variable(v) {
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
        }
    }

    fn build(&self, pattern: &mut dyn Operator) -> Result<SolutionIndex, EngineError> {
        let columns: Vec<usize> = self
            .shared
            .iter()
            .map(|&(_, p)| p)
            .chain(self.extra.iter().copied())
            .collect();
        let stride = columns.len();
        let shared = self.shared.len();
        // Without a residual condition only the distinct keys matter (the
        // row is its key); with no columns at all, one solution stands for
        // all.
        let dedup = self.residual.is_none() || stride == 0;
        let mut rows = Vec::new();
        let mut full: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
        let mut count = 0usize;
        while let Some(batch) = pattern.next_batch()? {
            self.ctx.check()?;
            for i in 0..batch.len {
                let key: Vec<Id> = columns[..shared]
                    .iter()
                    .map(|&c| batch.columns[c][i])
                    .collect();
                let entry = full.entry(key);
                if dedup && matches!(entry, Entry::Occupied(_)) {
                    continue;
                }
                entry.or_default().push(count as u32);
                rows.extend(columns.iter().map(|&c| batch.columns[c][i]));
                count += 1;
            }
            self.memory
                .set((rows.len() * 8 + count * (shared * 8 + 56)) as u64)?;
            if stride == 0 && count > 0 {
                break;
            }
        }
        let all = if shared >= 32 {
            u32::MAX
        } else {
            (1u32 << shared) - 1
        };
        let mut by_mask = FxHashMap::default();
        by_mask.insert(all, full);
        Ok(SolutionIndex {
            stride,
            shared,
            count,
            rows,
            by_mask,
            memory: None,
        })
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
        table.ensure_index(mask, ctx)?;
        let Some(candidates) = table.by_mask[&mask].get(&key) else {
            return Ok(false);
        };
        let Some(residual) = residual else {
            return Ok(!candidates.is_empty());
        };
        let mut merged = row.to_vec();
        for &i in candidates {
            let solution = table.row(i);
            merged.truncate(row.len());
            for (c, &(o, _)) in shared.iter().enumerate() {
                merged[o] = solution[c];
            }
            merged.extend_from_slice(&solution[table.shared..]);
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
            if table.count == 0 && !self.anti {
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
