//! The lazy triples of CONSTRUCT and DESCRIBE, time-sliced, and how they
//! are suspended.

use super::construct::Construct;
use super::solution_stream::Polled;
use crate::suspend::{OperatorState, SavedQuery, Stash};
use crate::EngineError;
use oxrdf::Triple;
use std::time::Instant;

/// The triples of CONSTRUCT and DESCRIBE.
pub struct TripleStream(pub(crate) TripleSource);

pub(crate) enum TripleSource {
    Construct(Box<Construct>),
    /// DESCRIBE's descriptions, computed when the query starts.
    Described(std::vec::IntoIter<Triple>),
}

impl TripleStream {
    /// The next triple, unless the turn ends at `until` first.
    pub fn next_in_turn(&mut self, until: Option<Instant>) -> Polled<Triple> {
        match &mut self.0 {
            TripleSource::Construct(c) => c.next_in_turn(until),
            TripleSource::Described(triples) => match triples.next() {
                Some(t) => Polled::Ready(Ok(t)),
                None => Polled::End,
            },
        }
    }
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

impl TripleStream {
    /// Stops here: the triples already made (they belong to this page) and
    /// the saved state.
    pub fn suspend(self, stash: &Stash) -> Result<(Vec<Triple>, SavedQuery), EngineError> {
        match self.0 {
            TripleSource::Construct(construct) => construct.suspend(stash),
            TripleSource::Described(triples) => {
                let plan = OperatorState::stashed(stash.put(triples));
                let saved = SavedQuery {
                    done: false,
                    plan,
                    context: OperatorState::default(),
                    construct: None,
                };
                Ok((Vec::new(), saved))
            }
        }
    }
}
