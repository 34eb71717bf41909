//! Joins of basic graph patterns written as separate groups, made one basic
//! graph pattern, so that the join order covers all of their triple
//! patterns: `{ A } { B FILTER(f) }` is `{ A B FILTER(f) }`, and
//! `A { B1 } UNION { B2 }` is `{ A B1 } UNION { A B2 }`. Planned apart, each
//! group is evaluated without the values the others fix: a UNION branch of
//! co-authors joined with one author afterwards first makes the co-author
//! pairs of every author.
//!
//! Exact because:
//! - a join of basic graph patterns has the solutions of the pattern made of
//!   all their triples (blank node labels cannot be shared between groups);
//! - a FILTER of a group reads, in every solution of that group, the same
//!   values it reads in the joined solution when every variable it reads is
//!   bound by the group's own triples, so it may filter the joined rows;
//! - join distributes over UNION (bags: each pair of solutions once).
//!
//! Not for filters whose variables the group may leave unbound (they would
//! see the other groups' values), nor EXISTS or functions with a fresh
//! value per call.
//!
//! A path that is an alternative of predicates and inverse predicates,
//! `(p | ^q)`, is the UNION of their triple patterns (the spec's evaluation
//! of an alternative is the union of its sides' solutions), so it joins the
//! same way: `?d dc:creator <a> . ?d (bib:journal | bib:partOf) ?v` looks up
//! each document's venue instead of listing every venue of the store.

use super::exists;
use super::union_chain::union_chain;
use crate::expr::expression_variables;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use spargebra::algebra::{Expression, GraphPattern, PropertyPathExpression};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

/// Most triple patterns a merged group gets (the join order of a larger
/// group is searched greedily, and copies into UNION branches add up).
const MAX_MERGED_PATTERNS: usize = 32;
/// Most UNION branches a group is copied into.
const MAX_BRANCHES: usize = 8;

/// `Join(Join(a, b), c)` as `Join(a, Join(b, c))` when `b` and `c` merge
/// (joins are associative): a group after a subquery, joined with a UNION
/// (BSBM BI Q6: the ratings' UNION was hash-joined whole, 797,215 rows,
/// instead of being looked up for the 223 reviews of the group).
pub fn regroup(left: &GraphPattern, right: &GraphPattern) -> Option<GraphPattern> {
    let GraphPattern::Join {
        left: first,
        right: second,
    } = left
    else {
        return None;
    };
    let merged = merge_join(second, right)?;
    Some(GraphPattern::Join {
        left: first.clone(),
        right: Box::new(merged),
    })
}

/// `Join(left, right)` as one filtered basic graph pattern, or as a UNION
/// of them, when the parts allow; `None` otherwise.
pub fn merge_join(left: &GraphPattern, right: &GraphPattern) -> Option<GraphPattern> {
    // One side a (filtered) basic graph pattern, the other anything.
    let (group, other) = match (FilteredBgp::of(left), FilteredBgp::of(right)) {
        (Some(a), Some(b)) => return a.join(b).map(FilteredBgp::into_pattern),
        (Some(group), None) => (group, right),
        (None, Some(group)) => (group, left),
        (None, None) => return None,
    };
    if let GraphPattern::Path {
        subject,
        path,
        object,
    } = other
    {
        if let Some(joined) = zero_or_one_step(group.clone(), subject, path, object) {
            return Some(joined);
        }
    }
    let mut branches = Vec::new();
    union_branches(other, &mut branches)?;
    let merged = branches
        .iter()
        .map(|b| group.clone().join(FilteredBgp::of(b)?))
        .collect::<Option<Vec<_>>>()?;
    union_chain(merged.into_iter().map(FilteredBgp::into_pattern))
}

/// `A . ?s p? ?o` where A binds `?s` as a node (subject or object) and not
/// `?o`: the pairs of a zero-or-one path are `(?s, ?s)` for every node and
/// `(?s, ?o)` for every step, as a set, so it is `{ A ?s p ?o FILTER(?s !=
/// ?o as terms) } UNION { A BIND(?s AS ?o) }` (the filter keeps a loop's
/// pair from counting twice). The same with the ends swapped. Planned as a
/// whole, the path's step is looked up from A's nodes instead of the path
/// listing every node of the store with itself.
fn zero_or_one_step(
    group: FilteredBgp,
    subject: &TermPattern,
    path: &PropertyPathExpression,
    object: &TermPattern,
) -> Option<GraphPattern> {
    let PropertyPathExpression::ZeroOrOne(step) = path else {
        return None;
    };
    let (TermPattern::Variable(s), TermPattern::Variable(o)) = (subject, object) else {
        return None;
    };
    let nodes = group.node_variables();
    let all = group.variables();
    let (bound, free) = if nodes.contains(s) && !all.contains(o) {
        (s, o)
    } else if nodes.contains(o) && !all.contains(s) {
        (o, s)
    } else {
        return None;
    };
    if s == o {
        return None;
    }
    let mut steps = Vec::new();
    alternatives(step, &mut steps)?;
    let [(predicate, inverse)] = &steps[..] else {
        return None;
    };
    let (from, to) = if *inverse {
        (object, subject)
    } else {
        (subject, object)
    };
    let mut one = group.clone().join(FilteredBgp {
        patterns: vec![TriplePattern {
            subject: from.clone(),
            predicate: NamedNodePattern::NamedNode(predicate.clone()),
            object: to.clone(),
        }],
        filters: Vec::new(),
    })?;
    one.filters
        .push(Expression::Not(Box::new(Expression::SameTerm(
            Box::new(Expression::Variable(s.clone())),
            Box::new(Expression::Variable(o.clone())),
        ))));
    let zero = GraphPattern::Extend {
        inner: Box::new(group.into_pattern()),
        variable: free.clone(),
        expression: Expression::Variable(bound.clone()),
    };
    Some(GraphPattern::Union {
        left: Box::new(one.into_pattern()),
        right: Box::new(zero),
    })
}

