//! JSON-LD in expanded form: an array of node objects, one per run of
//! triples with the same subject. A predicate seen again in the current run
//! starts a new node object (JSON keys must be unique; JSON-LD processors
//! merge node objects with the same `@id`).

use crate::escape::json_string;
use crate::term::XSD_STRING;
use crate::{FormatError, GraphWriter};
use oxrdf::{NamedNode, NamedOrBlankNode, Term, Triple};

#[derive(Default)]
pub struct JsonLdWriter {
    subject: Option<NamedOrBlankNode>,
    /// Predicates of the open node object; the last one's array is open.
    predicates: Vec<NamedNode>,
    nodes: u64,
}

impl JsonLdWriter {
    fn close_node(&mut self, out: &mut Vec<u8>) {
        if self.subject.take().is_some() {
            out.extend_from_slice(b"]}");
        }
        self.predicates.clear();
    }
}

impl GraphWriter for JsonLdWriter {
    fn header(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"[");
    }

    fn triple(&mut self, out: &mut Vec<u8>, triple: &Triple) -> Result<(), FormatError> {
        let same_subject = self.subject.as_ref() == Some(&triple.subject);
        let same_predicate = same_subject && self.predicates.last() == Some(&triple.predicate);
        if same_predicate {
            out.push(b',');
        } else {
            if !same_subject || self.predicates.contains(&triple.predicate) {
                self.close_node(out);
                if self.nodes > 0 {
                    out.push(b',');
                }
                self.nodes += 1;
                out.extend_from_slice(b"\n{\"@id\":\"");
                match &triple.subject {
                    NamedOrBlankNode::NamedNode(n) => json_string(out, n.as_str()),
                    NamedOrBlankNode::BlankNode(b) => {
                        out.extend_from_slice(b"_:");
                        json_string(out, b.as_str());
                    }
                }
                out.extend_from_slice(b"\",\"");
                self.subject = Some(triple.subject.clone());
            } else {
                out.extend_from_slice(b"],\"");
            }
            json_string(out, triple.predicate.as_str());
            out.extend_from_slice(b"\":[");
            self.predicates.push(triple.predicate.clone());
        }
        match &triple.object {
            Term::NamedNode(n) => {
                out.extend_from_slice(b"{\"@id\":\"");
                json_string(out, n.as_str());
                out.extend_from_slice(b"\"}");
            }
            Term::BlankNode(b) => {
                out.extend_from_slice(b"{\"@id\":\"_:");
                json_string(out, b.as_str());
                out.extend_from_slice(b"\"}");
            }
            Term::Literal(l) => {
                out.extend_from_slice(b"{\"@value\":\"");
                json_string(out, l.value());
                if let Some(language) = l.language() {
                    out.extend_from_slice(b"\",\"@language\":\"");
                    json_string(out, language);
                } else if l.datatype().as_str() != XSD_STRING {
                    out.extend_from_slice(b"\",\"@type\":\"");
                    json_string(out, l.datatype().as_str());
                }
                out.extend_from_slice(b"\"}");
            }
            #[allow(unreachable_patterns)]
            _ => {
                return Err(FormatError(
                    "JSON-LD cannot express triple terms".to_owned(),
                ))
            }
        }
        Ok(())
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        self.close_node(out);
        out.extend_from_slice(b"\n]\n");
    }
}
