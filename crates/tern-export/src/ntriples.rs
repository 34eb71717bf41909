//! N-Triples, and N-Quads (the same lines: results are in the default graph).

use crate::term::{write_iri, write_nt_term};
use crate::{FormatError, GraphWriter};
use oxrdf::{NamedOrBlankNodeRef, TripleRef};

#[derive(Default)]
pub struct NTriplesWriter;

impl GraphWriter for NTriplesWriter {
    fn header(&mut self, _out: &mut Vec<u8>) {}

    #[inline]
    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError> {
        write_subject(out, triple.subject);
        out.push(b' ');
        write_iri(out, triple.predicate.as_str());
        out.push(b' ');
        write_nt_term(out, triple.object, false);
        out.extend_from_slice(b" .\n");
        Ok(())
    }

    fn footer(&mut self, _out: &mut Vec<u8>) {}

    /// Every line stands alone.
    fn fork(&mut self) -> Option<Box<dyn GraphWriter>> {
        Some(Box::new(NTriplesWriter))
    }
}

pub(crate) fn write_subject(out: &mut Vec<u8>, subject: NamedOrBlankNodeRef<'_>) {
    match subject {
        NamedOrBlankNodeRef::NamedNode(n) => write_iri(out, n.as_str()),
        NamedOrBlankNodeRef::BlankNode(b) => {
            out.extend_from_slice(b"_:");
            out.extend_from_slice(b.as_str().as_bytes());
        }
    }
}
