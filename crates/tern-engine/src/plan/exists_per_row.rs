//! EXISTS evaluated per solution (where it cannot run as a semi join): the
//! pattern planned again with the solution's values substituted for its
//! variables, and run until its first row. This is the [`PatternTest`] the
//! planner hands to expression evaluation with every [`Scope`](crate::expr::Scope).

use super::optional::OptionalJoins;
use super::planner::{GraphContext, Planner};
use crate::context::QueryContext;
use crate::exec::{HashJoin, Operator, Values};
use crate::expr::{is_blank_variable, PatternTest};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::GraphPattern;
use std::sync::Arc;
use tern_index::Id;

/// Answers EXISTS in one graph by planning its pattern per row.
pub(super) struct ExistsPerRow {
    pub graph: GraphContext,
    pub optional_joins: OptionalJoins,
}

impl PatternTest for ExistsPerRow {
    /// Whether `pattern` has a solution for the row (EXISTS evaluated per
    /// row): the row's bound variables, and those the scope already
    /// substitutes, are substituted into the pattern, which is matched in the
    /// scope's graph.
    fn exists(
        &self,
        ctx: &Arc<QueryContext>,
        pattern: &GraphPattern,
        scope_bound: &[(Variable, Id)],
        variables: &[Variable],
        row: &[Id],
    ) -> Result<bool, EngineError> {
        let mut bound: Vec<(Variable, Id)> = variables
            .iter()
            .zip(row)
            .filter(|(v, id)| **id != Id::UNDEFINED && !is_blank_variable(v))
            .map(|(v, id)| (v.clone(), *id))
            .collect();
        for (v, id) in scope_bound {
            if !bound.iter().any(|(b, _)| b == v) {
                bound.push((v.clone(), *id));
            }
        }
        let planner = Planner::fresh(ctx.clone(), bound.clone().into(), self.optional_joins);
        let inner = planner.plan(pattern, &self.graph)?;
        // Variables the pattern binds itself despite the substitution (BIND)
        // must agree with the row.
        let values = Values::new(
            bound.iter().map(|(v, _)| v.clone()).collect(),
            vec![bound.iter().map(|(_, id)| *id).collect()],
        );
        let mut joined = HashJoin::new(ctx.clone(), inner, Box::new(values));
        // An empty batch is a pause for the end of the turn, not a match: an
        // EXISTS is answered whole, and the signal goes back to the operators
        // around it, which can pause between rows.
        let mut paused = false;
        let found = loop {
            match joined.next_batch()? {
                None => break false,
                Some(batch) if batch.len == 0 => paused = true,
                Some(_) => break true,
            }
        };
        if paused {
            ctx.input_paused(1);
        }
        Ok(found)
    }
}
