//! JSON-LD: an array of node objects, one per run of triples with the same
//! subject. A predicate seen again in the current run starts a new node
//! object (JSON keys must be unique; JSON-LD processors merge node objects
//! with the same `@id`).
//!
//! Expanded form by default. In compacted form (asked for with the media
//! type's `profile` parameter) the node objects sit in `@graph` under a
//! `@context` of the response's prefixes: IRIs are compact where a prefix
//! fits, classes (`rdf:type` IRIs) are the node's `@type`, plain strings,
//! canonical integers and booleans are bare JSON values, and other
//! literals keep `@value` with a compact `@type`.

use crate::escape::json_string;
use crate::prefixes::Prefixes;
use crate::statement::OpenStatement;
use crate::term::{XSD_BOOLEAN, XSD_INTEGER, XSD_STRING};
use crate::{FormatError, GraphWriter};
use oxrdf::{LiteralRef, NamedNodeRef, NamedOrBlankNodeRef, TermRef, TripleRef};
use std::sync::Arc;

/// Prefix names a JSON-LD processor would take for an IRI's scheme (`urn:x`
/// would expand as a compact IRI): never put in a context.
const SCHEME_NAMES: &[&str] = &[
    "urn", "mailto", "tag", "data", "file", "tel", "doi", "info", "isbn", "uuid", "geo", "http",
    "https", "ftp",
];

/// The key of a node's classes in compacted form. It takes the place of a
/// predicate in the open statement: no IRI starts with `@`.
const TYPE_KEY: &str = "@type";

#[derive(Default)]
pub struct JsonLdWriter {
    /// The prefixes of the context, in compacted form.
    compact: Option<Arc<Prefixes>>,
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
    /// The compacted form, with `prefixes` as its context.
    pub fn compacted(prefixes: Prefixes) -> JsonLdWriter {
        let mut context = Prefixes::default();
        for (name, namespace) in prefixes.iter() {
            if !SCHEME_NAMES.contains(&name) {
                context.add(name, namespace);
            }
        }
        JsonLdWriter {
            compact: Some(Arc::new(context)),
            ..JsonLdWriter::default()
        }
    }

    /// An IRI as a JSON string's content: compact when a prefix fits.
    fn iri(&self, out: &mut Vec<u8>, iri: &str) {
        if let Some((prefix, local)) = self.compact.as_ref().and_then(|p| p.shorten(iri)) {
            out.extend_from_slice(prefix.as_bytes());
            out.push(b':');
            out.extend_from_slice(local.as_bytes());
        } else {
            json_string(out, iri);
        }
    }

    fn literal(&self, out: &mut Vec<u8>, literal: LiteralRef<'_>) {
        let value = literal.value();
        let datatype = literal.datatype().as_str();
        if self.compact.is_some() && literal.language().is_none() {
            if datatype == XSD_STRING {
                out.push(b'"');
                json_string(out, value);
                out.push(b'"');
                return;
            }
            if (datatype == XSD_INTEGER && is_bare_integer(value))
                || (datatype == XSD_BOOLEAN && (value == "true" || value == "false"))
            {
                out.extend_from_slice(value.as_bytes());
                return;
            }
        }
        out.extend_from_slice(b"{\"@value\":\"");
        json_string(out, value);
        if let Some(language) = literal.language() {
            out.extend_from_slice(b"\",\"@language\":\"");
            json_string(out, language);
        } else if datatype != XSD_STRING {
            out.extend_from_slice(b"\",\"@type\":\"");
            self.iri(out, datatype);
        }
        out.extend_from_slice(b"\"}");
    }

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
        let Some(prefixes) = &self.compact else {
            out.extend_from_slice(b"[");
            return;
        };
        out.extend_from_slice(b"{\"@context\":{");
        for (k, (name, namespace)) in prefixes.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"\n  \"");
            json_string(out, name);
            out.extend_from_slice(b"\":\"");
            json_string(out, namespace);
            out.push(b'"');
        }
        out.extend_from_slice(b"},\n\"@graph\":[");
    }

    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError> {
        let same_subject = self.node.same_subject(triple.subject);
        // In compacted form a class is the node's `@type`, as JSON-LD
        // writes it (a blank node or literal object stays under `rdf:type`).
        let class = self.compact.is_some()
            && triple.predicate == oxrdf::vocab::rdf::TYPE
            && matches!(triple.object, TermRef::NamedNode(_));
        let key = if class {
            NamedNodeRef::new_unchecked(TYPE_KEY)
        } else {
            triple.predicate
        };
        let predicate = key.as_str();
        if same_subject && self.node.same_predicate(key) {
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
                    NamedOrBlankNodeRef::NamedNode(n) => self.iri(out, n.as_str()),
                    NamedOrBlankNodeRef::BlankNode(b) => {
                        out.extend_from_slice(b"_:");
                        json_string(out, b.as_str());
                    }
                }
                out.extend_from_slice(b"\",\"");
                self.node.start(triple.subject, key);
            } else {
                out.extend_from_slice(b"],\"");
                self.node.set_predicate(key);
            }
            self.iri(out, predicate);
            out.extend_from_slice(b"\":[");
            self.add_key(predicate);
        }
        match triple.object {
            TermRef::NamedNode(n) if class => {
                out.push(b'"');
                self.iri(out, n.as_str());
                out.push(b'"');
            }
            TermRef::NamedNode(n) => {
                out.extend_from_slice(b"{\"@id\":\"");
                self.iri(out, n.as_str());
                out.extend_from_slice(b"\"}");
            }
            TermRef::BlankNode(b) => {
                out.extend_from_slice(b"{\"@id\":\"_:");
                json_string(out, b.as_str());
                out.extend_from_slice(b"\"}");
            }
            TermRef::Literal(l) => self.literal(out, l),
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
        out.extend_from_slice(if self.compact.is_some() {
            b"\n]}\n".as_slice()
        } else {
            b"\n]\n"
        });
    }

    /// A run written elsewhere starts node objects of its own, after a comma
    /// when a node object comes before it.
    fn fork(&mut self) -> Option<Box<dyn GraphWriter>> {
        let node = self.node.fork();
        let fork = JsonLdWriter {
            compact: self.compact.clone(),
            after_node: self.after_node,
            node,
            keys: String::new(),
        };
        self.after_node = true;
        Some(Box::new(fork))
    }
}

/// An integer a JSON number carries exactly in every reader: canonical (no
/// sign but `-`, no leading zero) and at most 15 digits.
fn is_bare_integer(value: &str) -> bool {
    let digits = value.strip_prefix('-').unwrap_or(value);
    !digits.is_empty()
        && digits.len() <= 15
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && value != "-0"
}
