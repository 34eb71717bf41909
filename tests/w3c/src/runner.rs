//! Running tests: each in its own thread with a timeout and a panic guard, on a
//! fresh index holding its dataset.

use crate::check::{compare_outcome, show_actual, show_expected, top_level_order, Actual, Order};
use crate::entailment::Regime;
use crate::load::{build_index, Dataset};
use crate::manifest::{file_iri, iri_to_path, load_manifest, TestCase, TestKind};
use crate::results::read_expected;
use spargebra::{Query, SparqlParser};
use std::cell::RefCell;
use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use tern_engine::Stash;
use tern_engine::{
    Engine, EngineError, EngineOptions, Execution, Inference, OptionalJoins, QueryOutcome,
    QueryRequest, SavedQuery,
};

/// Results larger than this are not compared (the suites' are tiny).
const MAX_RESULTS: usize = 100_000;

/// A group of manifests reported together.
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: &'static str,
    pub manifest: PathBuf,
    /// The folder of all suites; failure reasons show it as `$W3C`.
    pub root: PathBuf,
    /// The entailment regime queries are answered under: the tests that list
    /// it run, the others are skipped. `None`: simple entailment, and tests
    /// that need an entailment regime are skipped.
    pub regime: Option<Regime>,
}

/// The suites Tern runs, under the test-suite root (`.../w3c-sparql`).
pub fn suites(root: &Path) -> Vec<Suite> {
    [
        ("sparql10-evaluation", "sparql10/manifest-evaluation.ttl"),
        ("sparql10-syntax", "sparql10/manifest-syntax.ttl"),
        ("sparql11-query", "sparql11/manifest-sparql11-query.ttl"),
        ("sparql11-update", "sparql11/manifest-sparql11-update.ttl"),
    ]
    .into_iter()
    .map(|(name, file)| Suite {
        name,
        manifest: root.join(file),
        root: root.to_owned(),
        regime: None,
    })
    .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail(String),
    Skip(&'static str),
}

#[derive(Debug, Clone)]
pub struct TestResult {
    pub id: String,
    pub outcome: Outcome,
}

#[derive(Debug, Clone)]
pub struct SuiteReport {
    pub name: String,
    pub results: Vec<TestResult>,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub timeout: Duration,
    /// Only run tests whose IRI contains this.
    pub filter: Option<String>,
    /// Suspend every query after a random number of results (from this
    /// seed), save its state to bytes, drop it and resume it, over and over.
    pub suspend_seed: Option<u64>,
    /// How the engine evaluates OPTIONAL.
    pub optional_joins: OptionalJoins,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(10),
            filter: None,
            suspend_seed: None,
            optional_joins: OptionalJoins::ByCost,
        }
    }
}

/// How one test is run.
#[derive(Debug, Clone, Copy)]
pub struct TestSettings {
    pub timeout: Duration,
    /// Where to suspend the query, if it is to be suspended (see
    /// [`RunOptions::suspend_seed`]).
    pub suspend_seed: Option<u64>,
    pub optional_joins: OptionalJoins,
    /// The entailment queries are answered under.
    pub inference: Inference,
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            timeout: Duration::from_secs(10),
            suspend_seed: None,
            optional_joins: OptionalJoins::ByCost,
            inference: Inference::None,
        }
    }
}

/// Reads a suite's manifests and runs its tests one after the other. Test IRIs
/// seen before (in this run) are not run again.
pub fn run_suite(
    suite: &Suite,
    options: &RunOptions,
    seen: &mut HashSet<String>,
) -> Result<SuiteReport, String> {
    let tests = load_manifest(&suite.manifest)?;
    let root_iri = file_iri(&suite.root);
    let mut results = Vec::with_capacity(tests.len());
    for test in tests {
        if options
            .filter
            .as_ref()
            .is_some_and(|f| !test.id.contains(f.as_str()))
        {
            continue;
        }
        if !seen.insert(test.id.clone()) {
            continue;
        }
        let outcome = match test.skip_reason_under(suite.regime.map(|r| r.iri)) {
            Some(reason) => Outcome::Skip(reason),
            None => {
                let settings = TestSettings {
                    timeout: options.timeout,
                    suspend_seed: test_seed(options, &test.id),
                    optional_joins: options.optional_joins,
                    inference: suite.regime.map_or(Inference::None, |r| r.inference),
                };
                match run_guarded(test.clone(), settings) {
                    // Keep reasons free of where the suites happen to be.
                    Outcome::Fail(reason) => Outcome::Fail(reason.replace(&root_iri, "$W3C")),
                    other => other,
                }
            }
        };
        results.push(TestResult {
            id: test.id,
            outcome,
        });
    }
    Ok(SuiteReport {
        name: suite.name.to_owned(),
        results,
    })
}

/// A different suspension pattern for every test, the same in every run.
fn test_seed(options: &RunOptions, id: &str) -> Option<u64> {
    let seed = options.suspend_seed?;
    Some(id.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    }))
}

