//! The writes of the SPARQL 1.1 Graph Store HTTP Protocol: replace (PUT),
//! merge into (POST) and remove (DELETE) one graph, each one transaction.
//! A body is parsed as it is read, so its size is bounded by the store's
//! delta, not by a buffer.

use super::graph_ops::{self, quad_of};
use crate::run::Engine;
use crate::EngineError;
use oxrdf::{BlankNode, GraphName, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use rustc_hash::FxHashMap;
use spargebra::algebra::GraphTarget;
use std::io::Read;
use tern_index::store::Transaction;
use tern_index::Snapshot;

/// What a graph write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphWrite {
    /// The graph did not exist before (it held no triple).
    pub created: bool,
    pub version: u64,
    pub inserted: usize,
    pub deleted: usize,
}

/// Whether a graph exists: the default graph always does, a named graph
/// while it holds a triple.
pub fn graph_exists(snapshot: &Snapshot, graph: &GraphName) -> Result<bool, EngineError> {
    Ok(match graph {
        GraphName::NamedNode(n) => match snapshot.id_of(n.as_ref().into())? {
            Some(id) => snapshot.named_graphs()?.contains(&id),
            None => false,
        },
        _ => true,
    })
}

fn target(graph: &GraphName) -> GraphTarget {
    match graph {
        GraphName::NamedNode(n) => GraphTarget::NamedNode(n.clone()),
        _ => GraphTarget::DefaultGraph,
    }
}

impl Engine {
    /// Replaces (`replace`) or adds to the triples of `graph` with those of
    /// RDF documents (one, or the parts of a multipart body), in one
    /// transaction. Documents with named graphs (N-Quads, TriG) are
    /// refused: a graph's body is triples.
    pub fn write_graph<R: Read + Send>(
        &self,
        graph: &GraphName,
        documents: Vec<(RdfFormat, R)>,
        base_iri: Option<&str>,
        replace: bool,
    ) -> Result<GraphWrite, EngineError> {
        let store = self.store();
        let mut tx = store.begin()?;
        let created = !graph_exists(&tx.snapshot(), graph)?;
        if replace {
            graph_ops::clear(&mut tx, &target(graph))?;
        }
        // Parsing runs on a thread of its own, a few batches ahead of the
        // transaction: a large body's parse and its inserts overlap.
        std::thread::scope(|scope| {
            let (sender, batches) = std::sync::mpsc::sync_channel(BATCHES_AHEAD);
            std::thread::Builder::new()
                .name("tern-parse-body".into())
                .spawn_scoped(scope, move || parse_documents(documents, base_iri, sender))
                .map_err(|e| EngineError::Update(format!("cannot start parsing the body: {e}")))?;
            // Blank node labels are scoped to their document.
            let mut fresh: FxHashMap<BlankNode, BlankNode> = FxHashMap::default();
            let mut document = 0;
            for parsed in batches {
                let Parsed { index, quads } = parsed?;
                if index != document {
                    document = index;
                    fresh.clear();
                }
                for quad in quads {
                    insert_renamed(&mut tx, quad, graph, &mut fresh)?;
                }
            }
            // Dropping `batches` on an error above stops the parser.
            Ok::<(), EngineError>(())
        })?;
        let committed = tx.commit()?;
        Ok(GraphWrite {
            created,
            version: committed.version,
            inserted: committed.inserted,
            deleted: committed.deleted,
        })
    }

    /// Removes a graph's triples; `None` when it does not exist.
    pub fn delete_graph(&self, graph: &GraphName) -> Result<Option<GraphWrite>, EngineError> {
        let store = self.store();
        let mut tx = store.begin()?;
        if let GraphName::NamedNode(_) = graph {
            if !graph_exists(&tx.snapshot(), graph)? {
                return Ok(None);
            }
        }
        graph_ops::clear(&mut tx, &target(graph))?;
        let committed = tx.commit()?;
        Ok(Some(GraphWrite {
            created: false,
            version: committed.version,
            inserted: committed.inserted,
            deleted: committed.deleted,
        }))
    }
}

/// Triples per batch handed from the parser to the transaction.
const PARSED_BATCH: usize = 4096;
/// Batches the parser may be ahead (what bounds its memory).
const BATCHES_AHEAD: usize = 4;

/// Triples of the `index`-th document of a body.
struct Parsed {
    index: usize,
    quads: Vec<Quad>,
}

/// Parses the documents one after the other into batches of triples; stops
/// at the first error (sent on) or when the receiver is gone.
fn parse_documents<R: Read>(
    documents: Vec<(RdfFormat, R)>,
    base_iri: Option<&str>,
    sender: std::sync::mpsc::SyncSender<Result<Parsed, EngineError>>,
) {
    let parse = |index: usize, format: RdfFormat, body: R| -> Result<bool, EngineError> {
        let mut parser = RdfParser::from_format(format);
        if let Some(base) = base_iri {
            parser = parser
                .with_base_iri(base)
                .map_err(|e| EngineError::Update(e.to_string()))?;
        }
        let mut quads = Vec::with_capacity(PARSED_BATCH);
        for quad in parser.for_reader(body) {
            let quad =
                quad.map_err(|e| EngineError::Update(format!("{} body: {e}", format.name())))?;
            if !quad.graph_name.is_default_graph() {
                return Err(EngineError::Update(format!(
                    "the body names graph {}: a graph's body holds triples \
                     (send Turtle, N-Triples, RDF/XML or JSON-LD)",
                    quad.graph_name
                )));
            }
            quads.push(quad);
            if quads.len() == PARSED_BATCH {
                let full = std::mem::replace(&mut quads, Vec::with_capacity(PARSED_BATCH));
                if sender.send(Ok(Parsed { index, quads: full })).is_err() {
                    return Ok(false);
                }
            }
        }
        Ok(sender.send(Ok(Parsed { index, quads })).is_ok())
    };
    for (index, (format, body)) in documents.into_iter().enumerate() {
        match parse(index, format, body) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                let _ = sender.send(Err(e));
                return;
            }
        }
    }
}

/// Inserts a parsed triple into `graph`, its blank nodes made new nodes
/// (one per label per request).
fn insert_renamed(
    tx: &mut Transaction<'_>,
    quad: Quad,
    graph: &GraphName,
    fresh: &mut FxHashMap<BlankNode, BlankNode>,
) -> Result<(), EngineError> {
    let mut rename = |b: BlankNode| -> Term {
        fresh
            .entry(b)
            .or_insert_with(|| tx.new_blank_node())
            .clone()
            .into()
    };
    let subject = match quad.subject {
        NamedOrBlankNode::BlankNode(b) => rename(b),
        NamedOrBlankNode::NamedNode(n) => n.into(),
    };
    let object = match quad.object {
        Term::BlankNode(b) => rename(b),
        other => other,
    };
    let graph = match graph {
        GraphName::NamedNode(n) => Some(Term::from(n.clone())),
        _ => None,
    };
    if let Some(quad) = quad_of(
        Some(subject),
        Some(quad.predicate.into()),
        Some(object),
        graph,
    ) {
        tx.insert(quad.as_ref())?;
    }
    Ok(())
}
