//! The lazy triples of CONSTRUCT and DESCRIBE, time-sliced, and how they
//! are suspended. The plan's root makes rows `?subject ?predicate ?object`
//! of IDs (`exec::Construct`, `exec::Describe`), so the triples are a
//! [`SolutionStream`] like any SELECT's and leave the engine the same way:
//! as batches a writer decodes on all cores ([`into_rows`](TripleStream::into_rows)),
//! or one [`Triple`] at a time.

use super::solution_stream::{Polled, SolutionStream};
use super::SolutionRow;
use crate::suspend::{SavedQuery, Stash};
use crate::EngineError;
use oxrdf::{NamedOrBlankNode, Term, Triple};
use std::time::Instant;

/// The triples of CONSTRUCT and DESCRIBE.
pub struct TripleStream(pub(crate) SolutionStream);

impl TripleStream {
    /// The next triple, unless the turn ends at `until` first.
    pub fn next_in_turn(&mut self, until: Option<Instant>) -> Polled<Triple> {
        loop {
            return match self.0.next_in_turn(until) {
                Polled::Ready(Ok(row)) => match triple_of(row) {
                    Some(triple) => Polled::Ready(Ok(triple)),
                    None => continue,
                },
                Polled::Ready(Err(e)) => Polled::Ready(Err(e)),
                Polled::Pending => Polled::Pending,
                Polled::End => Polled::End,
            };
        }
    }

    /// The triples as rows of three terms, in batches of IDs (see
    /// [`SolutionStream::next_batch_in_turn`]): how a large graph result
    /// is written.
    pub fn into_rows(self) -> SolutionStream {
        self.0
    }

    /// Stops here: the triples already made (they belong to this page) and
    /// the saved state.
    pub fn suspend(self, stash: &Stash) -> Result<(Vec<Triple>, SavedQuery), EngineError> {
        let (rows, saved) = self.0.suspend(stash)?;
        Ok((rows.into_iter().filter_map(triple_of).collect(), saved))
    }
}

/// The triple of a row `?subject ?predicate ?object`; the operators that
/// make these rows only make well-formed ones.
pub fn triple_of(row: SolutionRow) -> Option<Triple> {
    let [Some(subject), Some(Term::NamedNode(predicate)), Some(object)]: [Option<Term>; 3] =
        row.try_into().ok()?
    else {
        return None;
    };
    let subject = match subject {
        Term::NamedNode(n) => NamedOrBlankNode::from(n),
        Term::BlankNode(b) => NamedOrBlankNode::from(b),
        _ => return None,
    };
    Some(Triple::new(subject, predicate, object))
}

impl Iterator for TripleStream {
    type Item = Result<Triple, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_in_turn(None) {
            Polled::Ready(t) => Some(t),
            Polled::End | Polled::Pending => None,
        }
    }
}
