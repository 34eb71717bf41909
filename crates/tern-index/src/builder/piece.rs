//! Parsing and encoding one piece of input on one thread.
//!
//! A piece is a slice of N-Triples/N-Quads lines, or a batch of statements from a
//! Turtle/TriG parser. Its terms are classified (inline value, blank node or
//! vocabulary key) and deduplicated within the piece, so the single-threaded merge
//! into the current run handles each distinct term of a piece once.

use super::error::SyntaxError;
use super::input::Format;
use super::line_parser::{self, Line};
use crate::term_key::{self, Classified};
use crate::{Id, Tag};
use oxrdf::{GraphNameRef, Quad, QuadRef, TermRef};
use oxttl::{NQuadsParser, NTriplesParser, TurtleSyntaxError};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::{BuildHasher, Hash, Hasher};

/// A vocabulary key with its hash, made on the core that parsed it, so that
/// the one core merging pieces into a run neither hashes it nor, when the
/// run's map grows, rehashes it (the map hashes it with [`StoredHash`]).
pub struct HashedKey {
    pub hash: u64,
    pub bytes: Box<[u8]>,
}

impl HashedKey {
    fn new(bytes: Box<[u8]>) -> HashedKey {
        HashedKey {
            hash: FxBuildHasher.hash_one(&bytes),
            bytes,
        }
    }
}

impl Hash for HashedKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for HashedKey {
    fn eq(&self, other: &HashedKey) -> bool {
        self.hash == other.hash && self.bytes == other.bytes
    }
}

impl Eq for HashedKey {}

/// The hasher of maps keyed by [`HashedKey`]: the key's stored hash.
#[derive(Default)]
pub struct StoredHash(u64);

impl Hasher for StoredHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    /// Only [`HashedKey`]s are hashed here, and they write one `u64`.
    fn write(&mut self, bytes: &[u8]) {
        self.0 = FxBuildHasher.hash_one(bytes);
    }
}

/// The encoded content of a piece.
#[derive(Default)]
pub struct Piece {
    /// Distinct vocabulary keys; a quad refers to key `i` as `Id(Vocab, i)`.
    pub keys: Vec<HashedKey>,
    /// Distinct blank node labels; a quad refers to label `i` as `Id(BlankNode, i)`.
    pub blanks: Vec<Box<str>>,
    /// Quads as `[s, p, o, g]`; inline values already carry their final ID.
    pub quads: Vec<[u64; 4]>,
    /// Bad statements, in input order, with piece-relative 0-based lines.
    pub errors: Vec<SyntaxError>,
    pub key_bytes: usize,
}

/// Encodes statements into a [`Piece`].
pub struct PieceEncoder {
    keys: FxHashMap<Box<[u8]>, u32>,
    blanks: FxHashMap<Box<str>, u32>,
    buf: Vec<u8>,
    piece: Piece,
    /// Graph of statements without one (`None`: the default graph).
    target_graph: Option<oxrdf::NamedNode>,
}

impl PieceEncoder {
    pub fn new(target_graph: Option<oxrdf::NamedNode>) -> PieceEncoder {
        PieceEncoder {
            keys: FxHashMap::default(),
            blanks: FxHashMap::default(),
            buf: Vec::new(),
            piece: Piece::default(),
            target_graph,
        }
    }

    fn term(&mut self, term: TermRef<'_>) -> u64 {
        match term_key::classify(term, &mut self.buf) {
            Classified::Inline(id) => id.0,
            Classified::Blank(label) => {
                let next = self.blanks.len() as u32;
                if let Some(&i) = self.blanks.get(label) {
                    return Id::new(Tag::BlankNode, i.into()).0;
                }
                self.blanks.insert(label.into(), next);
                Id::new(Tag::BlankNode, next.into()).0
            }
            Classified::Vocab => {
                if let Some(&i) = self.keys.get(self.buf.as_slice()) {
                    return Id::vocab(i.into()).0;
                }
                let next = self.keys.len() as u32;
                self.piece.key_bytes += self.buf.len();
                self.keys.insert(self.buf.as_slice().into(), next);
                Id::vocab(next.into()).0
            }
        }
    }

    pub fn push(&mut self, quad: QuadRef<'_>) {
        let s = self.term(quad.subject.into());
        let p = self.term(quad.predicate.into());
        let o = self.term(quad.object);
        let g = match quad.graph_name {
            GraphNameRef::DefaultGraph => match self.target_graph.clone() {
                Some(g) => self.term(g.as_ref().into()),
                None => Id::DEFAULT_GRAPH.0,
            },
            GraphNameRef::NamedNode(n) => self.term(n.into()),
            GraphNameRef::BlankNode(b) => self.term(b.into()),
        };
        self.piece.quads.push([s, p, o, g]);
    }

    pub fn push_error(&mut self, error: SyntaxError) {
        self.piece.errors.push(error);
    }

    pub fn finish(mut self) -> Piece {
        self.piece.keys = numbered(self.keys)
            .into_iter()
            .map(HashedKey::new)
            .collect();
        self.piece.blanks = numbered(self.blanks);
        self.piece
    }
}

