//! What the engine's integration tests share.

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
    (tmp, Engine::new(index, options))
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
