//! JSON-LD in expanded form: an array of node objects, one per run of
//! triples with the same subject. A predicate seen again in the current run
//! starts a new node object (JSON keys must be unique; JSON-LD processors
//! merge node objects with the same `@id`).

use crate::escape::json_string;
use crate::statement::OpenStatement;
use crate::term::XSD_STRING;
use crate::{FormatError, GraphWriter};
use oxrdf::{NamedOrBlankNodeRef, TermRef, TripleRef};

#[derive(Default)]
pub struct JsonLdWriter {
    /// The open node object: its subject and the last predicate, whose
    /// array is open.
    node: OpenStatement,
    /// The other predicates of the open node object (JSON keys must be
    /// unique), in one reused buffer of NUL-separated IRIs.
    keys: String,
    /// Whether a node object was written before the next one (which then
    /// needs a comma).
    after_node: bool,
}

impl JsonLdWriter {
    fn close_node(&mut self, out: &mut Vec<u8>) {
        if self.node.close() {
            out.extend_from_slice(b"]}");
        }
        self.keys.clear();
    }

    fn has_key(&self, predicate: &str) -> bool {
        self.keys.split('\0').any(|k| k == predicate)
    }

    fn add_key(&mut self, predicate: &str) {
        self.keys.push_str(predicate);
        self.keys.push('\0');
    }
}

impl GraphWriter for JsonLdWriter {
    fn header(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"[");
    }

    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError> {
        let same_subject = self.node.same_subject(triple.subject);
        let predicate = triple.predicate.as_str();
        if same_subject && self.node.same_predicate(triple.predicate) {
            out.push(b',');
        } else {
            if !same_subject || self.has_key(predicate) {
                self.close_node(out);
                if self.after_node {
                    out.push(b',');
                }
                self.after_node = true;
                out.extend_from_slice(b"\n{\"@id\":\"");
                match triple.subject {
                    NamedOrBlankNodeRef::NamedNode(n) => json_string(out, n.as_str()),
                    NamedOrBlankNodeRef::BlankNode(b) => {
                        out.extend_from_slice(b"_:");
                        json_string(out, b.as_str());
                    }
                }
                out.extend_from_slice(b"\",\"");
                self.node.start(triple.subject, triple.predicate);
            } else {
                out.extend_from_slice(b"],\"");
                self.node.set_predicate(triple.predicate);
            }
            json_string(out, predicate);
            out.extend_from_slice(b"\":[");
            self.add_key(predicate);
        }
        match triple.object {
            TermRef::NamedNode(n) => {
                out.extend_from_slice(b"{\"@id\":\"");
                json_string(out, n.as_str());
                out.extend_from_slice(b"\"}");
            }
            TermRef::BlankNode(b) => {
                out.extend_from_slice(b"{\"@id\":\"_:");
                json_string(out, b.as_str());
                out.extend_from_slice(b"\"}");
            }
            TermRef::Literal(l) => {
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

    /// A run written elsewhere starts node objects of its own, after a comma
    /// when a node object comes before it.
    fn fork(&mut self) -> Option<Box<dyn GraphWriter>> {
        let node = self.node.fork();
        let fork = JsonLdWriter {
            after_node: self.after_node,
            node,
            keys: String::new(),
        };
        self.after_node = true;
        Some(Box::new(fork))
    }
}
