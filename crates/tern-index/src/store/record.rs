//! The payload of a log record: the changes of one update, as text.
//!
//! Terms are written out, not as IDs: IDs of a store's new terms and the
//! base's IDs change with compaction, text does not. Blank nodes keep the
//! labels the index gives them (`b<number>`), which name the same node
//! before and after compaction. Layout: one line of `+`/`-` flags, one per
//! change, then the quads as N-Quads in the same order.

use oxrdf::vocab::xsd;
use oxrdf::{GraphNameRef, NamedOrBlankNodeRef, QuadRef, TermRef};
use oxttl::NQuadsParser;

/// One change to one quad, in terms.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuadChange {
    pub quad: oxrdf::Quad,
    pub insert: bool,
}

/// A payload being written, change by change.
#[derive(Default)]
pub struct RecordWriter {
    flags: Vec<u8>,
    quads: Vec<u8>,
}

impl RecordWriter {
    pub fn push(&mut self, quad: QuadRef<'_>, insert: bool) {
        self.flags.push(if insert { b'+' } else { b'-' });
        let out = &mut self.quads;
        write_subject(out, quad.subject);
        out.push(b' ');
        write_iri(out, quad.predicate.as_str());
        out.push(b' ');
        write_term(out, quad.object);
        match quad.graph_name {
            GraphNameRef::NamedNode(n) => {
                out.push(b' ');
                write_iri(out, n.as_str());
            }
            GraphNameRef::BlankNode(b) => {
                out.push(b' ');
                write_blank(out, b.as_str());
            }
            GraphNameRef::DefaultGraph => {}
        }
        out.extend_from_slice(b" .\n");
    }

    /// The payload, in parts to be written one after the other.
    pub fn parts(&self) -> [&[u8]; 3] {
        [&self.flags, b"\n", &self.quads]
    }
}

/// The payload of `changes` in one buffer.
#[cfg(test)]
pub fn encode(changes: &[QuadChange]) -> Vec<u8> {
    let mut writer = RecordWriter::default();
    for c in changes {
        writer.push(c.quad.as_ref(), c.insert);
    }
    writer.parts().concat()
}

// N-Quads by hand: oxrdf's `Display` goes through `fmt` one character at a
// time, and a large graph write spent a sixth of its time there. Parsed
// IRIs, language tags and blank node labels need no escaping in N-Quads;
// literals escape their quotes, backslashes and line breaks.

fn write_subject(out: &mut Vec<u8>, subject: NamedOrBlankNodeRef<'_>) {
    match subject {
        NamedOrBlankNodeRef::NamedNode(n) => write_iri(out, n.as_str()),
        NamedOrBlankNodeRef::BlankNode(b) => write_blank(out, b.as_str()),
    }
}

fn write_term(out: &mut Vec<u8>, term: TermRef<'_>) {
    match term {
        TermRef::NamedNode(n) => write_iri(out, n.as_str()),
        TermRef::BlankNode(b) => write_blank(out, b.as_str()),
        TermRef::Literal(l) => {
            out.push(b'"');
            write_escaped(out, l.value());
            out.push(b'"');
            if let Some(language) = l.language() {
                out.push(b'@');
                out.extend_from_slice(language.as_bytes());
            } else if l.datatype() != xsd::STRING {
                out.extend_from_slice(b"^^");
                write_iri(out, l.datatype().as_str());
            }
        }
        #[allow(unreachable_patterns)] // RDF 1.2 triple terms, if enabled
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn write_iri(out: &mut Vec<u8>, iri: &str) {
    out.push(b'<');
    out.extend_from_slice(iri.as_bytes());
    out.push(b'>');
}

fn write_blank(out: &mut Vec<u8>, label: &str) {
    out.extend_from_slice(b"_:");
    out.extend_from_slice(label.as_bytes());
}

fn write_escaped(out: &mut Vec<u8>, value: &str) {
    let bytes = value.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(escape);
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
}

/// Calls `each` with every change of a payload, in order, without keeping
/// them (replaying a long log allocates per change only what `each` keeps).
pub fn decode_each(
    payload: &[u8],
    mut each: impl FnMut(oxrdf::QuadRef<'_>, bool) -> Result<(), String>,
) -> Result<(), String> {
    let newline = payload
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no flags line")?;
    let flags = &payload[..newline];
    let mut seen = 0;
    for (quad, &flag) in NQuadsParser::new()
        .for_slice(&payload[newline + 1..])
        .zip(flags)
    {
        let quad = quad.map_err(|e| e.to_string())?;
        each(quad.as_ref(), flag == b'+')?;
        seen += 1;
    }
    if seen != flags.len() {
        return Err(format!("{} flags for {seen} quads", flags.len()));
    }
    Ok(())
}

#[cfg(test)]
pub fn decode(payload: &[u8]) -> Result<Vec<QuadChange>, String> {
    let newline = payload
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no flags line")?;
    let flags = &payload[..newline];
    let mut changes = Vec::with_capacity(flags.len());
    for (quad, &flag) in NQuadsParser::new()
        .for_slice(&payload[newline + 1..])
        .zip(flags)
    {
        let quad = quad.map_err(|e| e.to_string())?;
        changes.push(QuadChange {
            quad,
            insert: flag == b'+',
        });
    }
    if changes.len() != flags.len() {
        return Err(format!("{} flags for {} quads", flags.len(), changes.len()));
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{BlankNode, GraphName, Literal, NamedNode, Quad};

    #[test]
    fn changes_round_trip() {
        let p = NamedNode::new_unchecked("http://e/p");
        let changes = vec![
            QuadChange {
                quad: Quad::new(
                    BlankNode::new_unchecked("b7"),
                    p.clone(),
                    Literal::new_language_tagged_literal_unchecked("a \"q\"\n", "en"),
                    GraphName::DefaultGraph,
                ),
                insert: true,
            },
            QuadChange {
                quad: Quad::new(
                    p.clone(),
                    p.clone(),
                    Literal::from(12),
                    NamedNode::new_unchecked("http://e/g"),
                ),
                insert: false,
            },
        ];
        assert_eq!(decode(&encode(&changes)).unwrap(), changes);
        let odd = [
            Literal::new_simple_literal("back\\slash \r\n tab\t é 🐦 \"\"\\\""),
            Literal::new_simple_literal(""),
            Literal::new_typed_literal("2026-11-25", xsd::DATE),
            Literal::new_typed_literal("plain", xsd::STRING),
            Literal::new_language_tagged_literal_unchecked("x", "en-gb"),
        ];
        let changes: Vec<QuadChange> = odd
            .into_iter()
            .enumerate()
            .map(|(i, o)| QuadChange {
                quad: Quad::new(
                    NamedNode::new_unchecked(format!("http://e/s{i}")),
                    p.clone(),
                    o,
                    BlankNode::new_unchecked(format!("g{i}")),
                ),
                insert: i % 2 == 0,
            })
            .collect();
        assert_eq!(decode(&encode(&changes)).unwrap(), changes);
        assert!(decode(b"++\n<a> <b> <c> .\n").is_err());
    }
}
