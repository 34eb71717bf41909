//! Equality of results up to blank node renaming: multisets and sequences of
//! rows (solutions aligned on one variable order, or triples as 3-term rows),
//! and graphs (sets of triples) up to isomorphism.
//!
//! Rows without blank nodes are compared directly. For the others, blank nodes
//! are first coloured by iterative refinement (a blank node's colour summarises
//! the rows it occurs in), which both rejects most non-isomorphic inputs at once
//! and narrows the candidates of a backtracking search for a bijection.

use oxrdf::{BlankNode, Term, Triple};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// A solution (values in a fixed variable order) or a triple.
pub type Row = Vec<Option<Term>>;

/// Rounds of colour refinement; the search is exact whatever the number.
const REFINEMENT_ROUNDS: usize = 4;
/// Backtracking steps before giving up (reported as "not equal").
const SEARCH_LIMIT: u64 = 2_000_000;

fn bnode(term: &Option<Term>) -> Option<&BlankNode> {
    match term {
        Some(Term::BlankNode(b)) => Some(b),
        _ => None,
    }
}

fn has_bnode(row: &Row) -> bool {
    row.iter().any(|t| bnode(t).is_some())
}

fn counts<'a>(rows: impl IntoIterator<Item = &'a Row>) -> HashMap<&'a Row, usize> {
    let mut map = HashMap::new();
    for row in rows {
        *map.entry(row).or_insert(0) += 1;
    }
    map
}

fn hash_of(value: impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Colours of the blank nodes of `rows` after refinement. Deterministic, so that
/// isomorphic inputs get equal colours.
fn colours(rows: &[&Row]) -> HashMap<BlankNode, u64> {
    let mut colour: HashMap<BlankNode, u64> = HashMap::new();
    let mut occurrences: HashMap<BlankNode, Vec<(usize, usize)>> = HashMap::new();
    for (r, row) in rows.iter().enumerate() {
        for (p, term) in row.iter().enumerate() {
            if let Some(b) = bnode(term) {
                colour.insert(b.clone(), 0);
                occurrences.entry(b.clone()).or_default().push((r, p));
            }
        }
    }
    for _ in 0..REFINEMENT_ROUNDS {
        let mut next = HashMap::with_capacity(colour.len());
        for (b, occ) in &occurrences {
            let mut parts: Vec<u64> = occ
                .iter()
                .map(|&(r, p)| {
                    let signature: Vec<u64> = rows[r]
                        .iter()
                        .map(|t| match bnode(t) {
                            Some(other) if other == b => 1,
                            Some(other) => hash_of((2u8, colour[other])),
                            None => hash_of((3u8, t)),
                        })
                        .collect();
                    hash_of((p, signature))
                })
                .collect();
            parts.sort_unstable();
            next.insert(b.clone(), hash_of((colour[b], parts)));
        }
        colour = next;
    }
    colour
}

/// A row with its blank nodes replaced by their colours.
fn coloured_signature(row: &Row, colour: &HashMap<BlankNode, u64>) -> Vec<u64> {
    row.iter()
        .map(|t| match bnode(t) {
            Some(b) => hash_of((2u8, colour[b])),
            None => hash_of((3u8, t)),
        })
        .collect()
}

fn map_row(row: &Row, mapping: &HashMap<BlankNode, BlankNode>) -> Option<Row> {
    row.iter()
        .map(|t| match bnode(t) {
            Some(b) => mapping.get(b).map(|m| Some(Term::BlankNode(m.clone()))),
            None => Some(t.clone()),
        })
        .collect()
}

/// True when the multisets of rows are equal up to a bijection of blank nodes.
pub fn multiset_isomorphic(expected: &[Row], actual: &[Row]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let (e_bnode, e_ground): (Vec<&Row>, Vec<&Row>) = expected.iter().partition(|r| has_bnode(r));
    let (a_bnode, a_ground): (Vec<&Row>, Vec<&Row>) = actual.iter().partition(|r| has_bnode(r));
    if counts(e_ground) != counts(a_ground) || e_bnode.len() != a_bnode.len() {
        return false;
    }
    if e_bnode.is_empty() {
        return true;
    }
    let e_colour = colours(&e_bnode);
    let a_colour = colours(&a_bnode);
    let mut e_sigs: Vec<Vec<u64>> = e_bnode
        .iter()
        .map(|r| coloured_signature(r, &e_colour))
        .collect();
    let mut a_sigs: Vec<Vec<u64>> = a_bnode
        .iter()
        .map(|r| coloured_signature(r, &a_colour))
        .collect();
    e_sigs.sort_unstable();
    a_sigs.sort_unstable();
    if e_sigs != a_sigs {
        return false;
    }

    // Candidates per colour; expected blank nodes in order of fewest candidates.
    let mut by_colour: HashMap<u64, Vec<BlankNode>> = HashMap::new();
    for (b, c) in &a_colour {
        by_colour.entry(*c).or_default().push(b.clone());
    }
    for list in by_colour.values_mut() {
        list.sort_by(|x, y| x.as_str().cmp(y.as_str()));
    }
    let mut order: Vec<&BlankNode> = e_colour.keys().collect();
    order.sort_by_key(|b| {
        (
            by_colour.get(&e_colour[*b]).map_or(0, Vec::len),
            e_colour[*b],
            b.as_str().to_owned(),
        )
    });
    let mut rows_of: HashMap<&BlankNode, Vec<&Row>> = HashMap::new();
    for row in &e_bnode {
        let mut seen = HashSet::new();
        for t in row.iter() {
            if let Some(b) = bnode(t) {
                if seen.insert(b) {
                    rows_of.entry(b).or_default().push(row);
                }
            }
        }
    }
    let actual_set: HashSet<&Row> = a_bnode.iter().copied().collect();
    let actual_counts = counts(a_bnode.iter().copied());
    let mut search = Search {
        order: &order,
        e_colour: &e_colour,
        by_colour: &by_colour,
        rows_of: &rows_of,
        actual_set: &actual_set,
        expected_rows: &e_bnode,
        actual_counts: &actual_counts,
        mapping: HashMap::new(),
        used: HashSet::new(),
        steps: 0,
    };
    search.run(0)
}

struct Search<'a> {
    order: &'a [&'a BlankNode],
    e_colour: &'a HashMap<BlankNode, u64>,
    by_colour: &'a HashMap<u64, Vec<BlankNode>>,
    rows_of: &'a HashMap<&'a BlankNode, Vec<&'a Row>>,
    actual_set: &'a HashSet<&'a Row>,
    expected_rows: &'a [&'a Row],
    actual_counts: &'a HashMap<&'a Row, usize>,
    mapping: HashMap<BlankNode, BlankNode>,
    used: HashSet<BlankNode>,
    steps: u64,
}

