//! Comparisons of a variable with an inline number are decided on IDs for
//! rows holding numbers of the same type; they must agree with the general
//! evaluator (forced here by `?v + 0`) on every kind of value.

use oxrdf::Term;
use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

fn values() -> Vec<String> {
    let mut values = Vec::new();
    for i in -4..=4 {
        values.push(format!("\"{i}\"^^<{XSD}integer>"));
        values.push(format!("\"{i}.5\"^^<{XSD}decimal>"));
        values.push(format!("\"{i}.0\"^^<{XSD}decimal>"));
        values.push(format!("\"{i}.25e0\"^^<{XSD}double>"));
    }
    for other in [
        format!("\"02\"^^<{XSD}integer>"),
        format!("\"2.50\"^^<{XSD}decimal>"),
        format!("\"-0.0\"^^<{XSD}double>"),
        format!("\"NaN\"^^<{XSD}double>"),
        format!("\"3\"^^<{XSD}short>"),
        "\"2\"".to_owned(),
        "\"two\"@en".to_owned(),
        "<http://example.org/2>".to_owned(),
        "_:two".to_owned(),
        format!("\"2020-01-01\"^^<{XSD}date>"),
    ] {
        values.push(other);
    }
    values
}

/// The operator that compares the other way round (`a < b` is `b > a`).
fn flipped(op: &str) -> &str {
    match op {
        ">" => "<",
        ">=" => "<=",
        "<" => ">",
        "<=" => ">=",
        other => other,
    }
}

#[test]
fn id_comparisons_agree_with_the_evaluator() {
    let (_tmp, engine) = common::engine_over_values(&values());
    let run = |filter: &str| -> Vec<String> {
        let query = format!("SELECT ?s WHERE {{ ?s <http://example.org/v> ?v FILTER({filter}) }}");
        let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
            panic!("SELECT gives solutions");
        };
        let mut out: Vec<String> = rows
            .map(|r| match &r.unwrap()[0] {
                Some(Term::NamedNode(n)) => n.to_string(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        out.sort();
        out
    };
    let mut decided = 0;
    for constant in ["2", "-1", "0", "2.5", "-3.0", "4"] {
        for op in [">", ">=", "<", "<=", "="] {
            let fast = run(&format!("?v {op} {constant}"));
            let general = run(&format!("(?v + 0) {op} {constant}"));
            assert_eq!(fast, general, "?v {op} {constant}");
            let flipped_op = flipped(op);
            let flipped = run(&format!("{constant} {flipped_op} ?v"));
            assert_eq!(flipped, general, "{constant} {flipped_op} ?v");
            let both = run(&format!("?v {op} {constant} && ?v != 1"));
            let both_general = run(&format!("(?v + 0) {op} {constant} && (?v + 0) != 1"));
            assert_eq!(both, both_general, "?v {op} {constant} && ?v != 1");
            decided += fast.len();
        }
    }
    assert!(decided > 100, "the comparisons select rows ({decided})");
}

/// Dates and dateTimes are compared on IDs when their timezones allow it
/// (the same one, or, for dateTimes, one on each side); the others, and
/// every other kind of value, go to the evaluator, forced here by
/// `IF(true, ?v, ?v)`.
#[test]
fn date_comparisons_agree_with_the_evaluator() {
    let mut values = Vec::new();
    for day in ["2008-02-28", "2008-02-29", "2008-03-01"] {
        for tz in ["", "Z", "+02:00", "-05:00"] {
            values.push(format!("\"{day}{tz}\"^^<{XSD}date>"));
            for time in ["T00:00:00", "T23:30:00.5"] {
                values.push(format!("\"{day}{time}{tz}\"^^<{XSD}dateTime>"));
            }
        }
    }
    values.push(format!("\"2008-02-29\"^^<{XSD}string>"));
    values.push(format!("\"3\"^^<{XSD}integer>"));
    let text: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("<http://example.org/s{i}> <http://example.org/v> {v} .\n"))
        .collect();
    let (_tmp, engine) = common::engine_over("dates.nt", &text, EngineOptions::default());
    let run = |filter: &str| -> Vec<String> {
        let query = format!("SELECT ?s WHERE {{ ?s <http://example.org/v> ?v FILTER({filter}) }}");
        let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
            panic!("SELECT gives solutions");
        };
        let mut out: Vec<String> = rows.map(|r| format!("{:?}", r.unwrap()[0])).collect();
        out.sort();
        out
    };
    let mut decided = 0;
    for constant in [
        format!("\"2008-02-29\"^^<{XSD}date>"),
        format!("\"2008-02-29Z\"^^<{XSD}date>"),
        format!("\"2008-02-29+02:00\"^^<{XSD}date>"),
        format!("\"2008-02-29T00:00:00\"^^<{XSD}dateTime>"),
        format!("\"2008-02-29T01:00:00+02:00\"^^<{XSD}dateTime>"),
        format!("\"2008-02-28T23:30:00.5-05:00\"^^<{XSD}dateTime>"),
    ] {
        for op in [">", ">=", "<", "<=", "="] {
            let fast = run(&format!("?v {op} {constant}"));
            let general = run(&format!("IF(true, ?v, ?v) {op} {constant}"));
            assert_eq!(fast, general, "?v {op} {constant}");
            decided += fast.len();
        }
    }
    assert!(decided > 50, "the comparisons select rows ({decided})");
}

