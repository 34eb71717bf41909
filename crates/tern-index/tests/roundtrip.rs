//! Load → scan every permutation → the quads are exactly the input quads.

mod common;

use oxrdf::{GraphName, NamedOrBlankNode, Quad, Term};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tern_index::{Id, Index, Permutation, ScanRange};

fn long_literal() -> String {
    "lorem ipsum \\\"quoted\\\" dolor ".repeat(5_000)
}

/// Triples and quads with everything the vocabulary and inline IDs must keep.
fn sample_nquads() -> String {
    let xsd = "http://www.w3.org/2001/XMLSchema#";
    let mut s = String::new();
    let literals = [
        "\"plain\"".to_owned(),
        "\"\"".to_owned(),
        "\"chat\"@fr".to_owned(),
        "\"colour\"@en-GB".to_owned(),
        "\"caf\\u00E9 \\U0001F600 tab\\tnl\\n\"".to_owned(),
        "\"nul\\u0000one\\u0001end\"@en".to_owned(),
        format!("\"{}\"", long_literal()),
        format!("\"42\"^^<{xsd}integer>"),
        format!("\"01\"^^<{xsd}integer>"),
        format!("\"+7\"^^<{xsd}integer>"),
        format!("\"-0\"^^<{xsd}integer>"),
        format!("\"123456789012345678901234567890\"^^<{xsd}integer>"),
        format!("\"1.50\"^^<{xsd}decimal>"),
        format!("\"1.5\"^^<{xsd}decimal>"),
        format!("\".5\"^^<{xsd}decimal>"),
        format!("\"1.0E0\"^^<{xsd}double>"),
        format!("\"1e0\"^^<{xsd}double>"),
        format!("\"0.1\"^^<{xsd}double>"),
        format!("\"NaN\"^^<{xsd}double>"),
        format!("\"true\"^^<{xsd}boolean>"),
        format!("\"1\"^^<{xsd}boolean>"),
        format!("\"2008-06-20\"^^<{xsd}date>"),
        format!("\"2008-06-20+02:00\"^^<{xsd}date>"),
        format!("\"2008-06-20T12:00:00\"^^<{xsd}dateTime>"),
        format!("\"2008-06-20T12:00:00Z\"^^<{xsd}dateTime>"),
        format!("\"2008-06-20T12:00:00.250-05:00\"^^<{xsd}dateTime>"),
        format!("\"2008-06-20T12:00:00+00:00\"^^<{xsd}dateTime>"),
        format!("\"not a date\"^^<{xsd}date>"),
        "\"typed\"^^<http://example.org/custom>".to_owned(),
        format!("\"explicit string\"^^<{xsd}string>"),
    ];
    for (i, o) in literals.iter().enumerate() {
        s.push_str(&format!(
            "<http://example.org/s{}> <http://example.org/p> {o} .\n",
            i % 4
        ));
        s.push_str(&format!(
            "<http://example.org/s{}> <http://example.org/p> {o} <http://example.org/g1> .\n",
            i % 3
        ));
    }
    s.push_str("_:a <http://example.org/knows> _:b .\n");
    s.push_str("_:b <http://example.org/knows> _:a <http://example.org/g2> .\n");
    s.push_str("_:b <http://example.org/name> \"bee\" .\n");
    s.push_str("<http://example.org/s0> <http://example.org/link> _:a .\n");
    s.push_str("<http://example.org/\\u00E9t\\u00E9> <http://example.org/p> <urn:x-local:thing> _:graph .\n");
    s
}

