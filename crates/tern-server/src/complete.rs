//! `GET /complete?prefix=…&context=…&limit=…`: IRIs of the data that start
//! with a prefix, most used first, for the workbench's autocompletion.
//!
//! The vocabulary is sorted, so the IRIs with a prefix are one range of
//! IDs. How often each is used in the asked position is a count on the
//! permutation that leads with it. Predicates come from the statistics (all
//! of them, ranked exactly); classes from the `rdf:type` rows, jumping from
//! class to class (the first [`CANDIDATES`] of the prefix); subjects and
//! objects from the first [`CANDIDATES`] IRIs of the range in vocabulary
//! order (then those updates added), so a prefix that thousands of IRIs
//! share is ranked among those: type more of it to narrow it down.

use crate::error::RequestError;
use crate::server::AppState;
use crate::workbench::json;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use oxrdf::Term;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;
use tern_index::{Id, Permutation, ScanRange, Snapshot};

/// IRIs of a prefix looked at (and counted) at most.
const CANDIDATES: usize = 2_000;
/// Completions answered at most.
const MAX_LIMIT: usize = 100;

#[derive(Debug, Default)]
struct CompleteParams {
    prefix: String,
    context: Option<String>,
    limit: Option<usize>,
}

impl CompleteParams {
    fn of(uri: &Uri) -> Result<CompleteParams, RequestError> {
        let mut params = CompleteParams::default();
        let pairs = crate::protocol::decode_pairs(uri.query().unwrap_or("").as_bytes())?;
        for (name, value) in pairs {
            match name.as_str() {
                "prefix" => params.prefix = value,
                "context" => params.context = Some(value),
                "limit" => {
                    params.limit = Some(value.trim().parse().map_err(|_| {
                        RequestError::BadRequest(format!("limit must be a number, not {value:?}"))
                    })?)
                }
                _ => {}
            }
        }
        Ok(params)
    }
}

/// Where the completed IRI goes in a triple pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Subject,
    Predicate,
    Object,
    /// The object of `rdf:type`.
    Class,
    /// Subject or object.
    Any,
}

impl Context {
    fn parse(text: Option<&str>) -> Result<Context, RequestError> {
        Ok(match text.unwrap_or("any") {
            "subject" => Context::Subject,
            "predicate" => Context::Predicate,
            "object" => Context::Object,
            "class" => Context::Class,
            "any" | "" => Context::Any,
            other => {
                return Err(RequestError::BadRequest(format!(
                    "context must be subject, predicate, object, class or any, not {other:?}"
                )))
            }
        })
    }
}

pub async fn complete(State(state): State<Arc<AppState>>, uri: Uri) -> Response {
    let started = Instant::now();
    let params = match CompleteParams::of(&uri) {
        Ok(params) => params,
        Err(e) => return e.into_response(),
    };
    let context = match Context::parse(params.context.as_deref()) {
        Ok(context) => context,
        Err(e) => return e.into_response(),
    };
    let limit = params.limit.unwrap_or(20).clamp(1, MAX_LIMIT);
    let snapshot = state.engine.snapshot();
    // Counting reads index blocks: off the async threads.
    let found =
        tokio::task::spawn_blocking(move || completions(&snapshot, &params.prefix, context, limit))
            .await;
    match found {
        Ok(Ok(completions)) => json(&serde_json::json!({
            "completions": completions
                .into_iter()
                .map(|(iri, count)| serde_json::json!({ "iri": iri, "count": count }))
                .collect::<Vec<_>>(),
            "ms": crate::metrics::millis(started.elapsed()),
        })),
        Ok(Err(e)) => RequestError::Internal(format!("completion failed: {e}")).into_response(),
        Err(e) => RequestError::Internal(format!("completion failed: {e}")).into_response(),
    }
}

/// The IRIs starting with `prefix` used in `context`, most used first.
fn completions(
    snapshot: &Snapshot,
    prefix: &str,
    context: Context,
    limit: usize,
) -> Result<Vec<(String, u64)>, tern_index::IndexError> {
    let mut counted: Vec<(Id, u64)> = match context {
        Context::Predicate => predicates(snapshot)?,
        Context::Class => {
            let Some(rdf_type) = snapshot.id_of(oxrdf::vocab::rdf::TYPE.into())? else {
                return Ok(Vec::new());
            };
            let (low, high) = snapshot.base().iri_prefix_ids(prefix)?;
            let mut counted = Vec::new();
            for class in classes(snapshot, rdf_type, low, high, CANDIDATES)? {
                let count = snapshot.count(Permutation::Pos, &[rdf_type, class], ScanRange::ALL)?;
                counted.push((class, count));
            }
            counted
        }
        _ => {
            let mut counted = Vec::new();
            for id in snapshot.iris_with_prefix(prefix, CANDIDATES)? {
                let count = match context {
                    Context::Subject => snapshot.count(Permutation::Spo, &[id], ScanRange::ALL)?,
                    Context::Object => snapshot.count(Permutation::Osp, &[id], ScanRange::ALL)?,
                    _ => {
                        snapshot.count(Permutation::Spo, &[id], ScanRange::ALL)?
                            + snapshot.count(Permutation::Osp, &[id], ScanRange::ALL)?
                    }
                };
                counted.push((id, count));
            }
            counted
        }
    };
    counted.retain(|&(_, count)| count > 0);
    let ids: Vec<Id> = counted.iter().map(|&(id, _)| id).collect();
    let terms = snapshot.terms_of(&ids)?;
    let mut found: Vec<(String, u64)> = counted
        .into_iter()
        .zip(terms)
        .filter_map(|((_, count), term)| match term {
            Some(Term::NamedNode(iri)) if iri.as_str().starts_with(prefix) => {
                Some((iri.into_string(), count))
            }
            _ => None,
        })
        .collect();
    // Most used first; ties in IRI order, so answers are stable.
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found.truncate(limit);
    Ok(found)
}

/// The first `max` classes (objects of `rdf:type`) with IDs in
/// `[low, high)`: read from the `rdf:type` rows in POS order, jumping past
/// each batch's last class, so a class with a million instances costs one
/// batch, not a million rows. (Classes only updates added are not among
/// them: their IDs lie outside the base's range.)
fn classes(
    snapshot: &Snapshot,
    rdf_type: Id,
    low: Id,
    high: Id,
    max: usize,
) -> Result<Vec<Id>, tern_index::IndexError> {
    let mut found: Vec<Id> = Vec::new();
    let mut from = Bound::Included(low);
    while found.len() < max {
        let range = ScanRange {
            start: from,
            end: Bound::Excluded(high),
        };
        let Some(batch) = snapshot.scan(Permutation::Pos, &[rdf_type], range).next() else {
            break;
        };
        let batch = batch?;
        let before = found.len();
        for &class in &batch.columns[1] {
            if found.last() != Some(&class) {
                found.push(class);
            }
        }
        match found.last() {
            Some(&last) if found.len() > before => from = Bound::Excluded(last),
            _ => break,
        }
    }
    found.truncate(max);
    Ok(found)
}

/// Every predicate with its number of triples.
fn predicates(snapshot: &Snapshot) -> Result<Vec<(Id, u64)>, tern_index::IndexError> {
    Ok(snapshot
        .stats()
        .predicates
        .iter()
        .map(|p| (Id(p.predicate), p.triples))
        .collect())
}
