//! What expressions evaluated on rows need besides the row: the values that
//! enclosing EXISTS evaluated per solution substitute for variables, and
//! whoever answers the EXISTS patterns inside them.
//!
//! Answering an EXISTS means planning and running a pattern, which is the
//! planner's job: the planner hands in a [`PatternTest`] with every scope it
//! makes, so expression evaluation does not depend on planning.

use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::Variable;
use spargebra::algebra::GraphPattern;
use std::sync::Arc;
use tern_index::Id;

/// Answers `EXISTS { pattern }` for one row.
pub trait PatternTest: Send + Sync {
    /// Whether `pattern` has a solution once the row's bound variables
    /// (`row` holds the values of `variables`) and the scope's `bound`
    /// values are substituted into it.
    fn exists(
        &self,
        ctx: &Arc<QueryContext>,
        pattern: &GraphPattern,
        bound: &[(Variable, Id)],
        variables: &[Variable],
        row: &[Id],
    ) -> Result<bool, EngineError>;
}

/// The scope expressions are evaluated in (see the module comment).
#[derive(Clone)]
pub struct Scope {
    pub bound: Arc<[(Variable, Id)]>,
    pub patterns: Arc<dyn PatternTest>,
}

impl Scope {
    pub fn value(&self, variable: &Variable) -> Option<Id> {
        self.bound
            .iter()
            .find_map(|(v, id)| (v == variable).then_some(*id))
    }

    /// Whether `pattern` has a solution for `row` (see [`PatternTest`]).
    pub fn exists(
        &self,
        ctx: &Arc<QueryContext>,
        pattern: &GraphPattern,
        variables: &[Variable],
        row: &[Id],
    ) -> Result<bool, EngineError> {
        self.patterns
            .exists(ctx, pattern, &self.bound, variables, row)
    }
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("bound", &self.bound).finish()
    }
}
