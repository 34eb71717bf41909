//! Runaway queries stop: a cross product of two large patterns honours the
//! deadline and the cancellation flag, which every operator checks between
//! bounded batches.

use std::time::{Duration, Instant};
use tern_engine::{CancelFlag, Engine, EngineError, EngineOptions, QueryOutcome, QueryRequest};

mod common;

fn engine() -> (tempfile::TempDir, Engine) {
    let text: String = (0..20_000)
        .map(|i| {
            format!(
                "<http://e.org/s{}> <http://e.org/p{}> \"{i}\" .\n",
                i % 997,
                i % 7
            )
        })
        .collect();
    common::engine_over("data.nt", &text, EngineOptions::default())
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
