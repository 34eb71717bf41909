//! Sorts, groups and hash joins larger than the memory budget spill to disk
//! and give the results they give in memory. Property tests: for random
//! data sets (seeded), each query runs without a budget and under budgets
//! so small that its sort, group or join table is written out in many
//! runs or parts, also when it is paused at every turn end and suspended
//! and resumed through the stash; the results must be the same, and the
//! engine must have spilled.

use oxrdf::Term;
use std::time::Instant;
use tern_engine::{Engine, EngineOptions, Polled, QueryOutcome, QueryRequest, Stash};

mod common;

const EX: &str = "http://example.org/";

fn next(state: &mut u64, m: u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 33) % m
}

/// People with ages, names (some repeated), cities, scores as decimals and
/// doubles, friends, and an email for some: about 6 triples per person.
fn generate(seed: u64, people: u64) -> String {
    let mut state = seed;
    let mut out = String::new();
    for p in 0..people {
        let person = format!("<{EX}p{p}>");
        let age = next(&mut state, 100);
        out.push_str(&format!(
            "{person} <{EX}age> \"{age}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
        ));
        let name = next(&mut state, people / 2 + 1);
        out.push_str(&format!("{person} <{EX}name> \"name {name}\" .\n"));
        let city = next(&mut state, 50 + seed % 7);
        out.push_str(&format!("{person} <{EX}city> <{EX}c{city}> .\n"));
        let score = next(&mut state, 10_000);
        let score = if p % 2 == 0 {
            format!(
                "\"{}.{}\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
                score / 100,
                score % 100
            )
        } else {
            format!("\"{score}e-2\"^^<http://www.w3.org/2001/XMLSchema#double>")
        };
        out.push_str(&format!("{person} <{EX}score> {score} .\n"));
        for _ in 0..next(&mut state, 4) {
            let friend = next(&mut state, people);
            out.push_str(&format!("{person} <{EX}knows> <{EX}p{friend}> .\n"));
        }
        if next(&mut state, 3) == 0 {
            out.push_str(&format!("{person} <{EX}email> \"p{p}@example.org\"@en .\n"));
        }
    }
    out
}

/// Each query with whether its rows come in a defined order.
const QUERIES: &[(&str, bool)] = &[
    // Sorts: by text, by numbers of mixed types, by a computed key, both
    // directions; the whole rows break ties so the order is defined.
    ("SELECT ?s ?n WHERE { ?s ex:name ?n } ORDER BY ?n DESC(?s)", true),
    ("SELECT ?s ?v WHERE { ?s ex:score ?v } ORDER BY DESC(?v) ?s", true),
    ("SELECT ?s ?a ?c WHERE { ?s ex:age ?a ; ex:city ?c } ORDER BY ?c DESC(?a) STR(?s)", true),
    ("SELECT ?s ?k WHERE { ?s ex:age ?a BIND(CONCAT(STR(?a), \"-\", STR(?s)) AS ?k) } ORDER BY DESC(?k)", true),
    ("SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?o ?p ?s", true),
    // Groups: many small ones, few large ones, and aggregates that keep
    // state (DISTINCT, GROUP_CONCAT, SAMPLE's first row).
    ("SELECT ?s (COUNT(*) AS ?n) (MAX(?o) AS ?m) (MIN(?o) AS ?l) WHERE { ?s ?p ?o } GROUP BY ?s", false),
    ("SELECT ?n (COUNT(?s) AS ?k) (SUM(?a) AS ?t) (AVG(?a) AS ?m) WHERE { ?s ex:name ?n ; ex:age ?a } GROUP BY ?n", false),
    ("SELECT ?n (COUNT(DISTINCT ?c) AS ?cities) WHERE { ?s ex:name ?n ; ex:city ?c } GROUP BY ?n", false),
    ("SELECT ?s (GROUP_CONCAT(STR(?f); separator=\" \") AS ?all) (SAMPLE(?f) AS ?one) WHERE { ?s ex:knows ?f } GROUP BY ?s", false),
    ("SELECT ?a ?c (COUNT(*) AS ?n) WHERE { ?s ex:age ?a ; ex:city ?c } GROUP BY ?a ?c HAVING (COUNT(*) > 1)", false),
    // Hash joins: on the output of groups (in no index order), on
    // literals, OPTIONAL with unbound values on the build side.
    ("SELECT ?n ?k ?s WHERE { { SELECT ?n (COUNT(*) AS ?k) WHERE { ?x ex:name ?n } GROUP BY ?n } ?s ex:name ?n }", false),
    ("SELECT ?s ?k ?m WHERE { { SELECT ?s (COUNT(*) AS ?k) WHERE { ?s ex:knows ?f } GROUP BY ?s } { SELECT ?s (MAX(?a) AS ?m) WHERE { ?s ex:age ?a } GROUP BY ?s } }", false),
    // Joins on computed values (in no index order) where only the join
    // can spill.
    ("SELECT ?s ?t WHERE { { ?s ex:name ?n BIND(STR(?n) AS ?k) } { ?t ex:name ?m BIND(CONCAT(?m, \"\") AS ?k) } }", false),
    ("SELECT ?s ?t WHERE { ?s ex:name ?n BIND(STR(?n) AS ?k) OPTIONAL { ?t ex:name ?m BIND(STR(?m) AS ?k) FILTER(?t != ?s) } }", false),
    ("SELECT ?s ?f ?e WHERE { ?s ex:knows ?f . OPTIONAL { { SELECT ?f (MIN(?m) AS ?e) WHERE { ?f ex:email ?m } GROUP BY ?f } } }", false),
    ("SELECT ?s ?c ?k WHERE { ?s ex:city ?c { SELECT ?c (COUNT(*) AS ?k) WHERE { ?y ex:city ?c ; ex:knows ?z } GROUP BY ?c } }", false),
];

