//! `owl:sameAs`: each synonym of a pattern's subject and object
//! (`eq-rep-s`, `eq-rep-o`), the closure's pairs, and canonical answers.

use super::terms::*;
use super::Rewriter;
use crate::infer::vocabulary as v;
use crate::infer::Inference;
use crate::plan::SYNONYMS_SERVICE;
use oxrdf::{NamedNode, Term};
use spargebra::algebra::{GraphPattern, PropertyPathExpression as Path};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

impl Rewriter<'_> {
    /// Whether patterns read synonyms: OWL RL, and the data has sameAs.
    pub(super) fn synonyms_active(&self) -> bool {
        self.schema.regime == Inference::OwlRl && !self.schema.synonyms.is_empty()
    }

    /// A stored pattern, matched with every synonym of its subject and
    /// object: a constant with synonyms becomes each of them (a union), and
    /// a variable's values are replaced by their synonyms at run time (the
    /// `SameAs` operator).
    pub(super) fn leaf(&self, pattern: &TriplePattern) -> GraphPattern {
        if !self.synonyms_active() || is_same_as(pattern) {
            return GraphPattern::Bgp {
                patterns: vec![pattern.clone()],
            };
        }
        let inner = self.each_synonym(&pattern.subject, &pattern.object, |s, o| {
            let branch = TriplePattern {
                subject: s,
                predicate: pattern.predicate.clone(),
                object: o,
            };
            self.may_match_as_is(&branch).then(|| GraphPattern::Bgp {
                patterns: vec![branch],
            })
        });
        self.synonyms_of_ends(&pattern.subject, &pattern.object, "all", inner)
    }

    /// A transitive closure `subject step+ object` over stored triples,
    /// with synonyms: a chain may pass from a node to any of its synonyms
    /// between two steps, and its ends are read as for [`leaf`](Self::leaf).
    pub(super) fn closure_leaf(
        &self,
        subject: &TermPattern,
        step: Path,
        object: &TermPattern,
    ) -> GraphPattern {
        if !self.synonyms_active() {
            return GraphPattern::Path {
                subject: subject.clone(),
                path: Path::OneOrMore(Box::new(step)),
                object: object.clone(),
            };
        }
        let same_as = Path::NamedNode(v::SAME_AS.into_owned());
        let hop = Path::ZeroOrMore(Box::new(Path::Alternative(
            Box::new(same_as.clone()),
            Box::new(Path::Reverse(Box::new(same_as))),
        )));
        let path = Path::OneOrMore(Box::new(Path::Sequence(Box::new(step), Box::new(hop))));
        let inner = self.each_synonym(subject, object, |s, o| {
            Some(GraphPattern::Path {
                subject: s,
                path: path.clone(),
                object: o,
            })
        });
        self.synonyms_of_ends(subject, object, "all", inner)
    }

    /// The union of `make(s, o)` over the synonyms of constant ends (those
    /// it makes a branch for).
    fn each_synonym(
        &self,
        subject: &TermPattern,
        object: &TermPattern,
        make: impl Fn(TermPattern, TermPattern) -> Option<GraphPattern>,
    ) -> GraphPattern {
        let synonyms = |t: &TermPattern| -> Vec<TermPattern> {
            match t {
                TermPattern::NamedNode(n) => self
                    .schema
                    .synonyms_of(&n.clone().into())
                    .iter()
                    .filter_map(|m| match m {
                        Term::NamedNode(m) => Some(TermPattern::NamedNode(m.clone())),
                        _ => None,
                    })
                    .collect(),
                other => vec![other.clone()],
            }
        };
        let mut branches = Vec::new();
        for s in synonyms(subject) {
            for o in synonyms(object) {
                branches.extend(make(s.clone(), o));
            }
        }
        union(branches)
    }

    /// `inner` with the values of the ends' variables replaced by their
    /// synonyms (`mode` "all") or canonical members ("canonical").
    pub(super) fn synonyms_of_ends(
        &self,
        subject: &TermPattern,
        object: &TermPattern,
        mode: &str,
        inner: GraphPattern,
    ) -> GraphPattern {
        let mut names: Vec<&str> = Vec::new();
        for t in [subject, object] {
            if let TermPattern::Variable(v) = t {
                if !names.contains(&v.as_str()) {
                    names.push(v.as_str());
                }
            }
        }
        if names.is_empty() {
            return inner;
        }
        GraphPattern::Service {
            name: NamedNodePattern::NamedNode(NamedNode::new_unchecked(format!(
                "{SYNONYMS_SERVICE}{mode}:{}",
                names.join(",")
            ))),
            inner: Box::new(inner),
            silent: false,
        }
    }

    /// `owl:sameAs` patterns: the symmetric, transitive closure of the
    /// stored ones, each member of a class also the same as itself.
    pub(super) fn synonym_pairs_of(
        &self,
        subject: &TermPattern,
        object: &TermPattern,
    ) -> GraphPattern {
        // Only the class of a constant end, when there is one.
        let constant = |t: &TermPattern| match t {
            TermPattern::NamedNode(n) => Some(Term::from(n.clone())),
            _ => None,
        };
        let classes: Vec<std::sync::Arc<[Term]>> =
            match constant(subject).or_else(|| constant(object)) {
                Some(c) => self.schema.synonyms.get(&c).cloned().into_iter().collect(),
                None => {
                    let mut all: Vec<_> = self.schema.synonyms.values().cloned().collect();
                    all.sort_by_cached_key(|c| c[0].to_string());
                    all.dedup_by(|a, b| std::sync::Arc::ptr_eq(a, b));
                    all
                }
            };
        let mut rows = Vec::new();
        for class in &classes {
            for a in class.iter().filter_map(ground) {
                for b in class.iter().filter_map(ground) {
                    rows.push((a.clone(), b));
                }
            }
        }
        values_matching(subject, object, rows)
    }
}
