//! `tern bench-queries`: query latency measured inside one long-lived process.
//!
//! The index is opened once; each query file then runs `--runs` times in a row
//! (after the `--warmup` files, each run once and not measured). A run is timed
//! from handing the text to the engine (so parsing and planning count) until
//! its last result is drained and decoded to a term.
//!
//! Output, written and flushed query by query so that a harness that kills a
//! stuck process keeps what was measured before it:
//! - `--json OUT`: JSON Lines, one object per query file (see [`Record`]);
//! - stderr: `start<TAB>warmup|run<TAB>N<TAB>FILE` before each execution and
//!   `end<TAB>...` after it, so a harness can see which query is running;
//! - `--dump-dir DIR`: the results of each query's first run, one line per row
//!   (terms in N-Triples syntax separated by tabs, empty for unbound; triples
//!   as `s p o`; ASK as `true`/`false`), sorted, so that engines can be
//!   compared.

use crate::duration::parse_duration;
use anyhow::{Context, Result};
use clap::Args;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tern_engine::{Engine, EngineError, EngineOptions, QueryOutcome};

#[derive(Args)]
pub struct BenchQueriesArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Measured runs per query file.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// A query run once, unmeasured, before the measured ones (repeat for several).
    #[arg(long, value_name = "FILE")]
    warmup: Vec<PathBuf>,
    /// Stop each execution after this many seconds; the query's remaining runs are skipped.
    #[arg(long, value_name = "SECS", value_parser = parse_duration)]
    timeout: Option<Duration>,
    #[command(flatten)]
    cache: crate::cache::CacheArgs,
    /// Where the per-query records go (JSON Lines).
    #[arg(long, value_name = "OUT")]
    json: PathBuf,
    /// Write each query's results (first run) to DIR/NNNNN.tsv, rows sorted.
    #[arg(long, value_name = "DIR")]
    dump_dir: Option<PathBuf>,
    /// The query files to measure.
    #[arg(required = true, value_name = "QUERYFILE")]
    queries: Vec<PathBuf>,
}

/// One line of the `--json` output.
struct Record {
    /// The query file as given on the command line.
    file: String,
    /// Its file name.
    name: String,
    /// `select`, `ask` or `graph` (CONSTRUCT, DESCRIBE); absent if it never ran.
    kind: Option<&'static str>,
    /// SELECT's variables, in the order of the dumped columns.
    variables: Option<Vec<String>>,
    /// Latency of each completed run, in milliseconds.
    runs_ms: Vec<f64>,
    median_ms: Option<f64>,
    min_ms: Option<f64>,
    /// Solutions, triples, or 1 for ASK (of the first run).
    rows: Option<u64>,
    /// Set when a run returned another number of rows than the first.
    rows_per_run: Option<Vec<u64>>,
    /// The error that stopped the query (its later runs were skipped).
    error: Option<String>,
    timeout: bool,
    /// The result dump, with `--dump-dir`.
    dump: Option<String>,
}

impl Record {
    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "file": self.file,
            "name": self.name,
            "kind": self.kind,
            "variables": self.variables,
            "runs_ms": self.runs_ms,
            "median_ms": self.median_ms,
            "min_ms": self.min_ms,
            "rows": self.rows,
            "rows_per_run": self.rows_per_run,
            "error": self.error,
            "timeout": self.timeout,
            "dump": self.dump,
        })
    }
}

/// What one execution produced.
struct Outcome {
    kind: &'static str,
    variables: Option<Vec<String>>,
    rows: u64,
    /// The decoded results, kept only when they are to be dumped.
    lines: Option<Vec<String>>,
}

