//! RDF/XML: one `rdf:Description` per run of triples with the same subject.
//! Predicates are split into namespace and XML local name; namespaces without
//! a prefix are declared on the property element itself, so the writer never
//! needs to see the whole result first.

use crate::escape::xml_text;
use crate::prefixes::Prefixes;
use crate::statement::OpenStatement;
use crate::term::XSD_STRING;
use crate::{FormatError, GraphWriter};
use oxrdf::{NamedOrBlankNodeRef, TermRef, TripleRef};

const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

pub struct RdfXmlWriter {
    prefixes: Prefixes,
    description: OpenStatement,
}

impl RdfXmlWriter {
    pub fn new(prefixes: Prefixes) -> RdfXmlWriter {
        RdfXmlWriter {
            prefixes,
            description: OpenStatement::default(),
        }
    }
}

impl GraphWriter for RdfXmlWriter {
    fn header(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rdf:RDF");
        for (prefix, namespace) in self.prefixes.iter() {
            if !usable(prefix, namespace) {
                continue;
            }
            out.extend_from_slice(b" xmlns:");
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(b"=\"");
            xml_text(out, namespace);
            out.push(b'"');
        }
        if !self.prefixes.iter().any(|(p, ns)| p == "rdf" && ns == RDF) {
            out.extend_from_slice(b" xmlns:rdf=\"");
            out.extend_from_slice(RDF.as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(b">\n");
    }

    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError> {
        let predicate = triple.predicate.as_str();
        let split = split_ncname(predicate).ok_or_else(|| {
            FormatError(format!(
                "the predicate <{predicate}> has no XML local name, so RDF/XML cannot express it"
            ))
        })?;
        let (namespace, local) = predicate.split_at(split);
        if !self.description.same_subject(triple.subject) {
            if self.description.is_open() {
                out.extend_from_slice(b"</rdf:Description>\n");
            }
            match triple.subject {
                NamedOrBlankNodeRef::NamedNode(n) => {
                    out.extend_from_slice(b"<rdf:Description rdf:about=\"");
                    xml_text(out, n.as_str());
                }
                NamedOrBlankNodeRef::BlankNode(b) => {
                    out.extend_from_slice(b"<rdf:Description rdf:nodeID=\"");
                    xml_text(out, b.as_str());
                }
            }
            out.extend_from_slice(b"\">\n");
            self.description.start(triple.subject, triple.predicate);
        }
        // The element name, and a local declaration when the namespace has no
        // usable prefix on the root.
        let prefix = self
            .prefixes
            .iter()
            .find(|(p, ns)| *ns == namespace && usable(p, ns))
            .map(|(p, _)| p);
        let name_start = out.len() + 2;
        out.extend_from_slice(b"\t<");
        match prefix {
            Some(p) => out.extend_from_slice(p.as_bytes()),
            None if namespace == RDF => out.extend_from_slice(b"rdf"),
            None => out.extend_from_slice(b"ns0"),
        }
        out.push(b':');
        out.extend_from_slice(local.as_bytes());
        let name_end = out.len();
        if prefix.is_none() && namespace != RDF {
            out.extend_from_slice(b" xmlns:ns0=\"");
            xml_text(out, namespace);
            out.push(b'"');
        }
        match triple.object {
            TermRef::NamedNode(n) => {
                out.extend_from_slice(b" rdf:resource=\"");
                xml_text(out, n.as_str());
                out.extend_from_slice(b"\"/>\n");
            }
            TermRef::BlankNode(b) => {
                out.extend_from_slice(b" rdf:nodeID=\"");
                xml_text(out, b.as_str());
                out.extend_from_slice(b"\"/>\n");
            }
            TermRef::Literal(l) => {
                if let Some(language) = l.language() {
                    out.extend_from_slice(b" xml:lang=\"");
                    xml_text(out, language);
                    out.push(b'"');
                } else if l.datatype().as_str() != XSD_STRING {
                    out.extend_from_slice(b" rdf:datatype=\"");
                    xml_text(out, l.datatype().as_str());
                    out.push(b'"');
                }
                out.push(b'>');
                xml_text(out, l.value());
                out.extend_from_slice(b"</");
                out.extend_from_within(name_start..name_end);
                out.extend_from_slice(b">\n");
            }
            #[allow(unreachable_patterns)]
            _ => {
                return Err(FormatError(
                    "RDF/XML cannot express triple terms".to_owned(),
                ))
            }
        }
        Ok(())
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        if self.description.close() {
            out.extend_from_slice(b"</rdf:Description>\n");
        }
        out.extend_from_slice(b"</rdf:RDF>\n");
    }
}

/// Prefixes that can be declared on the root: XML names, and `rdf` only for
/// the RDF namespace (the writer's own elements need it).
fn usable(prefix: &str, namespace: &str) -> bool {
    is_ncname(prefix) && (prefix != "rdf" || namespace == RDF)
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || (!c.is_ascii() && c.is_alphabetic())
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit() || c == '-' || c == '.'
}

fn is_ncname(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

/// Where the longest XML local name at the end of `iri` starts.
fn split_ncname(iri: &str) -> Option<usize> {
    let mut start = iri.len();
    for (i, c) in iri.char_indices().rev() {
        if !is_name_char(c) {
            break;
        }
        start = i;
    }
    // The local name must begin with a name-start character.
    let local = &iri[start..];
    let skip = local.find(is_name_start)?;
    let split = start + skip;
    (split > 0).then_some(split)
}
