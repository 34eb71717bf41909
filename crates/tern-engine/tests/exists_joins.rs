//! FILTER EXISTS and NOT EXISTS: exact results whether they run as semi and
//! anti joins (the pattern evaluated once) or per solution with the
//! solution's values substituted into the pattern (SPARQL 1.1 §18.6), with
//! shared variables, without, with shared variables left unbound by
//! OPTIONAL, with filters inside the pattern that read outer variables,
//! nested, inside GRAPH, and across suspensions of the query.

use oxrdf::Term;
use std::collections::BTreeSet;
use tern_engine::Stash;
use tern_engine::{Engine, EngineOptions, QueryOutcome, QueryRequest, SavedQuery};

mod common;

const EX: &str = "http://example.org/";
const PREFIX: &str = "PREFIX ex: <http://example.org/>\n";

fn engine_for(nquads: &str) -> (tempfile::TempDir, Engine) {
    let options = EngineOptions {
        default_graph_is_union: false,
        ..EngineOptions::default()
    };
    common::engine_over("data.nq", nquads, options)
}

/// Terms written compactly: `ex:` IRIs as `:name`, literals by value,
/// unbound as `-`.
fn show(term: &Option<Term>) -> String {
    match term {
        None => "-".to_owned(),
        Some(Term::NamedNode(n)) => match n.as_str().strip_prefix(EX) {
            Some(local) => format!(":{local}"),
            None => n.to_string(),
        },
        Some(Term::Literal(l)) => l.value().to_owned(),
        Some(other) => other.to_string(),
    }
}

fn show_row(row: &[Option<Term>]) -> String {
    row.iter().map(show).collect::<Vec<_>>().join(" ")
}

/// The solutions, sorted (a multiset: repeats stay).
fn run(engine: &Engine, query: &str) -> Vec<String> {
    let query = format!("{PREFIX}{query}");
    match engine.query(&query, None).unwrap() {
        QueryOutcome::Solutions { rows, .. } => {
            let mut out: Vec<String> = rows.map(|r| show_row(&r.unwrap())).collect();
            out.sort();
            out
        }
        _ => panic!("not a SELECT: {query}"),
    }
}

/// The plan of a query, as `--explain` prints it.
fn plan(engine: &Engine, query: &str) -> String {
    common::plan_text(engine, &format!("{PREFIX}{query}"))
}

const SMALL: &str = r#"
<http://example.org/a> <http://example.org/age> "30"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/b> <http://example.org/age> "40"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/c> <http://example.org/age> "50"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/d> <http://example.org/age> "40"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/a> <http://example.org/knows> <http://example.org/b> .
<http://example.org/b> <http://example.org/knows> <http://example.org/c> .
<http://example.org/c> <http://example.org/knows> <http://example.org/a> .
<http://example.org/b> <http://example.org/email> "b@x" .
<http://example.org/c> <http://example.org/email> "c@x" .
<http://example.org/s> <http://example.org/p> <http://example.org/o1> <http://example.org/g1> .
<http://example.org/s> <http://example.org/p> <http://example.org/o2> <http://example.org/g1> .
<http://example.org/t> <http://example.org/p> <http://example.org/o1> <http://example.org/g1> .
<http://example.org/t> <http://example.org/p> <http://example.org/o2> <http://example.org/g2> .
"#;

fn check(engine: &Engine, query: &str, expected: &[&str]) {
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(run(engine, query), expected, "{query}");
}

#[test]
fn shared_variables() {
    let (_tmp, engine) = engine_for(SMALL);
    let exists = "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?x ex:knows ?y } }";
    check(&engine, exists, &[":a", ":b", ":c"]);
    assert!(plan(&engine, exists).contains("SemiJoin on ?x"));
    let not_exists = "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ?x ex:knows ?y } }";
    check(&engine, not_exists, &[":d"]);
    assert!(plan(&engine, not_exists).contains("AntiJoin on ?x"));
    check(
        &engine,
        "SELECT ?x ?y { ?x ex:knows ?y FILTER NOT EXISTS { ?y ex:email ?e } }",
        &[":c :a"],
    );
    check(
        &engine,
        "SELECT ?x ?y { ?x ex:knows ?y FILTER EXISTS { ?y ex:email ?e } }",
        &[":a :b", ":b :c"],
    );
    // With the other conjuncts of the condition; a row counted once however
    // many solutions the pattern has for it.
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER(?a >= 40 && EXISTS { ?w ex:knows ?x } && NOT EXISTS { ?x ex:email \"b@x\" }) }",
        &[":c"],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?w ?p ?x } }",
        &[":a", ":b", ":c"],
    );
}

