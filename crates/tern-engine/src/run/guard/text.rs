//! The checks on a query's text, before the parser sees it: how deep the
//! parser would recurse, and how much work it would do.
//!
//! The parser (`spargebra`, a PEG grammar without memoization) recurses once
//! per bracket (`{`, `(`, `[`) and once per `!` of a run of them. It also
//! parses some operands twice: those of `REGEX`, `SUBSTR` and `REPLACE`
//! (it tries the form with the optional argument first) and the operand of
//! a `!` (it tries `!!` first). Nested, the repeats multiply: 30 nested
//! `!(` take 2^30 passes over the innermost text. Each byte is counted once
//! for every pass the parser will make over it, and a text whose count is
//! over [`MAX_PARSE_WORK`] is refused before parsing.

use super::{MAX_PARSE_WORK, MAX_QUERY_BYTES, MAX_TEXT_NESTING};
use crate::EngineError;

/// Fails when `text` is longer than [`MAX_QUERY_BYTES`], nests brackets (or
/// runs of `!`) deeper than
/// [`MAX_TEXT_NESTING`], or would cost the parser more than
/// [`MAX_PARSE_WORK`] passes over its bytes. Strings, IRIs and comments
/// are skipped, so their contents never nest or repeat.
pub fn check_text(text: &str) -> Result<(), EngineError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(EngineError::TooComplex(format!(
            "the query is {} bytes long; the limit is {MAX_QUERY_BYTES} bytes",
            text.len()
        )));
    }
    let bytes = text.as_bytes();
    // Per open bracket, whether the parser parses its content twice.
    let mut open: Vec<bool> = Vec::new();
    // How many open brackets are parsed twice: each byte costs 2^repeats.
    let mut repeats = 0u32;
    // A `!` or REGEX/SUBSTR/REPLACE seen whose operand has not started.
    let mut pending = false;
    let mut bangs = 0usize;
    let mut work = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        i += 1;
        match b {
            b'{' | b'(' | b'[' => {
                open.push(pending);
                repeats += u32::from(pending);
                pending = false;
            }
            b'}' | b')' | b']' => {
                if open.pop() == Some(true) {
                    repeats -= 1;
                }
                pending = false;
            }
            b'!' if bytes.get(i) != Some(&b'=') => {
                pending = true;
                bangs += 1;
            }
            b',' | b'&' | b'|' | b'=' | b';' | b'>' => pending = false,
            b'#' => i = skip_until(bytes, i, b'\n'),
            b'"' | b'\'' => i = skip_string(bytes, start),
            b'<' => {
                i = skip_iri(bytes, start);
                if i == start + 1 {
                    pending = false; // "less than"
                }
            }
            b if b.is_ascii_alphabetic() && !continues_name(bytes, start) => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &bytes[start..i];
                if [&b"REGEX"[..], b"SUBSTR", b"REPLACE"]
                    .iter()
                    .any(|k| word.eq_ignore_ascii_case(k))
                {
                    pending = true;
                }
            }
            _ => {}
        }
        if b != b'!' && !b.is_ascii_whitespace() {
            bangs = 0;
        }
        let passes = 1u64 << repeats.min(62);
        work = work.saturating_add(passes.saturating_mul((i - start) as u64));
        let depth = open.len() + bangs;
        if depth > MAX_TEXT_NESTING {
            let (line, column) = position(text, start);
            return Err(EngineError::TooComplex(format!(
                "the query nests brackets more than {MAX_TEXT_NESTING} levels deep at line \
                 {line}, column {column}; the limit is {MAX_TEXT_NESTING} levels"
            )));
        }
        if work > MAX_PARSE_WORK {
            let (line, column) = position(text, start);
            return Err(EngineError::TooComplex(format!(
                "the query would take too long to parse: by line {line}, column {column} it \
                 nests {repeats} levels of `!`, REGEX, SUBSTR or REPLACE, each of which the \
                 parser reads twice; the limit is {MAX_PARSE_WORK} bytes read"
            )));
        }
    }
    Ok(())
}

/// Whether the letter at `at` continues a name (a prefixed name's local
/// part, a variable, a number's exponent) rather than starting a keyword.
fn continues_name(bytes: &[u8], at: usize) -> bool {
    at > 0 && {
        let before = bytes[at - 1];
        before.is_ascii_alphanumeric()
            || matches!(before, b'_' | b':' | b'?' | b'$' | b'-' | b'.' | b'@')
    }
}

/// The index after the first `end` at or after `from` (or the end).
fn skip_until(bytes: &[u8], from: usize, end: u8) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == end)
        .map_or(bytes.len(), |k| from + k + 1)
}

/// The index after the string literal starting at `start` (quote, or three
/// quotes, with backslash escapes).
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let long = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut i = start + if long { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote && !long => return i + 1,
            b if b == quote
                && bytes.get(i + 1) == Some(&quote)
                && bytes.get(i + 2) == Some(&quote) =>
            {
                return i + 3
            }
            b'\n' if !long => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The index after an IRI `<...>` starting at `start`, or after the `<`
/// alone when what follows cannot be an IRI (then it is "less than").
fn skip_iri(bytes: &[u8], start: usize) -> usize {
    for (k, &b) in bytes[start + 1..].iter().enumerate() {
        match b {
            b'>' => return start + k + 2,
            b'<' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\' => break,
            b if b <= b' ' => break,
            _ => {}
        }
    }
    start + 1
}

/// Line and column (both from 1, the column in characters) of byte `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}
