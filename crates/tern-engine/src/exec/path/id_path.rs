//! A property path with its IRIs resolved to index IDs once, before the
//! walk: each step then costs one index lookup, instead of a term lookup
//! and a scan set up per node reached.

use crate::context::{QueryContext, SynonymTable};
use crate::EngineError;
use spargebra::algebra::PropertyPathExpression as Path;
use std::sync::Arc;
use tern_index::Id;

#[derive(Debug, Clone)]
pub enum IdPath {
    /// A predicate; `None` when the index has no such IRI (nothing matches).
    Predicate(Option<Id>),
    Reverse(Box<IdPath>),
    Sequence(Box<IdPath>, Box<IdPath>),
    Alternative(Box<IdPath>, Box<IdPath>),
    ZeroOrOne(Box<IdPath>),
    ZeroOrMore(Box<IdPath>),
    OneOrMore(Box<IdPath>),
    /// `!(p1|...)`: the predicates excluded (those the index knows).
    Negated(Vec<Id>),
    /// `(owl:sameAs|^owl:sameAs)*` when the query runs with OWL RL
    /// synonyms: a node and the members of its sameAs class, from the
    /// query's synonym table instead of a closure over the index (the
    /// inference rewrite puts this between the steps of every transitive
    /// property, so chains may pass through synonyms). The table is the
    /// closure of the sameAs triples the schema read, the same one every
    /// other synonym of the query comes from.
    Synonyms(Arc<SynonymTable>),
}

impl IdPath {
    pub fn resolve(path: &Path, ctx: &QueryContext) -> Result<IdPath, EngineError> {
        let boxed = |p: &Path| IdPath::resolve(p, ctx).map(Box::new);
        Ok(match path {
            Path::NamedNode(p) => IdPath::Predicate(ctx.lookup(&p.clone().into())?),
            Path::Reverse(inner) => IdPath::Reverse(boxed(inner)?),
            Path::Sequence(a, b) => IdPath::Sequence(boxed(a)?, boxed(b)?),
            Path::Alternative(a, b) => IdPath::Alternative(boxed(a)?, boxed(b)?),
            Path::ZeroOrOne(inner) => IdPath::ZeroOrOne(boxed(inner)?),
            Path::ZeroOrMore(inner) => match ctx.synonyms.get() {
                Some(table) if is_same_as_either_way(inner) => IdPath::Synonyms(table.clone()),
                _ => IdPath::ZeroOrMore(boxed(inner)?),
            },
            Path::OneOrMore(inner) => IdPath::OneOrMore(boxed(inner)?),
            Path::NegatedPropertySet(excluded) => {
                let mut ids = Vec::new();
                for p in excluded {
                    ids.extend(ctx.lookup(&p.clone().into())?);
                }
                IdPath::Negated(ids)
            }
        })
    }

    /// Whether the path matches the empty path (a node with itself).
    pub fn may_be_empty(&self) -> bool {
        match self {
            IdPath::ZeroOrMore(_) | IdPath::ZeroOrOne(_) | IdPath::Synonyms(_) => true,
            IdPath::Predicate(_) | IdPath::Negated(_) => false,
            IdPath::Reverse(inner) | IdPath::OneOrMore(inner) => inner.may_be_empty(),
            IdPath::Sequence(a, b) => a.may_be_empty() && b.may_be_empty(),
            IdPath::Alternative(a, b) => a.may_be_empty() || b.may_be_empty(),
        }
    }

    /// The repeated step of a `+` or `*` path.
    pub fn closure_step(&self) -> Option<&IdPath> {
        match self {
            IdPath::OneOrMore(inner) | IdPath::ZeroOrMore(inner) => Some(inner),
            _ => None,
        }
    }
}

const SAME_AS: &str = "http://www.w3.org/2002/07/owl#sameAs";

/// `owl:sameAs|^owl:sameAs` (either order).
fn is_same_as_either_way(path: &Path) -> bool {
    let same_as = |p: &Path| matches!(p, Path::NamedNode(n) if n.as_str() == SAME_AS);
    let reversed = |p: &Path| matches!(p, Path::Reverse(inner) if same_as(inner));
    match path {
        Path::Alternative(a, b) => (same_as(a) && reversed(b)) || (reversed(a) && same_as(b)),
        _ => false,
    }
}
