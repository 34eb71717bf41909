//! Rewrites a query's triple patterns into the patterns over stored triples
//! that entail their answers (backward chaining over the compiled
//! [`Schema`]). A pattern that nothing can entail stays as it is, in its
//! basic graph pattern; one that can becomes
//! `DISTINCT { alternative₁ UNION alternative₂ … }` over its own variables,
//! joined with the rest of its group.
//!
//! Recursion (a class defined through a restriction on a property whose
//! triples come from a class…) is cut where a goal repeats: the repeated
//! goal is matched on stored triples only. That is exact for every schema
//! without a class or property that depends on itself through a
//! definition; see `docs/inference.md` for what it leaves out.

mod facts;
mod patterns;
mod same_as;
mod terms;

use super::node_facts::NodeFacts;
use super::schema::Direction;
use super::schema::Schema;
use super::{Inference, InferenceMode, SameAsAnswers};
use crate::expr::blank_variable;
use crate::EngineError;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{Expression, GraphPattern, PropertyPathExpression as Path};
use spargebra::term::{NamedNodePattern, TriplePattern};
use terms::{alternatives_path, named_blank, oriented_step, pattern_variables};

/// Most patterns one query's rewriting may produce (a deep or wide schema
/// multiplies them).
pub const MAX_REWRITTEN_PATTERNS: usize = 20_000;

/// `pattern` with every triple pattern matched under `mode`'s entailment.
/// Alternatives over stored triples that `facts` show cannot match (a
/// constant end without the property) are left out.
pub fn rewrite(
    pattern: &GraphPattern,
    schema: &Schema,
    facts: &NodeFacts<'_>,
    mode: InferenceMode,
) -> Result<GraphPattern, EngineError> {
    if mode.regime == Inference::None {
        return Ok(pattern.clone());
    }
    let mut rewriter = Rewriter {
        schema,
        facts,
        same_as: mode.same_as,
        fresh: 0,
        produced: 0,
        open_classes: Vec::new(),
        open_properties: Vec::new(),
        graph_variable: None,
    };
    rewriter.pattern(pattern)
}

struct Rewriter<'a> {
    schema: &'a Schema,
    /// What the data says about the query's constants.
    facts: &'a NodeFacts<'a>,
    same_as: SameAsAnswers,
    /// Hidden variables made so far.
    fresh: usize,
    /// Patterns produced so far (against [`MAX_REWRITTEN_PATTERNS`]).
    produced: usize,
    /// Goals being expanded (recursion is cut where one repeats).
    open_classes: Vec<Term>,
    open_properties: Vec<NamedNode>,
    /// `GRAPH ?g` around the pattern being rewritten: `?g` is part of each
    /// rewritten pattern's solutions.
    graph_variable: Option<Variable>,
}