thread_local! {
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with a panic hook that records panics (message and location) for
/// [`run_guarded`] instead of printing them, then restores the previous hook.
pub fn with_quiet_panics<T>(f: impl FnOnce() -> T) -> T {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let message = payload_message(info.payload());
        let text = match info.location() {
            Some(l) => format!("{message} at {}:{}", l.file(), l.line()),
            None => message,
        };
        PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(text));
    }));
    // Restores the previous hook even if `f` panics.
    type Hook = Box<dyn Fn(&panic::PanicHookInfo<'_>) + Sync + Send>;
    struct Restore(Option<Hook>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(previous) = self.0.take() {
                let _ = panic::take_hook();
                panic::set_hook(previous);
            }
        }
    }
    let _restore = Restore(Some(previous));
    f()
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_owned()
    }
}

/// Runs one test in its own thread; a test that panics fails with the panic's
/// message, one that does not answer within `timeout` is abandoned and fails.
pub fn run_guarded(test: TestCase, settings: TestSettings) -> Outcome {
    let timeout = settings.timeout;
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("w3c {}", test.id))
        .spawn(move || {
            let outcome = match panic::catch_unwind(AssertUnwindSafe(|| run_test(&test, settings)))
            {
                Ok(outcome) => outcome,
                Err(payload) => {
                    let message = PANIC_MESSAGE
                        .with(|m| m.borrow_mut().take())
                        .unwrap_or_else(|| payload_message(payload.as_ref()));
                    Outcome::Fail(format!("panic: {message}"))
                }
            };
            let _ = sender.send(outcome);
        });
    if let Err(e) = spawned {
        return Outcome::Fail(format!("cannot start a thread: {e}"));
    }
    // The test's own work may take a little longer than the engine's timeout
    // (loading, comparing): allow some slack before abandoning the thread.
    match receiver.recv_timeout(timeout + Duration::from_secs(2)) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Outcome::Fail(format!("timeout after {:.0} s", timeout.as_secs_f64()))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Fail("test thread died".to_owned()),
    }
}

/// Runs one test (no guard).
pub fn run_test(test: &TestCase, settings: TestSettings) -> Outcome {
    let result = match &test.kind {
        TestKind::PositiveSyntax | TestKind::NegativeSyntax => run_syntax_test(test),
        TestKind::QueryEvaluation => run_evaluation_test(test, settings),
        TestKind::UpdateEvaluation => crate::update::run_update_test(test, settings.timeout),
        TestKind::PositiveUpdateSyntax | TestKind::NegativeUpdateSyntax => {
            crate::update::run_update_syntax_test(test)
        }
        TestKind::CsvResultFormat => return Outcome::Skip("CSV result format"),
        TestKind::Other(_) => return Outcome::Skip("unknown test type"),
    };
    match result {
        Ok(()) => Outcome::Pass,
        Err(reason) => Outcome::Fail(one_line(&reason)),
    }
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 300 {
        let cut: String = flat.chars().take(300).collect();
        format!("{cut}...")
    } else {
        flat
    }
}

/// An engine over a test's index, as the W3C tests expect it: the default
/// graph is the index's default graph alone.
pub(crate) fn test_engine(
    index: tern_index::Index,
    timeout: Duration,
    optional_joins: OptionalJoins,
) -> Engine {
    Engine::of_index(
        Arc::new(index),
        EngineOptions {
            default_graph_is_union: false,
            timeout: Some(timeout),
            optional_joins,
            ..Default::default()
        },
    )
}

pub(crate) fn file_of(iri: &str) -> Result<PathBuf, String> {
    iri_to_path(iri).ok_or_else(|| format!("not a local file: {iri}"))
}

fn read_query(test: &TestCase) -> Result<(String, String), String> {
    let iri = test.query.clone().ok_or("test has no query")?;
    let path = file_of(&iri)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| "query file is not UTF-8".to_owned())?;
    Ok((text, iri))
}

fn parse(text: &str, base: &str) -> Result<Query, String> {
    SparqlParser::new()
        .with_base_iri(base)
        .map_err(|e| e.to_string())?
        .parse_query(text)
        .map_err(|e| e.to_string())
}

fn run_syntax_test(test: &TestCase) -> Result<(), String> {
    let parsed = read_query(test).and_then(|(text, base)| parse(&text, &base));
    match (&test.kind, parsed) {
        (TestKind::PositiveSyntax, Err(e)) => Err(format!("positive syntax test rejected: {e}")),
        (TestKind::NegativeSyntax, Ok(_)) => Err("negative syntax test accepted".to_owned()),
        _ => Ok(()),
    }
}

fn query_error(e: EngineError) -> String {
    match e {
        EngineError::Parse(message) => format!("query parse error: {message}"),
        other => format!("query error: {other}"),
    }
}

