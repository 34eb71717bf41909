//! Compact Turtle: `@prefix` lines for the query's and well-known prefixes,
//! prefixed names where they are safe, `a` for rdf:type, bare integers,
//! decimals and booleans, and `;` / `,` for consecutive triples that share
//! their subject (and predicate). Triples are not sorted: grouping only
//! follows the order the engine produces, so memory stays bounded.

use crate::escape::nt_string;
use crate::ntriples::write_subject;
use crate::prefixes::{NamespaceMemo, Prefixes};
use crate::statement::OpenStatement;
use crate::term::{write_iri, XSD_STRING};
use crate::{FormatError, GraphWriter};
use oxrdf::{LiteralRef, NamedNodeRef, NamedOrBlankNodeRef, TermRef, TripleRef};
use std::sync::Arc;

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

pub struct TurtleWriter {
    /// Shared with the forks that write runs of a batch on other cores.
    prefixes: Arc<Prefixes>,
    memo: NamespaceMemo,
    statement: OpenStatement,
}

impl TurtleWriter {
    pub fn new(prefixes: Prefixes) -> TurtleWriter {
        TurtleWriter {
            prefixes: Arc::new(prefixes),
            memo: NamespaceMemo::default(),
            statement: OpenStatement::default(),
        }
    }

    fn iri(&mut self, out: &mut Vec<u8>, iri: &str) {
        match self.prefixes.shorten_memo(iri, &mut self.memo) {
            Some((prefix, local)) => {
                out.extend_from_slice(prefix.as_bytes());
                out.push(b':');
                out.extend_from_slice(local.as_bytes());
            }
            None => write_iri(out, iri),
        }
    }

    fn subject(&mut self, out: &mut Vec<u8>, subject: NamedOrBlankNodeRef<'_>) {
        match subject {
            NamedOrBlankNodeRef::NamedNode(n) => self.iri(out, n.as_str()),
            other => write_subject(out, other),
        }
    }

    fn predicate(&mut self, out: &mut Vec<u8>, predicate: NamedNodeRef<'_>) {
        if predicate.as_str() == RDF_TYPE {
            out.push(b'a');
        } else {
            self.iri(out, predicate.as_str());
        }
    }

    fn object(&mut self, out: &mut Vec<u8>, object: TermRef<'_>) {
        match object {
            TermRef::NamedNode(n) => self.iri(out, n.as_str()),
            TermRef::BlankNode(b) => {
                out.extend_from_slice(b"_:");
                out.extend_from_slice(b.as_str().as_bytes());
            }
            TermRef::Literal(l) => self.literal(out, l),
            #[allow(unreachable_patterns)]
            other => out.extend_from_slice(other.to_string().as_bytes()),
        }
    }

    fn literal(&mut self, out: &mut Vec<u8>, literal: LiteralRef<'_>) {
        let value = literal.value();
        let datatype = literal.datatype().as_str();
        if let Some(local) = datatype.strip_prefix(XSD) {
            let bare = match local {
                "integer" => is_integer(value),
                "decimal" => is_decimal(value),
                "boolean" => value == "true" || value == "false",
                _ => false,
            };
            if bare {
                out.extend_from_slice(value.as_bytes());
                return;
            }
        }
        out.push(b'"');
        nt_string(out, value);
        out.push(b'"');
        if let Some(language) = literal.language() {
            out.push(b'@');
            out.extend_from_slice(language.as_bytes());
        } else if datatype != XSD_STRING {
            out.extend_from_slice(b"^^");
            self.iri(out, datatype);
        }
    }
}

fn is_integer(value: &str) -> bool {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn is_decimal(value: &str) -> bool {
    let unsigned = value.strip_prefix(['+', '-']).unwrap_or(value);
    match unsigned.split_once('.') {
        Some((int, frac)) => {
            int.bytes().all(|b| b.is_ascii_digit())
                && !frac.is_empty()
                && frac.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

impl GraphWriter for TurtleWriter {
    fn header(&mut self, out: &mut Vec<u8>) {
        for (prefix, namespace) in self.prefixes.iter() {
            out.extend_from_slice(b"@prefix ");
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(b": ");
            write_iri(out, namespace);
            out.extend_from_slice(b" .\n");
        }
        out.push(b'\n');
    }

    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError> {
        if self.statement.same_subject(triple.subject) {
            if self.statement.same_predicate(triple.predicate) {
                out.extend_from_slice(b" ,\n\t\t");
            } else {
                out.extend_from_slice(b" ;\n\t");
                self.predicate(out, triple.predicate);
                out.push(b' ');
                self.statement.set_predicate(triple.predicate);
            }
        } else {
            if self.statement.is_open() {
                out.extend_from_slice(b" .\n");
            }
            self.subject(out, triple.subject);
            out.push(b' ');
            self.predicate(out, triple.predicate);
            out.push(b' ');
            self.statement.start(triple.subject, triple.predicate);
        }
        self.object(out, triple.object);
        Ok(())
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        if self.statement.close() {
            out.extend_from_slice(b" .\n");
        }
    }

    /// A run of triples written elsewhere starts a statement of its own.
    fn fork(&mut self) -> Option<Box<dyn GraphWriter>> {
        Some(Box::new(TurtleWriter {
            prefixes: Arc::clone(&self.prefixes),
            memo: NamespaceMemo::default(),
            statement: self.statement.fork(),
        }))
    }
}
