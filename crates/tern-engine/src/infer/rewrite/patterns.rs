//! The alternatives that entail one triple pattern: subclasses, domains
//! and ranges, definitions (intersections, restrictions), a property's
//! sources (subproperties, inverses, symmetric and transitive readings,
//! hasValue), the hierarchy closures, variable classes and predicates.

use super::terms::*;
use super::Rewriter;
use crate::infer::schema::{Direction, Restriction};
use crate::infer::vocabulary as v;
use crate::infer::Inference;
use crate::infer::SameAsAnswers;
use crate::plan::without_subsumed_branches;
use crate::EngineError;
use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::{Expression, Function, GraphPattern};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};

impl Rewriter<'_> {
    /// The pattern's entailed answers, or `None` when they are its stored
    /// ones.
    pub(super) fn entailed(
        &mut self,
        pattern: &TriplePattern,
    ) -> Result<Option<GraphPattern>, EngineError> {
        // With sameAs classes every pattern reads synonyms (eq-rep-s/o).
        let synonyms = self.synonyms_active() && !is_same_as(pattern);
        let alternatives = match self.alternatives(pattern)? {
            Some(alternatives) => alternatives,
            None if synonyms => vec![self.leaf(pattern)],
            None => return Ok(None),
        };
        let rewritten = self.distinct(pattern, alternatives);
        if !(synonyms && self.same_as == SameAsAnswers::Canonical) {
            return Ok(Some(rewritten));
        }
        // Canonical answers: each value its class's canonical member.
        Ok(Some(GraphPattern::Distinct {
            inner: Box::new(self.synonyms_of_ends(
                &pattern.subject,
                &pattern.object,
                "canonical",
                rewritten,
            )),
        }))
    }

    /// DISTINCT over the pattern's own variables of the union of
    /// `alternatives`.
    pub(super) fn distinct(
        &self,
        pattern: &TriplePattern,
        alternatives: Vec<GraphPattern>,
    ) -> GraphPattern {
        let mut variables = pattern_variables(pattern);
        variables.extend(self.graph_variable.clone());
        // The rules reach some triples along several paths: a branch that
        // another one answers is one more lookup per row for no answer.
        without_subsumed_branches(GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(union(alternatives)),
                variables,
            }),
        })
    }

    /// The alternatives that entail the pattern's answers (the stored
    /// pattern among them), or `None` when it has only stored ones.
    pub(super) fn alternatives(
        &mut self,
        pattern: &TriplePattern,
    ) -> Result<Option<Vec<GraphPattern>>, EngineError> {
        let TriplePattern {
            subject,
            predicate,
            object,
        } = pattern;
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
                    let mut alternatives = vec![self.leaf(pattern)];
                    for class in self.schema.derived_classes.clone() {
                        let derived = self.class(subject, &class.clone().into())?;
                        if !derived.is_empty() {
                            alternatives.push(self.bound_to(derived, subject, None, c, class));
                        }
                    }
                    Ok(Some(alternatives))
                }
                _ => Ok(None),
            },
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SUB_CLASS_OF => {
                Ok(self.hierarchy(pattern, &self.schema.class_pairs, true))
            }
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SUB_PROPERTY_OF => {
                Ok(self.hierarchy(pattern, &self.schema.property_pairs, false))
            }
            NamedNodePattern::NamedNode(p) if p.as_ref() == v::SAME_AS => {
                if self.schema.regime != Inference::OwlRl || self.schema.synonyms.is_empty() {
                    return Ok(None);
                }
                let pairs = self.synonym_pairs_of(subject, object);
                Ok(Some(vec![self.leaf(pattern), pairs]))
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
                let mut alternatives = vec![self.leaf(pattern)];
                let mut properties: Vec<NamedNode> =
                    self.schema.properties.keys().cloned().collect();
                properties.sort();
                for property in properties {
                    let derived = self.property(subject, &property, object)?;
                    if !derived.is_empty() {
                        alternatives.push(self.bound_to(
                            derived,
                            subject,
                            Some(object),
                            var,
                            property,
                        ));
                    }
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
                    if let Some(derived) =
                        self.alternatives(&as_constant)?.filter(|d| !d.is_empty())
                    {
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
    pub(super) fn bound_to(
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
    /// triples, the pairs of the reflexive, transitive closure and, for
    /// classes (`typed_classes`), rdfs10's every class a subclass of itself.
    pub(super) fn hierarchy(
        &mut self,
        pattern: &TriplePattern,
        pairs: &[(Term, Term)],
        typed_classes: bool,
    ) -> Option<Vec<GraphPattern>> {
        let mut alternatives = vec![GraphPattern::Bgp {
            patterns: vec![pattern.clone()],
        }];
        if !pairs.is_empty() {
            let rows = pairs
                .iter()
                .filter_map(|(a, b)| Some((ground(a)?, ground(b)?)))
                .collect::<Vec<_>>();
            alternatives.push(values_matching(&pattern.subject, &pattern.object, rows));
        }
        if typed_classes {
            alternatives.extend(self.typed_reflexive(pattern));
        }
        (alternatives.len() > 1).then_some(alternatives)
    }

    /// rdfs10 for the classes the data uses (objects of `rdf:type`, which
    /// RDFS makes classes): `C rdfs:subClassOf C`.
    fn typed_reflexive(&mut self, pattern: &TriplePattern) -> Option<GraphPattern> {
        let instance = TermPattern::Variable(self.fresh_variable());
        let typed = |class: TermPattern| GraphPattern::Bgp {
            patterns: vec![TriplePattern {
                subject: instance.clone(),
                predicate: NamedNodePattern::NamedNode(v::TYPE.into_owned()),
                object: class,
            }],
        };
        // Whether any instance exists: one row, no columns.
        let exists = |p: GraphPattern| GraphPattern::Slice {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(p),
                variables: Vec::new(),
            }),
            start: 0,
            length: Some(1),
        };
        let classes = |c: &Variable| GraphPattern::Distinct {
            inner: Box::new(GraphPattern::Project {
                inner: Box::new(typed(TermPattern::Variable(c.clone()))),
                variables: vec![c.clone()],
            }),
        };
        let extend = |inner: GraphPattern, variable: &Variable, expression: Expression| {
            GraphPattern::Extend {
                inner: Box::new(inner),
                variable: variable.clone(),
                expression,
            }
        };
        use TermPattern::{NamedNode as N, Variable as V};
        match (&pattern.subject, &pattern.object) {
            (V(c), V(d)) if c == d => Some(classes(c)),
            (V(c), V(d)) => Some(extend(classes(c), d, Expression::Variable(c.clone()))),
            (N(c), V(d)) => Some(extend(
                exists(typed(N(c.clone()))),
                d,
                Expression::NamedNode(c.clone()),
            )),
            (V(c), N(d)) => Some(extend(
                exists(typed(N(d.clone()))),
                c,
                Expression::NamedNode(d.clone()),
            )),
            (N(c), N(d)) if c == d => Some(exists(typed(N(c.clone())))),
            _ => None,
        }
    }

    /// `subject rdf:type class`, stored (a named class only), unless the
    /// data shows there is no such triple.
    fn stored_type(
        &self,
        subject: &TermPattern,
        class: &Term,
    ) -> Result<Option<GraphPattern>, EngineError> {
        let Term::NamedNode(c) = class else {
            return Ok(None);
        };
        if !self.may_be_typed(subject, class)? {
            return Ok(None);
        }
        Ok(Some(self.leaf(&TriplePattern {
            subject: subject.clone(),
            predicate: NamedNodePattern::NamedNode(v::TYPE.into_owned()),
            object: TermPattern::NamedNode(c.clone()),
        })))
    }

    /// Stored triples of `property` read in `direction`, unless the data
    /// shows there are none.
    fn stored_triple(
        &self,
        subject: &TermPattern,
        property: &NamedNode,
        direction: Direction,
        object: &TermPattern,
    ) -> Result<Option<GraphPattern>, EngineError> {
        let (s, o) = oriented(subject, object, direction);
        if !self.may_match(s, property, o)? {
            return Ok(None);
        }
        let leaf = self.leaf(&TriplePattern {
            subject: s.clone(),
            predicate: NamedNodePattern::NamedNode(property.clone()),
            object: o.clone(),
        });
        // Read backwards, the stored object becomes the subject: RDF has
        // no literal subjects, so a literal there gives no triple.
        Ok(match (direction, subject) {
            (Direction::Backward, TermPattern::Variable(v)) => Some(not_literal(v, leaf)),
            (Direction::Backward, TermPattern::Literal(_)) => None,
            _ => Some(leaf),
        })
    }

    /// Alternatives for `subject rdf:type class`.
    pub(super) fn class(
        &mut self,
        subject: &TermPattern,
        class: &Term,
    ) -> Result<Vec<GraphPattern>, EngineError> {
        self.spend()?;
        if self.open_classes.contains(class) {
            return Ok(self.stored_type(subject, class)?.into_iter().collect());
        }
        self.open_classes.push(class.clone());
        let mut alternatives = Vec::new();
        let schema = self.schema;
        for sub in schema.sub_classes_of(class) {
            alternatives.extend(self.stored_type(subject, sub)?);
            // A subclass whose definition is being expanded already (an
            // intersection is a subclass of each of its parts) adds its
            // stored instances only: expanding it again multiplies rows.
            if sub != class && self.open_classes.contains(sub) {
                continue;
            }
            // rdfs2, rdfs3: the subjects (objects) of a property with
            // this domain (range).
            for (property, _) in schema.domains.iter().filter(|(_, d)| d == sub) {
                let value = TermPattern::Variable(self.fresh_variable());
                alternatives.extend(union_of_some(self.property(subject, property, &value)?));
            }
            for (property, _) in schema.ranges.iter().filter(|(_, r)| r == sub) {
                if matches!(subject, TermPattern::Literal(_)) {
                    continue;
                }
                let value = TermPattern::Variable(self.fresh_variable());
                let Some(derived) = union_of_some(self.property(&value, property, subject)?) else {
                    continue;
                };
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
            if let Some(parts) = schema.intersections.get(sub) {
                self.open_classes.push(sub.clone());
                let mut joined: Option<GraphPattern> = None;
                let implied = schema.implied_parts(parts);
                for part in parts.iter().filter(|p| !implied.contains(p)) {
                    let part = self.class(subject, part)?;
                    // A part with no instance leaves the intersection none.
                    if part.is_empty() {
                        joined = None;
                        break;
                    }
                    // Each part's instances once: the joins multiply
                    // duplicates otherwise.
                    let part = distinct_on(subject, union(part));
                    joined = Some(match joined {
                        None => part,
                        Some(left) => GraphPattern::Join {
                            left: Box::new(left),
                            right: Box::new(part),
                        },
                    });
                }
                self.open_classes.pop();
                alternatives.extend(joined);
            }
            match schema.restrictions.get(sub) {
                // cls-svf1, cls-svf2.
                Some(Restriction::SomeValuesFrom(property, filler)) => {
                    let value = TermPattern::Variable(self.fresh_variable());
                    let Some(with_value) = union_of_some(self.property(subject, property, &value)?)
                    else {
                        continue;
                    };
                    if filler.as_ref() == v::THING.into() {
                        alternatives.push(with_value);
                    } else if let Some(fillers) = union_of_some(self.class(&value, filler)?) {
                        // On a variable subject both sides are read whole:
                        // one hash join. A constant subject has a few values:
                        // each side distinct on what the join needs (every
                        // alternative is read under DISTINCT) makes both
                        // union leaves, ordered together, and the fillers
                        // are looked up per value instead of read whole
                        // (with sameAs, every synonym of each).
                        let (left, right) = match subject {
                            TermPattern::Variable(_) => (with_value, fillers),
                            _ => (
                                distinct_over(&[subject, &value], with_value),
                                distinct_over(&[&value], fillers),
                            ),
                        };
                        alternatives.push(GraphPattern::Join {
                            left: Box::new(left),
                            right: Box::new(right),
                        });
                    }
                }
                // cls-hv2.
                Some(Restriction::HasValue(property, value)) => {
                    if let Some(value) = term_pattern(value) {
                        alternatives
                            .extend(union_of_some(self.property(subject, property, &value)?));
                    }
                }
                None => {}
            }
        }
        self.open_classes.pop();
        Ok(alternatives)
    }

    /// Alternatives for `subject property object`.
    pub(super) fn property(
        &mut self,
        subject: &TermPattern,
        property: &NamedNode,
        object: &TermPattern,
    ) -> Result<Vec<GraphPattern>, EngineError> {
        self.spend()?;
        if self.open_properties.contains(property) {
            return Ok(self
                .stored_triple(subject, property, Direction::Forward, object)?
                .into_iter()
                .collect());
        }
        self.open_properties.push(property.clone());
        let sources = self.schema.sources_of(property);
        let mut alternatives: Vec<GraphPattern> = Vec::new();
        for (q, d) in &sources.stored {
            alternatives.extend(self.stored_triple(subject, q, *d, object)?);
        }
        for (inner, d) in &sources.closures {
            let (s, o) = oriented(subject, object, *d);
            if !self.may_chain(s, inner, o)? {
                continue;
            }
            let steps = inner.iter().map(|(q, d)| oriented_step(q, *d)).collect();
            if let Some(step) = alternatives_path(steps) {
                let closure = self.closure_leaf(s, step, o);
                alternatives.push(match (d, subject) {
                    (Direction::Backward, TermPattern::Variable(v)) => not_literal(v, closure),
                    (Direction::Backward, TermPattern::Literal(_)) => continue,
                    _ => closure,
                });
            }
        }
        // cls-hv1: instances of a hasValue restriction have its value.
        for (class, value, d) in &sources.has_values {
            let (instance, valued) = oriented(subject, object, *d);
            // The value and, under sameAs, each of its synonyms (eq-rep).
            let values: Vec<GroundTerm> = if self.synonyms_active() {
                self.schema
                    .synonyms_of(value)
                    .iter()
                    .filter_map(ground)
                    .collect()
            } else {
                ground(value).into_iter().collect()
            };
            if values.is_empty() || matches!(instance, TermPattern::Literal(_)) {
                continue;
            }
            match valued {
                TermPattern::Variable(var) => {
                    let Some(instances) = union_of_some(self.class(instance, class)?) else {
                        continue;
                    };
                    alternatives.push(GraphPattern::Join {
                        left: Box::new(instances),
                        right: Box::new(GraphPattern::Values {
                            variables: vec![var.clone()],
                            bindings: values.into_iter().map(|v| vec![Some(v)]).collect(),
                        }),
                    })
                }
                constant if ground_of(constant).is_some_and(|c| values.contains(&c)) => {
                    alternatives.extend(union_of_some(self.class(instance, class)?));
                }
                _ => {}
            }
        }
        self.open_properties.pop();
        Ok(alternatives)
    }
}
