//! `owl:sameAs`: each synonym of a pattern's subject and object
//! (`eq-rep-s`, `eq-rep-o`), the closure's pairs, and canonical answers.

use super::terms::*;
use super::Rewriter;
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{TermPattern, TriplePattern};

impl Rewriter<'_> {
    /// The pattern's answers with each synonym of its subject and object
    /// (positions from `position` on): OWL RL's `eq-rep-s` and `eq-rep-o`.
    pub(super) fn with_synonyms(
        &mut self,
        pattern: &TriplePattern,
        position: usize,
    ) -> Result<GraphPattern, EngineError> {
        if position > 1 {
            return Ok(match self.alternatives(pattern)? {
                Some(alternatives) => union(alternatives),
                None => GraphPattern::Bgp {
                    patterns: vec![pattern.clone()],
                },
            });
        }
        let term = if position == 0 {
            &pattern.subject
        } else {
            &pattern.object
        };
        let replaced = |by: TermPattern| {
            let mut p = pattern.clone();
            if position == 0 {
                p.subject = by;
            } else {
                p.object = by;
            }
            p
        };
        match term {
            TermPattern::NamedNode(n) => {
                let synonyms = self.schema.synonyms_of(&n.clone().into());
                let mut branches = Vec::new();
                for synonym in synonyms.iter() {
                    if let Term::NamedNode(s) = synonym {
                        let p = replaced(TermPattern::NamedNode(s.clone()));
                        branches.push(self.with_synonyms(&p, position + 1)?);
                    }
                }
                Ok(union(branches))
            }
            TermPattern::Variable(var) if !shares_variable(pattern, var, position) => {
                let same = self.with_synonyms(pattern, position + 1)?;
                let stand_in = self.fresh_variable();
                let other = self.with_synonyms(
                    &replaced(TermPattern::Variable(stand_in.clone())),
                    position + 1,
                )?;
                let pairs = self.synonym_pairs(&stand_in, var);
                Ok(GraphPattern::Union {
                    left: Box::new(same),
                    right: Box::new(GraphPattern::Join {
                        left: Box::new(other),
                        right: Box::new(pairs),
                    }),
                })
            }
            _ => self.with_synonyms(pattern, position + 1),
        }
    }

    /// `VALUES (?from ?to)` with every pair of distinct synonyms.
    pub(super) fn synonym_pairs(&self, from: &Variable, to: &Variable) -> GraphPattern {
        let mut bindings = Vec::new();
        let mut classes: Vec<&std::sync::Arc<[Term]>> = self.schema.synonyms.values().collect();
        classes.sort_by_key(|c| c[0].to_string());
        classes.dedup_by(|a, b| std::sync::Arc::ptr_eq(a, b));
        for class in classes {
            for a in class.iter().filter_map(ground) {
                for b in class.iter().filter_map(ground) {
                    if a != b {
                        bindings.push(vec![Some(a.clone()), Some(b)]);
                    }
                }
            }
        }
        GraphPattern::Values {
            variables: vec![from.clone(), to.clone()],
            bindings,
        }
    }

    /// Keeps the solutions whose subject and object variables hold no
    /// synonym other than the canonical one of its class.
    pub(super) fn canonical_only(
        &self,
        pattern: &TriplePattern,
        inner: GraphPattern,
    ) -> GraphPattern {
        let others: Vec<Expression> = self
            .schema
            .synonyms
            .iter()
            .filter(|(member, class)| **member != class[0])
            .filter_map(|(member, _)| match member {
                Term::NamedNode(n) => Some(Expression::NamedNode(n.clone())),
                _ => None,
            })
            .collect();
        let mut filtered = inner;
        for term in [&pattern.subject, &pattern.object] {
            if let TermPattern::Variable(var) = term {
                filtered = GraphPattern::Filter {
                    expr: Expression::Not(Box::new(Expression::In(
                        Box::new(Expression::Variable(var.clone())),
                        others.clone(),
                    ))),
                    inner: Box::new(filtered),
                };
            }
        }
        filtered
    }

    /// `owl:sameAs` patterns: the symmetric, transitive closure of the
    /// stored ones, each member of a class also the same as itself.
    pub(super) fn synonym_pairs_of(
        &self,
        subject: &TermPattern,
        object: &TermPattern,
    ) -> GraphPattern {
        let mut rows = Vec::new();
        for (member, class) in &self.schema.synonyms {
            let Some(a) = ground(member) else { continue };
            for b in class.iter().filter_map(ground) {
                rows.push((a.clone(), b));
            }
        }
        rows.sort_by_key(|(a, b)| (a.to_string(), b.to_string()));
        values_matching(subject, object, rows)
    }
}
