//! The vocabulary's codecs (front coding, zstd with dictionaries, the word-token
//! code of long literals, inline values) give back every term exactly: every
//! IRI and literal of the W3C SPARQL suites' data files and of BSBM 1M, loaded
//! as objects, comes back from a scan and from `id_of` → `term_of`.

mod common;

use oxrdf::Term;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use tern_index::{Index, Permutation, ScanRange};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// Every IRI and literal of a triples file, in any position.
fn terms_of_triples(text: &[u8], base: &str, turtle: bool, terms: &mut HashSet<Term>) {
    let mut add = |triple: oxrdf::Triple| {
        if let oxrdf::NamedOrBlankNode::NamedNode(n) = triple.subject {
            terms.insert(n.into());
        }
        terms.insert(triple.predicate.into());
        if !triple.object.is_blank_node() {
            terms.insert(triple.object);
        }
    };
    if turtle {
        let Ok(parser) = oxttl::TurtleParser::new().with_base_iri(base) else {
            return;
        };
        // Negative syntax tests and files meant to fail are skipped whole.
        let triples: Result<Vec<_>, _> = parser.for_slice(text).collect();
        triples.into_iter().flatten().for_each(&mut add);
    } else {
        let triples: Result<Vec<_>, _> = oxttl::NTriplesParser::new().for_slice(text).collect();
        triples.into_iter().flatten().for_each(&mut add);
    }
}

fn w3c_terms() -> HashSet<Term> {
    let mut terms = HashSet::new();
    let mut files = 0;
    let mut stack = vec![shared().join("w3c-sparql")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("../shared/w3c-sparql beside the repository") {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if path.is_dir() {
                stack.push(path);
            } else if ext == "ttl" || ext == "nt" {
                let text = std::fs::read(&path).unwrap();
                let base = format!("file://{}", path.display());
                terms_of_triples(&text, &base, ext == "ttl", &mut terms);
                files += 1;
            }
        }
    }
    assert!(files > 400, "only {files} data files found");
    terms
}

/// The objects of BSBM 1M: its long review and product texts, labels, numbers, dates.
fn bsbm_terms() -> HashSet<Term> {
    let path = shared().join("datasets/bsbm-1m/dataset.nt.zst");
    let mut text = Vec::new();
    zstd::Decoder::new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .read_to_end(&mut text)
        .unwrap();
    let mut terms = HashSet::new();
    terms_of_triples(&text, "", false, &mut terms);
    terms
}

fn round_trip(terms: &HashSet<Term>) {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for term in terms {
        text.push_str(&format!("<urn:tern:s> <urn:tern:p> {term} .\n"));
    }
    let target = common::build_from_texts(dir.path(), &[("terms.nt", &text)]);
    let index = Index::open(&target).unwrap();
    let mut scanned = HashSet::new();
    let mut ids = Vec::new();
    for batch in index.scan(Permutation::Spo, &[], ScanRange::ALL) {
        ids.extend(batch.unwrap().columns[2].iter().copied());
    }
    for (id, term) in ids.iter().zip(index.terms_of(&ids).unwrap()) {
        let term = term.unwrap_or_else(|| panic!("no term for {id:?}"));
        assert_eq!(index.id_of(term.as_ref()).unwrap(), Some(*id), "{term}");
        scanned.insert(term);
    }
    let missing: Vec<&Term> = terms.difference(&scanned).take(5).collect();
    let extra: Vec<&Term> = scanned.difference(terms).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    assert_eq!(scanned.len(), terms.len());
}

#[test]
fn every_term_of_the_w3c_suites_comes_back_exactly() {
    let terms = w3c_terms();
    assert!(terms.len() > 2_000, "{} terms", terms.len());
    round_trip(&terms);
}

#[test]
fn every_term_of_bsbm_1m_comes_back_exactly() {
    let terms = bsbm_terms();
    let long = terms
        .iter()
        .filter(|t| matches!(t, Term::Literal(l) if l.value().len() >= 256))
        .count();
    assert!(long > 10_000, "{long} long literals");
    round_trip(&terms);
}
