//! Branches of a union leaf that another branch already answers, left
//! out of the rewritten query (once per snapshot and query: the rewriting
//! is kept, and comparing every pair of 48 branches at each planning cost
//! as much as resolving the ones it left out).
//!
//! The inference rewriting reaches the same triples by several rules: for
//! `?x ub:tenureStatus ?s` the stored pattern, and from `hasValue`
//! `?x ub:tenureStatus ub:Tenured` with `?s` bound to `ub:Tenured`, which
//! the first already gives; a property reached along two paths of the
//! hierarchy comes twice. Under the leaf's DISTINCT such a branch adds no
//! row, but each is one more index lookup per row of a join.
//!
//! Branch `b` is left out when branch `a` gives every row of `b`: each
//! position of `a`'s pattern is `b`'s constant, an output variable that
//! `b` has at the same position (or binds to the constant it has there),
//! or a hidden variable (projected away: any value matches); `a` binds
//! no other constants than `b`, reads synonyms for every output variable
//! `b` does, and drops literals of no variable `b` keeps them of. Of two
//! branches that give each other's rows, the first is kept.

use super::union_chain::union_chain;
use super::union_leaf::{self, BranchShape};
use oxrdf::{Literal, NamedNode, Term, Variable};
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use std::collections::HashMap;

/// `pattern` without the branches another branch answers, if it is a
/// union leaf (see [`union_leaf`]) and any is; else `pattern` as it is.
pub(crate) fn without_subsumed_branches(pattern: GraphPattern) -> GraphPattern {
    let Some(mut shape) = union_leaf::of(&pattern) else {
        return pattern;
    };
    let before = shape.branches.len();
    drop_subsumed(&mut shape.branches, &shape.variables);
    if shape.branches.len() == before {
        return pattern;
    }
    let alternatives = union_chain(
        (shape.branches.iter())
            .filter_map(|branch| {
                let triple = branch.pattern.clone()?;
                Some(union_leaf::wrapped(
                    GraphPattern::Bgp {
                        patterns: vec![triple],
                    },
                    branch,
                ))
            })
            .chain(shape.complex),
    );
    let Some(union) = alternatives else {
        return pattern;
    };
    GraphPattern::Distinct {
        inner: Box::new(GraphPattern::Project {
            inner: Box::new(union),
            variables: shape.variables,
        }),
    }
}

/// Removes from `branches` those another branch answers (`variables`: the
/// leaf's output variables). Each pattern's positions are read once, and a
/// branch is compared only with those of its predicate or a variable one:
/// with nothing kept (`--extent-cache 0`) this runs at every query.
fn drop_subsumed(branches: &mut Vec<BranchShape>, variables: &[Variable]) {
    let n = branches.len();
    let slots: Vec<Option<[Slot<'_>; 3]>> = branches
        .iter()
        .map(|b| b.pattern.as_ref().map(slots))
        .collect();
    // Only a branch with the same predicate, or a variable one, can answer
    // another: the candidates of each branch.
    let mut by_predicate: HashMap<&NamedNode, Vec<usize>> = HashMap::new();
    let mut any_predicate: Vec<usize> = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        match s {
            Some([_, Slot::NamedNode(p), _]) => by_predicate.entry(*p).or_default().push(i),
            Some(_) => any_predicate.push(i),
            None => {}
        }
    }
    let answers_row_of = |a: usize, b: usize| match (&slots[a], &slots[b]) {
        (Some(sa), Some(sb)) => answers(&branches[a], sa, &branches[b], sb, variables),
        _ => false,
    };
    let mut dropped = vec![false; n];
    for b in 0..n {
        let same_predicate = match &slots[b] {
            Some([_, Slot::NamedNode(p), _]) => by_predicate[p].as_slice(),
            _ => &[],
        };
        dropped[b] = same_predicate.iter().chain(&any_predicate).any(|&a| {
            a != b && !dropped[a] && answers_row_of(a, b) && (a < b || !answers_row_of(b, a))
        });
    }
    let mut index = 0;
    branches.retain(|_| {
        index += 1;
        !dropped[index - 1]
    });
}

/// A position of a triple pattern.
#[derive(PartialEq)]
enum Slot<'a> {
    NamedNode(&'a NamedNode),
    Literal(&'a Literal),
    Variable(&'a Variable),
    /// A blank node or a quoted triple: never compared.
    Other,
}

impl Slot<'_> {
    fn is(&self, term: &Term) -> bool {
        match (self, term) {
            (Slot::NamedNode(n), Term::NamedNode(m)) => *n == m,
            (Slot::Literal(l), Term::Literal(m)) => *l == m,
            _ => false,
        }
    }
}

fn slots(pattern: &TriplePattern) -> [Slot<'_>; 3] {
    let predicate = match &pattern.predicate {
        NamedNodePattern::NamedNode(n) => Slot::NamedNode(n),
        NamedNodePattern::Variable(v) => Slot::Variable(v),
    };
    [
        term_slot(&pattern.subject),
        predicate,
        term_slot(&pattern.object),
    ]
}

fn term_slot(term: &TermPattern) -> Slot<'_> {
    match term {
        TermPattern::NamedNode(n) => Slot::NamedNode(n),
        TermPattern::Literal(l) => Slot::Literal(l),
        TermPattern::Variable(v) => Slot::Variable(v),
        #[allow(unreachable_patterns)]
        _ => Slot::Other,
    }
}

