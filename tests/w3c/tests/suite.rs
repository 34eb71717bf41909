//! Runs the W3C SPARQL 1.0 and 1.1 query test suites and checks the failures
//! against `known-failures.txt`, and the SPARQL 1.1 entailment tests of the
//! RDFS regime against `known-failures-entailment.txt`.
//!
//! - `TERN_W3C_DIR`: the suites' folder (default `<repo>/../shared/w3c-sparql`);
//! - `TERN_W3C_UPDATE=1`: rewrite the known-failures files from this run
//!   (the entailment file keeps the reasons of the tests it lists);
//! - `TERN_W3C_FILTER=text`: run only the tests whose IRI contains `text`, and
//!   print each failure;
//! - `TERN_W3C_TIMEOUT=seconds`: per-test timeout (default 10);
//! - `TERN_W3C_DEBUG=1`: print expected and actual results of failing tests;
//! - `TERN_W3C_SEED=n`: where the suspension test suspends queries.
//!
//! `cargo test -p tern-w3c --test suite -- --nocapture` shows the summary.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tern_engine::OptionalJoins;
use tern_w3c::entailment::entailment_suites;
use tern_w3c::report::{check_known, parse_known, render_known, render_known_keeping, summary};
use tern_w3c::runner::{
    run_suite, suites, with_quiet_panics, Outcome, RunOptions, Suite, SuiteReport,
};

fn suite_root() -> PathBuf {
    match std::env::var_os("TERN_W3C_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir().join("../../../shared/w3c-sparql"),
    }
}

/// Suites checked against one known-failures file.
struct Group {
    suites: Vec<Suite>,
    /// The file, in the package's folder.
    known_failures: &'static str,
    /// Whether a regeneration keeps the reasons the file gives (hand-written
    /// ones) rather than writing the failure messages.
    keeps_reasons: bool,
}

impl Group {
    fn known_failures_file(&self) -> PathBuf {
        manifest_dir().join(self.known_failures)
    }

    fn known(&self) -> BTreeMap<String, String> {
        parse_known(&std::fs::read_to_string(self.known_failures_file()).unwrap_or_default())
    }
}

/// The query and update suites, run under simple entailment.
fn sparql_group() -> Option<Group> {
    Some(Group {
        suites: available(suites(&suite_root()))?,
        known_failures: "known-failures.txt",
        keeps_reasons: false,
    })
}

