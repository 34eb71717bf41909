//! The byte key under which a term is stored in the vocabulary.
//!
//! Keys sort (as plain bytes) in SPARQL ORDER BY order: IRIs before literals, IRIs
//! by their text, literals by their lexical form first (so simple and language
//! strings interleave alphabetically) and then by language tag or datatype.
//!
//! Layout: `0x02 iri` for IRIs; `0x03 escaped(value) 0x00 suffix` for literals,
//! where suffix is empty for simple literals, `@lang` or `^datatype`. The value is
//! escaped (0x00 → 0x01 0x01, 0x01 → 0x01 0x02) so the 0x00 terminator keeps
//! shorter values first and the escaping preserves order.

use crate::inline;
use crate::Id;
use oxrdf::{BlankNodeRef, Literal, LiteralRef, NamedNode, Term, TermRef};

const IRI: u8 = 0x02;
const LITERAL: u8 = 0x03;
const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";

/// How a term is represented in the index.
pub enum Classified<'a> {
    /// The term fits inside its ID.
    Inline(Id),
    /// A blank node with its label, numbered per input file by the loader.
    Blank(&'a str),
    /// A vocabulary term; its key was written to the buffer.
    Vocab,
}

/// Classifies a term and, for vocabulary terms, writes its key into `key`.
pub fn classify<'a>(term: TermRef<'a>, key: &mut Vec<u8>) -> Classified<'a> {
    key.clear();
    match term {
        TermRef::NamedNode(n) => {
            iri_key(n.as_str(), key);
            Classified::Vocab
        }
        TermRef::BlankNode(b) => Classified::Blank(b.as_str()),
        TermRef::Literal(l) => {
            if l.language().is_none() {
                if let Some(id) = inline::encode(l.value(), l.datatype().as_str()) {
                    return Classified::Inline(id);
                }
            }
            literal_key(l, key);
            Classified::Vocab
        }
        #[allow(unreachable_patterns)]
        _ => {
            // RDF 1.2 triple terms are not supported by the index yet: store their
            // text as a literal rather than losing the statement.
            literal_key(LiteralRef::new_simple_literal(&term.to_string()), key);
            Classified::Vocab
        }
    }
}

pub fn iri_key(iri: &str, key: &mut Vec<u8>) {
    key.push(IRI);
    key.extend_from_slice(iri.as_bytes());
}

pub fn literal_key(literal: LiteralRef<'_>, key: &mut Vec<u8>) {
    key.push(LITERAL);
    for &b in literal.value().as_bytes() {
        match b {
            0 => key.extend_from_slice(&[1, 1]),
            1 => key.extend_from_slice(&[1, 2]),
            _ => key.push(b),
        }
    }
    key.push(0);
    if let Some(lang) = literal.language() {
        key.push(b'@');
        key.extend_from_slice(lang.as_bytes());
    } else if literal.datatype().as_str() != XSD_STRING {
        key.push(b'^');
        key.extend_from_slice(literal.datatype().as_str().as_bytes());
    }
}

/// The key for a term, or `None` when the term never lives in the vocabulary.
pub fn key_of(term: TermRef<'_>) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    match classify(term, &mut key) {
        Classified::Vocab => Some(key),
        _ => None,
    }
}

/// Rebuilds the term from its key. Keys come from our own files, so a corrupt key
/// yields an error value rather than a panic.
pub fn key_to_term(key: &[u8]) -> Result<Term, CorruptKey> {
    let (&kind, body) = key.split_first().ok_or(CorruptKey)?;
    match kind {
        IRI => Ok(NamedNode::new_unchecked(utf8(body)?).into()),
        LITERAL => {
            let end = memchr::memchr(0, body).ok_or(CorruptKey)?;
            let mut value = Vec::with_capacity(end);
            let mut bytes = body[..end].iter();
            while let Some(&b) = bytes.next() {
                if b == 1 {
                    value.push(bytes.next().ok_or(CorruptKey)? - 1);
                } else {
                    value.push(b);
                }
            }
            let value = String::from_utf8(value).map_err(|_| CorruptKey)?;
            let suffix = &body[end + 1..];
            Ok(match suffix.first() {
                None => Literal::new_simple_literal(value),
                Some(b'@') => {
                    Literal::new_language_tagged_literal_unchecked(value, utf8(&suffix[1..])?)
                }
                Some(b'^') => {
                    Literal::new_typed_literal(value, NamedNode::new_unchecked(utf8(&suffix[1..])?))
                }
                Some(_) => return Err(CorruptKey),
            }
            .into())
        }
        _ => Err(CorruptKey),
    }
}

fn utf8(bytes: &[u8]) -> Result<String, CorruptKey> {
    String::from_utf8(bytes.to_vec()).map_err(|_| CorruptKey)
}

#[derive(Debug, thiserror::Error)]
#[error("corrupt vocabulary entry")]
pub struct CorruptKey;

/// The label under which an index-numbered blank node is shown.
pub fn blank_node_label(number: u64) -> String {
    format!("b{number}")
}

/// Parses a label made by [`blank_node_label`] back into its number.
pub fn blank_node_number(node: BlankNodeRef<'_>) -> Option<u64> {
    node.as_str().strip_prefix('b')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: impl Into<Term>) -> Vec<u8> {
        key_of(t.into().as_ref()).unwrap()
    }

    #[test]
    fn keys_sort_in_sparql_order_and_round_trip() {
        let terms: Vec<Term> = vec![
            NamedNode::new_unchecked("http://a").into(),
            NamedNode::new_unchecked("http://b").into(),
            Literal::new_simple_literal("").into(),
            Literal::new_simple_literal("a").into(),
            Literal::new_language_tagged_literal_unchecked("a", "en").into(),
            Literal::new_typed_literal("a", NamedNode::new_unchecked("http://t")).into(),
            Literal::new_simple_literal("a\u{0}b").into(),
            Literal::new_simple_literal("a\u{1}").into(),
            Literal::new_simple_literal("ab").into(),
        ];
        let keys: Vec<Vec<u8>> = terms.iter().cloned().map(key).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        for (t, k) in terms.iter().zip(&keys) {
            assert_eq!(&key_to_term(k).unwrap(), t);
        }
    }
}
