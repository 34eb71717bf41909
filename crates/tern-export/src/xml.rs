//! SPARQL Query Results XML Format.
//!
//! A failure after the first byte closes `<results>` and adds a
//! `<tern:error>` element in Tern's namespace before `</sparql>`.

use crate::escape::xml_text;
use crate::term::XSD_STRING;
use crate::SolutionsWriter;
use oxrdf::{TermRef, Variable};

/// The namespace of Tern's in-band error element.
pub const TERN_ERROR_NS: &str = "urn:tern:error";

const PROLOGUE: &[u8] =
    b"<?xml version=\"1.0\"?>\n<sparql xmlns=\"http://www.w3.org/2005/sparql-results#\">\n";

#[derive(Default)]
pub struct XmlWriter {
    /// `<binding name="v">` per variable, ready to copy.
    openings: Vec<Vec<u8>>,
}

impl SolutionsWriter for XmlWriter {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]) {
        out.extend_from_slice(PROLOGUE);
        out.extend_from_slice(b"<head>");
        self.openings.clear();
        for v in variables {
            out.extend_from_slice(b"<variable name=\"");
            xml_text(out, v.as_str());
            out.extend_from_slice(b"\"/>");
            let mut opening = b"<binding name=\"".to_vec();
            xml_text(&mut opening, v.as_str());
            opening.extend_from_slice(b"\">");
            self.openings.push(opening);
        }
        out.extend_from_slice(b"</head>\n<results>\n");
    }

    #[inline]
    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        out.extend_from_slice(b"<result>");
        for (opening, term) in self.openings.iter().zip(row) {
            let Some(term) = term else { continue };
            out.extend_from_slice(opening);
            write_term(out, *term);
            out.extend_from_slice(b"</binding>");
        }
        out.extend_from_slice(b"</result>\n");
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"</results>\n</sparql>\n");
    }

    fn error(&mut self, out: &mut Vec<u8>, message: &str) -> bool {
        out.extend_from_slice(b"</results>\n<tern:error xmlns:tern=\"");
        out.extend_from_slice(TERN_ERROR_NS.as_bytes());
        out.extend_from_slice(b"\" incomplete=\"true\">");
        xml_text(out, message);
        out.extend_from_slice(b"</tern:error>\n</sparql>\n");
        true
    }

    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        Some(Box::new(XmlWriter {
            openings: self.openings.clone(),
        }))
    }

    fn boolean(&mut self, out: &mut Vec<u8>, value: bool) {
        out.extend_from_slice(PROLOGUE);
        out.extend_from_slice(b"<head/>\n<boolean>");
        out.extend_from_slice(if value { b"true" } else { b"false" });
        out.extend_from_slice(b"</boolean>\n</sparql>\n");
    }
}

fn write_term(out: &mut Vec<u8>, term: TermRef<'_>) {
    match term {
        TermRef::NamedNode(n) => {
            out.extend_from_slice(b"<uri>");
            xml_text(out, n.as_str());
            out.extend_from_slice(b"</uri>");
        }
        TermRef::BlankNode(b) => {
            out.extend_from_slice(b"<bnode>");
            xml_text(out, b.as_str());
            out.extend_from_slice(b"</bnode>");
        }
        TermRef::Literal(l) => {
            if let Some(language) = l.language() {
                out.extend_from_slice(b"<literal xml:lang=\"");
                xml_text(out, language);
                out.extend_from_slice(b"\">");
            } else if l.datatype().as_str() != XSD_STRING {
                out.extend_from_slice(b"<literal datatype=\"");
                xml_text(out, l.datatype().as_str());
                out.extend_from_slice(b"\">");
            } else {
                out.extend_from_slice(b"<literal>");
            }
            xml_text(out, l.value());
            out.extend_from_slice(b"</literal>");
        }
        #[allow(unreachable_patterns)]
        other => {
            out.extend_from_slice(b"<literal>");
            xml_text(out, &other.to_string());
            out.extend_from_slice(b"</literal>");
        }
    }
}