impl Search<'_> {
    fn run(&mut self, i: usize) -> bool {
        self.steps += 1;
        if self.steps > SEARCH_LIMIT {
            return false;
        }
        if i == self.order.len() {
            let mapped: Vec<Row> = self
                .expected_rows
                .iter()
                .filter_map(|r| map_row(r, &self.mapping))
                .collect();
            return mapped.len() == self.expected_rows.len()
                && counts(mapped.iter()) == *self.actual_counts;
        }
        let b = self.order[i];
        let Some(candidates) = self.by_colour.get(&self.e_colour[b]) else {
            return false;
        };
        for candidate in candidates {
            if self.used.contains(candidate) {
                continue;
            }
            self.mapping.insert(b.clone(), candidate.clone());
            self.used.insert(candidate.clone());
            // Every row of `b` that is now fully mapped must exist on the other side.
            let consistent = self.rows_of.get(b).is_none_or(|rows| {
                rows.iter().all(|r| match map_row(r, &self.mapping) {
                    Some(mapped) => self.actual_set.contains(&mapped),
                    None => true,
                })
            });
            if consistent && self.run(i + 1) {
                return true;
            }
            self.mapping.remove(b);
            self.used.remove(candidate);
            if self.steps > SEARCH_LIMIT {
                return false;
            }
        }
        false
    }
}

