//! SPARQL 1.1 Query Results CSV: plain values (no term kinds), CRLF line ends.

use crate::escape::csv_field;
use crate::SolutionsWriter;
use oxrdf::{TermRef, Variable};

#[derive(Default)]
pub struct CsvWriter;

impl SolutionsWriter for CsvWriter {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]) {
        for (i, v) in variables.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            csv_field(out, v.as_str());
        }
        out.extend_from_slice(b"\r\n");
    }

    #[inline]
    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        for (i, term) in row.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match term {
                Some(TermRef::NamedNode(n)) => csv_field(out, n.as_str()),
                Some(TermRef::BlankNode(b)) => {
                    out.extend_from_slice(b"_:");
                    out.extend_from_slice(b.as_str().as_bytes());
                }
                Some(TermRef::Literal(l)) => csv_field(out, l.value()),
                #[allow(unreachable_patterns)]
                Some(other) => csv_field(out, &other.to_string()),
                None => {}
            }
        }
        out.extend_from_slice(b"\r\n");
    }

    fn footer(&mut self, _out: &mut Vec<u8>) {}

    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        Some(Box::new(CsvWriter))
    }

    fn boolean(&mut self, out: &mut Vec<u8>, value: bool) {
        out.extend_from_slice(if value { b"true\r\n" } else { b"false\r\n" });
    }
}
