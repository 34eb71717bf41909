//! A graph writer seen as a solutions writer of rows `?subject ?predicate
//! ?object`: the engine hands out CONSTRUCT and DESCRIBE results as such
//! rows of IDs, so they are decoded and written on all cores exactly as a
//! SELECT result is.

use crate::{FormatError, GraphWriter, SolutionsWriter};
use oxrdf::{NamedOrBlankNodeRef, TermRef, TripleRef, Variable};

pub struct TripleRows {
    writer: Box<dyn GraphWriter>,
    failure: Option<FormatError>,
}

impl TripleRows {
    pub fn new(writer: Box<dyn GraphWriter>) -> TripleRows {
        TripleRows {
            writer,
            failure: None,
        }
    }
}

impl SolutionsWriter for TripleRows {
    fn header(&mut self, out: &mut Vec<u8>, _variables: &[Variable]) {
        self.writer.header(out);
    }

    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
        if self.failure.is_some() {
            return;
        }
        // The engine makes well-formed triples only.
        let [Some(subject), Some(TermRef::NamedNode(predicate)), Some(object)] = *row else {
            return;
        };
        let subject = match subject {
            TermRef::NamedNode(n) => NamedOrBlankNodeRef::NamedNode(n),
            TermRef::BlankNode(b) => NamedOrBlankNodeRef::BlankNode(b),
            _ => return,
        };
        if let Err(e) = self
            .writer
            .triple(out, TripleRef::new(subject, predicate, object))
        {
            self.failure = Some(e);
        }
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        self.writer.footer(out);
    }

    /// Graph results have no boolean form; never called.
    fn boolean(&mut self, _out: &mut Vec<u8>, _value: bool) {}

    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        let fork = self.writer.fork()?;
        Some(Box::new(TripleRows::new(fork)))
    }

    fn take_failure(&mut self) -> Option<FormatError> {
        self.failure.take()
    }
}
