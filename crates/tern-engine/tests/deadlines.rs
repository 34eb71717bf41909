//! Deadlines and cancellation stop every operator promptly, also when one
//! batch of its input is expensive: a skewed join whose single input batch
//! makes millions of rows, a closure over a long chain, a sort, a group, a
//! DISTINCT set, a filter, negation. Each query below runs far longer than
//! its deadline; it must give up within `GRACE` of it, and within `GRACE`
//! of a cancellation (what the server does when the client disconnects).

use std::time::{Duration, Instant};
use tern_engine::{CancelFlag, Engine, EngineError, EngineOptions, QueryOutcome, QueryRequest};

mod common;

/// How long after its deadline (or its cancellation) a query may still run.
const GRACE: Duration = Duration::from_millis(250);
/// When the queries below are stopped.
const DEADLINE: Duration = Duration::from_millis(250);

/// Three shapes of data: 20,000 triples of 997 subjects and 7 predicates;
/// a hub with 3,000 links (a join on the hub makes 9 million rows from one
/// batch of each side); a chain of 3,000 nodes (its closure has 4.5
/// million pairs).
fn data() -> String {
    let mut text = String::new();
    for i in 0..20_000 {
        text += &format!(
            "<http://e.org/s{}> <http://e.org/p{}> \"{i}\" .\n",
            i % 997,
            i % 7
        );
    }
    for i in 0..3_000 {
        text += &format!("<http://e.org/hub> <http://e.org/link> <http://e.org/x{i}> .\n");
        text += &format!(
            "<http://e.org/n{i}> <http://e.org/next> <http://e.org/n{}> .\n",
            i + 1
        );
    }
    text
}

const PREFIX: &str = "PREFIX e: <http://e.org/> ";

