//! Runaway queries stop: a cross product of two large patterns honours the
//! deadline and the cancellation flag, which every operator checks between
//! bounded batches.

use std::time::{Duration, Instant};
use tern_engine::{CancelFlag, Engine, EngineError, EngineOptions, QueryOutcome, QueryRequest};

mod common;

/// 20,000 triples over 997 subjects and 7 predicates.
fn data() -> String {
    (0..20_000)
        .map(|i| {
            format!(
                "<http://e.org/s{}> <http://e.org/p{}> \"{i}\" .\n",
                i % 997,
                i % 7
            )
        })
        .collect()
}

fn engine() -> (tempfile::TempDir, Engine) {
    common::engine_over("data.nt", &data(), EngineOptions::default())
}

/// 400 million combinations: far too many to finish in the test.
const CROSS: &str = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }";

fn run(engine: &Engine, request: &QueryRequest) -> Result<(), EngineError> {
    match engine.execute(CROSS, request)?.outcome {
        QueryOutcome::Solutions { mut rows, .. } => rows.try_for_each(|r| r.map(drop)),
        _ => panic!("SELECT gives solutions"),
    }
}

#[test]
fn cross_products_honour_the_deadline() {
    let (_tmp, engine) = engine();
    let started = Instant::now();
    let request = QueryRequest {
        timeout: Some(Duration::from_millis(300)),
        ..QueryRequest::default()
    };
    let result = run(&engine, &request);
    assert!(matches!(result, Err(EngineError::Timeout(_))), "{result:?}");
    // Generous: the point is that it stops, not how fast.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn cross_products_stop_when_cancelled() {
    let (_tmp, engine) = engine();
    let cancel = CancelFlag::default();
    let request = QueryRequest {
        cancel: cancel.clone(),
        ..QueryRequest::default()
    };
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let started = Instant::now();
    let result = run(&engine, &request);
    canceller.join().unwrap();
    assert!(matches!(result, Err(EngineError::Cancelled)), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Four copies of all 20,000 triples, joined as cross products: each hash
/// table holds 20,000 rows (about 1.3 MB), all three together about 4 MB.
const FOUR_WAY: &str = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } LIMIT 1";

fn first_row(engine: &Engine, query: &str, request: &QueryRequest) -> Result<(), EngineError> {
    match engine.execute(query, request)?.outcome {
        QueryOutcome::Solutions { mut rows, .. } => rows.next().transpose().map(drop),
        _ => panic!("SELECT gives solutions"),
    }
}

#[test]
fn the_budget_counts_every_operator_of_a_query_together() {
    let (_tmp, engine) = engine();
    let budget = |bytes| QueryRequest {
        memory_budget: Some(bytes),
        ..QueryRequest::default()
    };
    // Each table alone fits in 2.5 MB; the three together do not.
    let result = first_row(&engine, FOUR_WAY, &budget(5 << 19));
    assert!(
        matches!(result, Err(EngineError::MemoryBudget { .. })),
        "{result:?}"
    );
    assert!(first_row(&engine, FOUR_WAY, &budget(64 << 20)).is_ok());
    // A failed query gives its memory back (its operators are dropped on a
    // background thread: wait for it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine.memory_in_use() != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(engine.memory_in_use(), 0);
}

#[test]
fn the_server_budget_counts_all_running_queries_together() {
    let text = data();
    // What one query holds after its first row.
    let (_tmp, engine) = common::engine_over("data.nt", &text, EngineOptions::default());
    let first = engine.execute(FOUR_WAY, &QueryRequest::default()).unwrap();
    let QueryOutcome::Solutions { rows: mut held, .. } = first.outcome else {
        panic!("SELECT gives solutions")
    };
    held.next().unwrap().unwrap();
    let one = engine.memory_in_use();
    assert!(one > 3 << 20, "{one}");
    drop(held);
    let options = EngineOptions {
        server_memory_budget: Some(one * 3 / 2),
        ..EngineOptions::default()
    };
    let (_tmp, engine) = common::engine_over("data.nt", &text, options);
    // One query alone fits the server's budget.
    let first = engine.execute(FOUR_WAY, &QueryRequest::default()).unwrap();
    let QueryOutcome::Solutions { rows: mut held, .. } = first.outcome else {
        panic!("SELECT gives solutions")
    };
    held.next().unwrap().unwrap();
    assert_eq!(engine.memory_in_use(), one);
    // A second one while the first holds its tables does not.
    let second = first_row(&engine, FOUR_WAY, &QueryRequest::default());
    assert!(
        matches!(second, Err(EngineError::ServerMemory { .. })),
        "{second:?}"
    );
    drop(held);
    // The refused query's operators are dropped on a background thread
    // (run/retire.rs): their charges go moments later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine.memory_in_use() != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(engine.memory_in_use(), 0);
    assert!(first_row(&engine, FOUR_WAY, &QueryRequest::default()).is_ok());
}

#[test]
fn plans_that_would_grow_exponentially_are_refused() {
    // Two named graphs: GRAPH ?g inside GRAPH ?g is planned once per graph
    // at each level, 2^30 plans for 30 levels (found by the query fuzzer).
    let data = "<http://e/s> <http://e/p> <http://e/o> <http://e/g0> .\n\
                <http://e/s> <http://e/p> <http://e/o> <http://e/g1> .\n";
    let (_tmp, engine) = common::engine_over("data.nq", data, EngineOptions::default());
    let nested = |n: usize| {
        format!(
            "SELECT * WHERE {{ {} ?s ?p ?g {} }}",
            "GRAPH ?g { ?s ?p ?o . ".repeat(n),
            "}".repeat(n)
        )
    };
    let started = Instant::now();
    let result = engine.query(&nested(30), None).map(drop);
    assert!(
        matches!(result, Err(EngineError::TooComplex(_))),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // A few levels are planned and answered.
    assert!(engine.query(&nested(3), None).is_ok());
}
