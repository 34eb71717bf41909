//! Entry points for the fuzz targets (`fuzz/`, feature `fuzzing`): the
//! loader's parsing and term encoding on bytes from memory.

use super::input::Format;
use super::piece::{parse_lines, PieceEncoder};
use oxttl::{TriGParser, TurtleParser};

/// N-Triples (`nquads` false) or N-Quads lines, parsed and encoded the way
/// the loader does (errors are collected, never raised).
pub fn lines(data: &[u8], nquads: bool) {
    let format = if nquads {
        Format::NQuads
    } else {
        Format::NTriples
    };
    for stop in [false, true] {
        let _ = parse_lines(data, format, "fuzz", 0, None, stop);
    }
}

/// Turtle (`trig` false) or TriG text parsed by oxttl, each statement
/// encoded as the loader encodes it.
pub fn turtle(data: &[u8], trig: bool) {
    let mut encoder = PieceEncoder::new(None);
    if trig {
        for quad in TriGParser::new().for_slice(data).flatten() {
            encoder.push(quad.as_ref());
        }
    } else {
        for triple in TurtleParser::new().for_slice(data).flatten() {
            encoder.push(triple.as_ref().in_graph(oxrdf::GraphNameRef::DefaultGraph));
        }
    }
    let _ = encoder.finish();
}
