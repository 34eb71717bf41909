//! The store against a model: random interleavings of inserts and deletes,
//! committed in random groups, give the same quads, scans and counts as a
//! set of quads does; so does the store reopened from its log, and after a
//! compaction. Snapshots taken along the way keep their data.

mod common;

use oxrdf::{GraphName, Literal, NamedNode, Quad, Term};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use tern_index::{Id, Permutation, ScanRange, Snapshot, Store, StoreOptions};

fn iri(i: u8) -> NamedNode {
    NamedNode::new_unchecked(format!("http://e.org/t{i}"))
}

/// A small universe, half of it in the base, so updates hit base terms,
/// new terms, inline values and both graphs.
fn quad(s: u8, p: u8, o: u8, g: bool) -> Quad {
    let object: Term = match o % 3 {
        0 => iri(o).into(),
        1 => Literal::from(i64::from(o)).into(),
        _ => Literal::new_simple_literal(format!("text {o}")).into(),
    };
    let graph = if g {
        GraphName::NamedNode(iri(200))
    } else {
        GraphName::DefaultGraph
    };
    Quad::new(iri(s), iri(100 + p), object, graph)
}

fn base_quads() -> Vec<Quad> {
    let mut quads = Vec::new();
    for s in 0..6 {
        for p in 0..2 {
            quads.push(quad(s, p, s + p, s % 3 == 0));
        }
    }
    quads
}

fn make_store(dir: &std::path::Path) -> Arc<Store> {
    let nq: String = base_quads().iter().map(|q| format!("{q} .\n")).collect();
    open(&common::build_from_texts(dir, &[("base.nq", &nq)]))
}

fn open(index: &std::path::Path) -> Arc<Store> {
    let options = StoreOptions {
        compact_after: 0,
        ..StoreOptions::default()
    };
    Store::open(index, true, options).unwrap()
}

/// Every quad of a snapshot, as text, with the scans of all permutations
/// and the counts of some prefixes checked against the model.
fn check(snapshot: &Snapshot, model: &BTreeSet<String>) {
    let mut seen = BTreeSet::new();
    for perm in Permutation::ALL {
        let mut rows = Vec::new();
        for batch in snapshot.scan(perm, &[], ScanRange::ALL) {
            let batch = batch.unwrap();
            for i in 0..batch.len() {
                rows.push(batch.row(i));
            }
        }
        assert!(rows.windows(2).all(|w| w[0] < w[1]), "{perm:?} sorted");
        assert_eq!(rows.len(), model.len(), "{perm:?} rows");
        assert_eq!(
            snapshot.count(perm, &[], ScanRange::ALL).unwrap(),
            model.len() as u64
        );
        if perm == Permutation::Spo {
            for row in &rows {
                let terms = snapshot
                    .terms_of(&row.map(Id))
                    .unwrap()
                    .into_iter()
                    .map(|t| t.map(|t| t.to_string()))
                    .collect::<Vec<_>>();
                let g = match &terms[3] {
                    Some(g) => format!(" {g}"),
                    None => String::new(),
                };
                seen.insert(format!(
                    "{} {} {}{g}",
                    terms[0].clone().unwrap(),
                    terms[1].clone().unwrap(),
                    terms[2].clone().unwrap()
                ));
            }
            // Prefix counts and lookups agree with the scan.
            for row in rows.iter().step_by(3) {
                let prefix = [Id(row[0]), Id(row[1])];
                let expected = rows
                    .iter()
                    .filter(|r| r[0] == row[0] && r[1] == row[1])
                    .count();
                assert_eq!(
                    snapshot.count(perm, &prefix, ScanRange::ALL).unwrap(),
                    expected as u64
                );
                let mut found = 0;
                let mut lookup = snapshot.lookup(perm);
                lookup
                    .rows(
                        [row[0], row[1], 0, 0],
                        [row[0], row[1], u64::MAX, u64::MAX],
                        |_| found += 1,
                    )
                    .unwrap();
                assert_eq!(found, expected);
            }
        }
    }
    assert_eq!(&seen, model);
    let predicates: u64 = snapshot.stats().predicates.iter().map(|p| p.triples).sum();
    assert_eq!(predicates, model.len() as u64);
}

fn text(q: &Quad) -> String {
    let s = q.to_string();
    s.strip_suffix(" .").unwrap_or(&s).to_owned()
}