pub fn run(args: BenchQueriesArgs) -> Result<()> {
    let store = crate::store::open_read_only(&args.index, Some(args.cache))?;
    let engine = Engine::new(
        store,
        EngineOptions {
            timeout: args.timeout,
            ..EngineOptions::default()
        },
    );
    if let Some(dir) = &args.dump_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    }
    let mut out = BufWriter::new(
        File::create(&args.json).with_context(|| format!("{}", args.json.display()))?,
    );
    for path in &args.warmup {
        let text = read(path)?;
        progress("start", "warmup", 0, path);
        // A warm-up query that fails is not this command's business: the
        // same file, if measured, reports its error in its record.
        let _ = execute(&engine, &text, false);
        progress("end", "warmup", 0, path);
    }
    for (i, path) in args.queries.iter().enumerate() {
        let dump = args
            .dump_dir
            .as_ref()
            .map(|dir| dir.join(format!("{i:05}.tsv")));
        let record = measure(&engine, path, args.runs, dump)?;
        serde_json::to_writer(&mut out, &record.to_json())?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

fn measure(engine: &Engine, path: &Path, runs: usize, dump: Option<PathBuf>) -> Result<Record> {
    let text = read(path)?;
    let mut record = Record {
        file: path.display().to_string(),
        name: path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        kind: None,
        variables: None,
        runs_ms: Vec::with_capacity(runs),
        median_ms: None,
        min_ms: None,
        rows: None,
        rows_per_run: None,
        error: None,
        timeout: false,
        dump: None,
    };
    let mut rows_per_run = Vec::with_capacity(runs);
    for run in 1..=runs {
        progress("start", "run", run, path);
        let result = execute(engine, &text, run == 1 && dump.is_some());
        progress("end", "run", run, path);
        match result {
            Ok((elapsed, outcome)) => {
                record.runs_ms.push(elapsed.as_secs_f64() * 1e3);
                record.kind = Some(outcome.kind);
                record.variables = outcome.variables;
                rows_per_run.push(outcome.rows);
                if let (Some(mut lines), Some(dump)) = (outcome.lines, &dump) {
                    lines.sort_unstable();
                    write_lines(dump, &lines)?;
                    record.dump = Some(dump.display().to_string());
                }
            }
            Err(e) => {
                record.timeout = matches!(e, EngineError::Timeout { .. });
                record.error = Some(e.to_string());
                break;
            }
        }
    }
    record.rows = rows_per_run.first().copied();
    if rows_per_run.iter().any(|&n| Some(n) != record.rows) {
        record.rows_per_run = Some(rows_per_run);
    }
    if !record.runs_ms.is_empty() {
        let mut sorted = record.runs_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        record.median_ms = Some(if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        });
        record.min_ms = Some(sorted[0]);
    }
    Ok(record)
}

/// Runs one query and drains its results, returning how long that took; with
/// `keep`, also returns them as lines (made after the clock is stopped).
fn execute(engine: &Engine, text: &str, keep: bool) -> Result<(Duration, Outcome), EngineError> {
    let started = Instant::now();
    let mut variables = None;
    let (elapsed, kind, rows, lines) = match engine.query(text, None)? {
        QueryOutcome::Solutions {
            variables: names,
            rows,
        } => {
            variables = Some(names.iter().map(|v| v.as_str().to_owned()).collect());
            let mut kept = Vec::new();
            let mut n = 0u64;
            for row in rows {
                let row = row?;
                n += 1;
                if keep {
                    kept.push(row);
                }
            }
            let elapsed = started.elapsed();
            let lines = keep.then(|| {
                kept.iter()
                    .map(|row| {
                        let cells: Vec<String> = row
                            .iter()
                            .map(|t| t.as_ref().map_or_else(String::new, |t| t.to_string()))
                            .collect();
                        cells.join("\t")
                    })
                    .collect()
            });
            (elapsed, "select", n, lines)
        }
        QueryOutcome::Boolean(value) => {
            let elapsed = started.elapsed();
            (elapsed, "ask", 1, keep.then(|| vec![value.to_string()]))
        }
        QueryOutcome::Graph(triples) => {
            let mut kept = Vec::new();
            let mut n = 0u64;
            for triple in triples {
                let triple = triple?;
                n += 1;
                if keep {
                    kept.push(triple);
                }
            }
            let elapsed = started.elapsed();
            let lines = keep.then(|| kept.iter().map(|t| t.to_string()).collect());
            (elapsed, "graph", n, lines)
        }
    };
    Ok((
        elapsed,
        Outcome {
            kind,
            variables,
            rows,
            lines,
        },
    ))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))
}

fn write_lines(path: &Path, lines: &[String]) -> Result<()> {
    let mut w = BufWriter::new(File::create(path).with_context(|| format!("{}", path.display()))?);
    for line in lines {
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

fn progress(event: &str, phase: &str, run: usize, path: &Path) {
    eprintln!("{event}\t{phase}\t{run}\t{}", path.display());
}
