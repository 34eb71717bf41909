//! The payload of a log record: the changes of one update, as text.
//!
//! Terms are written out, not as IDs: IDs of a store's new terms and the
//! base's IDs change with compaction, text does not. Blank nodes keep the
//! labels the index gives them (`b<number>`), which name the same node
//! before and after compaction. Layout: one line of `+`/`-` flags, one per
//! change, then the quads as N-Quads in the same order.

use oxrdf::{GraphName, Quad};
use oxttl::NQuadsParser;
use std::fmt::Write;

/// One change to one quad, in terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuadChange {
    pub quad: Quad,
    pub insert: bool,
}

pub fn encode(changes: &[QuadChange]) -> Vec<u8> {
    let mut out = String::with_capacity(changes.len() * 100);
    out.extend(changes.iter().map(|c| if c.insert { '+' } else { '-' }));
    out.push('\n');
    for c in changes {
        let q = &c.quad;
        let _ = write!(out, "{} {} {}", q.subject, q.predicate, q.object);
        if let GraphName::NamedNode(_) | GraphName::BlankNode(_) = q.graph_name {
            let _ = write!(out, " {}", q.graph_name);
        }
        out.push_str(" .\n");
    }
    out.into_bytes()
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
    use oxrdf::{BlankNode, Literal, NamedNode};

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
        assert!(decode(b"++\n<a> <b> <c> .\n").is_err());
    }
}