#[test]
fn no_shared_variables() {
    let (_tmp, engine) = engine_for(SMALL);
    let all = [":a", ":b", ":c", ":d"];
    let some = "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ex:b ex:email ?e } }";
    check(&engine, some, &all);
    assert!(plan(&engine, some).contains("SemiJoin no shared variables"));
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ex:d ex:email ?e } }",
        &[],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ex:d ex:email ?e } }",
        &all,
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ex:b ex:email ?e } }",
        &[],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ex:nobody ex:email ?e } }",
        &all,
    );
    // The empty pattern has one solution.
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { } }",
        &all,
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { } }",
        &[],
    );
}

#[test]
fn shared_variables_left_unbound_match_any_value() {
    let (_tmp, engine) = engine_for(SMALL);
    // ?e is unbound for :a and :d: the pattern then has a solution (c's).
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER NOT EXISTS { ?y ex:email ?e . ?y ex:age 50 } }",
        &[":b b@x"],
    );
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER EXISTS { ?y ex:email ?e . ?y ex:age 50 } }",
        &[":a -", ":c c@x", ":d -"],
    );
    // One triple pattern, looked up per row: an unbound ?e stays free.
    let single = "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER EXISTS { ?y ex:email ?e } }";
    check(&engine, single, &[":a -", ":b b@x", ":c c@x", ":d -"]);
    let explained = plan(&engine, single);
    assert!(
        explained.contains("SemiJoin on ?e by lookups"),
        "{explained}"
    );
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER NOT EXISTS { ?y ex:email ?e } }",
        &[],
    );
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER NOT EXISTS { ?x ex:knows ?z } }",
        &[":d -"],
    );
    // One shared variable bound, the other not.
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER EXISTS { ?x ex:knows ?z . ?z ex:email ?e } }",
        &[":a -"],
    );
    check(
        &engine,
        "SELECT ?x ?e { ?x ex:age ?a OPTIONAL { ?x ex:email ?e } FILTER NOT EXISTS { ?x ex:knows ?z . ?z ex:email ?e } }",
        &[":b b@x", ":c c@x", ":d -"],
    );
}

#[test]
fn filters_inside_the_pattern_see_the_outer_values() {
    let (_tmp, engine) = engine_for(SMALL);
    let older = "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?y ex:age ?b FILTER(?b > ?a) } }";
    check(&engine, older, &[":a", ":b", ":d"]);
    let explained = plan(&engine, older);
    assert!(
        explained.contains("SemiJoin no shared variables where (?b > ?a)"),
        "{explained}"
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ?y ex:age ?b FILTER(?b > ?a) } }",
        &[":c"],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:knows ?y FILTER EXISTS { ?y ex:age ?v FILTER(?x != ex:a) } }",
        &[":b", ":c"],
    );
    // A filter on the pattern's own variables stays inside it.
    check(
        &engine,
        "SELECT ?x { ?x ex:knows ?y FILTER EXISTS { ?y ex:age ?v FILTER(?v > 35) } }",
        &[":a", ":b"],
    );
}

/// The anti join keeps one solution per distinct values of the columns
/// its condition reads (an author's years, not each of their papers):
/// the answers are the same as with every solution, also for a condition
/// that is not a function of the row (RAND()), where all are kept.
#[test]
fn solutions_alike_for_the_condition_are_kept_once() {
    let mut data = String::new();
    let year = |y: u32| format!("\"{y}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
    // ex:hub writes 300 papers over 2001-2010; ex:few two, in 2003 and 2009.
    for paper in 0..300 {
        data += &format!("<{EX}h{paper}> <{EX}creator> <{EX}hub> .\n");
        data += &format!("<{EX}h{paper}> <{EX}year> {} .\n", year(2001 + paper % 10));
    }
    for (paper, y) in [(0, 2003), (1, 2009)] {
        data += &format!("<{EX}f{paper}> <{EX}creator> <{EX}few> .\n");
        data += &format!("<{EX}f{paper}> <{EX}year> {} .\n", year(y));
    }
    // Volumes edited in various years.
    for (volume, editor, y) in [
        ("v1", "hub", 2005),
        ("v2", "hub", 2010),
        ("v3", "few", 2003),
        ("v4", "few", 2009),
        ("v5", "few", 2001),
        ("v6", "nobody", 2000),
    ] {
        data += &format!("<{EX}{volume}> <{EX}editor> <{EX}{editor}> .\n");
        data += &format!("<{EX}{volume}> <{EX}year> {} .\n", year(y));
    }
    let (_tmp, engine) = engine_for(&data);
    let later = |extra: &str| {
        format!(
            "SELECT ?v WHERE {{ ?v ex:editor ?e ; ex:year ?py \
             FILTER NOT EXISTS {{ ?d ex:creator ?e ; ex:year ?y FILTER(?y > ?py{extra}) }} }}"
        )
    };
    // No paper after the volume's year: v2 (hub's last is 2010), v4, v6.
    check(&engine, &later(""), &[":v2", ":v4", ":v6"]);
    let explained = plan(&engine, &later(""));
    assert!(explained.contains("AntiJoin on ?e where"), "{explained}");
    check(&engine, &later(" && RAND() < 2"), &[":v2", ":v4", ":v6"]);
    let exists = "SELECT ?v WHERE { ?v ex:editor ?e ; ex:year ?py \
                  FILTER EXISTS { ?d ex:creator ?e ; ex:year ?y FILTER(?y = ?py) } }";
    check(&engine, exists, &[":v1", ":v2", ":v3", ":v4"]);
}

#[test]
fn patterns_that_see_what_is_bound_are_evaluated_per_solution() {
    let (_tmp, engine) = engine_for(SMALL);
    // Substituted, ?z is visible in the FILTER over the OPTIONAL; joined, it
    // would be unbound there.
    let substituted = "SELECT ?z { VALUES ?z { \"b@x\" \"zz\" } FILTER EXISTS { ex:a ex:knows ?x OPTIONAL { ?x ex:email ?w } FILTER(?w = ?z) } }";
    check(&engine, substituted, &["b@x"]);
    assert!(!plan(&engine, substituted).contains("SemiJoin"));
    // The OPTIONAL cannot bind the substituted ?z to another value.
    check(
        &engine,
        "SELECT ?z { VALUES ?z { \"b\" } FILTER NOT EXISTS { ex:c ex:knows ?x OPTIONAL { ?x ex:knows ?z } } }",
        &[],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ?x ex:knows ?y MINUS { ?y ex:email ?e } } }",
        &[":a", ":b", ":d"],
    );
}