/// Collects a query's results while suspending it after 0–2 results at a
/// time: the state goes through its byte form, the running query is dropped
/// and a new one resumes from the state, as a server would between quanta.
fn collect_with_suspensions(
    engine: &Engine,
    text: &str,
    request: &QueryRequest,
    seed: u64,
) -> Result<Actual, String> {
    let stash = Stash::default();
    let mut random = seed | 1;
    let mut next_count = move || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        (random % 3) as usize
    };
    let resume = |saved: SavedQuery| -> Result<Execution, String> {
        let saved = SavedQuery::from_bytes(&saved.to_bytes()).map_err(query_error)?;
        engine
            .resume(text, request, &saved, &stash)
            .map_err(query_error)
    };
    let mut execution = engine.execute(text, request).map_err(query_error)?;
    let mut solutions = Vec::new();
    let mut triples = Vec::new();
    loop {
        if solutions.len() + triples.len() > MAX_RESULTS {
            return Err(format!("more than {MAX_RESULTS} results"));
        }
        let saved = match execution.outcome {
            QueryOutcome::Boolean(b) => return Ok(Actual::Boolean(b)),
            QueryOutcome::Solutions {
                variables,
                mut rows,
            } => {
                for _ in 0..next_count() {
                    match rows.next() {
                        Some(row) => solutions.push(row.map_err(query_error)?),
                        None => {
                            return Ok(Actual::Solutions {
                                variables,
                                rows: solutions,
                            })
                        }
                    }
                }
                let (decoded, saved) = rows.suspend(&stash).map_err(query_error)?;
                solutions.extend(decoded);
                saved
            }
            QueryOutcome::Graph(mut stream) => {
                for _ in 0..next_count() {
                    match stream.next() {
                        Some(triple) => triples.push(triple.map_err(query_error)?),
                        None => return Ok(Actual::Graph(triples)),
                    }
                }
                let (made, saved) = stream.suspend(&stash).map_err(query_error)?;
                triples.extend(made);
                saved
            }
        };
        execution = resume(saved)?;
    }
}

fn run_evaluation_test(test: &TestCase, settings: TestSettings) -> Result<(), String> {
    let (text, base) = read_query(test)?;
    // The parsed query tells the dataset (FROM), the form and the order; if it
    // does not parse, the engine reports that below.
    let parsed = parse(&text, &base).ok();

    let mut dataset = Dataset::default();
    for iri in &test.data {
        dataset.default.push(file_of(iri)?);
    }
    for (name, iri) in &test.graph_data {
        dataset.add_named(name.clone(), file_of(iri)?);
    }
    // FROM and FROM NAMED name files: make them available as named graphs under
    // their IRIs; the engine builds the query's dataset from those.
    if let Some(query_dataset) = parsed.as_ref().and_then(Query::dataset) {
        let named = query_dataset.named.iter().flatten();
        for graph in query_dataset.default.iter().chain(named) {
            if let Some(path) = iri_to_path(graph.as_str()).filter(|p| p.is_file()) {
                dataset.add_named(graph.as_str().to_owned(), path);
            }
        }
    }
    let work = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let index = build_index(work.path(), &dataset)?;
    let engine = test_engine(index, settings.timeout, settings.optional_joins);
    let request = QueryRequest {
        base_iri: Some(base),
        inference: Some(settings.inference),
        ..QueryRequest::default()
    };
    let actual = match settings.suspend_seed {
        None => collect(
            engine
                .execute(&text, &request)
                .map_err(query_error)?
                .outcome,
        )?,
        Some(seed) => collect_with_suspensions(&engine, &text, &request, seed)?,
    };

    let wants_graph = matches!(
        parsed,
        Some(Query::Construct { .. } | Query::Describe { .. })
    );
    let result_iri = test.result.as_deref().ok_or("test has no result")?;
    let expected = read_expected(&file_of(result_iri)?, wants_graph)
        .map_err(|e| format!("cannot read expected result: {e}"))?;
    let order = parsed.as_ref().map_or(Order::None, top_level_order);
    let dump = std::env::var_os("TERN_W3C_DEBUG").is_some().then(|| {
        format!(
            "expected:\n{}actual:\n{}",
            show_expected(&expected),
            show_actual(&actual)
        )
    });
    let result = compare_outcome(expected, actual, &order, test.lax_cardinality);
    if let (Err(_), Some(dump)) = (&result, dump) {
        println!("--- {}\n{}", test.id, dump);
    }
    result
}

fn collect(outcome: QueryOutcome) -> Result<Actual, String> {
    Ok(match outcome {
        QueryOutcome::Boolean(b) => Actual::Boolean(b),
        QueryOutcome::Solutions { variables, rows } => {
            let mut collected = Vec::new();
            for row in rows {
                collected.push(row.map_err(|e| format!("query error: {e}"))?);
                if collected.len() > MAX_RESULTS {
                    return Err(format!("more than {MAX_RESULTS} solutions"));
                }
            }
            Actual::Solutions {
                variables,
                rows: collected,
            }
        }
        QueryOutcome::Graph(triples) => {
            let mut collected = Vec::new();
            for triple in triples {
                collected.push(triple.map_err(|e| format!("query error: {e}"))?);
                if collected.len() > MAX_RESULTS {
                    return Err(format!("more than {MAX_RESULTS} triples"));
                }
            }
            Actual::Graph(collected)
        }
    })
}
