//! Checking what the engine returned against the expected result: the kind
//! of result, the solutions up to blank node renaming, and the order a
//! top-level ORDER BY imposes.

use crate::compare::{self, Row};
use crate::results::Expected;
use oxrdf::{Term, Triple, Variable};
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use spargebra::Query;
use std::collections::HashSet;

/// What the engine returned, collected.
pub enum Actual {
    Solutions {
        variables: Vec<Variable>,
        rows: Vec<Row>,
    },
    Boolean(bool),
    Graph(Vec<Triple>),
}

fn show_rows(variables: &[Variable], rows: &[Row]) -> String {
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = variables
            .iter()
            .zip(row)
            .filter_map(|(v, t)| t.as_ref().map(|t| format!("{v}={t}")))
            .collect();
        out.push_str(&format!("  {}\n", cells.join(" ")));
    }
    out
}

fn show_triples(triples: &[Triple]) -> String {
    triples.iter().map(|t| format!("  {t} .\n")).collect()
}

/// The expected result, one row or triple per line (for `TERN_W3C_DEBUG`).
pub fn show_expected(e: &Expected) -> String {
    match e {
        Expected::Boolean(b) => format!("  {b}\n"),
        Expected::Graph(t) => show_triples(t),
        Expected::Solutions { variables, rows } => show_rows(variables, rows),
    }
}

/// The engine's result, one row or triple per line (for `TERN_W3C_DEBUG`).
pub fn show_actual(a: &Actual) -> String {
    match a {
        Actual::Boolean(b) => format!("  {b}\n"),
        Actual::Graph(t) => show_triples(t),
        Actual::Solutions { variables, rows } => show_rows(variables, rows),
    }
}

/// The order the top level of a query imposes on its solutions.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    None,
    /// ORDER BY on plain variables: those positions must follow the expected
    /// sequence; rows with equal keys may come in any order.
    ByVariables(Vec<Variable>),
    /// ORDER BY on expressions: the whole sequence must match.
    Sequence,
}

pub fn top_level_order(query: &Query) -> Order {
    let Query::Select { pattern, .. } = query else {
        return Order::None;
    };
    // Slice(Distinct|Reduced(Project(OrderBy(...)))): only the query's own
    // ORDER BY counts, not one of a subquery below its projection.
    let mut pattern = pattern;
    let mut projected = false;
    loop {
        pattern = match pattern {
            GraphPattern::Slice { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
                if !projected =>
            {
                inner
            }
            GraphPattern::Project { inner, .. } if !projected => {
                projected = true;
                inner
            }
            GraphPattern::OrderBy { expression, .. } => {
                let variables: Option<Vec<Variable>> = expression
                    .iter()
                    .map(|e| match e {
                        OrderExpression::Asc(Expression::Variable(v))
                        | OrderExpression::Desc(Expression::Variable(v)) => Some(v.clone()),
                        _ => None,
                    })
                    .collect();
                return variables.map_or(Order::Sequence, Order::ByVariables);
            }
            _ => return Order::None,
        };
    }
}

pub fn compare_outcome(
    expected: Expected,
    actual: Actual,
    order: &Order,
    lax: bool,
) -> Result<(), String> {
    match (expected, actual) {
        (Expected::Boolean(e), Actual::Boolean(a)) => {
            if e == a {
                Ok(())
            } else {
                Err(format!("wrong result: expected {e}, got {a}"))
            }
        }
        (Expected::Graph(e), Actual::Graph(a)) => {
            if compare::graphs_isomorphic(&e, &a) {
                Ok(())
            } else {
                let (missing, unexpected) = compare::difference(
                    &compare::triples_as_rows(&e),
                    &compare::triples_as_rows(&a),
                );
                Err(format!(
                    "wrong result: expected {} triples, got {}{}",
                    e.len(),
                    a.len(),
                    describe_rows(&missing, &unexpected, None)
                ))
            }
        }
        (
            Expected::Solutions {
                variables: ev,
                rows: er,
            },
            Actual::Solutions {
                variables: av,
                rows: ar,
            },
        ) => compare_solutions(&ev, er, &av, ar, order, lax),
        (e, a) => Err(format!(
            "wrong result kind: expected {}, got {}",
            expected_kind(&e),
            actual_kind(&a)
        )),
    }
}

fn expected_kind(e: &Expected) -> &'static str {
    match e {
        Expected::Boolean(_) => "a boolean",
        Expected::Graph(_) => "a graph",
        Expected::Solutions { .. } => "solutions",
    }
}

