//! SPARQL 1.1 Update tests: the update runs on a store over a fresh index of
//! the test's dataset (its changes stay in the store's delta, in memory), and
//! the store's quads afterwards must be the expected dataset, up to blank
//! node renaming.

use crate::compare::{multiset_isomorphic, Row};
use crate::load::{build_index, Dataset};
use crate::manifest::{TestCase, TestKind};
use crate::results::read_graph_file;
use crate::runner::{file_of, test_engine};
use oxrdf::{NamedNode, Term};
use std::time::Duration;
use tern_engine::{OptionalJoins, UpdateRequest};
use tern_index::{Id, Permutation, ScanRange, Snapshot};

fn read_text(iri: &str) -> Result<String, String> {
    let path = file_of(iri)?;
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn run_update_syntax_test(test: &TestCase) -> Result<(), String> {
    let iri = test.query.clone().ok_or("test has no update")?;
    let parsed = read_text(&iri).and_then(|text| {
        tern_engine::parse_update(&text, Some(&iri), &[]).map_err(|e| e.to_string())
    });
    match (&test.kind, parsed) {
        (TestKind::PositiveUpdateSyntax, Err(e)) => {
            Err(format!("positive update syntax test rejected: {e}"))
        }
        (TestKind::NegativeUpdateSyntax, Ok(_)) => {
            Err("negative update syntax test accepted".to_owned())
        }
        _ => Ok(()),
    }
}

pub fn run_update_test(test: &TestCase, timeout: Duration) -> Result<(), String> {
    let iri = test.update.clone().ok_or("test has no ut:request")?;
    let text = read_text(&iri)?;
    let dataset = dataset(&test.data, &test.graph_data)?;
    let work = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let index = build_index(work.path(), &dataset)?;
    let engine = test_engine(index, timeout, OptionalJoins::ByCost);
    let request = UpdateRequest {
        base_iri: Some(iri.clone()),
        ..UpdateRequest::default()
    };
    engine
        .update(&text, &request)
        .map_err(|e| format!("update error: {e}"))?;
    let actual = quads(&engine.snapshot())?;
    let expected = expected_quads(test)?;
    if multiset_isomorphic(&expected, &actual) {
        return Ok(());
    }
    Err(format!(
        "wrong store after the update: expected {} quads, got {}",
        expected.len(),
        actual.len()
    ))
}

fn dataset(default: &[String], named: &[(String, String)]) -> Result<Dataset, String> {
    let mut dataset = Dataset::default();
    for iri in default {
        dataset.default.push(file_of(iri)?);
    }
    for (name, iri) in named {
        dataset.add_named(name.clone(), file_of(iri)?);
    }
    Ok(dataset)
}

/// Every quad of a snapshot as `[s, p, o, g]` terms (`g` unbound for the
/// default graph).
fn quads(snapshot: &Snapshot) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for batch in snapshot.scan(Permutation::Spo, &[], ScanRange::ALL) {
        let batch = batch.map_err(|e| e.to_string())?;
        for i in 0..batch.len() {
            let ids: Vec<Id> = (0..4).map(|c| batch.columns[c][i]).collect();
            rows.push(snapshot.terms_of(&ids).map_err(|e| e.to_string())?);
        }
    }
    Ok(rows)
}

fn expected_quads(test: &TestCase) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let mut add = |iri: &str, graph: Option<Term>| -> Result<(), String> {
        for t in read_graph_file(&file_of(iri)?)? {
            rows.push(vec![
                Some(t.subject.into()),
                Some(t.predicate.into()),
                Some(t.object),
                graph.clone(),
            ]);
        }
        Ok(())
    };
    for iri in &test.result_data {
        add(iri, None)?;
    }
    for (name, iri) in &test.result_graph_data {
        let graph = NamedNode::new(name.as_str()).map_err(|e| e.to_string())?;
        add(iri, Some(graph.into()))?;
    }
    // A file listed twice is one graph's triples, once.
    rows.sort_by_key(|r| format!("{r:?}"));
    rows.dedup();
    Ok(rows)
}