/// In an EXISTS evaluated per row, the inner FILTER may compare with an
/// outer row's value (`FILTER(?y > ?w)`, `?w` bound outside): that value is
/// a constant of the inner plan and the comparison is decided on IDs where
/// both are inline numbers of one type. The answers must be the general
/// evaluator's (forced by `COALESCE(?y)`, the same term: `?y + 0` would fail
/// on the strings that `>` compares), for every kind of value on either side.
#[test]
fn comparisons_with_an_outer_value_agree_with_the_evaluator() {
    let values = values();
    let mut text: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "<http://example.org/s{i}> <http://example.org/v> {v} .\n\
                 <http://example.org/s{i}> <http://example.org/id> \"{i}\" .\n"
            )
        })
        .collect();
    // Other subjects' values make the inner pattern large against the
    // outer rows: the planner then checks EXISTS row by row, with the
    // outer values in the inner plan (the path under test).
    for i in 0..20_000 {
        text.push_str(&format!(
            "<http://example.org/other{i}> <http://example.org/v> \"{i}\"^^<{XSD}integer> .\n"
        ));
    }
    for (i, w) in [
        format!("\"2\"^^<{XSD}integer>"),
        format!("\"-1\"^^<{XSD}integer>"),
        format!("\"2.5\"^^<{XSD}decimal>"),
        format!("\"0.5e0\"^^<{XSD}double>"),
        "\"2\"".to_owned(),
        format!("\"2020-06-01\"^^<{XSD}date>"),
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "<http://example.org/t{i}> <http://example.org/w> {w} .\n"
        ));
    }
    let (_tmp, engine) = common::engine_over("outer.nt", &text, EngineOptions::default());
    let run = |filter: &str| -> Vec<String> {
        let query = format!(
            "SELECT ?t ?s WHERE {{ ?t <http://example.org/w> ?w . ?s <http://example.org/id> ?k . \
             FILTER EXISTS {{ ?s <http://example.org/v> ?y FILTER({filter}) }} }}"
        );
        let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
            panic!("SELECT gives solutions");
        };
        let mut out: Vec<String> = rows
            .map(|r| {
                let r = r.unwrap();
                format!("{:?} {:?}", r[0], r[1])
            })
            .collect();
        out.sort();
        out
    };
    let mut matched = 0;
    for op in [">", ">=", "<", "<=", "="] {
        let general = run(&format!("COALESCE(?y) {op} ?w"));
        assert_eq!(run(&format!("?y {op} ?w")), general, "?y {op} ?w");
        let flipped_op = flipped(op);
        assert_eq!(
            run(&format!("?w {flipped_op} ?y")),
            general,
            "?w {flipped_op} ?y"
        );
        matched += general.len();
    }
    assert!(matched > 100, "the comparisons select pairs ({matched})");
}

/// `sameTerm` of two variables is decided on IDs (one term, one ID), and
/// `=` where a value is an IRI: both must agree with the general evaluator
/// (forced by `COALESCE`) on equal values of different terms (`1` and
/// `01`), on IRIs and literals, and on unbound values (an error: no row
/// passes, negated or not).
#[test]
fn same_term_of_two_columns_agrees_with_the_evaluator() {
    let values = values();
    let text: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut line = format!("<http://example.org/s{i}> <http://example.org/v> {v} .\n");
            if i % 3 > 0 {
                line += &format!("<http://example.org/s{i}> <http://example.org/w> {v} .\n");
            }
            line
        })
        .collect();
    let (_tmp, engine) = common::engine_over("same.nt", &text, EngineOptions::default());
    let run = |filter: &str| -> usize {
        let query = format!(
            "SELECT * WHERE {{ ?s <http://example.org/v> ?a . ?t <http://example.org/v> ?x \
             OPTIONAL {{ ?t <http://example.org/w> ?b }} FILTER({filter}) }}"
        );
        let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
            panic!("SELECT gives solutions");
        };
        rows.count()
    };
    for negated in ["", "!"] {
        let fast = run(&format!("{negated}sameTerm(?a, ?b)"));
        let general = run(&format!("{negated}sameTerm(COALESCE(?a), ?b)"));
        assert_eq!(fast, general, "{negated}sameTerm");
        assert!(fast > 0, "{negated}sameTerm selects rows");
        // `=` is decided on IDs where a value is an IRI: 1 = 01, NaN != NaN
        // and string against number stay the evaluator's.
        let fast = run(&format!("{negated}(?a = ?b)"));
        let general = run(&format!("{negated}(COALESCE(?a) = ?b)"));
        assert_eq!(fast, general, "{negated}(?a = ?b)");
        assert!(fast > 0, "{negated}(?a = ?b) selects rows");
    }
    assert_eq!(run("?a != ?b"), run("COALESCE(?a) != ?b"), "?a != ?b");
}
