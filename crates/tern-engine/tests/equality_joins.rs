//! `FILTER(?a = ?b)` between two parts of a pattern that share no variable
//! runs as an equality join: the same rows as the filtered cross product,
//! with `=` comparing literals by value (`1 = 1.0`, not `NaN = NaN`) and
//! other terms by identity, and `sameTerm` by identity throughout.

use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const DATA: &str = r#"
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:a1 ex:p ex:i1 .
ex:a2 ex:p 1 .
ex:a3 ex:p 1.0 .
ex:a4 ex:p "abc" .
ex:a5 ex:p "abc"@en .
ex:a6 ex:p "NaN"^^xsd:double .
ex:a7 ex:p _:shared .
ex:a8 ex:p "x"^^ex:unknown .
ex:b1 ex:q ex:i1 .
ex:b2 ex:q 1.0E0 .
ex:b3 ex:q "abc"^^xsd:string .
ex:b4 ex:q "NaN"^^xsd:double .
ex:b5 ex:q "ABC" .
ex:b6 ex:q _:shared .
ex:b7 ex:q "x"^^ex:unknown .
ex:b8 ex:q ex:i2 .
ex:b1 ex:r 5 .
ex:b2 ex:r -5 .
ex:c1 ex:s ex:i1 .
ex:c2 ex:s ex:i2 .
ex:c3 ex:s _:shared .
ex:c4 ex:s ex:i3 .
ex:t1 ex:t "abc" .
ex:t2 ex:t "abc"@en .
ex:t3 ex:t "ABC"^^xsd:string .
"#;

const PREFIX: &str = "PREFIX ex: <http://example.org/>\n";

/// `x y` pairs of the solutions, sorted, with `ex:` dropped.
fn pairs(engine: &tern_engine::Engine, query: &str) -> Vec<String> {
    let query = format!("{PREFIX}{query}");
    let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
        panic!("not a SELECT")
    };
    let mut out: Vec<String> = rows
        .map(|r| {
            let r = r.unwrap();
            format!("{} {}", common::short(&r[0]), common::short(&r[1]))
        })
        .collect();
    out.sort();
    out
}

fn plan(engine: &tern_engine::Engine, query: &str) -> String {
    common::plan_text(engine, &format!("{PREFIX}{query}"))
}

#[test]
fn equality_joins_compare_literals_by_value_and_other_terms_by_identity() {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    let cases = [
        (
            "?a = ?b",
            vec!["a1 b1", "a2 b2", "a3 b2", "a4 b3", "a7 b6", "a8 b7"],
        ),
        (
            "sameTerm(?a, ?b)",
            vec!["a1 b1", "a4 b3", "a6 b4", "a7 b6", "a8 b7"],
        ),
        (
            "?b = ?a",
            vec!["a1 b1", "a2 b2", "a3 b2", "a4 b3", "a7 b6", "a8 b7"],
        ),
    ];
    for (condition, expected) in cases {
        let joined = format!("SELECT ?x ?y {{ ?x ex:p ?a . ?y ex:q ?b FILTER({condition}) }}");
        assert!(
            plan(&engine, &joined).contains("EqualityJoin"),
            "{condition}: {}",
            plan(&engine, &joined)
        );
        assert_eq!(pairs(&engine, &joined), expected, "{condition}");
        // `|| false` keeps the filter whole: the cross product, filtered.
        let filtered =
            format!("SELECT ?x ?y {{ ?x ex:p ?a . ?y ex:q ?b FILTER(({condition}) || false) }}");
        assert!(!plan(&engine, &filtered).contains("EqualityJoin"));
        assert_eq!(
            pairs(&engine, &filtered),
            expected,
            "{condition} as a filter"
        );
    }
}

#[test]
fn other_parts_and_conditions_apply_after_the_equality_join() {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    let query = "SELECT ?x ?y { ?x ex:p ?a . ?y ex:q ?b . ?y ex:r ?n . ?z ex:q ex:i2 \
                 FILTER(?a = ?b && ?n > 0) }";
    assert!(plan(&engine, query).contains("EqualityJoin"));
    assert_eq!(pairs(&engine, query), vec!["a1 b1"]);
}

#[test]
fn equality_with_a_side_that_is_never_a_literal_joins_on_ids() {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    // `ex:s` and `ex:q` objects: ex:s has IRIs and a blank node only, so
    // `=` is identity and the two parts become one pattern.
    let cases = [
        ("?x ex:s ?a . ?y ex:q ?b", vec!["c1 b1", "c2 b8", "c3 b6"]),
        ("?x ex:s ?a . ?y ex:p ?b", vec!["c1 a1", "c3 a7"]),
        ("?y ex:p ?b . ?x ex:s ?a", vec!["c1 a1", "c3 a7"]),
        ("?x ex:s ?a . ?a ex:none ?z . ?y ex:q ?b", vec![]),
    ];
    for (pattern, expected) in cases {
        let joined = format!("SELECT ?x ?y ?a ?b {{ {pattern} FILTER(?a = ?b) }}");
        let shown = plan(&engine, &joined);
        assert!(!shown.contains("EqualityJoin"), "{pattern}: {shown}");
        assert!(
            shown.contains("Bind ?b := ?a") || shown.contains("Bind ?a := ?b"),
            "{pattern}: {shown}"
        );
        assert_eq!(pairs(&engine, &joined), expected, "{pattern}");
        let filtered = format!("SELECT ?x ?y {{ {pattern} FILTER((?a = ?b) || false) }}");
        assert_eq!(pairs(&engine, &filtered), expected, "{pattern} as a filter");
    }
}

#[test]
fn a_build_side_of_strings_matches_probe_rows_by_id() {
    let (_tmp, engine) = common::engine_over("data.ttl", DATA, EngineOptions::default());
    // ex:t's objects (the smaller side) are strings only: a probe value
    // equals one of them only as the same term.
    let joined = "SELECT ?x ?y { ?x ex:p ?a . ?y ex:t ?b FILTER(?a = ?b) }";
    assert!(plan(&engine, joined).contains("EqualityJoin"));
    let expected = vec!["a4 t1", "a5 t2"];
    assert_eq!(pairs(&engine, joined), expected);
    let filtered = "SELECT ?x ?y { ?x ex:p ?a . ?y ex:t ?b FILTER((?a = ?b) || false) }";
    assert_eq!(pairs(&engine, filtered), expected);
}
