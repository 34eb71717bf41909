//! CONSTRUCT: instantiates the template once per solution, dropping triples
//! with unbound or ill-placed terms and duplicates.

use super::solution_stream::{Polled, SolutionStream};
use crate::suspend::{OperatorState, SavedQuery, Stash};
use crate::EngineError;
use oxrdf::{BlankNode, NamedOrBlankNode, Term, Triple, Variable};
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

/// Duplicates are removed among this many recent triples. A result is a set
/// of triples, so a repeat beyond the window changes no graph a client
/// parses, and the window keeps memory bounded for exports of any size.
const DUPLICATE_WINDOW: usize = 1 << 13;

pub struct Construct {
    rows: SolutionStream,
    template: Template,
    pending: Vec<Triple>,
    seen: FxHashSet<Triple>,
}

struct Template {
    variables: Vec<Variable>,
    patterns: Vec<TriplePattern>,
}

impl Construct {
    pub(crate) fn new(rows: SolutionStream, patterns: Vec<TriplePattern>) -> Construct {
        let variables = rows.variables();
        Construct {
            rows,
            template: Template {
                variables,
                patterns,
            },
            pending: Vec::new(),
            seen: FxHashSet::default(),
        }
    }

    fn instantiate(&mut self, row: &[Option<Term>]) {
        add_new_triples(&self.template, row, &mut self.seen, &mut self.pending);
    }

    /// Stops between two solutions: the triples made but not yet returned
    /// (from solutions already decoded), and the saved state; the window of
    /// triples already returned is stashed.
    pub(crate) fn suspend(self, stash: &Stash) -> Result<(Vec<Triple>, SavedQuery), EngineError> {
        let Construct {
            rows,
            template,
            mut pending,
            mut seen,
        } = self;
        let (decoded, mut saved) = rows.suspend(stash)?;
        // `pending` is handed out from its end: keep that order first.
        pending.reverse();
        for row in decoded {
            let mut made = Vec::new();
            add_new_triples(&template, &row, &mut seen, &mut made);
            pending.extend(made);
        }
        saved.construct = Some(OperatorState::stashed(stash.put(seen)));
        Ok((pending, saved))
    }

    /// Takes back the window of triples already returned.
    pub(crate) fn restore(
        &mut self,
        state: &OperatorState,
        stash: &Stash,
    ) -> Result<(), EngineError> {
        if let Some(handle) = state.stashed {
            self.seen = stash.take(handle)?;
        }
        Ok(())
    }
}

/// Appends the template's triples for `row` that are not in the recent
/// window `seen`.
fn add_new_triples(
    template: &Template,
    row: &[Option<Term>],
    seen: &mut FxHashSet<Triple>,
    out: &mut Vec<Triple>,
) {
    if seen.len() >= DUPLICATE_WINDOW {
        seen.clear();
    }
    for triple in template.instantiate(row) {
        if seen.insert(triple.clone()) {
            out.push(triple);
        }
    }
}

impl Template {
    /// The valid triples of the template for one solution.
    fn instantiate(&self, row: &[Option<Term>]) -> Vec<Triple> {
        // Template blank nodes are fresh for every solution.
        let mut blanks: FxHashMap<String, BlankNode> = FxHashMap::default();
        let value = |v: &Variable| -> Option<Term> {
            let i = self.variables.iter().position(|x| x == v)?;
            row[i].clone()
        };
        let mut term = |t: &TermPattern| -> Option<Term> {
            match t {
                TermPattern::NamedNode(n) => Some(n.clone().into()),
                TermPattern::Literal(l) => Some(l.clone().into()),
                TermPattern::BlankNode(b) => Some(
                    blanks
                        .entry(b.as_str().to_owned())
                        .or_default()
                        .clone()
                        .into(),
                ),
                TermPattern::Variable(v) => value(v),
                #[allow(unreachable_patterns)]
                _ => None,
            }
        };
        let mut out = Vec::with_capacity(self.patterns.len());
        for pattern in &self.patterns {
            let subject = match term(&pattern.subject) {
                Some(Term::NamedNode(n)) => NamedOrBlankNode::from(n),
                Some(Term::BlankNode(b)) => NamedOrBlankNode::from(b),
                _ => continue,
            };
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => n.clone(),
                NamedNodePattern::Variable(v) => match value(v) {
                    Some(Term::NamedNode(n)) => n,
                    _ => continue,
                },
            };
            let Some(object) = term(&pattern.object) else {
                continue;
            };
            out.push(Triple::new(subject, predicate, object));
        }
        out
    }
}

impl Construct {
    /// The next triple, unless the turn ends at `until` first.
    pub fn next_in_turn(&mut self, until: Option<std::time::Instant>) -> Polled<Triple> {
        loop {
            if let Some(t) = self.pending.pop() {
                return Polled::Ready(Ok(t));
            }
            match self.rows.next_in_turn(until) {
                Polled::Ready(Ok(row)) => self.instantiate(&row),
                Polled::Ready(Err(e)) => return Polled::Ready(Err(e)),
                Polled::Pending => return Polled::Pending,
                Polled::End => return Polled::End,
            }
        }
    }
}

impl Iterator for Construct {
    type Item = Result<Triple, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_in_turn(None) {
            Polled::Ready(t) => Some(t),
            Polled::End | Polled::Pending => None,
        }
    }
}
