//! LOAD: the quads of an RDF document, read where the operator allows.
//!
//! `file:` IRIs are read only under the directories the operator named
//! (`tern serve --load-dir`); http(s) IRIs are fetched only when the
//! operator enabled it (`--load-http`), and never from non-public
//! addresses (see `fetch`). Anything else is refused with the reason,
//! before any byte is read. Documents are read and parsed before the
//! update takes the store, so a slow download holds up no other writer.

use super::fetch::{self, HttpLoad};
use crate::EngineError;
use oxrdf::{BlankNode, GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tern_index::store::Transaction;

/// Where LOAD may read from.
#[derive(Debug, Clone, Default)]
pub struct LoadPolicy {
    /// Directories whose files (at any depth) LOAD may read.
    pub allowed_dirs: Vec<PathBuf>,
    /// Whether and how http(s) documents are fetched (`None`: never).
    pub http: Option<HttpLoad>,
}

impl LoadPolicy {
    /// The file a `file:` IRI names, if the policy allows reading it.
    fn allowed_file(&self, source: &NamedNode) -> Result<PathBuf, EngineError> {
        let iri = source.as_str();
        let Some(path) = iri.strip_prefix("file://") else {
            return Err(EngineError::Forbidden(format!(
                "LOAD <{iri}>: only file: IRIs under the server's --load-dir directories \
                 and, if the server was started with --load-http, http(s) IRIs can be loaded"
            )));
        };
        let path = percent_encoding::percent_decode_str(path)
            .decode_utf8_lossy()
            .into_owned();
        let canonical = Path::new(&path)
            .canonicalize()
            .map_err(|e| EngineError::Update(format!("LOAD <{iri}>: cannot read {path}: {e}")))?;
        let allowed = self.allowed_dirs.iter().any(|dir| {
            dir.canonicalize()
                .is_ok_and(|dir| canonical.starts_with(dir))
        });
        if !allowed {
            return Err(EngineError::Forbidden(format!(
                "LOAD <{iri}>: the file is not under a directory the server allows \
                 (start it with --load-dir DIR)"
            )));
        }
        Ok(canonical)
    }
}

/// Reads and parses the document `source` names, as the policy allows.
/// The whole document is read before anything is inserted: a LOAD SILENT
/// of a broken document must leave no part of it behind.
pub fn read(
    source: &NamedNode,
    policy: &LoadPolicy,
    timeout: Option<Duration>,
) -> Result<Vec<Quad>, EngineError> {
    let iri = source.as_str();
    if iri.starts_with("http://") || iri.starts_with("https://") {
        let Some(http) = &policy.http else {
            return Err(EngineError::Forbidden(format!(
                "LOAD <{iri}>: this server does not fetch http(s) documents (start it with \
                 --load-http to allow it)"
            )));
        };
        let fetched = fetch::fetch(source, http, timeout)?;
        return parse(source, fetched.format, fetched.body.as_slice());
    }
    let path = policy.allowed_file(source)?;
    let format = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(RdfFormat::from_extension)
        .ok_or_else(|| {
            EngineError::Update(format!(
                "LOAD <{source}>: unknown RDF format (name the file .nt, .nq, .ttl, .trig, .rdf or .jsonld)"
            ))
        })?;
    let file = std::fs::File::open(&path)
        .map_err(|e| EngineError::Update(format!("LOAD <{source}>: {e}")))?;
    parse(source, format, std::io::BufReader::new(file))
}

fn parse(
    source: &NamedNode,
    format: RdfFormat,
    input: impl Read,
) -> Result<Vec<Quad>, EngineError> {
    let parser = RdfParser::from_format(format)
        .with_base_iri(source.as_str())
        .map_err(|e| EngineError::Update(e.to_string()))?;
    parser
        .for_reader(input)
        .collect::<Result<_, _>>()
        .map_err(|e| EngineError::Update(format!("LOAD <{source}>: {e}")))
}

/// Inserts a read document's quads into `destination` (or, for the default
/// graph, into the graphs the document names), its blank nodes fresh.
pub fn insert(
    tx: &mut Transaction<'_>,
    quads: Vec<Quad>,
    destination: &GraphName,
) -> Result<(), EngineError> {
    let mut fresh: FxHashMap<BlankNode, BlankNode> = FxHashMap::default();
    for quad in quads {
        let mut rename = |b: BlankNode| {
            fresh
                .entry(b)
                .or_insert_with(|| tx.new_blank_node())
                .clone()
        };
        let subject = match quad.subject {
            NamedOrBlankNode::BlankNode(b) => rename(b).into(),
            other => other,
        };
        let object = match quad.object {
            Term::BlankNode(b) => rename(b).into(),
            other => other,
        };
        let graph = match (destination, quad.graph_name) {
            (GraphName::DefaultGraph, GraphName::BlankNode(b)) => rename(b).into(),
            (GraphName::DefaultGraph, g) => g,
            (into, _) => into.clone(),
        };
        tx.insert(Quad::new(subject, quad.predicate, object, graph).as_ref())?;
    }
    Ok(())
}
