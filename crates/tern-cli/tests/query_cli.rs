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
    let sample = manifest_dir().join("../../data/sample.ttl");
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

#[test]
fn absurd_numbers_on_the_command_line_get_a_message_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let index = sample_index(dir.path());
    let runs: &[&[&str]] = &[
        &[
            "serve",
            "--index",
            &index,
            "--port",
            "0",
            "--timeout",
            "1e300",
        ],
        &[
            "serve",
            "--index",
            &index,
            "--port",
            "0",
            "--quantum",
            "1e300s",
        ],
        &[
            "serve",
            "--index",
            &index,
            "--port",
            "0",
            "--token-ttl",
            "inf",
        ],
        &[
            "serve",
            "--index",
            &index,
            "--port",
            "0",
            "--memory",
            "99999999999999999999T",
        ],
        &[
            "serve",
            "--index",
            &index,
            "--port",
            "0",
            "--header-timeout",
            "nan",
        ],
        &["query", "--index", &index, "--timeout", "1e20", "ASK {}"],
        &["query", "--index", &index, "--timeout=-1", "ASK {}"],
        &["query", "--index", &index, "--memory", "1e300", "ASK {}"],
        &["query", "--index", &index, "--vocab-cache", "NaN", "ASK {}"],
        &["load", "--index", &index, "--memory", "inf", "x.nt"],
    ];
    for args in runs {
        let out = tern(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("error: invalid value"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // Large but sane values work.
    let out = tern(&["query", "--index", &index, "--timeout", "1e6", "ASK {}"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The package's folder: where `cargo test` runs this binary from, not where
/// it was compiled (a build cache shared by clones of the repository may
/// hold a binary compiled in another clone, since deleted).
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