#[derive(Debug, Clone)]
struct Step {
    insert: bool,
    quad: (u8, u8, u8, bool),
    commit_after: bool,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (any::<bool>(), 0u8..9, 0u8..3, 0u8..9, any::<bool>(), 0u8..4).prop_map(
            |(insert, s, p, o, g, c)| Step {
                insert,
                quad: (s, p, o, g),
                commit_after: c == 0,
            },
        ),
        1..60,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn store_matches_a_set_of_quads(steps in steps()) {
        let dir = tempfile::tempdir().unwrap();
        let store = make_store(dir.path());
        let mut model: BTreeSet<String> = base_quads().iter().map(text).collect();
        let mut history: Vec<(Snapshot, BTreeSet<String>)> = Vec::new();
        let mut tx = store.begin().unwrap();
        let mut tx_model = model.clone();
        for step in &steps {
            let (s, p, o, g) = step.quad;
            let q = quad(s, p, o, g);
            let changed = if step.insert {
                tx.insert(q.as_ref()).unwrap()
            } else {
                tx.delete(q.as_ref()).unwrap()
            };
            let model_changed = if step.insert {
                tx_model.insert(text(&q))
            } else {
                tx_model.remove(&text(&q))
            };
            prop_assert_eq!(changed, model_changed);
            if step.commit_after {
                check(&tx.snapshot(), &tx_model);
                tx.commit().unwrap();
                model = tx_model.clone();
                history.push((store.snapshot(), model.clone()));
                tx = store.begin().unwrap();
            }
        }
        drop(tx); // not committed: changes nothing
        check(&store.snapshot(), &model);
        for (snapshot, expected) in &history {
            check(snapshot, expected);
        }
        drop(store);
        let index = dir.path().join("index");
        let reopened = open(&index);
        check(&reopened.snapshot(), &model);
        let pending = reopened.snapshot();
        let had_delta = pending.delta_changes() > 0 || pending.delta_terms() > 0;
        let report = reopened.compact().unwrap();
        prop_assert_eq!(report.is_some(), had_delta);
        check(&reopened.snapshot(), &model);
        prop_assert_eq!(reopened.snapshot().delta_changes(), 0);
        for (snapshot, expected) in &history {
            check(snapshot, expected);
        }
        // Updates after the compaction, then a reopen: replayed on the new base.
        let mut tx = reopened.begin().unwrap();
        let extra = quad(7, 1, 2, true);
        tx.insert(extra.as_ref()).unwrap();
        tx.commit().unwrap();
        model.insert(text(&extra));
        drop(reopened);
        check(&open(&index).snapshot(), &model);
    }
}

#[test]
fn blank_nodes_are_fresh_and_survive_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = make_store(dir.path());
    let mut tx = store.begin().unwrap();
    let b = tx.new_blank_node();
    let q = Quad::new(b.clone(), iri(100), iri(1), GraphName::DefaultGraph);
    assert!(tx.insert(q.as_ref()).unwrap());
    tx.commit().unwrap();
    let before = store.snapshot();
    let id = before.id_of(b.as_ref().into()).unwrap().expect("known");
    store.compact().unwrap().expect("compacted");
    let after = store.snapshot();
    assert_eq!(after.id_of(b.as_ref().into()).unwrap(), Some(id));
    let mut tx = store.begin().unwrap();
    let fresh = tx.new_blank_node();
    assert_ne!(fresh, b);
    assert!(tx.delete(q.as_ref()).unwrap());
    tx.commit().unwrap();
    assert_eq!(
        store
            .snapshot()
            .count(Permutation::Spo, &[id], ScanRange::ALL)
            .unwrap(),
        0
    );
    assert_eq!(
        before
            .count(Permutation::Spo, &[id], ScanRange::ALL)
            .unwrap(),
        1
    );
}

#[test]
fn a_scan_resumed_after_a_row_skips_the_changes_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = make_store(dir.path());
    let mut tx = store.begin().unwrap();
    for s in [1u8, 3, 5] {
        tx.insert(quad(s, 1, 9, false).as_ref()).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = store.begin().unwrap();
    tx.insert(quad(2, 1, 8, false).as_ref()).unwrap();
    tx.delete(quad(0, 0, 0, false).as_ref()).unwrap();
    tx.commit().unwrap();
    let snapshot = store.snapshot();
    for perm in Permutation::ALL {
        let all: Vec<[u64; 4]> = snapshot
            .scan(perm, &[], ScanRange::ALL)
            .flat_map(|b| {
                let b = b.unwrap();
                (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
            })
            .collect();
        for cut in 0..all.len() {
            let mut scan = snapshot.scan(perm, &[], ScanRange::ALL);
            scan.resume_after(all[cut]);
            let rest: Vec<[u64; 4]> = scan
                .flat_map(|b| {
                    let b = b.unwrap();
                    (0..b.len()).map(move |i| b.row(i)).collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(rest, all[cut + 1..], "{perm:?} after row {cut}");
        }
    }
}

#[test]
fn large_runs_are_merged_in_the_background_with_the_data_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = make_store(dir.path());
    // Two commits, each more than half the largest merge a commit makes:
    // their runs are merged by the run merger, not by the second commit.
    let each = tern_index::delta::COMMIT_MERGE_LIMIT / 2 + 10;
    for batch in 0..2 {
        let mut tx = store.begin().unwrap();
        for i in 0..each {
            let s = NamedNode::new_unchecked(format!("http://e.org/many/{batch}/{i}"));
            let q = Quad::new(s, iri(100), iri(1), GraphName::DefaultGraph);
            assert!(tx.insert(q.as_ref()).unwrap());
        }
        tx.commit().unwrap();
    }
    let version = store.snapshot().version();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while store.status().delta_runs > 1 {
        assert!(std::time::Instant::now() < deadline, "runs never merged");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let snapshot = store.snapshot();
    assert_eq!(snapshot.version(), version, "a merge is not an update");
    let p = snapshot
        .id_of(iri(100).as_ref().into())
        .unwrap()
        .expect("known");
    let base_with_p = base_quads()
        .iter()
        .filter(|q| q.predicate == iri(100))
        .count();
    assert_eq!(
        snapshot
            .count(Permutation::Pos, &[p], ScanRange::ALL)
            .unwrap(),
        (2 * each + base_with_p) as u64
    );
}