fn query_text(q: &str) -> String {
    format!("PREFIX ex: <{EX}> {q}")
}

fn line(row: &[Option<Term>]) -> String {
    row.iter()
        .map(|t| t.as_ref().map_or("-".to_string(), Term::to_string))
        .collect::<Vec<_>>()
        .join(" ")
}

fn canonical(mut lines: Vec<String>, ordered: bool) -> Vec<String> {
    if !ordered {
        lines.sort();
    }
    lines
}

/// The rows of a query run to the end in one go.
fn run(engine: &Engine, query: &str, budget: Option<u64>) -> Vec<String> {
    let request = QueryRequest {
        memory_budget: budget,
        ..QueryRequest::default()
    };
    let execution = engine
        .execute(&query_text(query), &request)
        .unwrap_or_else(|e| panic!("{query} with budget {budget:?}: {e}"));
    match execution.outcome {
        QueryOutcome::Solutions { rows, .. } => rows
            .map(|r| line(&r.unwrap_or_else(|e| panic!("{query} with budget {budget:?}: {e}"))))
            .collect(),
        _ => panic!("SELECT gives solutions"),
    }
}

/// The rows of a query run in turns that are over before they start, so
/// every operator pauses at its first chance (also while it writes or
/// merges runs and parts); every seventh pause suspends the query into the
/// stash and resumes it.
fn run_in_turns(engine: &Engine, query: &str, budget: u64) -> Vec<String> {
    let request = QueryRequest {
        memory_budget: Some(budget),
        ..QueryRequest::default()
    };
    let text = query_text(query);
    let stash = Stash::default();
    let mut lines = Vec::new();
    let mut pauses = 0u64;
    let mut execution = engine.execute(&text, &request).unwrap();
    loop {
        let QueryOutcome::Solutions { mut rows, .. } = execution.outcome else {
            panic!("SELECT gives solutions");
        };
        let saved = loop {
            match rows.next_in_turn(Some(Instant::now())) {
                Polled::Ready(row) => lines.push(line(
                    &row.unwrap_or_else(|e| panic!("{query} in turns: {e}")),
                )),
                Polled::End => {
                    assert!(stash.is_empty(), "{query} left state in the stash");
                    return lines;
                }
                Polled::Pending => {
                    pauses += 1;
                    if pauses.is_multiple_of(7) {
                        let (decoded, saved) = rows.suspend(&stash).unwrap();
                        lines.extend(decoded.iter().map(|r| line(r)));
                        break saved;
                    }
                }
            }
        };
        execution = engine.resume(&text, &request, &saved, &stash).unwrap();
    }
}

/// Budgets so small that every query spills under the first, in many runs
/// or parts (a sort of 90K rows in runs of about 6,000), and some under the
/// second. (Much smaller budgets fail in operators that do not spill: one
/// batch of 4,096 rows of three columns is 96 KiB.)
const BUDGETS: &[u64] = &[512 * 1024, 2 * 1024 * 1024];

