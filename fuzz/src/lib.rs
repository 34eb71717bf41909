//! What each fuzz target runs, as plain functions: the targets in
//! `fuzz_targets/` call them under libFuzzer, and `tests/replay.rs` runs them
//! over the corpora and the crashes found so far with `cargo test`.
//!
//! A target passes an input when it returns: errors are expected answers
//! to bad input; panics, aborts, hangs and unbounded memory are the faults.

mod query_gen;

use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tern_engine::{
    ContinuationToken, Engine, EngineOptions, QueryOutcome, QueryRequest, SavedQuery, Stash,
    TokenKey,
};

pub use query_gen::generate;

/// N-Triples, then N-Quads, lines through the loader's parser and encoder.
pub fn ntriples(data: &[u8]) {
    tern_index::builder::fuzzing::lines(data, false);
    tern_index::builder::fuzzing::lines(data, true);
}

/// Turtle, then TriG, through oxttl and the loader's encoder.
pub fn turtle(data: &[u8]) {
    tern_index::builder::fuzzing::turtle(data, false);
    tern_index::builder::fuzzing::turtle(data, true);
}

/// HTTP request parameters, Accept, Accept-Encoding and quanta.
pub fn request(data: &[u8]) {
    tern_server::fuzzing::request(data);
}

/// A small data set with every kind of term: IRIs, blank nodes, literals
/// of many types and languages, named graphs, a cycle for paths.
const DATA: &str = r#"
<http://e/s0> <http://e/p0> <http://e/s1> .
<http://e/s1> <http://e/p0> <http://e/s2> .
<http://e/s2> <http://e/p0> <http://e/s0> .
<http://e/s0> <http://e/p1> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://e/s1> <http://e/p1> "2.5"^^<http://www.w3.org/2001/XMLSchema#decimal> .
<http://e/s2> <http://e/p1> "-3e2"^^<http://www.w3.org/2001/XMLSchema#double> .
<http://e/s3> <http://e/p1> "01"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://e/s0> <http://e/p2> "tern"@en .
<http://e/s1> <http://e/p2> "Seeschwalbe"@de .
<http://e/s2> <http://e/p2> "plain" .
<http://e/s3> <http://e/p2> "2024-05-01"^^<http://www.w3.org/2001/XMLSchema#date> .
<http://e/s3> <http://e/p2> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .
<http://e/s3> <http://e/p3> _:b0 .
_:b0 <http://e/p0> <http://e/s4> .
_:b0 <http://e/p3> "x"^^<http://e/unknown> .
<http://e/s4> <http://e/p3> "2024-05-01T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> <http://e/g0> .
<http://e/s4> <http://e/p0> <http://e/s0> <http://e/g1> .
<http://e/s5> <http://e/p1> "7"^^<http://www.w3.org/2001/XMLSchema#integer> <http://e/g1> .
"#;

/// The engine over [`DATA`], built once per process.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<(tempfile::TempDir, Engine)> = OnceLock::new();
    &ENGINE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let file = dir.path().join("data.nq");
            std::fs::write(&file, DATA).expect("writing the data");
            let target = dir.path().join("index");
            let input = tern_index::builder::Input::file(&file, None, None).expect("an input");
            tern_index::builder::build(&target, &[input], &Default::default())
                .expect("building the index");
            let index = tern_index::Index::open(&target).expect("opening the index");
            let options = EngineOptions {
                timeout: Some(Duration::from_millis(250)),
                memory_budget: Some(256 << 20),
                ..EngineOptions::default()
            };
            (dir, Engine::of_index(Arc::new(index), options))
        })
        .1
}

/// Most rows read from one result.
const MOST_ROWS: usize = 500;

/// Drains (part of) a result.
fn drain(outcome: QueryOutcome) {
    match outcome {
        QueryOutcome::Solutions { rows, .. } => rows.take(MOST_ROWS).for_each(drop),
        QueryOutcome::Graph(triples) => triples.take(MOST_ROWS).for_each(drop),
        QueryOutcome::Boolean(_) => {}
    }
}

/// A SPARQL query made from the bytes by a grammar (so that fuzzing reaches
/// the planner and the operators, not only the parser), run to the end;
/// and, for SELECT, run again with a suspension after a few rows and a
/// resume from the saved state.
pub fn query(data: &[u8]) {
    let text = generate(data);
    let raw = std::str::from_utf8(data).ok().map(str::to_owned);
    on_query_stack(move || {
        run_query(&text);
        // The raw bytes as a query too: the parser and the guards on text.
        if let Some(raw) = raw {
            run_query(&raw);
        }
    });
}

/// Runs `work` as the server runs queries: on a thread with the engine's
/// query stack, rayon's threads sized alike. A panic comes back to the
/// caller (libFuzzer reports it).
fn on_query_stack(work: impl FnOnce() + Send + 'static) {
    tern_engine::init_thread_pool();
    let thread = std::thread::Builder::new()
        .stack_size(tern_engine::QUERY_STACK_BYTES)
        .spawn(work)
        .expect("a query thread");
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

fn run_query(text: &str) {
    let engine = engine();
    let request = QueryRequest::default();
    let Ok(execution) = engine.execute(text, &request) else {
        return;
    };
    drain(execution.outcome);
    let Ok(execution) = engine.execute(text, &request) else {
        return;
    };
    if let QueryOutcome::Solutions { mut rows, .. } = execution.outcome {
        if rows.next().is_none() {
            return;
        }
        let stash = Stash::default();
        let Ok((_, saved)) = rows.suspend(&stash) else {
            return;
        };
        // The state goes through its byte form, as a token carries it.
        let saved = SavedQuery::from_bytes(&saved.to_bytes()).expect("own bytes read back");
        if let Ok(resumed) = engine.resume(text, &request, &saved, &stash) {
            drain(resumed.outcome);
        }
    }
}

/// Continuation tokens from arbitrary text, and arbitrary saved states
/// handed to a resume: neither may panic (tokens are signed, so a forged
/// state can only come from a leaked key, but resuming must still fail
/// cleanly).
pub fn token(data: &[u8]) {
    static KEY: OnceLock<TokenKey> = OnceLock::new();
    let key = KEY.get_or_init(|| TokenKey::new(b"fuzzing key of sixteen+ bytes").expect("a key"));
    let _ = ContinuationToken::open(&String::from_utf8_lossy(data), key);
    let Ok(saved) = SavedQuery::from_bytes(data) else {
        return;
    };
    on_query_stack(move || {
        let engine = engine();
        let stash = Stash::default();
        for text in RESUMED {
            if let Ok(execution) = engine.resume(text, &QueryRequest::default(), &saved, &stash) {
                drain(execution.outcome);
            }
        }
    });
}

/// Queries whose plans a forged state is fed to.
const RESUMED: &[&str] = &[
    "SELECT * WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s <http://e/p0> ?o . ?o <http://e/p0> ?x OPTIONAL { ?x <http://e/p1> ?v } } ORDER BY ?v",
    "SELECT ?s (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } MINUS { ?s <http://e/p3> ?z } } GROUP BY ?s",
    "SELECT DISTINCT ?s WHERE { ?s <http://e/p0>+ ?o FILTER EXISTS { ?o ?q ?r } } LIMIT 3 OFFSET 1",
    "CONSTRUCT { ?o ?p ?s } WHERE { ?s ?p ?o }",
];
