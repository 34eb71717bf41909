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

use super::schema::{Direction, Restriction, Schema};
use super::vocabulary as v;
use super::{Inference, InferenceMode, SameAsAnswers};
use crate::expr::blank_variable;
use crate::EngineError;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{Expression, Function, GraphPattern, PropertyPathExpression as Path};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};

/// Most patterns one query's rewriting may produce (a deep or wide schema
/// multiplies them).
pub const MAX_REWRITTEN_PATTERNS: usize = 20_000;

/// `pattern` with every triple pattern matched under `mode`'s entailment.
pub fn rewrite(
    pattern: &GraphPattern,
    schema: &Schema,
    mode: InferenceMode,
) -> Result<GraphPattern, EngineError> {
    if mode.regime == Inference::None {
        return Ok(pattern.clone());
    }
    let mut rewriter = Rewriter {
        schema,
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
                Some(rewritten) => entailed.push(rewritten),
                None => stored.push(pattern),
            }
        }
        let mut joined = (!stored.is_empty() || entailed.is_empty())
            .then_some(GraphPattern::Bgp { patterns: stored });
        for e in entailed {
            joined = Some(match joined {
                None => e,
                Some(left) => GraphPattern::Join {
                    left: Box::new(left),
                    right: Box::new(e),
                },
            });
        }
        Ok(joined.unwrap_or(GraphPattern::Bgp {
            patterns: Vec::new(),
        }))
    }

    /// The pattern's entailed answers, or `None` when they are its stored
    /// ones.
    fn entailed(&mut self, pattern: &TriplePattern) -> Result<Option<GraphPattern>, EngineError> {
        let has_synonyms = self.schema.regime == Inference::OwlRl
            && !self.schema.synonyms.is_empty()
            && !is_same_as(pattern);
        if has_synonyms {
            let mut variables = pattern_variables(pattern);
            variables.extend(self.graph_variable.clone());
            let expanded = self.with_synonyms(pattern, 0)?;
            let mut rewritten = GraphPattern::Project {
                inner: Box::new(expanded),
                variables,
            };
            if self.same_as == SameAsAnswers::Canonical {
                rewritten = self.canonical_only(pattern, rewritten);
            }
            return Ok(Some(GraphPattern::Distinct {
                inner: Box::new(rewritten),
            }));
        }
        self.alternatives(pattern)
            .map(|alternatives| alternatives.map(|a| self.distinct(pattern, a)))
    }

    /// DISTINCT over the pattern's own variables of the union of
    /// `alternatives`.
    fn distinct(&self, pattern: &TriplePattern, alternatives: Vec<GraphPattern>) -> GraphPattern {
        let mut variables = pattern_variables(pattern);
        variables.extend(self.graph_variable.clone());
        GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(union(alternatives)),
                variables,
            }),
        }
    }

    /// The pattern's answers with each synonym of its subject and object
    /// (positions from `position` on): OWL RL's `eq-rep-s` and `eq-rep-o`.
    fn with_synonyms(
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
    fn synonym_pairs(&self, from: &Variable, to: &Variable) -> GraphPattern {
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
    fn canonical_only(&self, pattern: &TriplePattern, inner: GraphPattern) -> GraphPattern {
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

    /// The alternatives that entail the pattern's answers (the stored
    /// pattern among them), or `None` when it has only stored ones.
    fn alternatives(
        &mut self,
        pattern: &TriplePattern,
    ) -> Result<Option<Vec<GraphPattern>>, EngineError> {
        let TriplePattern {
            subject,
            predicate,
            object,
        } = pattern;
        let stored = || GraphPattern::Bgp {
            patterns: vec![pattern.clone()],
        };
        let schema_answer =
            |p: &NamedNode| [v::SUB_CLASS_OF, v::SUB_PROPERTY_OF, v::SAME_AS].contains(&p.as_ref());
        match predicate {
            // The closures' answers are in no graph of their own: under
            // `GRAPH ?g` such patterns match stored triples only.
            NamedNodePattern::NamedNode(p) if schema_answer(p) && self.graph_variable.is_some() => {
                Ok(None)
            }
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::TYPE => match object {
                TermPattern::NamedNode(c) => {
                    let class: Term = c.clone().into();
                    if !self.schema.derives_class(&class) {
                        return Ok(None);
                    }
                    self.class(subject, &class).map(Some)
                }
                TermPattern::Variable(c) if !matches!(subject, TermPattern::Variable(s) if s == c) =>
                {
                    if self.schema.derived_classes.is_empty() {
                        return Ok(None);
                    }
                    let mut alternatives = vec![stored()];
                    for class in self.schema.derived_classes.clone() {
                        let derived = self.class(subject, &class.clone().into())?;
                        alternatives.push(self.bound_to(derived, subject, None, c, class));
                    }
                    Ok(Some(alternatives))
                }
                _ => Ok(None),
            },
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SUB_CLASS_OF => {
                Ok(self.hierarchy(pattern, &self.schema.class_pairs))
            }
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SUB_PROPERTY_OF => {
                Ok(self.hierarchy(pattern, &self.schema.property_pairs))
            }
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SAME_AS => {
                if self.schema.regime != Inference::OwlRl || self.schema.synonyms.is_empty() {
                    return Ok(None);
                }
                let pairs = self.synonym_pairs_of(subject, object);
                Ok(Some(vec![stored(), pairs]))
            }
            NamedNodePattern::NamedNode(p) => {
                if !self.schema.sources_of(p).derives() {
                    return Ok(None);
                }
                self.property(subject, p, object).map(Some)
            }
            NamedNodePattern::Variable(var) => {
                let repeated = [subject, object]
                    .iter()
                    .any(|t| matches!(t, TermPattern::Variable(x) if x == var));
                if repeated {
                    return Ok(None);
                }
                let mut alternatives = vec![stored()];
                let mut properties: Vec<NamedNode> =
                    self.schema.properties.keys().cloned().collect();
                properties.sort();
                for property in properties {
                    let derived = self.property(subject, &property, object)?;
                    alternatives.push(self.bound_to(derived, subject, Some(object), var, property));
                }
                let schema_predicates = [
                    (v::TYPE, !self.schema.derived_classes.is_empty()),
                    (v::SUB_CLASS_OF, !self.schema.class_pairs.is_empty()),
                    (v::SUB_PROPERTY_OF, !self.schema.property_pairs.is_empty()),
                ];
                for (predicate, has_answers) in schema_predicates {
                    if !has_answers {
                        continue;
                    }
                    let as_constant = TriplePattern {
                        subject: subject.clone(),
                        predicate: NamedNodePattern::NamedNode(predicate.into_owned()),
                        object: object.clone(),
                    };
                    if let Some(derived) = self.alternatives(&as_constant)? {
                        alternatives.push(self.bound_to(
                            derived,
                            subject,
                            Some(object),
                            var,
                            predicate.into_owned(),
                        ));
                    }
                }
                Ok((alternatives.len() > 1).then_some(alternatives))
            }
        }
    }

    /// `alternatives` projected on the variables of `subject` and `object`
    /// and extended with `variable` bound to `value`.
    fn bound_to(
        &self,
        alternatives: Vec<GraphPattern>,
        subject: &TermPattern,
        object: Option<&TermPattern>,
        variable: &Variable,
        value: NamedNode,
    ) -> GraphPattern {
        let mut variables: Vec<Variable> = [Some(subject), object]
            .into_iter()
            .flatten()
            .filter_map(|t| match t {
                TermPattern::Variable(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        variables.dedup();
        variables.extend(self.graph_variable.clone());
        GraphPattern::Extend {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(union(alternatives)),
                variables,
            }),
            variable: variable.clone(),
            expression: Expression::NamedNode(value),
        }
    }

    /// Patterns on `rdfs:subClassOf` or `rdfs:subPropertyOf`: the stored
    /// triples and the pairs of the reflexive, transitive closure.
    fn hierarchy(
        &self,
        pattern: &TriplePattern,
        pairs: &[(Term, Term)],
    ) -> Option<Vec<GraphPattern>> {
        if pairs.is_empty() {
            return None;
        }
        let rows = pairs
            .iter()
            .filter_map(|(a, b)| Some((ground(a)?, ground(b)?)))
            .collect::<Vec<_>>();
        let values = values_matching(&pattern.subject, &pattern.object, rows);
        Some(vec![
            GraphPattern::Bgp {
                patterns: vec![pattern.clone()],
            },
            values,
        ])
    }

    /// `owl:sameAs` patterns: the symmetric, transitive closure of the
    /// stored ones, each member of a class also the same as itself.
    fn synonym_pairs_of(&self, subject: &TermPattern, object: &TermPattern) -> GraphPattern {
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

    /// Alternatives for `subject rdf:type class`.
    fn class(
        &mut self,
        subject: &TermPattern,
        class: &Term,
    ) -> Result<Vec<GraphPattern>, EngineError> {
        self.spend()?;
        let stored = |class: &Term| match class {
            Term::NamedNode(c) => Some(GraphPattern::Bgp {
                patterns: vec![TriplePattern {
                    subject: subject.clone(),
                    predicate: NamedNodePattern::NamedNode(v::TYPE.into_owned()),
                    object: TermPattern::NamedNode(c.clone()),
                }],
            }),
            _ => None,
        };
        if self.open_classes.contains(class) {
            return Ok(stored(class).into_iter().collect());
        }
        self.open_classes.push(class.clone());
        let mut alternatives = Vec::new();
        let schema = self.schema;
        for sub in schema.sub_classes_of(class) {
            alternatives.extend(stored(&sub));
            // rdfs2, rdfs3: the subjects (objects) of a property with
            // this domain (range).
            for (property, _) in schema.domains.iter().filter(|(_, d)| *d == sub) {
                let value = TermPattern::Variable(self.fresh_variable());
                let derived = self.property(subject, property, &value)?;
                alternatives.push(union(derived));
            }
            for (property, _) in schema.ranges.iter().filter(|(_, r)| *r == sub) {
                if matches!(subject, TermPattern::Literal(_)) {
                    continue;
                }
                let value = TermPattern::Variable(self.fresh_variable());
                let derived = union(self.property(&value, property, subject)?);
                alternatives.push(match subject {
                    // A literal object is no instance: RDF has no literal subjects.
                    TermPattern::Variable(s) => GraphPattern::Filter {
                        expr: Expression::Not(Box::new(Expression::FunctionCall(
                            Function::IsLiteral,
                            vec![Expression::Variable(s.clone())],
                        ))),
                        inner: Box::new(derived),
                    },
                    _ => derived,
                });
            }
            // cls-int1: an instance of every part.
            if let Some(parts) = schema.intersections.get(&sub) {
                let mut joined: Option<GraphPattern> = None;
                for part in parts {
                    let part = union(self.class(subject, part)?);
                    joined = Some(match joined {
                        None => part,
                        Some(left) => GraphPattern::Join {
                            left: Box::new(left),
                            right: Box::new(part),
                        },
                    });
                }
                alternatives.extend(joined);
            }
            match schema.restrictions.get(&sub) {
                // cls-svf1, cls-svf2.
                Some(Restriction::SomeValuesFrom(property, filler)) => {
                    let value = TermPattern::Variable(self.fresh_variable());
                    let with_value = union(self.property(subject, property, &value)?);
                    alternatives.push(if filler.as_ref() == v::THING.into() {
                        with_value
                    } else {
                        GraphPattern::Join {
                            left: Box::new(with_value),
                            right: Box::new(union(self.class(&value, filler)?)),
                        }
                    });
                }
                // cls-hv2.
                Some(Restriction::HasValue(property, value)) => {
                    if let Some(value) = term_pattern(value) {
                        alternatives.push(union(self.property(subject, property, &value)?));
                    }
                }
                None => {}
            }
        }
        self.open_classes.pop();
        Ok(alternatives)
    }

    /// Alternatives for `subject property object`.
    fn property(
        &mut self,
        subject: &TermPattern,
        property: &NamedNode,
        object: &TermPattern,
    ) -> Result<Vec<GraphPattern>, EngineError> {
        self.spend()?;
        let stored = |q: &NamedNode, d: Direction| {
            let (s, o) = oriented(subject, object, d);
            GraphPattern::Bgp {
                patterns: vec![TriplePattern {
                    subject: s.clone(),
                    predicate: NamedNodePattern::NamedNode(q.clone()),
                    object: o.clone(),
                }],
            }
        };
        if self.open_properties.contains(property) {
            return Ok(vec![stored(property, Direction::Forward)]);
        }
        self.open_properties.push(property.clone());
        let sources = self.schema.sources_of(property);
        let mut alternatives: Vec<GraphPattern> =
            sources.stored.iter().map(|(q, d)| stored(q, *d)).collect();
        for (inner, d) in &sources.closures {
            let steps = inner.iter().map(|(q, d)| oriented_step(q, *d)).collect();
            if let Some(step) = alternatives_path(steps) {
                let (s, o) = oriented(subject, object, *d);
                alternatives.push(GraphPattern::Path {
                    subject: s.clone(),
                    path: Path::OneOrMore(Box::new(step)),
                    object: o.clone(),
                });
            }
        }
        // cls-hv1: instances of a hasValue restriction have its value.
        for (class, value, d) in &sources.has_values {
            let (instance, valued) = oriented(subject, object, *d);
            let Some(value) = ground(value) else { continue };
            let instances = union(self.class(instance, class)?);
            match valued {
                TermPattern::Variable(var) => alternatives.push(GraphPattern::Join {
                    left: Box::new(instances),
                    right: Box::new(GraphPattern::Values {
                        variables: vec![var.clone()],
                        bindings: vec![vec![Some(value)]],
                    }),
                }),
                constant if ground_of(constant).as_ref() == Some(&value) => {
                    alternatives.push(instances)
                }
                _ => {}
            }
        }
        self.open_properties.pop();
        Ok(alternatives)
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

/// The union of `patterns` (no solution when there are none).
fn union(patterns: Vec<GraphPattern>) -> GraphPattern {
    patterns
        .into_iter()
        .reduce(|left, right| GraphPattern::Union {
            left: Box::new(left),
            right: Box::new(right),
        })
        .unwrap_or(GraphPattern::Values {
            variables: Vec::new(),
            bindings: Vec::new(),
        })
}

fn alternatives_path(steps: Vec<Path>) -> Option<Path> {
    steps
        .into_iter()
        .reduce(|a, b| Path::Alternative(Box::new(a), Box::new(b)))
}

fn oriented_step(property: &NamedNode, direction: Direction) -> Path {
    let step = Path::NamedNode(property.clone());
    match direction {
        Direction::Forward => step,
        Direction::Backward => Path::Reverse(Box::new(step)),
    }
}

/// (subject, object) of a stored triple that gives `(subject P object)`
/// read in `direction`.
fn oriented<'a>(
    subject: &'a TermPattern,
    object: &'a TermPattern,
    direction: Direction,
) -> (&'a TermPattern, &'a TermPattern) {
    match direction {
        Direction::Forward => (subject, object),
        Direction::Backward => (object, subject),
    }
}

fn named_blank(term: &TermPattern) -> TermPattern {
    match term {
        TermPattern::BlankNode(b) => TermPattern::Variable(blank_variable(b.as_str())),
        other => other.clone(),
    }
}

fn pattern_variables(pattern: &TriplePattern) -> Vec<Variable> {
    let mut variables = Vec::new();
    let predicate = match &pattern.predicate {
        NamedNodePattern::Variable(v) => Some(v),
        NamedNodePattern::NamedNode(_) => None,
    };
    let subject = match &pattern.subject {
        TermPattern::Variable(v) => Some(v),
        _ => None,
    };
    let object = match &pattern.object {
        TermPattern::Variable(v) => Some(v),
        _ => None,
    };
    for v in [subject, predicate, object].into_iter().flatten() {
        if !variables.contains(v) {
            variables.push(v.clone());
        }
    }
    variables
}

fn is_same_as(pattern: &TriplePattern) -> bool {
    matches!(&pattern.predicate, NamedNodePattern::NamedNode(p) if p.as_ref() == v::SAME_AS)
}

/// Whether `variable`, at `position` (0 subject, 1 object), also occurs
/// elsewhere in the pattern.
fn shares_variable(pattern: &TriplePattern, variable: &Variable, position: usize) -> bool {
    let other = if position == 0 {
        &pattern.object
    } else {
        &pattern.subject
    };
    matches!(other, TermPattern::Variable(v) if v == variable)
        || matches!(&pattern.predicate, NamedNodePattern::Variable(v) if v == variable)
}

fn ground(term: &Term) -> Option<GroundTerm> {
    match term {
        Term::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        Term::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

fn ground_of(term: &TermPattern) -> Option<GroundTerm> {
    match term {
        TermPattern::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        TermPattern::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

fn term_pattern(term: &Term) -> Option<TermPattern> {
    match term {
        Term::NamedNode(n) => Some(TermPattern::NamedNode(n.clone())),
        Term::Literal(l) => Some(TermPattern::Literal(l.clone())),
        _ => None,
    }
}

/// `VALUES` of the `(subject, object)` pairs that agree with the pattern's
/// constants, over its variables.
fn values_matching(
    subject: &TermPattern,
    object: &TermPattern,
    rows: Vec<(GroundTerm, GroundTerm)>,
) -> GraphPattern {
    let fits = |term: &TermPattern, value: &GroundTerm| match term {
        TermPattern::Variable(_) => true,
        other => ground_of(other).as_ref() == Some(value),
    };
    let same_variable =
        matches!((subject, object), (TermPattern::Variable(a), TermPattern::Variable(b)) if a == b);
    let mut variables = Vec::new();
    for term in [subject, object] {
        if let TermPattern::Variable(v) = term {
            if !variables.contains(v) {
                variables.push(v.clone());
            }
        }
    }
    let bindings = rows
        .into_iter()
        .filter(|(a, b)| fits(subject, a) && fits(object, b) && (!same_variable || a == b))
        .map(|(a, b)| {
            let mut row = Vec::new();
            if matches!(subject, TermPattern::Variable(_)) {
                row.push(Some(a));
            }
            if matches!(object, TermPattern::Variable(_)) && !same_variable {
                row.push(Some(b));
            }
            row
        })
        .collect();
    GraphPattern::Values {
        variables,
        bindings,
    }
}