/// Replaces blank node labels by labels made from each node's neighbourhood, so
/// two graphs that differ only in blank node labels compare equal.
fn canonical(quads: &[Quad]) -> BTreeSet<String> {
    let mut signature: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let label = |t: &str, me: &str| {
        if t == me {
            "SELF".to_owned()
        } else if t.starts_with("_:") {
            "BLANK".to_owned()
        } else {
            t.to_owned()
        }
    };
    let parts = |q: &Quad| {
        [
            q.subject.to_string(),
            q.predicate.to_string(),
            q.object.to_string(),
            q.graph_name.to_string(),
        ]
    };
    for q in quads {
        for t in parts(q) {
            if let Some(b) = t.strip_prefix("_:") {
                let _ = b;
                signature.entry(t.clone()).or_default();
            }
        }
    }
    let blanks: Vec<String> = signature.keys().cloned().collect();
    for b in &blanks {
        let mut sig: Vec<String> = quads
            .iter()
            .filter(|q| parts(q).contains(b))
            .map(|q| {
                parts(q)
                    .iter()
                    .map(|t| label(t, b))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        sig.sort();
        signature.insert(b.clone(), sig);
    }
    let rename: BTreeMap<&String, String> = blanks
        .iter()
        .map(|b| {
            (
                b,
                format!(
                    "_:{}",
                    signature[b].join("|").len() * 1000 + signature[b].len()
                ),
            )
        })
        .collect();
    let distinct: BTreeSet<&String> = rename.values().collect();
    assert_eq!(
        distinct.len(),
        rename.len(),
        "test data must have distinguishable blank nodes"
    );
    quads
        .iter()
        .map(|q| {
            parts(q)
                .iter()
                .map(|t| rename.get(t).cloned().unwrap_or_else(|| t.clone()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn parse_nquads(text: &str) -> Vec<Quad> {
    oxttl::NQuadsParser::new()
        .for_slice(text.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap()
}

fn quads_of(index: &Index, perm: Permutation) -> Vec<Quad> {
    let mut out = Vec::new();
    let mut previous: Option<[u64; 4]> = None;
    for batch in index.scan(perm, &[], ScanRange::ALL) {
        let batch = batch.unwrap();
        for i in 0..batch.len() {
            let row = batch.row(i);
            assert!(
                previous.is_none_or(|p| p < row),
                "{perm:?} rows must be strictly increasing"
            );
            previous = Some(row);
            let quad = perm.quad_of(row);
            let terms = index.terms_of(&quad.map(Id)).unwrap();
            let subject: NamedOrBlankNode = match terms[0].clone().unwrap() {
                Term::NamedNode(n) => n.into(),
                Term::BlankNode(b) => b.into(),
                other => panic!("literal subject {other}"),
            };
            let predicate = match terms[1].clone().unwrap() {
                Term::NamedNode(n) => n,
                other => panic!("bad predicate {other}"),
            };
            let graph = match &terms[3] {
                None => GraphName::DefaultGraph,
                Some(Term::NamedNode(n)) => n.clone().into(),
                Some(Term::BlankNode(b)) => b.clone().into(),
                Some(other) => panic!("literal graph {other}"),
            };
            out.push(Quad::new(
                subject,
                predicate,
                terms[2].clone().unwrap(),
                graph,
            ));
        }
    }
    out
}

fn load(dir: &Path, files: &[(&str, &str)]) -> Index {
    Index::open(common::build_from_texts(dir, files)).unwrap()
}

/// Builds running at once share the thread pool: none may block one of its
/// threads on work that needs the pool. A vocabulary writer that handed its
/// blocks to a thread compressing them on the pool did, from a pool thread,
/// and two builds at once deadlocked now and then.
#[test]
fn concurrent_builds_finish() {
    // Enough distinct keys for hundreds of vocabulary blocks.
    let text: String = (0..30_000)
        .map(|i| {
            format!(
                "<http://example.org/a/rather/long/path/to/make/many/blocks/subject{i}> \
                 <http://example.org/p{}> \"value number {i} of the test\" .\n",
                i % 7
            )
        })
        .collect();
    let text = std::sync::Arc::new(text);
    let (done, finished) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let (text, done) = (text.clone(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..3 {
                let tmp = tempfile::tempdir().unwrap();
                let index = load(tmp.path(), &[("data.nt", &text)]);
                assert_eq!(index.stats().triples, 30_000);
            }
            done.send(()).unwrap();
        });
    }
    // A deadlock fails the test instead of hanging it (the builds take
    // about half a second in a debug build).
    for _ in 0..4 {
        finished
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("concurrent builds finished (deadlocked, or one panicked)");
    }
}

#[test]
fn every_permutation_returns_exactly_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let text = sample_nquads();
    let index = load(tmp.path(), &[("data.nq", &text)]);
    let expected = canonical(&parse_nquads(&text));
    assert_eq!(index.stats().triples as usize, expected.len());
    for perm in Permutation::ALL {
        let got = quads_of(&index, perm);
        assert_eq!(got.len(), expected.len(), "{perm:?}");
        assert_eq!(canonical(&got), expected, "{perm:?}");
    }
}

#[test]
fn literals_come_back_exactly_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let text = sample_nquads();
    let index = load(tmp.path(), &[("data.nq", &text)]);
    for quad in parse_nquads(&text) {
        if let Term::Literal(l) = &quad.object {
            let id = index
                .id_of(quad.object.as_ref())
                .unwrap()
                .unwrap_or_else(|| panic!("{l} not found"));
            assert_eq!(index.term_of(id).unwrap().unwrap(), quad.object, "{l}");
        }
    }
    // A canonical integer is inline; a non-canonical one is in the vocabulary.
    let xsd_int = oxrdf::NamedNode::new_unchecked("http://www.w3.org/2001/XMLSchema#integer");
    let inline = oxrdf::Literal::new_typed_literal("42", xsd_int.clone());
    let stored = oxrdf::Literal::new_typed_literal("01", xsd_int);
    assert!(index
        .id_of(inline.as_ref().into())
        .unwrap()
        .unwrap()
        .is_inline_value());
    assert_eq!(
        index.id_of(stored.as_ref().into()).unwrap().unwrap().tag(),
        tern_index::Tag::Vocab
    );
}

#[test]
fn turtle_and_trig_load_like_their_nquads_equivalent() {
    let tmp = tempfile::tempdir().unwrap();
    let turtle = "@prefix ex: <http://example.org/> .\nex:s ex:p \"a\"@en, 12, 1.5, true ; ex:q [ ex:r ex:o ] .\nex:s ex:list (1 2) .\n";
    let trig = "@prefix ex: <http://example.org/> .\nex:g { ex:s ex:p ex:o . }\n";
    let index = load(tmp.path(), &[("a.ttl", turtle), ("b.trig", trig)]);
    // 4 + 2 (blank node) + 1 + 2*2 (list cells) triples, plus 1 quad.
    assert_eq!(index.stats().triples, 4 + 2 + 1 + 4 + 1);
    assert_eq!(index.stats().named_graphs, 1);
    assert_eq!(index.meta().blank_nodes, 3);
}

#[test]
fn blank_node_labels_are_scoped_to_their_file() {
    let tmp = tempfile::tempdir().unwrap();
    let line = "_:x <http://example.org/p> <http://example.org/o> .\n";
    let index = load(tmp.path(), &[("a.nt", line), ("b.nt", line)]);
    assert_eq!(index.meta().blank_nodes, 2);
    assert_eq!(index.stats().triples, 2);
}

#[test]
fn borrowed_terms_equal_owned_terms_with_runs_of_equal_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let text = sample_nquads();
    let index = load(tmp.path(), &[("data.nq", &text)]);
    // Every position of every row, in scan order, with each ID repeated as
    // the rows of a subject repeat it, and Id::UNDEFINED between runs.
    let mut ids = Vec::new();
    for batch in index.scan(Permutation::Spo, &[], ScanRange::ALL) {
        let batch = batch.unwrap();
        for column in &batch.columns[..3] {
            for (i, &id) in column.iter().enumerate() {
                ids.extend(std::iter::repeat_n(id, 1 + i % 3));
                if i % 5 == 0 {
                    ids.push(Id::UNDEFINED);
                }
            }
        }
    }
    let owned = index.terms_of(&ids).unwrap();
    let borrowed = index.term_refs(&ids).unwrap();
    assert_eq!(borrowed.len(), ids.len());
    for (i, term) in owned.iter().enumerate() {
        assert_eq!(
            borrowed.get(i).map(|t| t.into_owned()),
            *term,
            "position {i}"
        );
    }
}
