//! What the engine's integration tests share.

use oxrdf::Term;
use std::sync::Arc;
use tern_engine::{Engine, EngineOptions, QueryRequest};
use tern_index::builder::{build, Input, LoadOptions};
use tern_index::Index;

/// An engine over an index built from `data`, written to a file named
/// `file_name` (its extension gives the format). The directory lives as
/// long as the returned guard.
pub fn engine_over(
    file_name: &str,
    data: &str,
    options: EngineOptions,
) -> (tempfile::TempDir, Engine) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(file_name);
    std::fs::write(&path, data).unwrap();
    let target = tmp.path().join("index");
    build(
        &target,
        &[Input::file(&path, None, None).unwrap()],
        &LoadOptions::default(),
    )
    .unwrap();
    let index = Arc::new(Index::open(&target).unwrap());
    (tmp, Engine::of_index(index, options))
}

/// An engine over one triple `<http://example.org/sN>
/// <http://example.org/v> VALUE` per value (N-Triples terms), N its place.
#[allow(dead_code)] // not every test file compares values
pub fn engine_over_values(values: &[String]) -> (tempfile::TempDir, Engine) {
    let text: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("<http://example.org/s{i}> <http://example.org/v> {v} .\n"))
        .collect();
    engine_over("values.nt", &text, EngineOptions::default())
}

/// Solutions as lines of their terms' N-Triples text (`UNDEF` where
/// unbound), sorted: multisets to compare.
#[allow(dead_code)] // not every test file compares solutions
pub fn sorted_solutions(rows: Vec<Vec<Option<Term>>>) -> Vec<String> {
    let mut out: Vec<String> = rows
        .into_iter()
        .map(|row| {
            let texts: Vec<String> = row
                .iter()
                .map(|t| t.as_ref().map_or("UNDEF".to_owned(), ToString::to_string))
                .collect();
            texts.join(" ")
        })
        .collect();
    out.sort();
    out
}

/// The plan of a query, as `--explain` prints it.
#[allow(dead_code)] // not every test file looks at plans
pub fn plan_text(engine: &Engine, query: &str) -> String {
    let request = QueryRequest {
        profile: true,
        ..QueryRequest::default()
    };
    let execution = engine.execute(query, &request).unwrap();
    execution.profile.snapshot().to_text()
}

/// A solution's value for assertions: `http://example.org/` names without
/// that prefix, literals by their text, `-` for unbound.
#[allow(dead_code)] // not every test file prints values
pub fn short(term: &Option<Term>) -> String {
    match term {
        Some(Term::NamedNode(n)) => n
            .as_str()
            .trim_start_matches("http://example.org/")
            .to_owned(),
        Some(Term::Literal(l)) => l.value().to_owned(),
        Some(other) => other.to_string(),
        None => "-".to_owned(),
    }
}
