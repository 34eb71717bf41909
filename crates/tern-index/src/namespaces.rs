//! The IRI namespaces an index uses most, for writers that abbreviate IRIs
//! (Turtle and RDF/XML prefixes, a JSON-LD context). Estimated once per
//! index, cheaply: the predicates count with their exact number of triples
//! (a predicate is written in every triple that has it), and the other IRIs
//! through an even sample of the vocabulary's IRI keys, each sampled key
//! standing for its share of the subjects.

use crate::error::Result;
use crate::stats::Statistics;
use crate::term_key;
use crate::vocab::Vocabulary;
use crate::Id;
use rustc_hash::FxHashMap;

/// Most namespaces reported: a response's header stays a few lines long.
pub const MOST_NAMESPACES: usize = 16;

/// Vocabulary IRIs sampled (at most one per block is decoded).
const SAMPLE: u64 = 1024;

/// Below this share of the triples a namespace does not pay for its line.
const MIN_SHARE: f64 = 0.01;

/// `iri` cut after its last `/` or `#`: (namespace, local name).
pub fn split_namespace(iri: &str) -> Option<(&str, &str)> {
    // A byte search: `/` and `#` are ASCII, never inside a multibyte
    // character, and a `char` pattern decodes UTF-8 backwards.
    let at = iri.bytes().rposition(|b| b == b'/' || b == b'#')?;
    Some(iri.split_at(at + 1))
}

/// The namespace of `iri` (see [`split_namespace`]), when a local name
/// follows and the namespace is more than a scheme.
pub fn namespace_of(iri: &str) -> Option<&str> {
    let (namespace, local) = split_namespace(iri)?;
    (!local.is_empty() && namespace.len() > "http://".len() && namespace.contains("://"))
        .then_some(namespace)
}

/// The namespaces with at least [`MIN_SHARE`] of the estimated IRI uses,
/// most used first, at most [`MOST_NAMESPACES`].
pub(crate) fn frequent(
    stats: &Statistics,
    vocab: &Vocabulary,
    first_literal: u64,
) -> Result<Vec<String>> {
    let mut weight: FxHashMap<String, f64> = FxHashMap::default();
    // Predicates are IRIs, so vocabulary terms; each keeps its count.
    let (predicates, triples): (Vec<u64>, Vec<u64>) = stats
        .predicates
        .iter()
        .filter(|p| Id(p.predicate).tag() == crate::Tag::Vocab)
        .map(|p| (Id(p.predicate).payload(), p.triples))
        .unzip();
    for (key, triples) in vocab.keys(&predicates)?.iter().zip(triples) {
        if let Some(namespace) = iri_of_key(key).and_then(namespace_of) {
            *weight.entry(namespace.to_owned()).or_default() += triples as f64;
        }
    }
    let iris = first_literal.min(vocab.len());
    if iris > 0 {
        let step = (iris / SAMPLE).max(1);
        let sample: Vec<u64> = (0..iris).step_by(step as usize).collect();
        // Each sampled IRI stands for its share of the triples' subjects.
        let each = stats.triples as f64 / sample.len() as f64;
        for key in vocab.keys(&sample)? {
            if let Some(namespace) = iri_of_key(&key).and_then(namespace_of) {
                *weight.entry(namespace.to_owned()).or_default() += each;
            }
        }
    }
    let total = 2.0 * stats.triples as f64;
    let mut ranked: Vec<(String, f64)> = weight
        .into_iter()
        .filter(|(_, w)| *w >= MIN_SHARE * total)
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(MOST_NAMESPACES);
    Ok(ranked.into_iter().map(|(namespace, _)| namespace).collect())
}

/// The IRI of a vocabulary key, if it is an IRI's.
fn iri_of_key(key: &[u8]) -> Option<&str> {
    match key.split_first()? {
        (&term_key::IRI, iri) => std::str::from_utf8(iri).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::namespace_of;

    #[test]
    fn a_namespace_ends_at_the_last_slash_or_hash() {
        assert_eq!(
            namespace_of("http://purl.org/stuff/rev#text"),
            Some("http://purl.org/stuff/rev#")
        );
        assert_eq!(
            namespace_of("http://example.org/a/b/c"),
            Some("http://example.org/a/b/")
        );
        assert_eq!(namespace_of("http://example.org/a/"), None);
        assert_eq!(namespace_of("urn:isbn:123"), None);
        assert_eq!(namespace_of("http://x"), None);
    }
}