/// One query per operator (or strategy) that must stop on time.
const QUERIES: &[(&str, &str)] = &[
    ("cross product", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"),
    ("skewed hash join", "SELECT (COUNT(*) AS ?n) WHERE { ?h e:link ?a . ?h e:link ?b . ?h e:link ?c }"),
    ("sort", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"),
    ("top-k sort", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY DESC(?f) ?c LIMIT 5"),
    ("group", "SELECT ?c (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f } GROUP BY ?c"),
    ("count distinct", "SELECT (COUNT(DISTINCT ?f) AS ?n) WHERE { ?h e:link ?a . ?h e:link ?b . ?d ?e ?f }"),
    ("distinct", "SELECT DISTINCT ?c ?f WHERE { ?a ?b ?c . ?d ?e ?f }"),
    ("filter", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f FILTER(REGEX(CONCAT(STR(?c), STR(?f)), \"^9.*1$\")) }"),
    ("closure", "SELECT (COUNT(*) AS ?n) WHERE { ?x e:next+ ?y }"),
    ("closure from each node", "SELECT (COUNT(*) AS ?n) WHERE { ?x e:next ?z . ?x e:next* ?y }"),
    ("optional", "SELECT (COUNT(*) AS ?n) WHERE { ?h e:link ?a OPTIONAL { ?h e:link ?b . ?h e:link ?c } }"),
    ("minus", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f MINUS { ?a e:p9 ?f } }"),
    ("not exists", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f FILTER NOT EXISTS { ?a ?b ?f } }"),
    ("union", "SELECT (COUNT(*) AS ?n) WHERE { { ?a ?b ?c . ?d ?e ?f } UNION { ?h e:link ?a . ?h e:link ?d } }"),
    ("values join", "SELECT (COUNT(*) AS ?n) WHERE { VALUES ?h { e:hub e:hub e:hub } ?h e:link ?a . ?h e:link ?b }"),
    ("bind", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f BIND(CONCAT(STR(?c), STR(?f)) AS ?g) }"),
    ("equality join", "SELECT (COUNT(*) AS ?n) WHERE { ?a e:p1 ?c . ?d e:p2 ?f . ?g e:link ?x FILTER(?a = ?d) }"),
    ("subquery", "SELECT (COUNT(*) AS ?n) WHERE { { SELECT ?c ?f WHERE { ?a ?b ?c . ?d ?e ?f } } }"),
    ("construct", "CONSTRUCT { ?a ?b ?f } WHERE { ?a ?b ?c . ?d ?e ?f }"),
    ("path search per row", "SELECT (COUNT(*) AS ?n) WHERE { ?x e:next ?z . SERVICE <urn:tern:path> { [] <urn:tern:path:source> ?x ; <urn:tern:path:predicate> e:next ; <urn:tern:path:end> ?y } }"),
    ("undirected shortest path per row", "SELECT (COUNT(*) AS ?n) WHERE { ?x e:next ?z . SERVICE <urn:tern:path> { [] <urn:tern:path:source> ?x ; <urn:tern:path:target> e:n0 ; <urn:tern:path:direction> \"both\" ; <urn:tern:path:length> ?l } }"),
    // (A condition on both sides of the product: one on each would be
    // checked on each side's scan.)
    ("ask", "ASK { ?a ?b ?c . ?d ?e ?f FILTER(CONCAT(STR(?c), STR(?f)) = \"none\") }"),
];

/// Runs `query` to its end (or error), reading every row or triple.
fn drain(engine: &Engine, query: &str, request: &QueryRequest) -> Result<(), EngineError> {
    match engine
        .execute(&format!("{PREFIX}{query}"), request)?
        .outcome
    {
        QueryOutcome::Solutions { mut rows, .. } => rows.try_for_each(|r| r.map(drop)),
        QueryOutcome::Graph(mut triples) => triples.try_for_each(|t| t.map(drop)),
        QueryOutcome::Boolean(_) => Ok(()),
    }
}

/// Each query's time past its stop, for the report when one is late.
fn report(late: &[(&str, Duration, String)]) -> String {
    late.iter()
        .map(|(name, over, result)| format!("  {name}: {over:?} late, {result}\n"))
        .collect()
}

/// The two tests take turns: each measures one query at a time, on a machine
/// that may have two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn every_operator_stops_at_its_deadline() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (_tmp, engine) = common::engine_over("data.nt", &data(), EngineOptions::default());
    let mut late = Vec::new();
    for (name, query) in QUERIES {
        let request = QueryRequest {
            timeout: Some(DEADLINE),
            ..QueryRequest::default()
        };
        let started = Instant::now();
        let result = drain(&engine, query, &request);
        let over = started.elapsed().saturating_sub(DEADLINE);
        // The figure itself, for `cargo test --release -- --nocapture`.
        eprintln!("deadline: {name}: stopped {over:?} after it");
        if !matches!(result, Err(EngineError::Timeout(_))) || over > GRACE {
            late.push((*name, over, format!("{result:?}")));
        }
    }
    assert!(late.is_empty(), "not stopped on time:\n{}", report(&late));
}

#[test]
fn every_operator_stops_when_cancelled() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (_tmp, engine) = common::engine_over("data.nt", &data(), EngineOptions::default());
    let mut late = Vec::new();
    for (name, query) in QUERIES {
        let cancel = CancelFlag::default();
        let request = QueryRequest {
            cancel: cancel.clone(),
            ..QueryRequest::default()
        };
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(DEADLINE);
            cancel.cancel();
            Instant::now()
        });
        let result = drain(&engine, query, &request);
        let ended = Instant::now();
        let cancelled_at = canceller.join().unwrap();
        let over = ended.saturating_duration_since(cancelled_at);
        eprintln!("cancel: {name}: stopped {over:?} after it");
        if !matches!(result, Err(EngineError::Cancelled)) || over > GRACE {
            late.push((*name, over, format!("{result:?}")));
        }
    }
    assert!(late.is_empty(), "not stopped on time:\n{}", report(&late));
}
