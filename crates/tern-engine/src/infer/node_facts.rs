//! What the stored data says about the constants of a query: the
//! properties a node has as subject and as object, and its stored types.
//!
//! The rewriting asks before it adds an alternative over stored triples
//! with a constant end: `<x> p ?o` can only match when some synonym of
//! `<x>` is the subject of a stored `p` triple. A pattern with a constant
//! subject and a variable predicate otherwise expands into an alternative
//! per property and derived class of the schema (724 patterns for one
//! department head on the university benchmark), nearly all of which read
//! nothing; asked first, only those that can match are planned.
//!
//! The answers come from the query's own snapshot (a resumed query is
//! planned again on the snapshot its token names, so it is rewritten the
//! same way) and from every graph: a superset of what any `GRAPH` can see,
//! so leaving an alternative out never loses an answer.

use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{NamedNodeRef, Term, TermRef};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;
use tern_index::{Id, Permutation, Row};

/// Most distinct predicates or stored types collected for one node; a node
/// with more counts as having every one (nothing is left out for it).
const MOST_FACTS: usize = 4096;

/// Which of a node's triples: those it is the subject of, or the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Subject,
    Object,
}

impl Side {
    /// The permutation that has the node first, then the predicate.
    fn permutation(self) -> Permutation {
        match self {
            Side::Subject => Permutation::Spo,
            Side::Object => Permutation::Ops,
        }
    }
}

/// One node's side: its predicates (sorted), and as a subject its stored
/// types (sorted); `None` where there were more than [`MOST_FACTS`].
#[derive(Debug, Default)]
struct Facts {
    predicates: Option<Vec<Id>>,
    types: Option<Vec<Id>>,
}

/// The facts of the nodes one query's rewriting asks about, each read once.
/// A rewriting asks thousands of times about a few dozen terms, so IDs and
/// facts are remembered here, keyed without copying the asker's terms.
pub struct NodeFacts<'a> {
    ctx: &'a QueryContext,
    type_id: Option<Id>,
    iris: RefCell<FxHashMap<String, Option<Id>>>,
    literals: RefCell<FxHashMap<Term, Option<Id>>>,
    known: RefCell<FxHashMap<(Id, Side), Rc<Facts>>>,
}

impl<'a> NodeFacts<'a> {
    pub fn new(ctx: &'a QueryContext) -> Result<NodeFacts<'a>, EngineError> {
        let type_id = ctx.lookup(&Term::from(crate::infer::vocabulary::TYPE.into_owned()))?;
        Ok(NodeFacts {
            ctx,
            type_id,
            iris: RefCell::default(),
            literals: RefCell::default(),
            known: RefCell::default(),
        })
    }

    /// The index's ID of `term`; `None` when no triple holds it.
    fn id(&self, term: TermRef<'_>) -> Result<Option<Id>, EngineError> {
        if let TermRef::NamedNode(iri) = term {
            if let Some(&id) = self.iris.borrow().get(iri.as_str()) {
                return Ok(id);
            }
            let id = self.ctx.lookup(&term.into_owned())?;
            self.iris.borrow_mut().insert(iri.as_str().to_owned(), id);
            return Ok(id);
        }
        let term = term.into_owned();
        if let Some(&id) = self.literals.borrow().get(&term) {
            return Ok(id);
        }
        let id = self.ctx.lookup(&term)?;
        self.literals.borrow_mut().insert(term, id);
        Ok(id)
    }

    /// Whether some node of `nodes` may be on `side` of a stored triple of
    /// `property` (false only when none is).
    pub fn may_have(
        &self,
        nodes: &[TermRef<'_>],
        property: NamedNodeRef<'_>,
        side: Side,
    ) -> Result<bool, EngineError> {
        let Some(property) = self.id(property.into())? else {
            return Ok(false);
        };
        self.any_facts(nodes, side, |facts| match &facts.predicates {
            None => true,
            Some(predicates) => predicates.binary_search(&property).is_ok(),
        })
    }

    /// Whether some node of `nodes` may have a stored `rdf:type` of some
    /// class of `classes`.
    pub fn may_be_typed(
        &self,
        nodes: &[TermRef<'_>],
        classes: &[TermRef<'_>],
    ) -> Result<bool, EngineError> {
        let mut class_ids = Vec::with_capacity(classes.len());
        for &class in classes {
            class_ids.extend(self.id(class)?);
        }
        if class_ids.is_empty() || self.type_id.is_none() {
            return Ok(false);
        }
        self.any_facts(nodes, Side::Subject, |facts| match &facts.types {
            None => true,
            Some(types) => class_ids.iter().any(|c| types.binary_search(c).is_ok()),
        })
    }

    /// Whether `test` holds for the facts of some node of `nodes` known to
    /// the index.
    fn any_facts(
        &self,
        nodes: &[TermRef<'_>],
        side: Side,
        test: impl Fn(&Facts) -> bool,
    ) -> Result<bool, EngineError> {
        for &node in nodes {
            let Some(id) = self.id(node)? else {
                continue;
            };
            let known = self.known.borrow().get(&(id, side)).cloned();
            let facts = match known {
                Some(facts) => facts,
                None => {
                    let facts = Rc::new(self.read(id, side)?);
                    self.known.borrow_mut().insert((id, side), facts.clone());
                    facts
                }
            };
            if test(&facts) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn read(&self, node: Id, side: Side) -> Result<Facts, EngineError> {
        let perm = side.permutation();
        let predicates = self.distinct_after(perm, [node.0, 0, 0, 0], 1)?;
        let types = match (side, self.type_id) {
            (Side::Subject, Some(t)) if predicates.as_ref().is_none_or(|p| p.contains(&t)) => {
                self.distinct_after(perm, [node.0, t.0, 0, 0], 2)?
            }
            _ => Some(Vec::new()),
        };
        Ok(Facts { predicates, types })
    }

    /// The distinct values of column `column` among the rows that start
    /// with `start`'s first `column` values, in order; `None` past
    /// [`MOST_FACTS`]. One seek per value: a node with a million triples of
    /// one predicate costs a block lookup for it, not a million rows.
    fn distinct_after(
        &self,
        perm: Permutation,
        start: Row,
        column: usize,
    ) -> Result<Option<Vec<Id>>, EngineError> {
        let mut values: Vec<Id> = Vec::new();
        let mut lo = start;
        let mut hi = [u64::MAX; 4];
        hi[..column].copy_from_slice(&start[..column]);
        while let Some(row) = self.ctx.index.first_row(perm, lo, hi)? {
            if values.len() == MOST_FACTS {
                return Ok(None);
            }
            let value = row[column];
            values.push(Id(value));
            if value == u64::MAX {
                break;
            }
            // Past this value: its other rows are skipped.
            lo[column] = value + 1;
            lo[column + 1..].fill(0);
        }
        Ok(Some(values))
    }
}