#[test]
fn nested_exists() {
    let (_tmp, engine) = engine_for(SMALL);
    // The outer EXISTS runs per solution; the inner one, planned with ?x
    // substituted, as an anti join.
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?x ex:knows ?y FILTER NOT EXISTS { ?y ex:email ?e } } }",
        &[":c"],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER NOT EXISTS { ?x ex:knows ?y FILTER EXISTS { ?y ex:knows ?x } } }",
        &[":a", ":b", ":c", ":d"],
    );
    // ?a comes from two levels up: nobody's friend's friend is as old as
    // they are, one is older.
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?x ex:knows ?y FILTER EXISTS { ?y ex:knows ?z FILTER EXISTS { ?z ex:age ?a } } } }",
        &[],
    );
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?x ex:knows ?y FILTER EXISTS { ?y ex:knows ?z FILTER EXISTS { ?z ex:age ?w FILTER(?w > ?a) } } } }",
        &[":a"],
    );
}

#[test]
fn patterns_are_matched_in_the_enclosing_graph() {
    let (_tmp, engine) = engine_for(SMALL);
    check(
        &engine,
        "SELECT ?s { GRAPH ex:g1 { ?s ex:p ex:o1 FILTER EXISTS { ?s ex:p ex:o2 } } }",
        &[":s"],
    );
    check(
        &engine,
        "SELECT ?g ?s { GRAPH ?g { ?s ex:p ex:o1 FILTER EXISTS { ?s ex:p ex:o2 } } }",
        &[":g1 :s"],
    );
    check(
        &engine,
        "SELECT ?g ?s { GRAPH ?g { ?s ex:p ex:o1 FILTER NOT EXISTS { ?s ex:p ex:o2 } } }",
        &[":g1 :t"],
    );
    // Per solution, in the graph of each solution.
    check(
        &engine,
        "SELECT ?g ?s { GRAPH ?g { ?s ex:p ex:o1 FILTER EXISTS { ?s ex:p ?o OPTIONAL { ?o ex:p ?w } FILTER(?o != ex:o1) } } }",
        &[":g1 :s"],
    );
    // Not in the default graph, which has no ex:p triples.
    check(
        &engine,
        "SELECT ?x { ?x ex:age ?a FILTER EXISTS { ?s ex:p ?o } }",
        &[],
    );
}

// ---------------------------------------------------------------------------
// Larger data, results computed here, queries suspended and resumed.

struct People {
    age: Vec<u64>,
    knows: Vec<BTreeSet<usize>>,
    email: Vec<bool>,
}

fn people(n: usize) -> People {
    let mut state = 7u64;
    let mut next = |m: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % m
    };
    let mut people = People {
        age: Vec::new(),
        knows: Vec::new(),
        email: Vec::new(),
    };
    for _ in 0..n {
        people.age.push(next(90));
        people
            .knows
            .push((0..next(4)).map(|_| next(n as u64) as usize).collect());
        people.email.push(next(3) == 0);
    }
    people
}

fn person(p: usize) -> String {
    format!(":p{p}")
}

fn email(p: usize) -> String {
    format!("p{p}@x")
}

