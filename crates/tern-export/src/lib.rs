//! Result writers shared by `tern query` and `tern serve`.
//!
//! Every writer appends text straight into a caller-owned `Vec<u8>`: the
//! caller decides when a buffer is full (the server hands ~1 MiB chunks to
//! the network), and no writer allocates per row. SELECT/ASK: SPARQL JSON,
//! XML, CSV, TSV (and Arrow IPC); CONSTRUCT/DESCRIBE: compact Turtle,
//! N-Triples, N-Quads, RDF/XML, JSON-LD.

mod arrow;
mod csv;
pub mod escape;
mod json;
mod jsonld;
mod ntriples;
pub mod prefixes;
mod rdfxml;
mod statement;
pub mod term;
mod triple_rows;
mod tsv;
mod turtle;
mod xml;

pub use arrow::ArrowWriter;
pub use csv::CsvWriter;
pub use json::JsonWriter;
pub use jsonld::JsonLdWriter;
pub use ntriples::NTriplesWriter;
pub use prefixes::Prefixes;
pub use rdfxml::RdfXmlWriter;
pub use triple_rows::TripleRows;
pub use tsv::TsvWriter;
pub use turtle::TurtleWriter;
pub use xml::{XmlWriter, TERN_ERROR_NS};

use oxrdf::{Term, TermRef, Triple, TripleRef, Variable};
use std::io::Write;

/// Formats for SELECT and ASK results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolutionsFormat {
    Json,
    Xml,
    Csv,
    Tsv,
    /// Apache Arrow IPC stream; SELECT only.
    Arrow,
    /// Apache Parquet, typed as Arrow; SELECT only.
    Parquet,
}

/// Formats for CONSTRUCT and DESCRIBE results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphFormat {
    Turtle,
    NTriples,
    NQuads,
    RdfXml,
    JsonLd,
    /// JSON-LD in compacted form, under a context of the prefixes (asked
    /// for with `profile="http://www.w3.org/ns/json-ld#compacted"`).
    JsonLdCompacted,
}

impl SolutionsFormat {
    pub const ALL: [SolutionsFormat; 6] = [
        SolutionsFormat::Json,
        SolutionsFormat::Xml,
        SolutionsFormat::Csv,
        SolutionsFormat::Tsv,
        SolutionsFormat::Arrow,
        SolutionsFormat::Parquet,
    ];

    pub fn media_type(self) -> &'static str {
        match self {
            SolutionsFormat::Json => "application/sparql-results+json",
            SolutionsFormat::Xml => "application/sparql-results+xml",
            SolutionsFormat::Csv => "text/csv",
            SolutionsFormat::Tsv => "text/tab-separated-values",
            SolutionsFormat::Arrow => "application/vnd.apache.arrow.stream",
            SolutionsFormat::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// Short name, as in `format=` and metrics labels.
    pub fn name(self) -> &'static str {
        match self {
            SolutionsFormat::Json => "json",
            SolutionsFormat::Xml => "xml",
            SolutionsFormat::Csv => "csv",
            SolutionsFormat::Tsv => "tsv",
            SolutionsFormat::Arrow => "arrow",
            SolutionsFormat::Parquet => "parquet",
        }
    }

    pub fn writer(self) -> Box<dyn SolutionsWriter> {
        match self {
            SolutionsFormat::Json => Box::<JsonWriter>::default(),
            SolutionsFormat::Xml => Box::<XmlWriter>::default(),
            SolutionsFormat::Csv => Box::new(CsvWriter),
            SolutionsFormat::Tsv => Box::new(TsvWriter),
            SolutionsFormat::Arrow => Box::<ArrowWriter>::default(),
            SolutionsFormat::Parquet => Box::new(ArrowWriter::parquet()),
        }
    }
}

impl GraphFormat {
    pub const ALL: [GraphFormat; 5] = [
        GraphFormat::Turtle,
        GraphFormat::NTriples,
        GraphFormat::NQuads,
        GraphFormat::RdfXml,
        GraphFormat::JsonLd,
    ];

    pub fn media_type(self) -> &'static str {
        match self {
            GraphFormat::Turtle => "text/turtle",
            GraphFormat::NTriples => "application/n-triples",
            GraphFormat::NQuads => "application/n-quads",
            GraphFormat::RdfXml => "application/rdf+xml",
            GraphFormat::JsonLd => "application/ld+json",
            GraphFormat::JsonLdCompacted => {
                "application/ld+json; profile=\"http://www.w3.org/ns/json-ld#compacted\""
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::Turtle => "turtle",
            GraphFormat::NTriples => "ntriples",
            GraphFormat::NQuads => "nquads",
            GraphFormat::RdfXml => "rdfxml",
            GraphFormat::JsonLd => "jsonld",
            GraphFormat::JsonLdCompacted => "jsonld-compacted",
        }
    }

    /// Whether the format abbreviates IRIs with prefixes (so that the data's
    /// own namespaces are worth finding for it).
    pub fn uses_prefixes(self) -> bool {
        matches!(
            self,
            GraphFormat::Turtle | GraphFormat::RdfXml | GraphFormat::JsonLdCompacted
        )
    }

    /// A writer; `prefixes` shorten IRIs where the format has prefixes.
    pub fn writer(self, prefixes: Prefixes) -> Box<dyn GraphWriter> {
        match self {
            GraphFormat::Turtle => Box::new(TurtleWriter::new(prefixes)),
            GraphFormat::NTriples | GraphFormat::NQuads => Box::new(NTriplesWriter),
            GraphFormat::RdfXml => Box::new(RdfXmlWriter::new(prefixes)),
            GraphFormat::JsonLd => Box::<JsonLdWriter>::default(),
            GraphFormat::JsonLdCompacted => Box::new(JsonLdWriter::compacted(prefixes)),
        }
    }
}