/// The entries of a map from item to number, as a vector indexed by number.
fn numbered<T: Default + Clone>(map: FxHashMap<T, u32>) -> Vec<T> {
    let mut items = vec![T::default(); map.len()];
    for (item, i) in map {
        items[i as usize] = item;
    }
    items
}

/// A syntax error with its position made absolute.
pub fn syntax_error(file: &str, first_line: u64, error: &TurtleSyntaxError) -> SyntaxError {
    let start = error.location().start;
    SyntaxError {
        file: file.to_owned(),
        line: first_line + start.line + 1,
        column: start.column + 1,
        message: error.message().to_owned(),
    }
}

/// Parses a slice of whole N-Triples/N-Quads lines starting at 0-based line
/// `first_line`. Plain lines go through the fast [`line_parser`]; any other line
/// is parsed on its own by oxttl with full validation, so a bad line is reported
/// on its own line with its exact column and is skipped whole.
pub fn parse_lines(
    slice: &[u8],
    format: Format,
    file: &str,
    first_line: u64,
    target_graph: Option<&oxrdf::NamedNode>,
    stop_at_first_error: bool,
) -> Piece {
    let mut encoder = PieceEncoder::new(target_graph.cloned());
    let quads = format == Format::NQuads;
    let mut statements = Vec::new();
    for (line_number, line) in (first_line..).zip(slice.split(|&b| b == b'\n')) {
        let fast =
            std::str::from_utf8(line).map_or(Line::Unsure, |l| line_parser::parse_line(l, quads));
        match fast {
            Line::Empty => {}
            Line::Statement(quad) => encoder.push(quad),
            Line::Unsure => {
                if let Some(error) =
                    parse_line_validated(line, format, file, line_number, &mut statements)
                {
                    encoder.push_error(error);
                    if stop_at_first_error {
                        break;
                    }
                } else {
                    statements.iter().for_each(|q| encoder.push(q.as_ref()));
                }
            }
        }
    }
    encoder.finish()
}

/// Parses one line with oxttl into `statements`; returns its first error.
fn parse_line_validated(
    line: &[u8],
    format: Format,
    file: &str,
    line_number: u64,
    statements: &mut Vec<Quad>,
) -> Option<SyntaxError> {
    statements.clear();
    let mut error = None;
    let mut collect = |r: Result<Quad, TurtleSyntaxError>| match r {
        Ok(quad) => {
            statements.push(quad);
            true
        }
        Err(e) => {
            error = Some(syntax_error(file, line_number, &e));
            false
        }
    };
    match format {
        Format::NQuads => NQuadsParser::new().for_slice(line).all(&mut collect),
        _ => NTriplesParser::new()
            .for_slice(line)
            .all(|r| collect(r.map(|t| t.in_graph(GraphNameRef::DefaultGraph)))),
    };
    error
}

/// A quick test for absolute IRIs: a scheme, then no characters that IRIs forbid.
/// Anything it rejects is checked again by the full validator.
pub(super) fn iri_looks_valid(iri: &str) -> bool {
    let bytes = iri.as_bytes();
    let Some(colon) = memchr::memchr(b':', bytes) else {
        return false;
    };
    let scheme_ok = colon > 0
        && bytes[0].is_ascii_alphabetic()
        && bytes[1..colon]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    scheme_ok && bytes.iter().all(|&b| IRI_BYTE_OK[b as usize])
}

/// Bytes allowed in an IRI (non-ASCII bytes are parts of UTF-8 characters).
const IRI_BYTE_OK: [bool; 256] = {
    let mut ok = [true; 256];
    let mut b = 0;
    while b <= 0x20 {
        ok[b] = false;
        b += 1;
    }
    let forbidden = *b"<>\"{}|^`\\";
    let mut i = 0;
    while i < forbidden.len() {
        ok[forbidden[i] as usize] = false;
        i += 1;
    }
    ok[0x7F] = false;
    ok
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_iri_test_accepts_absolute_and_rejects_the_rest() {
        assert!(iri_looks_valid("http://example.org/a#b"));
        assert!(iri_looks_valid("urn:isbn:123"));
        assert!(!iri_looks_valid("relative/path"));
        assert!(!iri_looks_valid("http://a b"));
        assert!(!iri_looks_valid(":nothing"));
    }

    #[test]
    fn a_bad_line_is_skipped_whole_and_reported_on_its_own_line() {
        let text = b"<http://s> <http://p> <http://o1> .\n<http://s> <http://p> \"x\"\n<http://s> <http://p> \"open .\n<http://s> <http://p> <http://o4> .\n";
        let piece = parse_lines(text, Format::NTriples, "f.nt", 0, None, false);
        let lines: Vec<u64> = piece.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, [2, 3], "{:?}", piece.errors);
        assert_eq!(piece.quads.len(), 2);
    }

    #[test]
    fn bad_lines_are_found_with_absolute_positions() {
        let text = b"<http://s> <http://p> <http://o> .\n<http://s> <http://p> <a b> .\n";
        let piece = parse_lines(text, Format::NTriples, "f.nt", 10, None, true);
        assert_eq!(piece.errors.len(), 1);
        let e = &piece.errors[0];
        assert_eq!((e.line, e.column), (12, 23), "{e}");
        assert_eq!(piece.quads.len(), 1);
    }
}