fn nquads(people: &People) -> String {
    let mut out = String::new();
    for p in 0..people.age.len() {
        let s = format!("<{EX}p{p}>");
        out.push_str(&format!(
            "{s} <{EX}age> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
            people.age[p]
        ));
        for &k in &people.knows[p] {
            out.push_str(&format!("{s} <{EX}knows> <{EX}p{k}> .\n"));
        }
        if people.email[p] {
            out.push_str(&format!("{s} <{EX}email> \"{}\" .\n", email(p)));
        }
    }
    out
}

/// The queries and their results, computed from the data.
fn cases(people: &People) -> Vec<(String, Vec<String>)> {
    let n = people.age.len();
    let mut cases = Vec::new();

    let mut expected = Vec::new();
    for a in 0..n {
        for &b in &people.knows[a] {
            if !people.email[b] {
                expected.push(format!("{} {}", person(a), person(b)));
            }
        }
    }
    cases.push((
        "SELECT ?a ?b { ?a ex:knows ?b FILTER NOT EXISTS { ?b ex:email ?e } }".to_owned(),
        expected,
    ));

    let expected = (0..n)
        .filter(|&a| {
            people.knows[a]
                .iter()
                .any(|&b| people.age[b] > people.age[a])
        })
        .map(person)
        .collect();
    cases.push((
        "SELECT ?a { ?a ex:age ?x FILTER EXISTS { ?a ex:knows ?b . ?b ex:age ?y FILTER(?y > ?x) } }".to_owned(),
        expected,
    ));

    // ?e unbound for people without an email: then any friend's email counts.
    let expected = (0..n)
        .filter(|&a| {
            people.knows[a]
                .iter()
                .all(|&b| !people.email[b] || (people.email[a] && b != a))
        })
        .map(|a| {
            let e = if people.email[a] {
                email(a)
            } else {
                "-".into()
            };
            format!("{} {e}", person(a))
        })
        .collect();
    cases.push((
        "SELECT ?a ?e { ?a ex:age ?x OPTIONAL { ?a ex:email ?e } FILTER NOT EXISTS { ?a ex:knows ?b . ?b ex:email ?e } }".to_owned(),
        expected,
    ));

    let with_email = (0..n).find(|&p| people.email[p]).expect("some email");
    cases.push((
        format!("SELECT ?a {{ ?a ex:age ?x FILTER EXISTS {{ ex:p{with_email} ex:email ?e }} }}"),
        (0..n).map(person).collect(),
    ));
    let without_email = (0..n).find(|&p| !people.email[p]).expect("some without");
    cases.push((
        format!(
            "SELECT ?a {{ ?a ex:age ?x FILTER NOT EXISTS {{ ex:p{without_email} ex:email ?e }} }}"
        ),
        (0..n).map(person).collect(),
    ));
    for (_, expected) in &mut cases {
        expected.sort();
    }
    cases
}

/// Runs `query`, suspending after every `run` results and resuming from the
/// saved state's bytes.
fn suspended(engine: &Engine, query: &str, run: usize, stash: &Stash) -> (Vec<String>, usize) {
    let query = format!("{PREFIX}{query}");
    let request = QueryRequest::default();
    let mut out = Vec::new();
    let mut suspensions = 0;
    let mut execution = engine.execute(&query, &request).unwrap();
    loop {
        let QueryOutcome::Solutions { mut rows, .. } = execution.outcome else {
            panic!("not a SELECT");
        };
        for _ in 0..run {
            match rows.next() {
                Some(row) => out.push(show_row(&row.unwrap())),
                None => {
                    out.sort();
                    return (out, suspensions);
                }
            }
        }
        let (decoded, saved) = rows.suspend(stash).unwrap();
        out.extend(decoded.iter().map(|r| show_row(r)));
        let saved = SavedQuery::from_bytes(&saved.to_bytes()).unwrap();
        suspensions += 1;
        execution = engine.resume(&query, &request, &saved, stash).unwrap();
    }
}

#[test]
fn results_across_suspensions() {
    let people = people(6_000);
    let (_tmp, engine) = engine_for(&nquads(&people));
    for (query, expected) in cases(&people) {
        assert!(!expected.is_empty(), "{query} has results");
        let query = query.as_str();
        assert_eq!(run(&engine, query), expected, "{query}");
        let explained = plan(&engine, query);
        assert!(
            explained.contains("SemiJoin") || explained.contains("AntiJoin"),
            "{query}: {explained}"
        );
        for run_length in [1, 777, 5_000] {
            let stash = Stash::default();
            let (got, suspensions) = suspended(&engine, query, run_length, &stash);
            assert_eq!(got, expected, "{query}, suspended every {run_length}");
            if expected.len() > run_length {
                assert!(suspensions >= 1);
            }
            assert!(stash.is_empty(), "{query}: stashed state left behind");
        }
    }
}
