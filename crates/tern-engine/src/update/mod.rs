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
use tern_index::store::Transaction;

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
        self.update_parsed(
            &self.parse_update(text, request.base_iri.as_deref())?,
            request,
        )
    }

    /// Applies a parsed update (see [`parse`]); on any error nothing changes.
    pub fn update_parsed(
        &self,
        update: &Update,
        request: &UpdateRequest,
    ) -> Result<UpdateReport, EngineError> {
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
        let store = self.store();
        let mut tx = store.begin()?;
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
        commit(tx, update)
    }
}

/// Commits an update's transaction; what it did.
fn commit(tx: Transaction<'_>, update: &Update) -> Result<UpdateReport, EngineError> {
    let committed = tx.commit()?;
    Ok(UpdateReport {
        version: committed.version,
        operations: update.operations.len(),
        inserted: committed.inserted,
        deleted: committed.deleted,
    })
}

/// Most quads of an update [`Engine::try_update_now`] applies.
const SMALL_UPDATE_QUADS: usize = 1024;

impl Engine {
    /// Applies an update of only INSERT DATA / DELETE DATA of at most
    /// [`SMALL_UPDATE_QUADS`] quads at once on this thread, if no other
    /// update holds the store and its commit waits for no sync: such an
    /// update is a few microseconds of work, less than handing it to
    /// another thread costs. `None`: not such an update, or the store is
    /// busy (run it with [`update`](Self::update) instead).
    pub fn try_update_now(&self, update: &Update) -> Option<Result<UpdateReport, EngineError>> {
        let small = update
            .operations
            .iter()
            .try_fold(0usize, |quads, op| match op {
                GraphUpdateOperation::InsertData { data } => Some(quads + data.len()),
                GraphUpdateOperation::DeleteData { data } => Some(quads + data.len()),
                _ => None,
            });
        if small.is_none_or(|quads| quads > SMALL_UPDATE_QUADS)
            || !self.store().commits_without_sync()
        {
            return None;
        }
        let store = self.store();
        let mut tx = match store.try_begin() {
            Ok(Some(tx)) => tx,
            Ok(None) => return None,
            Err(e) => return Some(Err(e.into())),
        };
        let applied = update.operations.iter().try_for_each(|op| match op {
            GraphUpdateOperation::InsertData { data } => graph_ops::insert_data(&mut tx, data),
            GraphUpdateOperation::DeleteData { data } => graph_ops::delete_data(&mut tx, data),
            _ => unreachable!("only data operations, checked above"),
        });
        Some(applied.and_then(|()| commit(tx, update)))
    }
}

impl Engine {
    /// Parses an update, with the limits queries have on text and nesting
    /// and the engine's predeclared prefixes.
    pub fn parse_update(&self, text: &str, base_iri: Option<&str>) -> Result<Update, EngineError> {
        parse(text, base_iri, self.parsed_queries().prefixes())
    }
}

/// Parses an update, with the limits queries have on text and nesting.
pub fn parse(
    text: &str,
    base_iri: Option<&str>,
    prefixes: &[(String, String)],
) -> Result<Update, EngineError> {
    let update = parsed::parser(text, base_iri, prefixes)?
        .parse_update(text)
        .map_err(|e| {
            EngineError::Parse(crate::run::syntax_error::in_words(&e.to_string(), text))
        })?;
    guard::check_update(update)
}
