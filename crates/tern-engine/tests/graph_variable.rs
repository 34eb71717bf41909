//! `GRAPH ?g { P }` evaluates `P` in each named graph and then binds `?g`
//! (SPARQL 1.1 §18.6): inside `P`, `?g` is a variable of its own, and
//! subqueries, groups, slices and MINUS work graph by graph.

use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const DATA: &str = r#"
@prefix ex: <http://example.org/> .
ex:g1 { ex:a ex:p ex:o . ex:b ex:p ex:o . ex:c ex:q ex:g1 . }
ex:g2 { ex:a ex:p ex:o . ex:c ex:q ex:g1 . }
ex:g3 { ex:d ex:r ex:o . }
"#;

/// Rows as `value value ...`, sorted, with `ex:` dropped and unbound as `-`.
fn rows(query: &str) -> Vec<String> {
    let (_tmp, engine) = common::engine_over("data.trig", DATA, EngineOptions::default());
    let query = format!("PREFIX ex: <http://example.org/>\n{query}");
    let QueryOutcome::Solutions { rows, .. } = engine.query(&query, None).unwrap() else {
        panic!("not a SELECT")
    };
    let mut out: Vec<String> = rows
        .map(|r| {
            r.unwrap()
                .iter()
                .map(common::short)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_graph_variable_is_unbound_inside_the_pattern() {
    assert!(rows("SELECT ?g { GRAPH ?g { FILTER(BOUND(?g)) } }").is_empty());
    // Inside, ?g is bound by the pattern, then must equal the graph.
    assert_eq!(
        rows("SELECT ?g ?s { GRAPH ?g { ?s ex:q ?g } }"),
        vec!["g1 c"]
    );
    assert_eq!(
        rows("SELECT ?g ?s ?x { GRAPH ?g { ?s ?p ?o OPTIONAL { ?s ex:q ?x } } }"),
        vec!["g1 a -", "g1 b -", "g1 c g1", "g2 a -", "g2 c g1", "g3 d -"]
    );
}

#[test]
fn subqueries_groups_and_slices_work_graph_by_graph() {
    assert_eq!(
        rows("SELECT ?g ?n { GRAPH ?g { SELECT (COUNT(*) AS ?n) { ?s ex:p ?o } } }"),
        vec!["g1 2", "g2 1", "g3 0"]
    );
    // The subquery's ?g is its own, projected away.
    assert_eq!(
        rows("SELECT ?g ?s { GRAPH ?g { SELECT ?s { ?s ex:q ?g } } }"),
        vec!["g1 c", "g2 c"]
    );
    assert_eq!(
        rows("SELECT ?g ?s { GRAPH ?g { SELECT ?s { ?s ?p ?o } ORDER BY ?s LIMIT 1 } }"),
        vec!["g1 a", "g2 a", "g3 d"]
    );
}

#[test]
fn minus_inside_a_graph_compares_the_pattern_variables_only() {
    // No variable in common: MINUS removes nothing.
    assert_eq!(
        rows("SELECT ?g ?s { GRAPH ?g { ?s ex:p ex:o MINUS { ?t ex:q ?u } } }"),
        vec!["g1 a", "g1 b", "g2 a"]
    );
    assert_eq!(
        rows("SELECT ?g ?s { GRAPH ?g { ?s ?p ?o MINUS { ?s ex:q ?u } } }"),
        vec!["g1 a", "g1 b", "g2 a", "g3 d"]
    );
}

#[test]
fn a_construct_that_copies_its_pattern_gives_each_triple_once() {
    // The rows of `?s ?p ?o` go out as they are, with no duplicate removal:
    // the scan itself merges the graphs of the default graph.
    let (_tmp, engine) = common::engine_over("data.trig", DATA, EngineOptions::default());
    for query in [
        "CONSTRUCT { ?s ?p ?o } FROM ex:g1 FROM ex:g2 WHERE { ?s ?p ?o }",
        "CONSTRUCT { ?s ?p ?o } FROM ex:g1 FROM ex:g2 FROM ex:g3 WHERE { ?s ?p ?o } LIMIT 3",
        "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ex:g1 { ?s ?p ?o } }",
    ] {
        let query = format!("PREFIX ex: <http://example.org/>\n{query}");
        let QueryOutcome::Graph(triples) = engine.query(&query, None).unwrap() else {
            panic!("not a CONSTRUCT")
        };
        let triples: Vec<String> = triples.map(|t| t.unwrap().to_string()).collect();
        let distinct: std::collections::HashSet<&String> = triples.iter().collect();
        assert_eq!(distinct.len(), triples.len(), "{triples:?}");
        assert_eq!(triples.len(), 3, "{query}: {triples:?}");
    }
}
