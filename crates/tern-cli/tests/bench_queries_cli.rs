//! End-to-end test of `tern bench-queries` run as a separate process.

use serde_json::Value;
use std::fs;
use std::path::Path;

mod common;

fn tern(args: &[&str]) -> std::process::Output {
    common::tern_ok(Path::new("."), args)
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn records_latency_rows_errors_and_sorted_dumps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sample = manifest_dir().join("../../data/sample.ttl");
    let index = d.join("index");
    tern(&["load", "-q", "--index", path(&index), path(&sample)]);
    let queries = [
        ("select.rq", "PREFIX ex: <http://example.org/birds/> SELECT ?bird ?span WHERE { ?bird a ex:Tern ; ex:wingspanCm ?span } ORDER BY DESC(?span)"),
        ("ask.rq", "ASK { ?s ?p ?o }"),
        ("construct.rq", "PREFIX ex: <http://example.org/birds/> CONSTRUCT { ?b ex:span ?s } WHERE { ?b ex:wingspanCm ?s }"),
        ("broken.rq", "SELECT * WHERE { ?s"),
    ];
    let files: Vec<String> = queries
        .iter()
        .map(|(name, text)| {
            let f = d.join(name);
            fs::write(&f, text).unwrap();
            path(&f).to_owned()
        })
        .collect();
    let json = d.join("out.jsonl");
    let dumps = d.join("dumps");
    let mut args = vec![
        "bench-queries",
        "--index",
        path(&index),
        "--runs",
        "3",
        "--warmup",
        &files[1],
        "--json",
        path(&json),
        "--dump-dir",
        path(&dumps),
    ];
    args.extend(files.iter().map(String::as_str));
    let out = tern(&args);
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(progress.starts_with(&format!("start\twarmup\t0\t{}\n", files[1])));
    assert!(progress.contains(&format!("end\trun\t3\t{}\n", files[0])));

    let records: Vec<Value> = fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 4);
    let [select, ask, construct, broken] = &records[..] else {
        unreachable!()
    };
    assert_eq!(select["kind"], "select");
    assert_eq!(select["variables"], serde_json::json!(["bird", "span"]));
    assert_eq!(select["runs_ms"].as_array().unwrap().len(), 3);
    assert!(select["min_ms"].as_f64().unwrap() <= select["median_ms"].as_f64().unwrap());
    let rows = select["rows"].as_u64().unwrap();
    assert_eq!(rows, 3, "three terns have a wingspan");
    let dump = fs::read_to_string(select["dump"].as_str().unwrap()).unwrap();
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines.len() as u64, rows);
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "dump is sorted");
    assert!(lines
        .iter()
        .all(|l| l.starts_with("<http://example.org/birds/")
            && l.contains("\t\"")
            && l.ends_with("#integer>")));

    assert_eq!(ask["kind"], "ask");
    assert_eq!(ask["rows"], 1);
    assert_eq!(
        fs::read_to_string(ask["dump"].as_str().unwrap()).unwrap(),
        "true\n"
    );
    assert_eq!(construct["kind"], "graph");
    assert_eq!(construct["rows"], 5, "five birds have a wingspan");

    assert!(broken["error"].is_string());
    assert_eq!(broken["timeout"], false);
    assert_eq!(broken["rows"], Value::Null);
    assert!(broken["runs_ms"].as_array().unwrap().is_empty());
}

/// The package's folder: where `cargo test` runs this binary from, not where
/// it was compiled (a build cache shared by clones of the repository may
/// hold a binary compiled in another clone, since deleted).
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
