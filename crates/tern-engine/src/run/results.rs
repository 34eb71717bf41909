//! What a query returns.

use super::solution_stream::SolutionStream;
use super::triple_stream::TripleStream;
use oxrdf::{Term, Variable};

/// One solution: a value (or nothing) per variable of [`QueryOutcome::Solutions`].
pub type SolutionRow = Vec<Option<Term>>;

pub enum QueryOutcome {
    /// SELECT: the projected variables and the solutions, produced lazily.
    Solutions {
        variables: Vec<Variable>,
        rows: SolutionStream,
    },
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT and DESCRIBE: the triples, produced lazily (duplicates removed).
    Graph(TripleStream),
}
