//! Index nested-loop join: for each row of the left input, the triple
//! pattern is looked up in the index with the shared variables bound, so a
//! few selective rows never pay for scanning a large pattern whole.

use super::rows::{Solution, Sources};
use super::scan::{GraphScope, PatternTerm, Scan};
use super::{Batch, BoxedOperator, Operator};
use crate::context::QueryContext;
use crate::profile::OperatorInfo;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::Id;

pub struct IndexJoin {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    left: BoxedOperator,
    pattern_variables: Vec<Variable>,
    terms: [PatternTerm; 3],
    graph: GraphScope,
    /// For each pattern variable, its column in the left input, if shared.
    bound_from: Vec<Option<usize>>,
    /// For each output column, its source in (left row, pattern row).
    sources: Sources,
    lookups: Arc<AtomicU64>,
}

impl IndexJoin {
    pub fn new(
        ctx: Arc<QueryContext>,
        left: BoxedOperator,
        pattern_variables: Vec<Variable>,
        terms: [PatternTerm; 3],
        graph: GraphScope,
    ) -> IndexJoin {
        let (variables, sources) = Solution::merge_schemas(left.variables(), &pattern_variables);
        let bound_from = pattern_variables
            .iter()
            .map(|v| left.variables().iter().position(|l| l == v))
            .collect();
        IndexJoin {
            ctx,
            variables,
            left,
            pattern_variables,
            terms,
            graph,
            bound_from,
            sources,
            lookups: Arc::default(),
        }
    }

    /// The pattern with the left row's values in place of shared variables.
    fn bind(&self, row: &[Id]) -> ([PatternTerm; 3], GraphScope) {
        let value = |column: usize| {
            self.bound_from[column]
                .map(|l| row[l])
                .filter(|id| *id != Id::UNDEFINED)
        };
        let terms = self.terms.map(|t| match t {
            PatternTerm::Variable(c) => value(c).map_or(t, PatternTerm::Constant),
            constant => constant,
        });
        let graph = match self.graph {
            GraphScope::NamedVariable(c) => value(c).map_or(self.graph, GraphScope::Named),
            other => other,
        };
        (terms, graph)
    }

    /// The pattern's rows for one binding (its own columns).
    fn lookup(
        &self,
        terms: [PatternTerm; 3],
        graph: GraphScope,
    ) -> Result<Vec<Vec<Id>>, EngineError> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let mut scan = Scan::new(
            self.ctx.clone(),
            self.pattern_variables.clone(),
            terms,
            graph,
        );
        let mut rows = Vec::new();
        while let Some(batch) = scan.next_batch()? {
            for i in 0..batch.len {
                rows.push(batch.row(i));
            }
        }
        Ok(rows)
    }
}

impl Operator for IndexJoin {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let shared: Vec<Variable> = self
            .pattern_variables
            .iter()
            .zip(&self.bound_from)
            .filter(|(_, b)| b.is_some())
            .map(|(v, _)| v.clone())
            .collect();
        let scan = Scan::new(
            self.ctx.clone(),
            self.pattern_variables.clone(),
            self.terms,
            self.graph,
        )
        .describe();
        OperatorInfo {
            name: "IndexJoin",
            detail: format!("on {} into {}", super::variable_list(&shared), scan.detail),
            // Lookups, shown where scans show blocks read.
            blocks_read: Some(self.lookups.clone()),
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.left.as_ref()]
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        Ok(OperatorState::wrapping(self.left.save(stash)?))
    }

    /// Each left batch is joined whole into one output batch.
    fn checkpoint(&self) -> Option<OperatorState> {
        self.left.checkpoint().map(OperatorState::wrapping)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.left.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        let width = self.variables.len();
        loop {
            let Some(batch) = self.left.next_batch()? else {
                return Ok(None);
            };
            self.ctx.check()?;
            // Rows of a batch often share their binding (the same subject
            // repeated): look each binding up once.
            let mut found: FxHashMap<([PatternTerm; 3], GraphScope), Vec<Vec<Id>>> =
                FxHashMap::default();
            let mut out = Batch::with_columns(width);
            for i in 0..batch.len {
                let left = batch.row(i);
                let key = self.bind(&left);
                let rows = match found.entry(key) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(self.lookup(key.0, key.1)?)
                    }
                };
                for right in rows.iter() {
                    out.push_merged(&left, right, &self.sources);
                }
            }
            self.ctx.check_memory((out.len * (width * 8 + 24)) as u64)?;
            // Nothing joined: go on, unless the left side paused or the
            // turn is over.
            if out.len > 0 || batch.len == 0 || self.ctx.should_yield() {
                return Ok(Some(out));
            }
        }
    }
}