/// Whether branch `a` (its pattern's positions `sa`) gives every row
/// branch `b` gives.
fn answers(
    a: &BranchShape,
    sa: &[Slot<'_>; 3],
    b: &BranchShape,
    sb: &[Slot<'_>; 3],
    variables: &[Variable],
) -> bool {
    if !a.constants.iter().all(|c| b.constants.contains(c)) {
        return false;
    }
    let output = |v: &Variable| variables.contains(v);
    if !b
        .synonyms
        .iter()
        .filter(|v| output(v))
        .all(|v| a.synonyms.contains(v))
    {
        return false;
    }
    if !a
        .not_literal
        .iter()
        .all(|v| output(v) && b.not_literal.contains(v))
    {
        return false;
    }
    let mut seen: Vec<&Variable> = Vec::new();
    for (x, y) in sa.iter().zip(sb) {
        match x {
            Slot::Other => return false,
            Slot::NamedNode(_) | Slot::Literal(_) => {
                if x != y {
                    return false;
                }
            }
            Slot::Variable(v) => {
                // A repeated variable asks for equal values: not compared.
                if seen.contains(v) {
                    return false;
                }
                seen.push(v);
                if !output(v) {
                    continue;
                }
                let bound_in_b = b.constants.iter().find(|(c, _)| c == *v);
                let same = match (y, bound_in_b) {
                    (Slot::Variable(w), None) => w == v,
                    (Slot::NamedNode(_) | Slot::Literal(_), Some((_, value))) => y.is(value),
                    _ => false,
                };
                if !same {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str) -> Variable {
        Variable::new_unchecked(name)
    }

    fn iri(name: &str) -> NamedNode {
        NamedNode::new_unchecked(format!("http://e/{name}"))
    }

    fn branch(s: TermPattern, p: &str, o: TermPattern) -> BranchShape {
        BranchShape {
            pattern: Some(TriplePattern {
                subject: s,
                predicate: NamedNodePattern::NamedNode(iri(p)),
                object: o,
            }),
            ..BranchShape::default()
        }
    }

    #[test]
    fn a_branch_with_the_value_as_constant_is_answered_by_the_stored_pattern() {
        let variables = [var("x"), var("s")];
        let stored = branch(var("x").into(), "status", var("s").into());
        let mut valued = branch(var("x").into(), "status", iri("Tenured").into());
        valued.constants.push((var("s"), iri("Tenured").into()));
        let typed = {
            let mut t = branch(var("x").into(), "type", iri("Tenured").into());
            t.constants.push((var("s"), iri("Tenured").into()));
            t
        };
        let mut branches = vec![valued.clone(), stored.clone(), typed.clone()];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 2);
        assert_eq!(branches[0].pattern, stored.pattern);
        assert_eq!(branches[1].pattern, typed.pattern);
    }

    #[test]
    fn of_equal_branches_the_first_is_kept() {
        let variables = [var("x")];
        let one = branch(var("x").into(), "p", iri("c").into());
        let mut branches = vec![one.clone(), one.clone(), one];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 1);
    }

    #[test]
    fn hidden_variables_match_anything_output_variables_only_themselves() {
        let variables = [var("x")];
        // `?x p ?h` (hidden ?h) answers `?x p <c>`, not the other way.
        let any = branch(var("x").into(), "p", var("h").into());
        let one = branch(var("x").into(), "p", iri("c").into());
        let mut branches = vec![one.clone(), any.clone()];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 1);
        assert_eq!(branches[0].pattern, any.pattern);
        // `?y p ?x` does not answer `?x p ?y` (the output moves).
        let variables = [var("x"), var("y")];
        let forward = branch(var("x").into(), "p", var("y").into());
        let backward = branch(var("y").into(), "p", var("x").into());
        let mut branches = vec![forward, backward];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 2);
    }

    #[test]
    fn synonyms_and_literal_filters_must_be_covered() {
        let variables = [var("x"), var("y")];
        let plain = branch(var("x").into(), "p", var("y").into());
        let mut with_synonyms = plain.clone();
        with_synonyms.synonyms.push(var("x"));
        // Synonyms give more rows: the plain branch does not answer them.
        let mut branches = vec![plain.clone(), with_synonyms.clone()];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 1);
        assert_eq!(branches[0].synonyms, vec![var("x")]);
        // A branch that drops literals does not answer one that keeps them.
        let mut no_literals = plain.clone();
        no_literals.not_literal.push(var("y"));
        let mut branches = vec![no_literals.clone(), plain.clone()];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 1);
        assert!(branches[0].not_literal.is_empty());
    }

    #[test]
    fn repeated_variables_are_not_compared() {
        let variables = [var("x")];
        let same = branch(var("x").into(), "p", var("x").into());
        let one = branch(var("x").into(), "p", iri("c").into());
        let mut branches = vec![one, same];
        drop_subsumed(&mut branches, &variables);
        assert_eq!(branches.len(), 2);
    }
}
