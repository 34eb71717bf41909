//! DESCRIBE: the concise bounded description of every resource the query
//! returns: its triples as subject, following blank node objects.

use super::solution_stream::SolutionStream;
use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{NamedOrBlankNode, Term, Triple};
use rustc_hash::FxHashSet;
use std::sync::Arc;
use tern_index::{Id, Permutation, ScanRange, Tag};

pub(crate) fn describe(
    ctx: &Arc<QueryContext>,
    rows: SolutionStream,
) -> Result<Vec<Triple>, EngineError> {
    let mut todo: Vec<Id> = Vec::new();
    for row in rows {
        for term in row?.into_iter().flatten() {
            if matches!(term, Term::NamedNode(_) | Term::BlankNode(_)) {
                if let Some(id) = ctx.lookup(&term)? {
                    todo.push(id);
                }
            }
        }
    }
    let mut done: FxHashSet<Id> = FxHashSet::default();
    let mut triples = Vec::new();
    let mut seen = FxHashSet::default();
    // The descriptions are collected whole (twice: the list and the set
    // that removes duplicates) before the first is returned.
    let memory = ctx.memory_charge();
    let mut bytes = (todo.len() * 8) as u64;
    while let Some(resource) = todo.pop() {
        if !done.insert(resource) {
            continue;
        }
        for batch in ctx
            .index
            .scan(Permutation::Spo, &[resource], ScanRange::ALL)
        {
            ctx.check()?;
            let batch = batch?;
            let terms =
                ctx.terms(&[batch.columns[1].clone(), batch.columns[2].clone()].concat())?;
            let (predicates, objects) = terms.split_at(batch.len());
            let subject = match ctx.term(resource)? {
                Some(Term::NamedNode(n)) => NamedOrBlankNode::from(n),
                Some(Term::BlankNode(b)) => NamedOrBlankNode::from(b),
                _ => continue,
            };
            for i in 0..batch.len() {
                let (Some(Term::NamedNode(p)), Some(o)) = (&predicates[i], &objects[i]) else {
                    continue;
                };
                if batch.columns[2][i].tag() == Tag::BlankNode {
                    todo.push(batch.columns[2][i]);
                }
                let triple = Triple::new(subject.clone(), p.clone(), o.clone());
                if seen.insert(triple.clone()) {
                    bytes += 2 * triple_bytes(&triple);
                    triples.push(triple);
                }
            }
            memory.set(bytes + (done.len() * 16) as u64)?;
        }
    }
    Ok(triples)
}

/// About what one triple's terms take in memory.
fn triple_bytes(triple: &Triple) -> u64 {
    let object = match &triple.object {
        Term::NamedNode(n) => n.as_str().len(),
        Term::BlankNode(b) => b.as_str().len(),
        Term::Literal(l) => l.value().len() + l.datatype().as_str().len(),
    };
    let subject = match &triple.subject {
        NamedOrBlankNode::NamedNode(n) => n.as_str().len(),
        NamedOrBlankNode::BlankNode(b) => b.as_str().len(),
    };
    (subject + triple.predicate.as_str().len() + object + 160) as u64
}
