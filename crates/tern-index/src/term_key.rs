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
use oxrdf::{BlankNodeRef, LiteralRef, NamedNodeRef, Term, TermRef};

pub(crate) const IRI: u8 = 0x02;
/// The first byte of every literal's key (above every IRI's).
pub const LITERAL: u8 = 0x03;
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
    escape_value(literal.value(), key);
    key.push(0);
    if let Some(lang) = literal.language() {
        key.push(b'@');
        key.extend_from_slice(lang.as_bytes());
    } else if literal.datatype().as_str() != XSD_STRING {
        key.push(b'^');
        key.extend_from_slice(literal.datatype().as_str().as_bytes());
    }
}

fn escape_value(value: &str, key: &mut Vec<u8>) {
    for &b in value.as_bytes() {
        match b {
            0 => key.extend_from_slice(&[1, 1]),
            1 => key.extend_from_slice(&[1, 2]),
            _ => key.push(b),
        }
    }
}

/// The keys between which lie those of every literal (of any language or
/// datatype) whose lexical form starts with `prefix`: `[low, high)`, `high`
/// `None` when no key bounds them above.
pub fn literal_prefix_keys(prefix: &str) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut low = vec![LITERAL];
    escape_value(prefix, &mut low);
    // Escaped values hold no 0x00, so no key with the prefix ends the
    // value inside it.
    keys_starting_with(low)
}

/// The keys between which lie those of every IRI that starts with
/// `prefix`: `[low, high)` as for [`literal_prefix_keys`].
pub fn iri_prefix_keys(prefix: &str) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut low = Vec::with_capacity(prefix.len() + 1);
    iri_key(prefix, &mut low);
    keys_starting_with(low)
}

/// `low` and the least key above all that start with it (its last byte
/// that is not 0xFF, one up), `None` when there is none.
fn keys_starting_with(low: Vec<u8>) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut high = low.clone();
    while let Some(&last) = high.last() {
        if last == 0xFF {
            high.pop();
        } else {
            *high.last_mut().expect("not empty") += 1;
            return (low, Some(high));
        }
    }
    (low, None)
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
    let key = std::str::from_utf8(key).map_err(|_| CorruptKey)?;
    let parts = key_parts(key)?;
    let mut unescaped = String::new();
    let escaped = match parts {
        KeyParts::Literal {
            value_end,
            escaped: true,
            ..
        } => {
            unescape_into(&key.as_bytes()[1..value_end], &mut unescaped)?;
            Some(unescaped.as_str())
        }
        _ => None,
    };
    Ok(term_ref(key, parts, escaped).into_owned())
}

/// The term of a key checked by [`key_parts`]; `unescaped` is the value of
/// a literal whose value has escapes (see [`unescape_into`]).
pub(crate) fn term_ref<'a>(
    key: &'a str,
    parts: KeyParts,
    unescaped: Option<&'a str>,
) -> TermRef<'a> {
    let body = &key[1..];
    match parts {
        KeyParts::Iri => NamedNodeRef::new_unchecked(body).into(),
        KeyParts::Literal {
            value_end, suffix, ..
        } => {
            let value = unescaped.unwrap_or(&body[..value_end - 1]);
            // After the value: its 0 terminator, `@` or `^`, the suffix.
            let suffix_text = || &body[value_end + 1..];
            match suffix {
                Suffix::None => LiteralRef::new_simple_literal(value),
                Suffix::Language => {
                    LiteralRef::new_language_tagged_literal_unchecked(value, suffix_text())
                }
                Suffix::Datatype => {
                    LiteralRef::new_typed_literal(value, NamedNodeRef::new_unchecked(suffix_text()))
                }
            }
            .into()
        }
    }
}

/// Where the parts of a vocabulary key are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyParts {
    /// An IRI: `key[1..]`.
    Iri,
    /// A literal: its escaped value is `key[1..value_end]`; after it come the
    /// 0 terminator and the suffix.
    Literal {
        value_end: usize,
        /// The value holds escaped bytes (see [`unescape_into`]).
        escaped: bool,
        suffix: Suffix,
    },
}

/// A literal key's suffix, from `value_end + 2` to the end of the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Suffix {
    None,
    Language,
    Datatype,
}

