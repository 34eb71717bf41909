//! CONSTRUCT: instantiates the template once per solution, dropping triples
//! with unbound or ill-placed terms and duplicates.

use crate::engine::Rows;
use crate::EngineError;
use oxrdf::{BlankNode, NamedOrBlankNode, Term, Triple, Variable};
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

pub struct Construct {
    rows: Rows,
    variables: Vec<Variable>,
    template: Vec<TriplePattern>,
    pending: Vec<Triple>,
    seen: FxHashSet<Triple>,
}

impl Construct {
    pub(crate) fn new(rows: Rows, template: Vec<TriplePattern>) -> Construct {
        let variables = rows.variables();
        Construct {
            rows,
            variables,
            template,
            pending: Vec::new(),
            seen: FxHashSet::default(),
        }
    }

    fn instantiate(&mut self, row: &[Option<Term>]) {
        // Template blank nodes are fresh for every solution.
        let mut blanks: FxHashMap<String, BlankNode> = FxHashMap::default();
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
                TermPattern::Variable(v) => {
                    let i = self.variables.iter().position(|x| x == v)?;
                    row[i].clone()
                }
                #[allow(unreachable_patterns)]
                _ => None,
            }
        };
        for pattern in &self.template {
            let subject = match term(&pattern.subject) {
                Some(Term::NamedNode(n)) => NamedOrBlankNode::from(n),
                Some(Term::BlankNode(b)) => NamedOrBlankNode::from(b),
                _ => continue,
            };
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => n.clone(),
                NamedNodePattern::Variable(v) => match self
                    .variables
                    .iter()
                    .position(|x| x == v)
                    .and_then(|i| row[i].clone())
                {
                    Some(Term::NamedNode(n)) => n,
                    _ => continue,
                },
            };
            let Some(object) = term(&pattern.object) else {
                continue;
            };
            let triple = Triple::new(subject, predicate, object);
            if self.seen.insert(triple.clone()) {
                self.pending.push(triple);
            }
        }
    }
}

impl Iterator for Construct {
    type Item = Result<Triple, EngineError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(t) = self.pending.pop() {
                return Some(Ok(t));
            }
            match self.rows.next()? {
                Ok(row) => self.instantiate(&row),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
