//! OPTIONAL: a left join of the two sides, or the right side planned and
//! looked up once per left row with the row's values substituted, where
//! that gives the same rows ([`correlated`]) and the estimates say it is
//! cheaper.

use super::correlated;
use super::planner::{GraphContext, Planner};
use crate::exec::{BindLeftJoin, BoxedOperator, LeftJoin, PlanRight};
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::{Expression, GraphPattern};

/// How the planner evaluates OPTIONAL: as one join of its two sides, or
/// its right side once per left row with the row's values substituted
/// (where that gives the same rows; see the planner).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OptionalJoins {
    /// Per left row when the estimates say that is cheaper.
    #[default]
    ByCost,
    /// Per left row wherever it is exact (to test that path on small data).
    PerRow,
    /// Always as one join.
    Whole,
}

impl Planner {
    /// OPTIONAL: a left join of the two sides, or, for a few left rows and
    /// a large right side, the right side looked up per left row.
    pub(super) fn plan_optional(
        &self,
        left: BoxedOperator,
        right: &GraphPattern,
        expression: &Option<Expression>,
        graph: &GraphContext,
    ) -> Result<BoxedOperator, EngineError> {
        let right_operator = self.plan(right, graph)?;
        let mut right_variables: Vec<Variable> = Vec::new();
        right.on_in_scope_variable(|v| {
            if !right_variables.contains(v) && self.bound_value(v).is_none() {
                right_variables.push(v.clone());
            }
        });
        let shares = left.variables().iter().any(|v| right_variables.contains(v));
        let wanted = match self.optional_joins {
            OptionalJoins::ByCost => {
                per_row_is_cheaper(left.estimated_rows(), right_operator.estimated_rows())
            }
            OptionalJoins::PerRow => true,
            OptionalJoins::Whole => false,
        };
        let per_row = shares && wanted && correlated::fits_per_row(right, left.variables());
        if !per_row {
            return Ok(Box::new(LeftJoin::new(
                self.ctx.clone(),
                left,
                right_operator,
                expression.clone(),
                self.scope(graph),
            )));
        }
        Ok(Box::new(BindLeftJoin::new(
            self.ctx.clone(),
            left,
            &right_variables,
            self.per_row(right.clone(), graph),
            right.to_string(),
            expression.clone(),
            self.scope(graph),
        )))
    }
}

impl Planner {
    /// Plans `pattern` anew for each row, with the row's values substituted
    /// beside this planner's.
    pub(super) fn per_row(&self, pattern: GraphPattern, graph: &GraphContext) -> PlanRight {
        let (ctx, outer) = (self.ctx.clone(), self.bound.clone());
        let optional_joins = self.optional_joins;
        let graph = graph.clone();
        Box::new(move |substitution| {
            let mut bound = outer.to_vec();
            bound.extend(substitution.iter().cloned());
            let planner = Planner::fresh(ctx.clone(), bound.into(), optional_joins);
            planner.plan(&pattern, &graph)
        })
    }
}

/// Most left rows for which OPTIONAL is evaluated per row.
const PER_ROW_MAX_LEFT: u64 = 4096;

/// Right rows per left row above which evaluating OPTIONAL per left row
/// wins: planning and looking up the right side for one row costs about as
/// much as reading and hashing this many right rows.
const PER_ROW_RIGHT_FACTOR: u64 = 64;

/// Whether OPTIONAL is cheaper per left row than as one join, by the
/// planner's estimates (none: not known to be).
pub(super) fn per_row_is_cheaper(left: Option<u64>, right: Option<u64>) -> bool {
    match (left, right) {
        (Some(left), Some(right)) => {
            left <= PER_ROW_MAX_LEFT && left.max(1) * PER_ROW_RIGHT_FACTOR <= right
        }
        _ => false,
    }
}