/// An owned row's terms, borrowed for [`SolutionsWriter::row`].
pub fn term_refs(row: &[Option<Term>]) -> Vec<Option<TermRef<'_>>> {
    row.iter().map(|t| t.as_ref().map(Term::as_ref)).collect()
}

/// Writes SELECT solutions (and ASK answers) into buffers.
pub trait SolutionsWriter: Send {
    fn header(&mut self, out: &mut Vec<u8>, variables: &[Variable]);
    /// One solution: a value or nothing per variable of the header. Terms
    /// are borrowed, so that large results are written straight from the
    /// index's decoded vocabulary (see [`term_refs`] for owned rows).
    fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]);
    fn footer(&mut self, out: &mut Vec<u8>);
    /// Ends a cut result with an in-band error marker instead of the footer;
    /// false when the format has no place for one.
    fn error(&mut self, _out: &mut Vec<u8>, _message: &str) -> bool {
        false
    }
    /// Ends one page of a paged result with the continuation token that
    /// fetches the next page, instead of the footer; false when the format
    /// has no place for it (the token then only travels in a header).
    fn continuation(&mut self, _out: &mut Vec<u8>, _token: &str) -> bool {
        false
    }
    /// A whole ASK result.
    fn boolean(&mut self, out: &mut Vec<u8>, value: bool);

    /// A writer of the rows that follow the rows this one wrote, so that
    /// the rows of a large batch are written on several cores and their
    /// bytes appended in order. `None` where a row's bytes depend on the
    /// rows before it in ways a copy cannot know (Arrow's and Parquet's
    /// before the columns' types are chosen).
    /// Called once per run, in the runs' order, before any is written; a
    /// writer whose bytes depend on what came before (Turtle's open
    /// statement) learns from it that others wrote the rows after its own.
    fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
        None
    }

    /// How many consecutive rows a fork is best given: where a fork's rows
    /// make a unit of the format's own (a Parquet row group, whose
    /// metadata the file holds until its footer), a fork writes several
    /// batches one after the other, on one core. 1 where any run will do.
    fn rows_per_fork(&self) -> usize {
        1
    }

    /// Called on a fork after the last row of its run, with the run's
    /// buffer: a writer that gathers rows (Arrow's record batches) writes
    /// what it holds here.
    fn end_run(&mut self, _out: &mut Vec<u8>) {}

    /// Bytes the writer's forks made elsewhere (the thread that puts
    /// Parquet row groups into the file) and that are ready to go out:
    /// called on the writer that made the forks, between the bytes of
    /// their runs, which are then handed on in this order.
    fn ready_bytes(&mut self, _out: &mut Vec<u8>) {}

    /// The first row this writer could not write, if any (RDF/XML cannot
    /// write every predicate): the result is then cut with an error.
    fn take_failure(&mut self) -> Option<FormatError> {
        None
    }
}

/// Writes CONSTRUCT/DESCRIBE triples into buffers.
pub trait GraphWriter: Send {
    fn header(&mut self, out: &mut Vec<u8>);
    /// One triple; its terms are borrowed, as [`SolutionsWriter::row`]'s.
    fn triple(&mut self, out: &mut Vec<u8>, triple: TripleRef<'_>) -> Result<(), FormatError>;
    fn footer(&mut self, out: &mut Vec<u8>);
    /// A writer of the triples that follow the ones this one (and the forks
    /// made before) will have written, as [`SolutionsWriter::fork_rows`];
    /// `None` where a triple can fail to be written (the failure would be
    /// lost with the fork).
    fn fork(&mut self) -> Option<Box<dyn GraphWriter>> {
        None
    }
}

/// A triple the format cannot express.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(pub String);

#[derive(Debug, thiserror::Error)]
pub enum ExportError<E: std::error::Error + 'static> {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The query failed while its results were being written.
    #[error(transparent)]
    Query(E),
    #[error(transparent)]
    Format(#[from] FormatError),
}

/// Size at which the `write_*` helpers hand their buffer to the writer.
const FLUSH_AT: usize = 1 << 20;

/// Writes solutions as they are produced; returns the number of rows.
pub fn write_solutions<W: Write, E: std::error::Error + 'static>(
    mut out: W,
    format: SolutionsFormat,
    variables: &[Variable],
    rows: impl Iterator<Item = Result<Vec<Option<Term>>, E>>,
) -> Result<u64, ExportError<E>> {
    let mut writer = format.writer();
    let mut buf = Vec::with_capacity(FLUSH_AT + (64 << 10));
    writer.header(&mut buf, variables);
    let mut count = 0;
    for row in rows {
        let row = row.map_err(ExportError::Query)?;
        writer.row(&mut buf, &term_refs(&row));
        count += 1;
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    writer.footer(&mut buf);
    out.write_all(&buf)?;
    Ok(count)
}

pub fn write_boolean<W: Write>(
    mut out: W,
    format: SolutionsFormat,
    value: bool,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    format.writer().boolean(&mut buf, value);
    out.write_all(&buf)
}

/// Writes triples as they are produced, with the well-known prefixes;
/// returns the number of triples.
pub fn write_graph<W: Write, E: std::error::Error + 'static>(
    mut out: W,
    format: GraphFormat,
    triples: impl Iterator<Item = Result<Triple, E>>,
) -> Result<u64, ExportError<E>> {
    let mut writer = format.writer(Prefixes::well_known());
    let mut buf = Vec::with_capacity(FLUSH_AT + (64 << 10));
    writer.header(&mut buf);
    let mut count = 0;
    for triple in triples {
        writer.triple(&mut buf, triple.map_err(ExportError::Query)?.as_ref())?;
        count += 1;
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    writer.footer(&mut buf);
    out.write_all(&buf)?;
    Ok(count)
}
