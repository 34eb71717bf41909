//! `tern query` run as a separate process on inputs that once crashed it.

use std::path::Path;
use std::process::{Command, Output};

fn tern(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tern"))
        .args(args)
        .output()
        .expect("tern runs")
}

fn sample_index(dir: &Path) -> String {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/sample.ttl");
    let index = dir.join("index");
    let out = tern(&[
        "load",
        "-q",
        "--index",
        index.to_str().unwrap(),
        sample.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    index.to_str().unwrap().to_owned()
}

#[test]
fn deep_queries_fail_with_a_message_instead_of_crashing() {
    let dir = tempfile::tempdir().unwrap();
    let index = sample_index(dir.path());
    let shapes = [
        format!(
            "SELECT * WHERE {}?s ?p ?o{}",
            "{".repeat(10_000),
            "}".repeat(10_000)
        ),
        format!(
            "SELECT * WHERE {{ ?s ?p ?o FILTER({}?o{}) }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        ),
        format!(
            "SELECT * WHERE {{ {} }}",
            vec!["{ ?s ?p ?o }"; 20_000].join(" UNION ")
        ),
        format!(
            "SELECT * WHERE {{ ?s ?p ?o {}}}",
            "OPTIONAL { ?s ?p ?o } ".repeat(5_000)
        ),
        format!(
            "ASK {{ FILTER({}false{}) }}",
            "!(".repeat(40),
            ")".repeat(40)
        ),
    ];
    for query in &shapes {
        let file = dir.path().join("query.rq");
        std::fs::write(&file, query).unwrap();
        let out = tern(&["query", "--index", &index, "--file", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", &query[..40]);
        assert!(err.starts_with("error: ") && err.contains("limit"), "{err}");
    }
}

#[test]
fn queries_within_the_limits_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let index = sample_index(dir.path());
    let deep = format!(
        "SELECT (COUNT(*) AS ?n) WHERE {}?s ?p ?o{}",
        "{".repeat(250),
        "}".repeat(250)
    );
    let out = tern(&["query", "--index", &index, "--format", "csv", &deep]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "n\r\n145");
}
