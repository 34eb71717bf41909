//! The statement a grouping writer (Turtle, JSON-LD, RDF/XML) left open:
//! consecutive triples with its subject (and predicate) are written into
//! it. Kept in reused buffers, so that grouping costs no allocation per
//! triple.

use oxrdf::{NamedNodeRef, NamedOrBlankNodeRef};

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// Nothing open: the next triple starts the first statement.
    #[default]
    Closed,
    /// Open, with the subject and predicate below.
    Known,
    /// Open, but written by another writer: the run of triples before a
    /// fork's (see [`OpenStatement::fork`]). It is closed before the next
    /// triple, whatever its subject.
    Unknown,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct OpenStatement {
    open: Open,
    subject: String,
    blank: bool,
    predicate: String,
}

impl OpenStatement {
    pub fn is_open(&self) -> bool {
        self.open != Open::Closed
    }

    pub fn same_subject(&self, subject: NamedOrBlankNodeRef<'_>) -> bool {
        self.open == Open::Known
            && self.blank == subject.is_blank_node()
            && self.subject == subject_text(subject)
    }

    pub fn same_predicate(&self, predicate: NamedNodeRef<'_>) -> bool {
        self.open == Open::Known && self.predicate == predicate.as_str()
    }

    /// A new statement with this subject and predicate.
    pub fn start(&mut self, subject: NamedOrBlankNodeRef<'_>, predicate: NamedNodeRef<'_>) {
        self.open = Open::Known;
        self.blank = subject.is_blank_node();
        self.subject.clear();
        self.subject.push_str(subject_text(subject));
        self.set_predicate(predicate);
    }

    pub fn set_predicate(&mut self, predicate: NamedNodeRef<'_>) {
        self.predicate.clear();
        self.predicate.push_str(predicate.as_str());
    }

    /// Closes the open statement; whether there was one.
    pub fn close(&mut self) -> bool {
        std::mem::take(&mut self.open) != Open::Closed
    }

    /// The state for a writer that writes the triples after the ones this
    /// writer (and the forks made before) will have written. Forks are made
    /// one per run of rows, in order, and every run writes at least one
    /// triple: the first fork is open where this writer is, each later one
    /// follows an open statement, and so does this writer once the runs
    /// are written.
    pub fn fork(&mut self) -> OpenStatement {
        let fork = OpenStatement {
            open: if self.is_open() {
                Open::Unknown
            } else {
                Open::Closed
            },
            ..OpenStatement::default()
        };
        self.open = Open::Unknown;
        fork
    }
}

/// An IRI's text or a blank node's label.
pub(crate) fn subject_text(subject: NamedOrBlankNodeRef<'_>) -> &str {
    match subject {
        NamedOrBlankNodeRef::NamedNode(n) => n.as_str(),
        NamedOrBlankNodeRef::BlankNode(b) => b.as_str(),
    }
}
