//! Aggregates with DISTINCT over one column are deduplicated on IDs (the
//! same term always has the same ID in a query) and decode each distinct
//! value once, or not at all for COUNT. They must count terms, not values:
//! `1`, `01` and `1.0` are three terms.

use oxrdf::Term;
use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

fn rows(engine: &tern_engine::Engine, query: &str) -> Vec<Vec<Option<Term>>> {
    let QueryOutcome::Solutions { rows, .. } = engine.query(query, None).unwrap() else {
        panic!("SELECT gives solutions");
    };
    rows.map(|r| r.unwrap()).collect()
}

#[test]
fn distinct_aggregates_count_terms_per_group() {
    let values = [
        format!("\"1\"^^<{XSD}integer>"),
        format!("\"01\"^^<{XSD}integer>"),
        format!("\"1.0\"^^<{XSD}decimal>"),
        format!("\"2\"^^<{XSD}integer>"),
        "\"1\"".to_owned(),
        "<http://example.org/one>".to_owned(),
    ];
    let mut text = String::new();
    // Group g{k} has the first k+1 values, each on several subjects, and a
    // subject with no value (unbound under OPTIONAL).
    for k in 0..values.len() {
        for (i, value) in values.iter().take(k + 1).enumerate() {
            for copy in 0..3 {
                let s = format!("<http://example.org/g{k}s{i}c{copy}>");
                text.push_str(&format!(
                    "{s} <http://example.org/in> <http://example.org/g{k}> .\n"
                ));
                text.push_str(&format!("{s} <http://example.org/v> {value} .\n"));
            }
        }
        text.push_str(&format!(
            "<http://example.org/g{k}none> <http://example.org/in> <http://example.org/g{k}> .\n"
        ));
    }
    let (_tmp, engine) = common::engine_over("values.nt", &text, EngineOptions::default());
    let pattern = "?s <http://example.org/in> ?g OPTIONAL { ?s <http://example.org/v> ?v }";
    let fast = rows(
        &engine,
        &format!(
            "SELECT ?g (COUNT(DISTINCT ?v) AS ?n) (SAMPLE(?v) AS ?any) \
             (GROUP_CONCAT(DISTINCT STR(?v); separator='|') AS ?texts) \
             (COUNT(?v) AS ?all) WHERE {{ {pattern} }} GROUP BY ?g ORDER BY ?g"
        ),
    );
    // The same through DISTINCT rows first, then plain aggregates.
    let reference = rows(
        &engine,
        &format!(
            "SELECT ?g (COUNT(?v) AS ?n) WHERE {{ SELECT DISTINCT ?g ?v WHERE {{ {pattern} }} }} \
             GROUP BY ?g ORDER BY ?g"
        ),
    );
    assert_eq!(fast.len(), values.len());
    for (k, (row, expected)) in fast.iter().zip(&reference).enumerate() {
        assert_eq!(row[0], expected[0]);
        assert_eq!(row[1], expected[1], "group {k}");
        let count = |term: &Option<Term>| match term {
            Some(Term::Literal(l)) => l.value().parse::<usize>().unwrap(),
            other => panic!("a count, not {other:?}"),
        };
        assert_eq!(count(&row[1]), k + 1, "group {k}: every term once");
        assert_eq!(count(&row[4]), 3 * (k + 1), "group {k}: every bound row");
    }
    // SUM(DISTINCT) adds each numeric term once: 1 + 01 + 1.0 + 2 = 5.0.
    let sums = rows(
        &engine,
        "SELECT (SUM(DISTINCT ?v) AS ?sum) WHERE { \
         ?s <http://example.org/in> <http://example.org/g3> ; <http://example.org/v> ?v }",
    );
    match &sums[0][0] {
        Some(Term::Literal(l)) => assert_eq!(l.value().parse::<f64>().unwrap(), 5.0),
        other => panic!("a sum, not {other:?}"),
    }
}