#[test]
fn spilled_sorts_groups_and_joins_give_the_results_of_memory() {
    for seed in [1u64, 2, 3] {
        let people = 9_000 + 3_000 * seed;
        let (_tmp, engine) = common::engine_over(
            "people.nt",
            &generate(seed, people),
            EngineOptions::default(),
        );
        for &(query, ordered) in QUERIES {
            let expected = canonical(run(&engine, query, None), ordered);
            assert!(!expected.is_empty(), "{query}");
            for &budget in BUDGETS {
                let (files, _) = engine.spilled();
                let got = canonical(run(&engine, query, Some(budget)), ordered);
                assert_eq!(
                    got.len(),
                    expected.len(),
                    "{query}, budget {budget}, seed {seed}"
                );
                assert!(
                    got == expected,
                    "{query}, budget {budget}, seed {seed}: results differ"
                );
                assert!(
                    engine.spilled().0 > files || budget > BUDGETS[0],
                    "{query} did not spill under a budget of {budget} bytes"
                );
                // Where the join is the only operator that can spill, it
                // is a hash join (or OPTIONAL's), and it did.
                if query.contains("BIND(STR(?n)") {
                    let plan = common::plan_text(&engine, &query_text(query));
                    assert!(
                        plan.contains("HashJoin") || plan.contains("LeftJoin"),
                        "{plan}"
                    );
                }
            }
        }
    }
}

/// A GROUP BY in partitions on several cores (told to partition whatever
/// the size): each partition spills on its own under the query's budget,
/// and together they give the groups of one `Group` in memory, straight
/// through and paused and resumed at every turn end.
#[test]
fn partitioned_groups_spill_and_give_the_results_of_memory() {
    let data = generate(5, 12_000);
    let (_tmp, serial) = common::engine_over(
        "people.nt",
        &data,
        EngineOptions {
            cores_per_query: Some(1),
            ..EngineOptions::default()
        },
    );
    let (_tmp2, parallel) = common::engine_over(
        "people.nt",
        &data,
        EngineOptions {
            cores_per_query: Some(3),
            parallel_from_rows: Some(0),
            ..EngineOptions::default()
        },
    );
    let groups = QUERIES.iter().filter(|(q, _)| {
        q.ends_with("GROUP BY ?s") || q.contains("GROUP BY ?n") || q.contains("HAVING")
    });
    let mut checked = 0;
    for &(query, ordered) in groups {
        let plan = common::plan_text(&parallel, &query_text(query));
        assert!(
            plan.contains("ParallelGroup"),
            "{query} is not partitioned: {plan}"
        );
        let expected = canonical(run(&serial, query, None), ordered);
        let (files, _) = parallel.spilled();
        let got = canonical(run(&parallel, query, Some(BUDGETS[0])), ordered);
        assert!(got == expected, "{query}: results differ");
        assert!(parallel.spilled().0 > files, "{query} did not spill");
        let got = canonical(run_in_turns(&parallel, query, BUDGETS[0]), ordered);
        assert!(got == expected, "{query}: results differ after suspensions");
        checked += 1;
    }
    assert_eq!(
        checked, 6,
        "the queries grouping above all else, and one joining a group"
    );
}

#[test]
fn spilled_queries_suspended_and_resumed_give_the_same_results() {
    let (_tmp, engine) =
        common::engine_over("people.nt", &generate(9, 8_000), EngineOptions::default());
    for &(query, ordered) in QUERIES {
        let expected = canonical(run(&engine, query, None), ordered);
        let got = canonical(run_in_turns(&engine, query, BUDGETS[0]), ordered);
        assert!(got == expected, "{query}: results differ after suspensions");
    }
}

/// A join written as `FILTER(?v = ?w)` matches literals by value (`12.5` and
/// `1.25e1`), which the hash of their IDs would put in different parts: it
/// never spills (a build side too large for the budget fails it), and under
/// a budget it finds the pairs of different types as without one.
#[test]
fn equality_joins_stay_in_memory_and_match_values_of_other_types() {
    let (_tmp, engine) =
        common::engine_over("people.nt", &generate(4, 12_000), EngineOptions::default());
    let query =
        "SELECT ?s ?t WHERE { ?s ex:score ?v . ?t ex:score ?w FILTER(?v = ?w && ?s != ?t) }";
    let plan = common::plan_text(&engine, &query_text(query));
    assert!(plan.contains("EqualityJoin"), "{plan}");
    let expected = canonical(run(&engine, query, None), false);
    // Even and odd people have decimal and double scores: equal values of
    // both types are among the pairs.
    let even = |name: &str| {
        name.trim_end_matches('>')
            .ends_with(['0', '2', '4', '6', '8'])
    };
    assert!(
        expected.iter().any(|l| {
            let (s, t) = l.split_once(' ').unwrap();
            even(s) != even(t)
        }),
        "no pair of a decimal and a double"
    );
    let (files, _) = engine.spilled();
    let got = canonical(run(&engine, query, Some(2 << 20)), false);
    assert!(got == expected, "results differ under a budget");
    assert_eq!(engine.spilled().0, files, "the equality join spilled");
}
