//! Terms in N-Triples syntax, the shared notation of TSV, N-Triples and N-Quads.

use crate::escape;
use oxrdf::{LiteralRef, TermRef};

pub const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
pub const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
pub const XSD_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";
pub const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

/// Writes a term as N-Triples; `tsv` also escapes tabs.
pub fn write_nt_term(out: &mut Vec<u8>, term: TermRef<'_>, tsv: bool) {
    match term {
        TermRef::NamedNode(n) => write_iri(out, n.as_str()),
        TermRef::BlankNode(b) => {
            out.extend_from_slice(b"_:");
            out.extend_from_slice(b.as_str().as_bytes());
        }
        TermRef::Literal(l) => write_nt_literal(out, l, tsv),
        #[allow(unreachable_patterns)]
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// IRIs of the store are valid IRIs: none holds `<`, `>`, `"`, space or `\`,
/// so they are written as they are.
#[inline]
pub fn write_iri(out: &mut Vec<u8>, iri: &str) {
    out.push(b'<');
    out.extend_from_slice(iri.as_bytes());
    out.push(b'>');
}

pub fn write_nt_literal(out: &mut Vec<u8>, literal: LiteralRef<'_>, tsv: bool) {
    out.push(b'"');
    if tsv {
        escape::tsv_string(out, literal.value());
    } else {
        escape::nt_string(out, literal.value());
    }
    out.push(b'"');
    if let Some(language) = literal.language() {
        out.push(b'@');
        out.extend_from_slice(language.as_bytes());
    } else {
        let datatype = literal.datatype().as_str();
        if datatype != XSD_STRING {
            out.extend_from_slice(b"^^");
            write_iri(out, datatype);
        }
    }
}
