//! A fast parser for the common N-Triples / N-Quads line.
//!
//! Most lines of real dumps are plain: absolute IRIs without escapes, short blank
//! node labels, literals without escapes and with lowercase language tags. This
//! parser reads such a line straight into borrowed terms, with no allocation.
//! Anything else (escapes, unusual characters, anything malformed) makes it
//! answer [`Line::Unsure`], and the caller hands the line to oxttl, which
//! validates fully and reports errors with their exact position.

use super::piece::iri_looks_valid;
use oxrdf::{
    BlankNodeRef, GraphNameRef, LiteralRef, NamedNodeRef, NamedOrBlankNodeRef, QuadRef, TermRef,
};

pub enum Line<'a> {
    /// Nothing but whitespace or a comment.
    Empty,
    Statement(QuadRef<'a>),
    /// Not a plain line: parse it with the full parser.
    Unsure,
}

/// Parses one line (without its line end). `quads`: a graph may follow the object.
pub fn parse_line(line: &str, quads: bool) -> Line<'_> {
    let mut p = Cursor { text: line, pos: 0 };
    p.skip_space();
    if p.at_end() || p.peek() == Some(b'#') {
        return Line::Empty;
    }
    parse_statement(&mut p, quads).map_or(Line::Unsure, Line::Statement)
}

fn parse_statement<'a>(p: &mut Cursor<'a>, quads: bool) -> Option<QuadRef<'a>> {
    let subject: NamedOrBlankNodeRef<'a> = match p.peek()? {
        b'<' => p.iri()?.into(),
        b'_' => p.blank_node()?.into(),
        _ => return None,
    };
    p.skip_space();
    let predicate = p.iri()?;
    p.skip_space();
    let object: TermRef<'a> = match p.peek()? {
        b'<' => p.iri()?.into(),
        b'_' => p.blank_node()?.into(),
        b'"' => p.literal()?.into(),
        _ => return None,
    };
    p.skip_space();
    let graph = match p.peek()? {
        b'<' if quads => GraphNameRef::NamedNode(p.iri()?),
        b'_' if quads => GraphNameRef::BlankNode(p.blank_node()?),
        _ => GraphNameRef::DefaultGraph,
    };
    p.skip_space();
    if p.peek()? != b'.' {
        return None;
    }
    p.pos += 1;
    p.skip_space();
    if !(p.at_end() || p.peek() == Some(b'#')) {
        return None;
    }
    Some(QuadRef::new(subject, predicate, object, graph))
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    /// `<iri>`: absolute, no escapes.
    fn iri(&mut self) -> Option<NamedNodeRef<'a>> {
        if self.peek()? != b'<' {
            return None;
        }
        let start = self.pos + 1;
        let len = memchr::memchr(b'>', &self.bytes()[start..])?;
        let iri = &self.text[start..start + len];
        if !iri_looks_valid(iri) {
            return None;
        }
        self.pos = start + len + 1;
        Some(NamedNodeRef::new_unchecked(iri))
    }

    /// `_:label` with an ASCII label.
    fn blank_node(&mut self) -> Option<BlankNodeRef<'a>> {
        let bytes = self.bytes();
        if bytes.get(self.pos + 1) != Some(&b':') {
            return None;
        }
        let start = self.pos + 2;
        let first = *bytes.get(start)?;
        if !(first.is_ascii_alphanumeric() || first == b'_') {
            return None;
        }
        let mut end = start + 1;
        while end < bytes.len()
            && (bytes[end].is_ascii_alphanumeric() || matches!(bytes[end], b'_' | b'-' | b'.'))
        {
            end += 1;
        }
        // A label cannot end with '.': that dot ends the statement.
        while bytes[end - 1] == b'.' {
            end -= 1;
        }
        if end < bytes.len()
            && !matches!(bytes[end], b' ' | b'\t' | b'<' | b'"' | b'.' | b'_' | b'\r')
        {
            return None;
        }
        self.pos = end;
        Some(BlankNodeRef::new_unchecked(&self.text[start..end]))
    }

    /// `"value"`, `"value"@lang` or `"value"^^<datatype>`, without escapes.
    fn literal(&mut self) -> Option<LiteralRef<'a>> {
        let start = self.pos + 1;
        let len = memchr::memchr3(b'"', b'\\', b'\r', &self.bytes()[start..])?;
        if self.bytes()[start + len] != b'"' {
            return None;
        }
        let value = &self.text[start..start + len];
        self.pos = start + len + 1;
        match self.peek() {
            Some(b'@') => {
                let lang_start = self.pos + 1;
                let mut end = lang_start;
                let bytes = self.bytes();
                while end < bytes.len()
                    && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-')
                {
                    end += 1;
                }
                let lang = &self.text[lang_start..end];
                if !lang_looks_valid(lang) {
                    return None;
                }
                self.pos = end;
                Some(LiteralRef::new_language_tagged_literal_unchecked(
                    value, lang,
                ))
            }
            Some(b'^') => {
                if self.bytes().get(self.pos + 1) != Some(&b'^') {
                    return None;
                }
                self.pos += 2;
                let datatype = self.iri()?;
                Some(LiteralRef::new_typed_literal(value, datatype))
            }
            _ => Some(LiteralRef::new_simple_literal(value)),
        }
    }
}

