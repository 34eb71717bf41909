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
        format!("\"2020-01-01\"^^<{XSD}date>"),
    ] {
        values.push(other);
    }
    values
}

#[test]
fn id_comparisons_agree_with_the_evaluator() {
    let text: String = values()
        .iter()
        .enumerate()
        .map(|(i, v)| format!("<http://example.org/s{i}> <http://example.org/v> {v} .\n"))
        .collect();
    let (_tmp, engine) = common::engine_over("values.nt", &text, EngineOptions::default());
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
            let flipped_op = match op {
                ">" => "<",
                ">=" => "<=",
                "<" => ">",
                "<=" => ">=",
                other => other,
            };
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
