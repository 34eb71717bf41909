//! Whether an alternative over stored triples can match at all, asked of
//! [`NodeFacts`](crate::infer::NodeFacts) for its constant ends (their
//! synonyms too, when patterns read them).

use super::Rewriter;
use crate::infer::node_facts::Side;
use crate::infer::schema::Direction;
use crate::infer::vocabulary as v;
use crate::EngineError;
use oxrdf::{NamedNode, NamedNodeRef, Term, TermRef};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::sync::Arc;

/// The nodes a pattern's end stands for.
enum Nodes<'t> {
    /// A variable: any node.
    Any,
    One(TermRef<'t>),
    Synonyms(Arc<[Term]>),
}

impl Nodes<'_> {
    /// `f` of the nodes; `None` for [`Nodes::Any`].
    fn with<R>(&self, f: impl FnOnce(&[TermRef<'_>]) -> R) -> Option<R> {
        match self {
            Nodes::Any => None,
            Nodes::One(t) => Some(f(&[*t])),
            Nodes::Synonyms(all) => {
                let refs: Vec<TermRef<'_>> = all.iter().map(Term::as_ref).collect();
                Some(f(&refs))
            }
        }
    }
}

/// A constant end itself, its synonyms aside.
fn as_is(end: &TermPattern) -> Nodes<'_> {
    match end {
        TermPattern::NamedNode(n) => Nodes::One(n.as_ref().into()),
        TermPattern::Literal(l) => Nodes::One(l.as_ref().into()),
        _ => Nodes::Any,
    }
}

impl Rewriter<'_> {
    /// The nodes a constant end stands for in a stored pattern: itself, or
    /// its synonyms when patterns read them.
    fn nodes<'t>(&self, end: &'t TermPattern) -> Nodes<'t> {
        match end {
            TermPattern::NamedNode(n) => self.nodes_of(TermRef::NamedNode(n.as_ref())),
            other => as_is(other),
        }
    }

    fn nodes_of<'t>(&self, term: TermRef<'t>) -> Nodes<'t> {
        if self.synonyms_active() {
            if let Some(all) = self.schema.synonyms.get(&term.into_owned()) {
                return Nodes::Synonyms(all.clone());
            }
        }
        Nodes::One(term)
    }

    /// Whether a stored `subject property object` triple may exist, the
    /// subject among `subject`'s nodes and the object among `object`'s.
    fn may_match_nodes(
        &self,
        subject: Nodes<'_>,
        property: NamedNodeRef<'_>,
        object: Nodes<'_>,
    ) -> Result<bool, EngineError> {
        for (nodes, side) in [(subject, Side::Subject), (object, Side::Object)] {
            if let Some(may) = nodes.with(|nodes| self.facts.may_have(nodes, property, side)) {
                if !may? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Whether a stored triple may match `pattern` as it is (its constant
    /// ends themselves, not their synonyms): a union over synonyms keeps
    /// only the branches that can. An error reading the facts counts as
    /// "may": the scan that reads the branch reports it.
    pub(super) fn may_match_as_is(&self, pattern: &TriplePattern) -> bool {
        let NamedNodePattern::NamedNode(property) = &pattern.predicate else {
            return true;
        };
        self.may_match_nodes(
            as_is(&pattern.subject),
            property.as_ref(),
            as_is(&pattern.object),
        )
        .unwrap_or(true)
    }

    /// Whether a stored `subject property object` triple may exist.
    pub(super) fn may_match(
        &self,
        subject: &TermPattern,
        property: &NamedNode,
        object: &TermPattern,
    ) -> Result<bool, EngineError> {
        self.may_match_nodes(self.nodes(subject), property.as_ref(), self.nodes(object))
    }

    /// Whether a stored `subject rdf:type class` triple may exist.
    pub(super) fn may_be_typed(
        &self,
        subject: &TermPattern,
        class: &Term,
    ) -> Result<bool, EngineError> {
        let classes = self.nodes_of(class.as_ref());
        let typed = classes.with(|classes| -> Result<bool, EngineError> {
            if !self.facts.may_have(classes, v::TYPE, Side::Object)? {
                return Ok(false);
            }
            match self
                .nodes(subject)
                .with(|nodes| self.facts.may_be_typed(nodes, classes))
            {
                Some(may) => may,
                None => Ok(true),
            }
        });
        typed.unwrap_or(Ok(true))
    }

    /// Whether a chain of `steps` (each a property read in a direction) may
    /// start at `from` and end at `to`: some step leaves `from` and some
    /// step reaches `to`.
    pub(super) fn may_chain(
        &self,
        from: &TermPattern,
        steps: &[(NamedNode, Direction)],
        to: &TermPattern,
    ) -> Result<bool, EngineError> {
        let mut leaves = false;
        let mut reaches = false;
        for (q, d) in steps {
            let q = q.as_ref();
            let (start, end) = match d {
                Direction::Forward => (
                    self.may_match_nodes(self.nodes(from), q, Nodes::Any)?,
                    self.may_match_nodes(Nodes::Any, q, self.nodes(to))?,
                ),
                Direction::Backward => (
                    self.may_match_nodes(Nodes::Any, q, self.nodes(from))?,
                    self.may_match_nodes(self.nodes(to), q, Nodes::Any)?,
                ),
            };
            leaves |= start;
            reaches |= end;
            if leaves && reaches {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