/// True when the sequences are equal position by position up to a bijection of
/// blank nodes.
pub fn sequence_isomorphic(expected: &[Row], actual: &[Row]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let mut forward: HashMap<&BlankNode, &BlankNode> = HashMap::new();
    let mut backward: HashMap<&BlankNode, &BlankNode> = HashMap::new();
    for (e, a) in expected.iter().zip(actual) {
        if e.len() != a.len() {
            return false;
        }
        for (x, y) in e.iter().zip(a) {
            match (bnode(x), bnode(y)) {
                (Some(bx), Some(by)) => {
                    if *forward.entry(bx).or_insert(by) != by
                        || *backward.entry(by).or_insert(bx) != bx
                    {
                        return false;
                    }
                }
                (None, None) => {
                    if x != y {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

fn triple_row(t: &Triple) -> Row {
    vec![
        Some(t.subject.clone().into()),
        Some(t.predicate.clone().into()),
        Some(t.object.clone()),
    ]
}

/// Graph isomorphism (duplicates ignored).
pub fn graphs_isomorphic(expected: &[Triple], actual: &[Triple]) -> bool {
    let e: HashSet<&Triple> = expected.iter().collect();
    let a: HashSet<&Triple> = actual.iter().collect();
    let e: Vec<Row> = e.into_iter().map(triple_row).collect();
    let a: Vec<Row> = a.into_iter().map(triple_row).collect();
    multiset_isomorphic(&e, &a)
}

/// Rows as triples, for graph diagnostics.
pub fn triples_as_rows(triples: &[Triple]) -> Vec<Row> {
    let set: HashSet<&Triple> = triples.iter().collect();
    set.into_iter().map(triple_row).collect()
}

/// For diagnostics: rows missing from `actual` and rows not in `expected`,
/// with every blank node shown as `_:b` (so a pure renaming shows nothing).
pub fn difference(expected: &[Row], actual: &[Row]) -> (Vec<Row>, Vec<Row>) {
    let blank = Term::BlankNode(BlankNode::new_unchecked("b"));
    let flatten = |r: &Row| -> Row {
        r.iter()
            .map(|t| match t {
                Some(Term::BlankNode(_)) => Some(blank.clone()),
                other => other.clone(),
            })
            .collect()
    };
    let e: Vec<Row> = expected.iter().map(flatten).collect();
    let a: Vec<Row> = actual.iter().map(flatten).collect();
    let mut a_counts = counts(a.iter());
    let mut missing = Vec::new();
    for row in &e {
        match a_counts.get_mut(row) {
            Some(n) if *n > 0 => *n -= 1,
            _ => missing.push(row.clone()),
        }
    }
    let mut e_counts = counts(e.iter());
    let mut unexpected = Vec::new();
    for row in &a {
        match e_counts.get_mut(row) {
            Some(n) if *n > 0 => *n -= 1,
            _ => unexpected.push(row.clone()),
        }
    }
    (missing, unexpected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    fn iri(s: &str) -> Term {
        NamedNode::new_unchecked(format!("http://ex/{s}")).into()
    }
    fn b(s: &str) -> Term {
        BlankNode::new_unchecked(s).into()
    }
    fn lit(s: &str) -> Term {
        Literal::new_simple_literal(s).into()
    }
    fn row(terms: &[Option<Term>]) -> Row {
        terms.to_vec()
    }
    fn t(s: Term, p: &str, o: Term) -> Triple {
        let subject: oxrdf::NamedOrBlankNode = match s {
            Term::NamedNode(n) => n.into(),
            Term::BlankNode(b) => b.into(),
            _ => unreachable!(),
        };
        Triple::new(
            subject,
            NamedNode::new_unchecked(format!("http://ex/{p}")),
            o,
        )
    }

    #[test]
    fn graphs_differing_in_labels_are_equal() {
        let g1 = vec![
            t(b("a"), "p", b("b")),
            t(b("b"), "p", b("c")),
            t(b("c"), "q", lit("x")),
            t(iri("s"), "r", b("a")),
        ];
        let g2 = vec![
            t(b("z"), "q", lit("x")),
            t(iri("s"), "r", b("x")),
            t(b("x"), "p", b("y")),
            t(b("y"), "p", b("z")),
        ];
        assert!(graphs_isomorphic(&g1, &g2));
        assert!(graphs_isomorphic(&g2, &g1));
    }

    #[test]
    fn graphs_differing_in_structure_are_not() {
        // a cycle of 3 vs. a chain of 3
        let g1 = vec![
            t(b("a"), "p", b("b")),
            t(b("b"), "p", b("c")),
            t(b("c"), "p", b("a")),
        ];
        let g2 = vec![
            t(b("a"), "p", b("b")),
            t(b("b"), "p", b("c")),
            t(b("c"), "p", b("c")),
        ];
        assert!(!graphs_isomorphic(&g1, &g2));
        // a blank node is not an IRI
        let g3 = vec![t(b("a"), "p", lit("1"))];
        let g4 = vec![t(iri("a"), "p", lit("1"))];
        assert!(!graphs_isomorphic(&g3, &g4));
        // one node vs. two with the same description
        let g5 = vec![t(b("a"), "p", lit("1")), t(b("a"), "q", lit("2"))];
        let g6 = vec![t(b("a"), "p", lit("1")), t(b("c"), "q", lit("2"))];
        assert!(!graphs_isomorphic(&g5, &g6));
    }

    #[test]
    fn symmetric_graphs_need_search() {
        // Two disjoint 2-cycles vs. one 4-cycle: colour refinement cannot tell
        // them apart (every node looks the same), the search must.
        let g1 = vec![
            t(b("a"), "p", b("b")),
            t(b("b"), "p", b("a")),
            t(b("c"), "p", b("d")),
            t(b("d"), "p", b("c")),
        ];
        let g2 = vec![
            t(b("w"), "p", b("x")),
            t(b("x"), "p", b("y")),
            t(b("y"), "p", b("z")),
            t(b("z"), "p", b("w")),
        ];
        assert!(!graphs_isomorphic(&g1, &g2));
        let g3 = vec![
            t(b("k"), "p", b("l")),
            t(b("m"), "p", b("n")),
            t(b("n"), "p", b("m")),
            t(b("l"), "p", b("k")),
        ];
        assert!(graphs_isomorphic(&g1, &g3));
    }

    #[test]
    fn solution_multisets_with_duplicates() {
        let e = vec![
            row(&[Some(lit("1")), None]),
            row(&[Some(lit("1")), None]),
            row(&[Some(lit("2")), Some(iri("x"))]),
        ];
        let same = vec![
            row(&[Some(lit("2")), Some(iri("x"))]),
            row(&[Some(lit("1")), None]),
            row(&[Some(lit("1")), None]),
        ];
        let fewer_dups = vec![
            row(&[Some(lit("2")), Some(iri("x"))]),
            row(&[Some(lit("2")), Some(iri("x"))]),
            row(&[Some(lit("1")), None]),
        ];
        assert!(multiset_isomorphic(&e, &same));
        assert!(!multiset_isomorphic(&e, &fewer_dups));
        assert!(!multiset_isomorphic(&e, &same[..2]));
    }

    #[test]
    fn solutions_with_blank_nodes() {
        // The same blank node in two solutions must map to one blank node.
        let e = vec![
            row(&[Some(b("x")), Some(lit("1"))]),
            row(&[Some(b("x")), Some(lit("2"))]),
        ];
        let ok = vec![
            row(&[Some(b("q")), Some(lit("2"))]),
            row(&[Some(b("q")), Some(lit("1"))]),
        ];
        let split = vec![
            row(&[Some(b("q")), Some(lit("2"))]),
            row(&[Some(b("r")), Some(lit("1"))]),
        ];
        assert!(multiset_isomorphic(&e, &ok));
        assert!(!multiset_isomorphic(&e, &split));
        // duplicates of a row with a blank node
        let e = vec![
            row(&[Some(b("x"))]),
            row(&[Some(b("x"))]),
            row(&[Some(b("y"))]),
        ];
        let a = vec![
            row(&[Some(b("1"))]),
            row(&[Some(b("2"))]),
            row(&[Some(b("2"))]),
        ];
        let wrong = vec![
            row(&[Some(b("1"))]),
            row(&[Some(b("2"))]),
            row(&[Some(b("3"))]),
        ];
        assert!(multiset_isomorphic(&e, &a));
        assert!(!multiset_isomorphic(&e, &wrong));
    }

    #[test]
    fn sequences() {
        let e = vec![
            row(&[Some(b("x"))]),
            row(&[Some(lit("1"))]),
            row(&[Some(b("x"))]),
        ];
        let ok = vec![
            row(&[Some(b("y"))]),
            row(&[Some(lit("1"))]),
            row(&[Some(b("y"))]),
        ];
        let reordered = vec![
            row(&[Some(lit("1"))]),
            row(&[Some(b("y"))]),
            row(&[Some(b("y"))]),
        ];
        let split = vec![
            row(&[Some(b("y"))]),
            row(&[Some(lit("1"))]),
            row(&[Some(b("z"))]),
        ];
        assert!(sequence_isomorphic(&e, &ok));
        assert!(!sequence_isomorphic(&e, &reordered));
        assert!(!sequence_isomorphic(&e, &split));
        assert!(multiset_isomorphic(&e, &reordered));
    }

    #[test]
    fn difference_ignores_labels() {
        let e = vec![row(&[Some(b("x"))]), row(&[Some(lit("1"))])];
        let a = vec![row(&[Some(b("y"))]), row(&[Some(lit("2"))])];
        let (missing, unexpected) = difference(&e, &a);
        assert_eq!(missing, vec![row(&[Some(lit("1"))])]);
        assert_eq!(unexpected, vec![row(&[Some(lit("2"))])]);
    }
}
