//! SPARQL 1.1 Query Results TSV: terms in N-Triples syntax, tab-separated.

use crate::term::write_nt_term;
use crate::SolutionsWriter;
use oxrdf::{TermRef, Variable};

#[derive(Default)]
pub struct TsvWriter;

impl SolutionsWriter for TsvWriter {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]) {
        for (i, v) in variables.iter().enumerate() {
            if i > 0 {
                out.push(b'\t');
            }
            out.push(b'?');
            out.extend_from_slice(v.as_str().as_bytes());
        }
        out.push(b'\n');
    }

    #[inline]
    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        for (i, term) in row.iter().enumerate() {
            if i > 0 {
                out.push(b'\t');
            }
            if let Some(term) = term {
                write_nt_term(out, *term, true);
            }
        }
        out.push(b'\n');
    }

    fn footer(&mut self, _out: &mut Vec<u8>) {}

    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        Some(Box::new(TsvWriter))
    }

    fn boolean(&mut self, out: &mut Vec<u8>, value: bool) {
        out.extend_from_slice(if value { b"true\n" } else { b"false\n" });
    }
}
