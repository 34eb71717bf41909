//! DELETE/INSERT … WHERE (and DELETE WHERE, and what COPY, MOVE, ADD and
//! WITH become): the WHERE clause's solutions, all of them, on the state
//! before the operation, then the DELETE template's quads removed and the
//! INSERT template's quads added for each solution. A template quad with
//! an unbound variable, or a value out of place (a literal as subject), is
//! skipped for that solution; the INSERT template's blank nodes are new
//! nodes per solution.

use super::graph_ops::quad_of;
use super::UpdateRequest;
use crate::run::{Engine, QueryOutcome, QueryRequest};
use crate::EngineError;
use oxiri::Iri;
use oxrdf::{BlankNode, NamedNode, Quad, Term, Variable};
use rustc_hash::FxHashMap;
use spargebra::algebra::{GraphPattern, QueryDataset};
use spargebra::term::{
    GraphNamePattern, GroundQuadPattern, GroundTermPattern, NamedNodePattern, QuadPattern,
    TermPattern,
};
use spargebra::Query;
use std::sync::Arc;
use std::time::Instant;
use tern_index::store::Transaction;

/// One DELETE/INSERT operation.
pub struct Modify<'a> {
    pub delete: &'a [GroundQuadPattern],
    pub insert: &'a [QuadPattern],
    pub using: Option<&'a QueryDataset>,
    pub pattern: &'a GraphPattern,
    pub base_iri: Option<&'a Iri<String>>,
}

pub fn delete_insert(
    engine: &Engine,
    tx: &mut Transaction<'_>,
    modify: Modify<'_>,
    request: &UpdateRequest,
) -> Result<(), EngineError> {
    let snapshot = tx.snapshot();
    let (default_graphs, named_graphs) = match (&request.using_graphs, &request.using_named_graphs)
    {
        // WITH (a dataset without named part) names the default graph; the
        // named graphs stay the store's.
        (None, None) => match modify.using {
            Some(QueryDataset {
                default,
                named: None,
            }) => (Some(default.clone()), Some(named_graph_iris(&snapshot)?)),
            _ => (None, None),
        },
        // The protocol's using-graph-uri and using-named-graph-uri replace
        // USING and WITH; either one alone leaves the other part empty.
        (default, named) => (
            Some(default.clone().unwrap_or_default()),
            Some(named.clone().unwrap_or_default()),
        ),
    };
    let query = Query::Select {
        dataset: modify.using.cloned(),
        pattern: modify.pattern.clone(),
        base_iri: modify.base_iri.cloned(),
    };
    let query_request = QueryRequest {
        base_iri: request.base_iri.clone(),
        default_graphs,
        named_graphs,
        timeout: request.timeout,
        cancel: request.cancel.clone(),
        snapshot: Some(snapshot),
        ..QueryRequest::default()
    };
    let execution = engine.start_parsed(Arc::new(query), Instant::now(), &query_request, None)?;
    let QueryOutcome::Solutions { variables, rows } = execution.outcome else {
        return Err(EngineError::Update("WHERE did not give solutions".into()));
    };
    let mut deletes = Vec::new();
    let mut inserts = Vec::new();
    for row in rows {
        let row = row?;
        let value = |v: &Variable| -> Option<Term> {
            let column = variables.iter().position(|x| x == v)?;
            row[column].clone()
        };
        for pattern in modify.delete {
            if let Some(quad) = ground_quad(pattern, &value) {
                deletes.push(quad);
            }
        }
        let mut fresh: FxHashMap<BlankNode, BlankNode> = FxHashMap::default();
        for pattern in modify.insert {
            let mut blank = |b: &BlankNode| {
                fresh
                    .entry(b.clone())
                    .or_insert_with(|| tx.new_blank_node())
                    .clone()
            };
            if let Some(quad) = quad(pattern, &value, &mut blank) {
                inserts.push(quad);
            }
        }
    }
    for quad in &deletes {
        tx.delete(quad.as_ref())?;
    }
    for quad in &inserts {
        tx.insert(quad.as_ref())?;
    }
    Ok(())
}

/// The IRIs of the snapshot's named graphs.
fn named_graph_iris(snapshot: &tern_index::Snapshot) -> Result<Vec<NamedNode>, EngineError> {
    let ids = snapshot.named_graphs()?;
    Ok(snapshot
        .terms_of(&ids)?
        .into_iter()
        .filter_map(|t| match t {
            Some(Term::NamedNode(n)) => Some(n),
            _ => None,
        })
        .collect())
}

fn ground_quad(
    pattern: &GroundQuadPattern,
    value: &impl Fn(&Variable) -> Option<Term>,
) -> Option<Quad> {
    let term = |t: &GroundTermPattern| match t {
        GroundTermPattern::NamedNode(n) => Some(n.clone().into()),
        GroundTermPattern::Literal(l) => Some(l.clone().into()),
        GroundTermPattern::Variable(v) => value(v),
    };
    quad_of(
        term(&pattern.subject),
        predicate(&pattern.predicate, value),
        term(&pattern.object),
        graph(&pattern.graph_name, value)?,
    )
}

fn quad(
    pattern: &QuadPattern,
    value: &impl Fn(&Variable) -> Option<Term>,
    blank: &mut impl FnMut(&BlankNode) -> BlankNode,
) -> Option<Quad> {
    let mut term = |t: &TermPattern| match t {
        TermPattern::NamedNode(n) => Some(n.clone().into()),
        TermPattern::Literal(l) => Some(l.clone().into()),
        TermPattern::BlankNode(b) => Some(blank(b).into()),
        TermPattern::Variable(v) => value(v),
    };
    let subject = term(&pattern.subject);
    let object = term(&pattern.object);
    quad_of(
        subject,
        predicate(&pattern.predicate, value),
        object,
        graph(&pattern.graph_name, value)?,
    )
}

fn predicate(p: &NamedNodePattern, value: &impl Fn(&Variable) -> Option<Term>) -> Option<Term> {
    match p {
        NamedNodePattern::NamedNode(n) => Some(n.clone().into()),
        NamedNodePattern::Variable(v) => value(v),
    }
}

/// The graph of a template quad: `Some(None)` for the default graph,
/// `None` when a variable is unbound.
fn graph(g: &GraphNamePattern, value: &impl Fn(&Variable) -> Option<Term>) -> Option<Option<Term>> {
    match g {
        GraphNamePattern::DefaultGraph => Some(None),
        GraphNamePattern::NamedNode(n) => Some(Some(n.clone().into())),
        GraphNamePattern::Variable(v) => match value(v)? {
            t @ Term::NamedNode(_) => Some(Some(t)),
            _ => None,
        },
    }
}