impl Rewriter<'_> {
    fn pattern(&mut self, pattern: &GraphPattern) -> Result<GraphPattern, EngineError> {
        use GraphPattern as G;
        let boxed = |p: GraphPattern| Box::new(p);
        Ok(match pattern {
            G::Bgp { patterns } => self.bgp(patterns)?,
            G::Path {
                subject,
                path,
                object,
            } => G::Path {
                subject: subject.clone(),
                path: self.path(path, false),
                object: object.clone(),
            },
            G::Join { left, right } => G::Join {
                left: boxed(self.pattern(left)?),
                right: boxed(self.pattern(right)?),
            },
            G::LeftJoin {
                left,
                right,
                expression,
            } => G::LeftJoin {
                left: boxed(self.pattern(left)?),
                right: boxed(self.pattern(right)?),
                expression: expression
                    .as_ref()
                    .map(|e| self.expression(e))
                    .transpose()?,
            },
            G::Filter { expr, inner } => G::Filter {
                expr: self.expression(expr)?,
                inner: boxed(self.pattern(inner)?),
            },
            G::Union { left, right } => G::Union {
                left: boxed(self.pattern(left)?),
                right: boxed(self.pattern(right)?),
            },
            G::Graph { name, inner } => {
                let outer = self.graph_variable.take();
                if let NamedNodePattern::Variable(g) = name {
                    self.graph_variable = Some(g.clone());
                }
                let inner = self.pattern(inner);
                self.graph_variable = outer;
                G::Graph {
                    name: name.clone(),
                    inner: boxed(inner?),
                }
            }
            G::Extend {
                inner,
                variable,
                expression,
            } => G::Extend {
                inner: boxed(self.pattern(inner)?),
                variable: variable.clone(),
                expression: self.expression(expression)?,
            },
            G::Minus { left, right } => G::Minus {
                left: boxed(self.pattern(left)?),
                right: boxed(self.pattern(right)?),
            },
            G::OrderBy { inner, expression } => G::OrderBy {
                inner: boxed(self.pattern(inner)?),
                expression: expression.clone(),
            },
            G::Project { inner, variables } => G::Project {
                inner: boxed(self.pattern(inner)?),
                variables: variables.clone(),
            },
            G::Distinct { inner } => G::Distinct {
                inner: boxed(self.pattern(inner)?),
            },
            G::Reduced { inner } => G::Reduced {
                inner: boxed(self.pattern(inner)?),
            },
            G::Slice {
                inner,
                start,
                length,
            } => G::Slice {
                inner: boxed(self.pattern(inner)?),
                start: *start,
                length: *length,
            },
            G::Group {
                inner,
                variables,
                aggregates,
            } => G::Group {
                inner: boxed(self.pattern(inner)?),
                variables: variables.clone(),
                aggregates: aggregates.clone(),
            },
            other => other.clone(),
        })
    }

    /// EXISTS patterns inside an expression are rewritten too.
    fn expression(&mut self, expression: &Expression) -> Result<Expression, EngineError> {
        use Expression as E;
        let mut sub = |e: &Expression| self.expression(e).map(Box::new);
        Ok(match expression {
            E::Exists(p) => E::Exists(Box::new(self.pattern(p)?)),
            E::Not(e) => E::Not(sub(e)?),
            E::And(a, b) => E::And(sub(a)?, sub(b)?),
            E::Or(a, b) => E::Or(sub(a)?, sub(b)?),
            E::If(a, b, c) => E::If(sub(a)?, sub(b)?, sub(c)?),
            E::Coalesce(list) => E::Coalesce(
                list.iter()
                    .map(|e| self.expression(e))
                    .collect::<Result<_, _>>()?,
            ),
            other => other.clone(),
        })
    }

    /// Property steps under `+` or `*` match the entailed triples of their
    /// property (a closure's answers are a set, so the alternatives add
    /// no duplicates). Steps elsewhere in a path stay stored-only: a
    /// sequence counts its intermediate nodes, which alternatives would
    /// repeat.
    fn path(&mut self, path: &Path, in_closure: bool) -> Path {
        let mut sub = |p: &Path, closure: bool| Box::new(self.path(p, closure));
        match path {
            Path::NamedNode(p) if in_closure => self.property_path(p).unwrap_or(path.clone()),
            Path::NamedNode(_) | Path::NegatedPropertySet(_) => path.clone(),
            Path::Reverse(p) => Path::Reverse(sub(p, in_closure)),
            Path::Sequence(a, b) => Path::Sequence(sub(a, in_closure), sub(b, in_closure)),
            Path::Alternative(a, b) => Path::Alternative(sub(a, in_closure), sub(b, in_closure)),
            Path::ZeroOrMore(p) => Path::ZeroOrMore(sub(p, true)),
            Path::OneOrMore(p) => Path::OneOrMore(sub(p, true)),
            Path::ZeroOrOne(p) => Path::ZeroOrOne(sub(p, in_closure)),
        }
    }

    /// A property's entailed triples as a path, when a path can say it (no
    /// `hasValue` sources).
    fn property_path(&self, property: &NamedNode) -> Option<Path> {
        let sources = self.schema.sources_of(property);
        if !sources.derives() || !sources.has_values.is_empty() {
            return None;
        }
        let mut steps: Vec<Path> = sources
            .stored
            .iter()
            .map(|(q, d)| oriented_step(q, *d))
            .collect();
        for (inner, d) in &sources.closures {
            let closure = Path::OneOrMore(Box::new(alternatives_path(
                inner.iter().map(|(q, d)| oriented_step(q, *d)).collect(),
            )?));
            steps.push(match d {
                Direction::Forward => closure,
                Direction::Backward => Path::Reverse(Box::new(closure)),
            });
        }
        alternatives_path(steps)
    }

    fn bgp(&mut self, patterns: &[TriplePattern]) -> Result<GraphPattern, EngineError> {
        let mut stored = Vec::new();
        // Each rewritten pattern with the variables it binds.
        let mut entailed = Vec::new();
        for pattern in patterns {
            // Blank nodes of the query are variables; once a pattern leaves
            // its group they must be named ones to keep joining.
            let pattern = TriplePattern {
                subject: named_blank(&pattern.subject),
                predicate: pattern.predicate.clone(),
                object: named_blank(&pattern.object),
            };
            match self.entailed(&pattern)? {
                Some(rewritten) => entailed.push((rewritten, pattern_variables(&pattern))),
                None => stored.push(pattern),
            }
        }
        let mut bound: Vec<Variable> = stored.iter().flat_map(pattern_variables).collect();
        let mut joined = (!stored.is_empty() || entailed.is_empty())
            .then_some(GraphPattern::Bgp { patterns: stored });
        // Joined in an order where each shares a variable with those before
        // it where it can: the joins are planned in this order, and a pattern
        // sharing nothing with its left side is a cross product.
        while !entailed.is_empty() {
            let next = entailed
                .iter()
                .position(|(_, vars)| vars.iter().any(|v| bound.contains(v)))
                .unwrap_or(0);
            let (pattern, vars) = entailed.remove(next);
            bound.extend(vars);
            joined = Some(match joined {
                None => pattern,
                Some(left) => GraphPattern::Join {
                    left: Box::new(left),
                    right: Box::new(pattern),
                },
            });
        }
        Ok(joined.unwrap_or(GraphPattern::Bgp {
            patterns: Vec::new(),
        }))
    }

    fn fresh_variable(&mut self) -> Variable {
        self.fresh += 1;
        // `#` is in no blank node label, so no query's blank node is named so.
        blank_variable(&format!("inferred#{}", self.fresh))
    }

    fn spend(&mut self) -> Result<(), EngineError> {
        self.produced += 1;
        if self.produced > MAX_REWRITTEN_PATTERNS {
            return Err(EngineError::TooComplex(format!(
                "inference would rewrite this query into more than {MAX_REWRITTEN_PATTERNS} \
                 patterns (a deep or wide schema under many patterns of the query)"
            )));
        }
        Ok(())
    }
}