/// The entailment tests of the regimes Tern answers (RDFS).
fn entailment_group() -> Option<Group> {
    Some(Group {
        suites: available(entailment_suites(&suite_root()))?,
        known_failures: "known-failures-entailment.txt",
        keeps_reasons: true,
    })
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The suites, or `None` (after saying why) when they are missing outside CI.
fn available(all: Vec<Suite>) -> Option<Vec<Suite>> {
    let root = suite_root();
    if let Some(missing) = all.iter().find(|s| !s.manifest.is_file()) {
        let message = format!(
            "W3C SPARQL test suite not found ({} is missing).\n\
             Get it from the public w3c/rdf-tests repository: copy its folder sparql/ \
             (with sparql10/ and sparql11/) to {} or point TERN_W3C_DIR at such a folder.",
            missing.manifest.display(),
            root.display()
        );
        if std::env::var_os("CI").is_some() {
            panic!("{message}");
        }
        println!("{message}\nSkipping the W3C suites.");
        return None;
    }
    Some(all)
}

fn run_options(suspend_seed: Option<u64>, optional_joins: OptionalJoins) -> RunOptions {
    let filter = std::env::var("TERN_W3C_FILTER")
        .ok()
        .filter(|f| !f.is_empty());
    let timeout = std::env::var("TERN_W3C_TIMEOUT")
        .ok()
        .and_then(|t| t.parse().ok())
        .map_or(Duration::from_secs(10), Duration::from_secs_f64);
    RunOptions {
        timeout,
        filter,
        suspend_seed,
        optional_joins,
    }
}

fn run_all(all: &[Suite], options: &RunOptions) -> Vec<SuiteReport> {
    let started = Instant::now();
    let mut seen = HashSet::new();
    let runs: Vec<_> = with_quiet_panics(|| {
        all.iter()
            .map(|suite| run_suite(suite, options, &mut seen))
            .collect()
    });
    let reports: Vec<_> = runs
        .into_iter()
        .zip(all)
        .map(|(run, suite)| {
            run.unwrap_or_else(|e| panic!("cannot read {}: {e}", suite.manifest.display()))
        })
        .collect();
    println!("{}", summary(&reports, started.elapsed().as_secs_f64()));
    if options.filter.is_some() {
        for r in reports.iter().flat_map(|r| &r.results) {
            if let Outcome::Fail(reason) = &r.outcome {
                println!("FAIL {} {reason}", r.id);
            }
        }
    }
    reports
}

/// Every query that passes also passes when it is suspended after every
/// few results, saved to bytes, dropped and resumed (DESIGN.md, Preemption).
#[test]
fn w3c_results_survive_suspension() {
    let seed = std::env::var("TERN_W3C_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122);
    println!("suspending every query after 0-2 results (TERN_W3C_SEED={seed})");
    passes_as_plainly(Some(seed), OptionalJoins::ByCost, "WHEN SUSPENDED");
}

/// The suites' data are small, so OPTIONAL is evaluated as one join almost
/// everywhere; every query that passes also passes with OPTIONAL evaluated
/// per left row wherever that is exact, also when suspended and resumed.
#[test]
fn w3c_results_with_optional_per_left_row() {
    passes_as_plainly(None, OptionalJoins::PerRow, "WITH OPTIONAL PER ROW");
    passes_as_plainly(
        Some(20261123),
        OptionalJoins::PerRow,
        "WITH OPTIONAL PER ROW, SUSPENDED",
    );
}

/// Runs the suites in another way and fails on tests that fail only that way.
fn passes_as_plainly(suspend_seed: Option<u64>, optional_joins: OptionalJoins, way: &str) {
    let mut regressions = 0;
    for group in [sparql_group(), entailment_group()].into_iter().flatten() {
        let reports = run_all(&group.suites, &run_options(suspend_seed, optional_joins));
        let check = check_known(&reports, &group.known(), true);
        for (iri, reason) in &check.regressions {
            println!("  FAILS ONLY {way}: {iri} {reason}");
        }
        regressions += check.regressions.len();
    }
    assert!(
        regressions == 0,
        "{regressions} queries give other results {way}"
    );
}

#[test]
fn w3c_sparql_suites() {
    if let Some(group) = sparql_group() {
        passes_as_listed(&group);
    }
}

/// The SPARQL 1.1 entailment tests that list the RDFS regime, run under
/// Tern's RDFS inference.
#[test]
fn w3c_entailment_rdfs() {
    if let Some(group) = entailment_group() {
        passes_as_listed(&group);
    }
}

/// Runs a group's suites and fails on a failure its known-failures file
/// does not list, and on a listed test that passes or did not run.
fn passes_as_listed(group: &Group) {
    let options = run_options(None, OptionalJoins::ByCost);
    let filter = options.filter.clone();
    let reports = run_all(&group.suites, &options);

    let path = group.known_failures_file();
    let file = group.known_failures;
    if env_set("TERN_W3C_UPDATE") {
        assert!(
            filter.is_none(),
            "TERN_W3C_UPDATE needs a full run (unset TERN_W3C_FILTER)"
        );
        let text = if group.keeps_reasons {
            render_known_keeping(
                &reports,
                &std::fs::read_to_string(&path).unwrap_or_default(),
            )
        } else {
            render_known(&reports)
        };
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {file}: {e}"));
        println!("wrote {}", path.display());
        return;
    }
    let check = check_known(&reports, &group.known(), filter.is_some());
    if !check.regressions.is_empty() {
        println!("\nNEW FAILURES (not in {file}):");
        for (iri, reason) in &check.regressions {
            println!("  {iri} {reason}");
        }
    }
    if !check.fixed.is_empty() {
        println!("\nNOW PASSING: remove these lines from {file}:");
        for iri in &check.fixed {
            println!("  {iri}");
        }
    }
    if !check.stale.is_empty() {
        println!("\nLISTED BUT NOT RUN (skipped or gone): remove these lines from {file}:");
        for iri in &check.stale {
            println!("  {iri}");
        }
    }
    assert!(
        check.is_ok(),
        "{} new failures, {} listed tests now pass, {} listed tests did not run \
         (see above; TERN_W3C_UPDATE=1 rewrites {file})",
        check.regressions.len(),
        check.fixed.len(),
        check.stale.len()
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
