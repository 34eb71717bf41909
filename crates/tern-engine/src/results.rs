//! What a query returns.

use crate::EngineError;
use oxrdf::{Term, Triple, Variable};

/// One solution: a value (or nothing) per variable of [`QueryOutcome::Solutions`].
pub type SolutionRow = Vec<Option<Term>>;

pub enum QueryOutcome {
    /// SELECT: the projected variables and the solutions, produced lazily.
    Solutions {
        variables: Vec<Variable>,
        rows: Box<dyn Iterator<Item = Result<SolutionRow, EngineError>> + Send>,
    },
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT and DESCRIBE: the triples, produced lazily (duplicates removed).
    Graph(Box<dyn Iterator<Item = Result<Triple, EngineError>> + Send>),
}
