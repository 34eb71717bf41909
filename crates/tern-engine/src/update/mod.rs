//! SPARQL 1.1 Update: each operation of a request applied, in order, to one
//! store transaction, which commits (durably, atomically) only if all of
//! them succeed. An operation's WHERE clause is evaluated by the query
//! engine on the transaction's state so far, so a later operation sees the
//! earlier ones; nobody else sees anything before the commit.
//!
//! Uses the query engine (`run`) and the store (`tern_index::store`).

mod fetch;
mod graph_ops;
mod graph_store;
mod load;
mod template;

pub use fetch::HttpLoad;
pub use graph_store::{graph_exists, GraphWrite};
pub use load::LoadPolicy;

use crate::context::CancelFlag;
use crate::run::{guard, parsed, Engine};
use crate::EngineError;
use oxrdf::NamedNode;
use spargebra::{GraphUpdateOperation, Update};
use std::time::Duration;

/// Everything about one update besides its text.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    /// Resolves relative IRIs of the update.
    pub base_iri: Option<String>,
    /// The protocol's `using-graph-uri`: replaces USING (and WITH) of every
    /// operation.
    pub using_graphs: Option<Vec<NamedNode>>,
    /// The protocol's `using-named-graph-uri`.
    pub using_named_graphs: Option<Vec<NamedNode>>,
    /// Limits each operation's WHERE evaluation.
    pub timeout: Option<Duration>,
    pub cancel: CancelFlag,
    /// What LOAD may read.
    pub load: LoadPolicy,
}

/// What a committed update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateReport {
    /// The snapshot version the update made (or found, if it changed nothing).
    pub version: u64,
    pub operations: usize,
    pub inserted: usize,
    pub deleted: usize,
}

impl Engine {
    /// Parses and applies a SPARQL update; on any error nothing changes.
    pub fn update(&self, text: &str, request: &UpdateRequest) -> Result<UpdateReport, EngineError> {
        let update = parse(text, request.base_iri.as_deref())?;
        // LOAD's documents, read before the store is taken (see `load`).
        let mut documents = update
            .operations
            .iter()
            .filter_map(|operation| match operation {
                GraphUpdateOperation::Load { source, .. } => {
                    Some(load::read(source, &request.load, request.timeout))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .into_iter();
        let mut tx = self.store().begin()?;
        for operation in &update.operations {
            match operation {
                GraphUpdateOperation::InsertData { data } => graph_ops::insert_data(&mut tx, data)?,
                GraphUpdateOperation::DeleteData { data } => graph_ops::delete_data(&mut tx, data)?,
                GraphUpdateOperation::DeleteInsert {
                    delete,
                    insert,
                    using,
                    pattern,
                } => template::delete_insert(
                    self,
                    &mut tx,
                    template::Modify {
                        delete,
                        insert,
                        using: using.as_ref(),
                        pattern,
                        base_iri: update.base_iri.as_ref(),
                    },
                    request,
                )?,
                GraphUpdateOperation::Load {
                    silent,
                    destination,
                    ..
                } => {
                    let destination = graph_ops::graph_name(destination);
                    let document = documents.next().expect("one document per LOAD");
                    let loaded =
                        document.and_then(|quads| load::insert(&mut tx, quads, &destination));
                    if !silent {
                        loaded?;
                    }
                }
                GraphUpdateOperation::Clear { graph, .. }
                | GraphUpdateOperation::Drop { graph, .. } => graph_ops::clear(&mut tx, graph)?,
                GraphUpdateOperation::Create { silent, graph } => {
                    graph_ops::create(&tx, graph, *silent)?
                }
            }
            if request.cancel.is_cancelled() {
                return Err(EngineError::Cancelled);
            }
        }
        let committed = tx.commit()?;
        Ok(UpdateReport {
            version: committed.version,
            operations: update.operations.len(),
            inserted: committed.inserted,
            deleted: committed.deleted,
        })
    }
}

/// Parses an update, with the limits queries have on text and nesting.
pub fn parse(text: &str, base_iri: Option<&str>) -> Result<Update, EngineError> {
    let update = parsed::parser(text, base_iri)?
        .parse_update(text)
        .map_err(|e| EngineError::Parse(e.to_string()))?;
    guard::check_update(update)
}