/// The branches of a (nested) UNION, or of an alternative path, at most
/// [`MAX_BRANCHES`].
fn union_branches(pattern: &GraphPattern, out: &mut Vec<GraphPattern>) -> Option<()> {
    match pattern {
        GraphPattern::Union { left, right } => {
            union_branches(left, out)?;
            union_branches(right, out)
        }
        GraphPattern::Path {
            subject,
            path,
            object,
        } => union_branches(&path_as_union(subject, path, object)?, out),
        _ if out.len() < MAX_BRANCHES => {
            out.push(pattern.clone());
            Some(())
        }
        _ => None,
    }
}

/// `s (p1 | ^p2 | ...) o` as the UNION of `s p1 o`, `o p2 s`, ...; `None`
/// for other paths.
pub fn path_as_union(
    subject: &TermPattern,
    path: &PropertyPathExpression,
    object: &TermPattern,
) -> Option<GraphPattern> {
    let mut steps = Vec::new();
    alternatives(path, &mut steps)?;
    if steps.len() < 2 || steps.len() > MAX_BRANCHES {
        return None;
    }
    union_chain(steps.into_iter().map(|(predicate, inverse)| {
        let (s, o) = if inverse {
            (object, subject)
        } else {
            (subject, object)
        };
        GraphPattern::Bgp {
            patterns: vec![TriplePattern {
                subject: s.clone(),
                predicate: NamedNodePattern::NamedNode(predicate),
                object: o.clone(),
            }],
        }
    }))
}

/// The predicates of an alternative of predicates and inverse predicates
/// (true: inverse).
fn alternatives(
    path: &PropertyPathExpression,
    out: &mut Vec<(oxrdf::NamedNode, bool)>,
) -> Option<()> {
    match path {
        PropertyPathExpression::NamedNode(n) => out.push((n.clone(), false)),
        PropertyPathExpression::Reverse(inner) => match inner.as_ref() {
            PropertyPathExpression::NamedNode(n) => out.push((n.clone(), true)),
            _ => return None,
        },
        PropertyPathExpression::Alternative(a, b) => {
            alternatives(a, out)?;
            alternatives(b, out)?;
        }
        _ => return None,
    }
    Some(())
}

/// Triple patterns and filters over them, each filter reading only
/// variables the triples bind.
#[derive(Clone)]
struct FilteredBgp {
    patterns: Vec<TriplePattern>,
    filters: Vec<Expression>,
}

impl FilteredBgp {
    fn of(pattern: &GraphPattern) -> Option<FilteredBgp> {
        match pattern {
            GraphPattern::Bgp { patterns } => Some(FilteredBgp {
                patterns: patterns.clone(),
                filters: Vec::new(),
            }),
            GraphPattern::Filter { expr, inner } => {
                let mut group = FilteredBgp::of(inner)?;
                let mut read = FxHashSet::default();
                expression_variables(expr, &mut read)?;
                let bound = group.variables();
                if !read.iter().all(|v| bound.contains(v)) {
                    return None;
                }
                group.filters.extend(exists::conjuncts(expr));
                Some(group)
            }
            GraphPattern::Join { left, right } => {
                FilteredBgp::of(left)?.join(FilteredBgp::of(right)?)
            }
            _ => None,
        }
    }

    fn join(mut self, other: FilteredBgp) -> Option<FilteredBgp> {
        if self.patterns.len() + other.patterns.len() > MAX_MERGED_PATTERNS {
            return None;
        }
        self.patterns.extend(other.patterns);
        self.filters.extend(other.filters);
        Some(self)
    }

    /// The variables in subject or object position: bound to nodes.
    fn node_variables(&self) -> FxHashSet<Variable> {
        let mut out = FxHashSet::default();
        for t in &self.patterns {
            for term in [&t.subject, &t.object] {
                if let TermPattern::Variable(v) = term {
                    out.insert(v.clone());
                }
            }
        }
        out
    }

    fn variables(&self) -> FxHashSet<Variable> {
        let mut out = self.node_variables();
        for t in &self.patterns {
            if let NamedNodePattern::Variable(v) = &t.predicate {
                out.insert(v.clone());
            }
        }
        out
    }

    fn into_pattern(self) -> GraphPattern {
        let bgp = GraphPattern::Bgp {
            patterns: self.patterns,
        };
        match exists::and_all(self.filters) {
            Some(expr) => GraphPattern::Filter {
                expr,
                inner: Box::new(bgp),
            },
            None => bgp,
        }
    }
}
