//! SPARQL 1.1 Query Results JSON, one solution per line.
//!
//! A failure after the first byte closes the bindings and adds a top-level
//! `"error"` member: the document stays parseable and says it is cut.

use crate::escape::json_string;
use crate::term::XSD_STRING;
use crate::SolutionsWriter;
use oxrdf::{TermRef, Variable};

#[derive(Default)]
pub struct JsonWriter {
    /// Each variable as `"name":` ready to copy, so rows do not re-escape names.
    keys: Vec<Vec<u8>>,
    rows: u64,
}

impl SolutionsWriter for JsonWriter {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]) {
        out.extend_from_slice(b"{\"head\":{\"vars\":[");
        self.keys.clear();
        for (i, v) in variables.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let mut key = vec![b'"'];
            json_string(&mut key, v.as_str());
            key.push(b'"');
            out.extend_from_slice(&key);
            key.push(b':');
            self.keys.push(key);
        }
        out.extend_from_slice(b"]},\"results\":{\"bindings\":[\n");
    }

    #[inline]
    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        if self.rows > 0 {
            out.extend_from_slice(b",\n");
        }
        self.rows += 1;
        out.push(b'{');
        let mut first = true;
        for (key, term) in self.keys.iter().zip(row) {
            let Some(term) = term else { continue };
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(key);
            write_term(out, *term);
        }
        out.push(b'}');
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\n]}}\n");
    }

    /// A top-level `"next"` member after the results: SPARQL JSON readers
    /// ignore members they do not know.
    fn continuation(&mut self, out: &mut Vec<u8>, token: &str) -> bool {
        out.extend_from_slice(b"\n]},\"next\":\"");
        json_string(out, token);
        out.extend_from_slice(b"\"}\n");
        true
    }

    fn error(&mut self, out: &mut Vec<u8>, message: &str) -> bool {
        out.extend_from_slice(b"\n]},\"error\":{\"incomplete\":true,\"message\":\"");
        json_string(out, message);
        out.extend_from_slice(b"\"}}\n");
        true
    }

    /// Rows after the first are preceded by a comma: a copy made after
    /// the first row writes every row that way.
    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        (self.rows > 0).then(|| {
            Box::new(JsonWriter {
                keys: self.keys.clone(),
                rows: self.rows,
            }) as Box<dyn SolutionsWriter>
        })
    }

    fn boolean(&mut self, out: &mut Vec<u8>, value: bool) {
        out.extend_from_slice(if value {
            b"{\"head\":{},\"boolean\":true}\n"
        } else {
            b"{\"head\":{},\"boolean\":false}\n"
        });
    }
}

fn write_term(out: &mut Vec<u8>, term: TermRef<'_>) {
    match term {
        TermRef::NamedNode(n) => {
            out.extend_from_slice(b"{\"type\":\"uri\",\"value\":\"");
            json_string(out, n.as_str());
            out.extend_from_slice(b"\"}");
        }
        TermRef::BlankNode(b) => {
            out.extend_from_slice(b"{\"type\":\"bnode\",\"value\":\"");
            json_string(out, b.as_str());
            out.extend_from_slice(b"\"}");
        }
        TermRef::Literal(l) => {
            out.extend_from_slice(b"{\"type\":\"literal\",\"value\":\"");
            json_string(out, l.value());
            if let Some(language) = l.language() {
                out.extend_from_slice(b"\",\"xml:lang\":\"");
                json_string(out, language);
            } else if l.datatype().as_str() != XSD_STRING {
                out.extend_from_slice(b"\",\"datatype\":\"");
                json_string(out, l.datatype().as_str());
            }
            out.extend_from_slice(b"\"}");
        }
        #[allow(unreachable_patterns)]
        other => {
            out.extend_from_slice(b"{\"type\":\"literal\",\"value\":\"");
            json_string(out, &other.to_string());
            out.extend_from_slice(b"\"}");
        }
    }
}