/// Lowercase `[a-z]+(-[a-z0-9]+)*`: what oxttl would produce unchanged.
fn lang_looks_valid(lang: &str) -> bool {
    let mut parts = lang.split('-');
    let first = parts.next().unwrap_or_default();
    !first.is_empty()
        && first.len() <= 8
        && first.bytes().all(|b| b.is_ascii_lowercase())
        && parts.all(|p| {
            !p.is_empty()
                && p.len() <= 8
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_oxttl(line: &str, quads: bool) {
        let expected: Vec<oxrdf::Quad> = if quads {
            oxttl::NQuadsParser::new()
                .for_slice(line.as_bytes())
                .collect::<Result<_, _>>()
                .unwrap()
        } else {
            oxttl::NTriplesParser::new()
                .for_slice(line.as_bytes())
                .map(|t| t.map(|t| t.in_graph(GraphNameRef::DefaultGraph)))
                .collect::<Result<_, _>>()
                .unwrap()
        };
        match parse_line(line, quads) {
            Line::Statement(q) => assert_eq!(vec![q.into_owned()], expected, "{line}"),
            Line::Empty => assert!(expected.is_empty(), "{line}"),
            Line::Unsure => panic!("fast parser gave up on {line}"),
        }
    }

    #[test]
    fn plain_lines_parse_like_oxttl() {
        for line in [
            "<http://a/s> <http://a/p> <http://a/o> .",
            "<http://a/s> <http://a/p> \"v\" .",
            "<http://a/s>\t<http://a/p>\t\"v\"@en-gb .  # comment",
            "_:b1 <http://a/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer>.",
            "<http://a/s> <http://a/p> _:x.y .",
            "<http://a/s><http://a/p>_:z.",
            "   ",
            "# only a comment",
            "<http://a/s> <http://a/p> \"\" .",
        ] {
            same_as_oxttl(line, false);
        }
        same_as_oxttl("<http://a/s> <http://a/p> \"v\" <http://a/g> .", true);
        same_as_oxttl("<http://a/s> <http://a/p> \"v\" _:g .", true);
    }

    #[test]
    fn unusual_or_bad_lines_are_left_to_the_full_parser() {
        for line in [
            "<http://a/s> <http://a/p> \"esc\\\"aped\" .",
            "<http://a/s> <http://a/p> \"v\"@EN .",
            "<http://a/s> <http://a/p> <rel> .",
            "<http://a/s> <http://a/p> <http://a/\\u0041> .",
            "<http://a/s> <http://a/p> \"v\"",
            "<http://a/s> <http://a/p> \"v\" <http://a/g> .",
            "<http://a/s> <http://a/p> \"v\" . extra",
            "\"lit\" <http://a/p> <http://a/o> .",
            "_:é <http://a/p> <http://a/o> .",
        ] {
            assert!(matches!(parse_line(line, false), Line::Unsure), "{line}");
        }
    }
}
