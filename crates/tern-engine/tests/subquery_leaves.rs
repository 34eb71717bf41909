//! Subqueries that share no variable, joined with triple patterns that
//! connect them, are planned as leaves of the group's join order instead of
//! as a cross product (`plan/rows_leaf.rs`). Their answers must be those of
//! Oxigraph's reference evaluator (`spareval`) on the same data, and the
//! plan must have no cross product.

use oxrdf::{Dataset, GraphName, NamedNode, Quad};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::SparqlParser;
use tern_engine::{EngineOptions, QueryOutcome};

mod common;

const EX: &str = "http://example.org/";

/// A small co-authorship graph: documents with two to four creators,
/// drawn with a skew toward the first persons (a hub and its co-authors).
fn coauthorship() -> Vec<(String, String)> {
    let mut state = 7u64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut creators = Vec::new();
    for d in 0..400 {
        let authors = 2 + next(3);
        let mut chosen: Vec<u64> = Vec::new();
        while (chosen.len() as u64) < authors {
            // Half of the slots from the first eight persons.
            let p = if next(2) == 0 { next(8) } else { next(80) };
            if !chosen.contains(&p) {
                chosen.push(p);
            }
        }
        for p in chosen {
            creators.push((format!("{EX}d{d}"), format!("{EX}p{p}")));
        }
    }
    creators
}

#[test]
fn disjoint_subqueries_join_through_patterns_as_the_reference_does() {
    let creators = coauthorship();
    let text: String = creators
        .iter()
        .map(|(d, p)| format!("<{d}> <{EX}creator> <{p}> .\n"))
        .collect();
    let (_tmp, engine) = common::engine_over("creators.nt", &text, EngineOptions::default());
    let mut dataset = Dataset::new();
    for (d, p) in &creators {
        dataset.insert(&Quad::new(
            NamedNode::new(d).unwrap(),
            NamedNode::new(format!("{EX}creator")).unwrap(),
            NamedNode::new(p).unwrap(),
            GraphName::DefaultGraph,
        ));
    }
    let coauthors = |v: &str, d: &str| {
        format!("{{ SELECT DISTINCT ?{v} WHERE {{ ?{d} <{EX}creator> <{EX}p3> , ?{v} . }} }}")
    };
    let (x, y) = (coauthors("x", "d1"), coauthors("y", "d3"));
    let queries = [
        // Co-author triangles through p3, counted (biblio's cycle-coauthor-triangle).
        format!(
            "SELECT (COUNT(DISTINCT ?x) AS ?partners) (COUNT(*) AS ?triangles) WHERE {{ {x} {y} \
             ?d2 <{EX}creator> ?x , ?y . FILTER(?x != <{EX}p3> && ?y != <{EX}p3> && ?x != ?y) }}"
        ),
        // The rows themselves, unfiltered and filtered.
        format!("SELECT ?x ?y ?d2 WHERE {{ {x} {y} ?d2 <{EX}creator> ?x , ?y . }}"),
        format!(
            "SELECT ?x ?y ?d2 WHERE {{ {x} ?d2 <{EX}creator> ?x , ?y . {y} FILTER(?x != ?y) }}"
        ),
        // One row asked for: the order looks leaves up, and gets hash joins.
        format!("ASK {{ {x} {y} ?d2 <{EX}creator> ?x , ?y . FILTER(?x != ?y) }}"),
    ];
    for query in &queries {
        let expected = match QueryEvaluator::new()
            .prepare(&SparqlParser::new().parse_query(query).unwrap())
            .execute(&dataset)
            .unwrap()
        {
            QueryResults::Solutions(solutions) => {
                common::sorted_solutions(solutions.map(|s| s.unwrap().values().to_vec()).collect())
            }
            QueryResults::Boolean(b) => vec![b.to_string()],
            QueryResults::Graph(_) => unreachable!(),
        };
        let got = match engine.query(query, None).unwrap() {
            QueryOutcome::Solutions { rows, .. } => {
                common::sorted_solutions(rows.map(|r| r.unwrap()).collect())
            }
            QueryOutcome::Boolean(b) => vec![b.to_string()],
            _ => unreachable!(),
        };
        assert_eq!(got, expected, "{query}");
        assert!(
            expected.len() > 1 || expected[0] != "false",
            "{query}: nothing to compare"
        );
        let plan = common::plan_text(&engine, query);
        assert!(!plan.contains("cross product"), "{query}\n{plan}");
    }
}