/// Checks a key's kind and layout, and finds its parts.
pub(crate) fn key_parts(key: &str) -> Result<KeyParts, CorruptKey> {
    let (&kind, body) = key.as_bytes().split_first().ok_or(CorruptKey)?;
    match kind {
        IRI => Ok(KeyParts::Iri),
        LITERAL => {
            let end = memchr::memchr(0, body).ok_or(CorruptKey)?;
            let suffix = match body.get(end + 1) {
                None => Suffix::None,
                Some(b'@') => Suffix::Language,
                Some(b'^') => Suffix::Datatype,
                Some(_) => return Err(CorruptKey),
            };
            Ok(KeyParts::Literal {
                value_end: end + 1,
                escaped: memchr::memchr(1, &body[..end]).is_some(),
                suffix,
            })
        }
        _ => Err(CorruptKey),
    }
}

/// Appends the value of an escaped literal value to `out`.
pub(crate) fn unescape_into(escaped: &[u8], out: &mut String) -> Result<(), CorruptKey> {
    let mut value = Vec::with_capacity(escaped.len());
    let mut bytes = escaped.iter();
    while let Some(&b) = bytes.next() {
        match b {
            1 => match bytes.next() {
                Some(&e @ (1 | 2)) => value.push(e - 1),
                _ => return Err(CorruptKey),
            },
            _ => value.push(b),
        }
    }
    out.push_str(std::str::from_utf8(&value).map_err(|_| CorruptKey)?);
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[error("corrupt vocabulary entry")]
pub struct CorruptKey;

/// The label under which an index-numbered blank node is shown.
pub fn blank_node_label(number: u64) -> String {
    let mut label = String::new();
    write_blank_node_label(number, &mut label);
    label
}

/// Appends [`blank_node_label`] to `out`.
pub fn write_blank_node_label(number: u64, out: &mut String) {
    use std::fmt::Write;
    match number.checked_sub(crate::Id::FRESH_BLANK_BASE) {
        // Made by a query: a label no stored blank node has (and that
        // `blank_node_number` does not read back, as no triple holds it).
        Some(fresh) => write!(out, "c{fresh}"),
        None => write!(out, "b{number}"),
    }
    .expect("writing to a String");
}

/// Parses a label made by [`blank_node_label`] back into its number.
pub fn blank_node_number(node: BlankNodeRef<'_>) -> Option<u64> {
    node.as_str().strip_prefix('b')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_holds_the_literals_that_start_with_it() {
        let key = |l: LiteralRef<'_>| {
            let mut k = Vec::new();
            literal_key(l, &mut k);
            k
        };
        let (low, high) = literal_prefix_keys("Eff");
        let high = high.unwrap();
        for inside in [
            LiteralRef::new_simple_literal("Eff"),
            LiteralRef::new_simple_literal("Efficient"),
            LiteralRef::new_language_tagged_literal_unchecked("Effort", "en"),
            LiteralRef::new_typed_literal("Eff\u{1F426}", oxrdf::vocab::xsd::TOKEN),
        ] {
            let k = key(inside);
            assert!(low <= k && k < high, "{inside}");
        }
        for outside in ["Ef", "Efe", "Efg", "eff", "E"] {
            let k = key(LiteralRef::new_simple_literal(outside));
            assert!(!(low <= k && k < high), "{outside}");
        }
        let (_, high) = literal_prefix_keys("\u{10FFFF}");
        assert!(high.is_some());
    }
    use oxrdf::{Literal, NamedNode};

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
        let parts: Vec<KeyParts> = keys
            .iter()
            .map(|k| key_parts(std::str::from_utf8(k).unwrap()).unwrap())
            .collect();
        assert_eq!(parts[0], KeyParts::Iri);
        assert_eq!(
            parts[4],
            KeyParts::Literal {
                value_end: 2,
                escaped: false,
                suffix: Suffix::Language
            }
        );
        assert!(matches!(
            parts[5],
            KeyParts::Literal {
                suffix: Suffix::Datatype,
                ..
            }
        ));
        let KeyParts::Literal {
            value_end,
            escaped: true,
            suffix: Suffix::None,
        } = parts[6]
        else {
            panic!("{:?}", parts[6]);
        };
        let mut value = String::new();
        unescape_into(&keys[6][1..value_end], &mut value).unwrap();
        assert_eq!(value, "a\u{0}b");
        for bad in ["", "\x09x", "\x03a", "\x03a\x00!"] {
            assert!(key_parts(bad).is_err(), "{bad:?}");
        }
        assert!(unescape_into(b"a\x01\x05", &mut value).is_err());
    }
}
