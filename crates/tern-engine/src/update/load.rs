//! LOAD: the quads of an RDF document, read where the operator allows.
//!
//! Only `file:` IRIs under the directories the operator named
//! (`tern serve --load-dir`) are read; anything else is refused with the
//! reason, before any byte is read. Loading from http(s) is not offered
//! (so no update can make the server reach into the network it sits in).

use crate::EngineError;
use oxrdf::{BlankNode, GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use tern_index::store::Transaction;

/// Where LOAD may read from.
#[derive(Debug, Clone, Default)]
pub struct LoadPolicy {
    /// Directories whose files (at any depth) LOAD may read.
    pub allowed_dirs: Vec<PathBuf>,
}

impl LoadPolicy {
    /// The file a `file:` IRI names, if the policy allows reading it.
    fn allowed_file(&self, source: &NamedNode) -> Result<PathBuf, EngineError> {
        let iri = source.as_str();
        let Some(path) = iri.strip_prefix("file://") else {
            return Err(EngineError::Forbidden(format!(
                "LOAD <{iri}>: only file: IRIs under the server's --load-dir directories \
                 can be loaded (http and other schemes are not fetched)"
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

pub fn load(
    tx: &mut Transaction<'_>,
    source: &NamedNode,
    destination: &GraphName,
    policy: &LoadPolicy,
) -> Result<(), EngineError> {
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
    let parser = RdfParser::from_format(format)
        .with_base_iri(source.as_str())
        .map_err(|e| EngineError::Update(e.to_string()))?;
    // The whole document is read before anything is inserted: a LOAD
    // SILENT of a broken document must leave no part of it behind.
    let quads: Vec<Quad> = parser
        .for_reader(std::io::BufReader::new(file))
        .collect::<Result<_, _>>()
        .map_err(|e| EngineError::Update(format!("LOAD <{source}>: {e}")))?;
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
