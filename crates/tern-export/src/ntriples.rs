//! N-Triples, and N-Quads (the same lines: results are in the default graph).

use crate::term::{write_iri, write_nt_term};
use crate::{FormatError, GraphWriter};
use oxrdf::{NamedOrBlankNode, Triple};

#[derive(Default)]
pub struct NTriplesWriter;

impl GraphWriter for NTriplesWriter {
    fn header(&mut self, _out: &mut Vec<u8>) {}

    #[inline]
    fn triple(&mut self, out: &mut Vec<u8>, triple: &Triple) -> Result<(), FormatError> {
        write_subject(out, &triple.subject);
        out.push(b' ');
        write_iri(out, triple.predicate.as_str());
        out.push(b' ');
        write_nt_term(out, triple.object.as_ref(), false);
        out.extend_from_slice(b" .\n");
        Ok(())
    }

    fn footer(&mut self, _out: &mut Vec<u8>) {}
}

pub(crate) fn write_subject(out: &mut Vec<u8>, subject: &NamedOrBlankNode) {
    match subject {
        NamedOrBlankNode::NamedNode(n) => write_iri(out, n.as_str()),
        NamedOrBlankNode::BlankNode(b) => {
            out.extend_from_slice(b"_:");
            out.extend_from_slice(b.as_str().as_bytes());
        }
    }
}