fn actual_kind(a: &Actual) -> &'static str {
    match a {
        Actual::Boolean(_) => "a boolean",
        Actual::Graph(_) => "a graph",
        Actual::Solutions { .. } => "solutions",
    }
}

fn compare_solutions(
    ev: &[Variable],
    mut er: Vec<Row>,
    av: &[Variable],
    ar: Vec<Row>,
    order: &Order,
    lax: bool,
) -> Result<(), String> {
    let e_names: HashSet<&str> = ev.iter().map(Variable::as_str).collect();
    let a_names: HashSet<&str> = av.iter().map(Variable::as_str).collect();
    if e_names != a_names {
        let list = |v: &[Variable]| {
            v.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        return Err(format!(
            "wrong variables: expected [{}], got [{}]",
            list(ev),
            list(av)
        ));
    }
    // Align the actual rows on the expected variable order.
    let positions: Vec<usize> = ev
        .iter()
        .map(|v| av.iter().position(|a| a == v).unwrap_or(usize::MAX))
        .collect();
    let mut ar: Vec<Row> = ar
        .into_iter()
        .map(|row| {
            positions
                .iter()
                .map(|&p| row.get(p).cloned().flatten())
                .collect()
        })
        .collect();
    if lax {
        // REDUCED may drop any number of duplicates: compare the distinct rows.
        dedup(&mut er);
        dedup(&mut ar);
    }
    if !compare::multiset_isomorphic(&er, &ar) {
        let (missing, unexpected) = compare::difference(&er, &ar);
        // Tell apart results that are right but for the lexical forms of numbers.
        let kind = if compare::multiset_isomorphic(&numbers_by_value(&er), &numbers_by_value(&ar)) {
            "wrong result (number lexical forms)"
        } else {
            "wrong result"
        };
        return Err(format!(
            "{kind}: expected {} solutions, got {}{}",
            er.len(),
            ar.len(),
            describe_rows(&missing, &unexpected, Some(ev))
        ));
    }
    let in_order = match order {
        Order::None => true,
        Order::Sequence => compare::sequence_isomorphic(&er, &ar),
        Order::ByVariables(keys) => {
            let key_positions: Vec<usize> = keys
                .iter()
                .filter_map(|k| ev.iter().position(|v| v == k))
                .collect();
            if key_positions.len() == keys.len() {
                let project = |rows: &[Row]| -> Vec<Row> {
                    rows.iter()
                        .map(|r| key_positions.iter().map(|&p| r[p].clone()).collect())
                        .collect()
                };
                // Blank nodes as keys compare equal to each other (their labels
                // say nothing; the multiset comparison above checked them).
                masked(&project(&er)) == masked(&project(&ar))
            } else {
                // Sorted on variables that are not projected: check all.
                compare::sequence_isomorphic(&er, &ar)
            }
        }
    };
    if in_order {
        Ok(())
    } else {
        Err("wrong order of solutions".to_owned())
    }
}

/// Rows with numeric literals rewritten to one lexical form per value (and
/// datatype), for diagnostics only.
fn numbers_by_value(rows: &[Row]) -> Vec<Row> {
    const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
    let normalize = |t: &Option<Term>| -> Option<Term> {
        let Some(Term::Literal(l)) = t else {
            return t.clone();
        };
        let datatype = l.datatype().as_str();
        let value = match datatype.strip_prefix(XSD) {
            Some("integer" | "decimal" | "double" | "float") => {
                l.value().trim().parse::<f64>().ok()
            }
            _ => None,
        };
        match value {
            Some(v) => Some(Term::Literal(oxrdf::Literal::new_typed_literal(
                format!("{v:e}"),
                l.datatype().into_owned(),
            ))),
            None => t.clone(),
        }
    };
    rows.iter()
        .map(|r| r.iter().map(normalize).collect())
        .collect()
}

fn masked(rows: &[Row]) -> Vec<Row> {
    let blank = Term::BlankNode(oxrdf::BlankNode::new_unchecked("b"));
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::BlankNode(_)) => Some(blank.clone()),
                    other => other.clone(),
                })
                .collect()
        })
        .collect()
}

