//! The operations that name their quads or graphs outright: INSERT DATA,
//! DELETE DATA, CLEAR, DROP, CREATE.
//!
//! The store keeps quads, not graphs: a graph exists while it holds a quad.
//! So CREATE of a new graph changes nothing (and fails, unless SILENT, on a
//! graph that holds quads), and CLEAR and DROP of an empty or unknown graph
//! succeed.

use crate::EngineError;
use oxrdf::{BlankNode, GraphName, NamedOrBlankNode, Quad, Term};
use rustc_hash::FxHashMap;
use spargebra::algebra::GraphTarget;
use spargebra::term::{GraphName as SparqlGraph, GroundQuad, GroundTerm, Quad as SparqlQuad};
use tern_index::store::Transaction;
use tern_index::{Id, Permutation, ScanRange, Snapshot};

/// INSERT DATA: its blank nodes are new nodes, one per label per request.
pub fn insert_data(tx: &mut Transaction<'_>, data: &[SparqlQuad]) -> Result<(), EngineError> {
    let mut fresh: FxHashMap<BlankNode, BlankNode> = FxHashMap::default();
    for q in data {
        let mut rename = |b: &BlankNode| {
            fresh
                .entry(b.clone())
                .or_insert_with(|| tx.new_blank_node())
                .clone()
        };
        let subject = match &q.subject {
            NamedOrBlankNode::BlankNode(b) => NamedOrBlankNode::from(rename(b)),
            other => other.clone(),
        };
        let object = match &q.object {
            Term::BlankNode(b) => Term::from(rename(b)),
            other => other.clone(),
        };
        let quad = Quad::new(
            subject,
            q.predicate.clone(),
            object,
            graph_name(&q.graph_name),
        );
        tx.insert(quad.as_ref())?;
    }
    Ok(())
}

pub fn delete_data(tx: &mut Transaction<'_>, data: &[GroundQuad]) -> Result<(), EngineError> {
    for q in data {
        let object: Term = match &q.object {
            GroundTerm::NamedNode(n) => n.clone().into(),
            GroundTerm::Literal(l) => l.clone().into(),
        };
        let quad = Quad::new(
            q.subject.clone(),
            q.predicate.clone(),
            object,
            graph_name(&q.graph_name),
        );
        tx.delete(quad.as_ref())?;
    }
    Ok(())
}

pub fn graph_name(g: &SparqlGraph) -> GraphName {
    match g {
        SparqlGraph::NamedNode(n) => n.clone().into(),
        SparqlGraph::DefaultGraph => GraphName::DefaultGraph,
    }
}

/// CLEAR and DROP (the same here: graphs exist while they hold quads, and
/// neither fails on a graph that holds none, so SILENT changes nothing).
pub fn clear(tx: &mut Transaction<'_>, target: &GraphTarget) -> Result<(), EngineError> {
    let snapshot = tx.snapshot();
    let graph = match target {
        GraphTarget::NamedNode(n) => match snapshot.id_of(n.as_ref().into())? {
            Some(id) => Some(id),
            None => return Ok(()),
        },
        _ => None,
    };
    let keep = |g: Id| match target {
        GraphTarget::NamedNode(_) => Some(g) == graph,
        GraphTarget::DefaultGraph => g == Id::DEFAULT_GRAPH,
        GraphTarget::NamedGraphs => g != Id::DEFAULT_GRAPH,
        GraphTarget::AllGraphs => true,
    };
    for quad in quads_where(&snapshot, keep)? {
        tx.delete(quad.as_ref())?;
    }
    Ok(())
}

pub fn create(
    tx: &Transaction<'_>,
    graph: &oxrdf::NamedNode,
    silent: bool,
) -> Result<(), EngineError> {
    let snapshot = tx.snapshot();
    let exists = match snapshot.id_of(graph.as_ref().into())? {
        Some(id) => snapshot.named_graphs()?.contains(&id),
        None => false,
    };
    if exists && !silent {
        return Err(EngineError::Update(format!(
            "CREATE GRAPH {graph}: the graph already exists (CREATE SILENT ignores this)"
        )));
    }
    Ok(())
}

/// The quads of a snapshot whose graph passes `keep`, as terms.
pub fn quads_where(
    snapshot: &Snapshot,
    keep: impl Fn(Id) -> bool,
) -> Result<Vec<Quad>, EngineError> {
    let mut out = Vec::new();
    for batch in snapshot.scan(Permutation::Spo, &[], ScanRange::ALL) {
        let batch = batch?;
        let rows: Vec<usize> = (0..batch.len())
            .filter(|&i| keep(batch.columns[3][i]))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let column = |c: usize| -> Result<Vec<Option<Term>>, EngineError> {
            let ids: Vec<Id> = rows.iter().map(|&i| batch.columns[c][i]).collect();
            Ok(snapshot.terms_of(&ids)?)
        };
        let (s, p, o, g) = (column(0)?, column(1)?, column(2)?, column(3)?);
        for k in 0..rows.len() {
            if let Some(quad) = quad_of(s[k].clone(), p[k].clone(), o[k].clone(), g[k].clone()) {
                out.push(quad);
            }
        }
    }
    Ok(out)
}

/// A quad of terms in the right positions (`None` if one is out of place).
pub fn quad_of(s: Option<Term>, p: Option<Term>, o: Option<Term>, g: Option<Term>) -> Option<Quad> {
    let subject = match s? {
        Term::NamedNode(n) => NamedOrBlankNode::from(n),
        Term::BlankNode(b) => b.into(),
        _ => return None,
    };
    let Term::NamedNode(predicate) = p? else {
        return None;
    };
    let graph = match g {
        None => GraphName::DefaultGraph,
        Some(Term::NamedNode(n)) => n.into(),
        Some(Term::BlankNode(b)) => b.into(),
        Some(_) => return None,
    };
    Some(Quad::new(subject, predicate, o?, graph))
}