fn dedup(rows: &mut Vec<Row>) {
    let mut seen = HashSet::new();
    rows.retain(|r| seen.insert(r.clone()));
}

fn describe_rows(missing: &[Row], unexpected: &[Row], variables: Option<&[Variable]>) -> String {
    let show = |row: &Row| -> String {
        let parts: Vec<String> = row
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let t = t.as_ref()?;
                Some(match variables {
                    Some(vars) => format!("{}={t}", vars[i]),
                    None => t.to_string(),
                })
            })
            .collect();
        format!("{{{}}}", parts.join(" "))
    };
    let list = |rows: &[Row]| -> String {
        let mut shown: Vec<String> = rows.iter().take(2).map(show).collect();
        if rows.len() > 2 {
            shown.push(format!("and {} more", rows.len() - 2));
        }
        shown.join(", ")
    };
    let mut out = String::new();
    if !missing.is_empty() {
        out.push_str(&format!("; missing {}", list(missing)));
    }
    if !unexpected.is_empty() {
        out.push_str(&format!("; unexpected {}", list(unexpected)));
    }
    if out.is_empty() {
        out.push_str("; blank nodes do not match");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;
    use spargebra::SparqlParser;

    fn order_of(q: &str) -> Order {
        top_level_order(&SparqlParser::new().parse_query(q).unwrap())
    }

    #[test]
    fn finds_the_top_level_order() {
        assert_eq!(order_of("SELECT * { ?s ?p ?o }"), Order::None);
        assert_eq!(
            order_of("SELECT DISTINCT ?s { ?s ?p ?o } ORDER BY DESC(?s) LIMIT 2"),
            Order::ByVariables(vec![Variable::new_unchecked("s")])
        );
        assert_eq!(
            order_of("SELECT ?s { ?s ?p ?o } ORDER BY str(?s)"),
            Order::Sequence
        );
        assert_eq!(
            order_of("SELECT * { { SELECT ?s { ?s ?p ?o } ORDER BY ?s LIMIT 1 } }"),
            Order::None
        );
    }

    #[test]
    fn ordered_solutions_allow_ties_in_any_order() {
        let v = vec![Variable::new_unchecked("k"), Variable::new_unchecked("x")];
        let l = |s: &str| Some(Term::from(Literal::new_simple_literal(s)));
        let e = vec![
            vec![l("1"), l("a")],
            vec![l("1"), l("b")],
            vec![l("2"), l("c")],
        ];
        let ties_swapped = vec![
            vec![l("1"), l("b")],
            vec![l("1"), l("a")],
            vec![l("2"), l("c")],
        ];
        let wrong = vec![
            vec![l("2"), l("c")],
            vec![l("1"), l("b")],
            vec![l("1"), l("a")],
        ];
        let order = Order::ByVariables(vec![Variable::new_unchecked("k")]);
        assert!(compare_solutions(&v, e.clone(), &v, ties_swapped.clone(), &order, false).is_ok());
        assert!(compare_solutions(&v, e.clone(), &v, wrong.clone(), &order, false).is_err());
        assert!(compare_solutions(&v, e.clone(), &v, wrong, &Order::None, false).is_ok());
        assert!(
            compare_solutions(&v, e.clone(), &v, ties_swapped, &Order::Sequence, false).is_err()
        );
        // variables in another order are aligned
        let rv = vec![Variable::new_unchecked("x"), Variable::new_unchecked("k")];
        let reversed: Vec<Row> = e.iter().map(|r| vec![r[1].clone(), r[0].clone()]).collect();
        assert!(compare_solutions(&v, e, &rv, reversed, &order, false).is_ok());
    }
}
