//! The SPARQL 1.1 Protocol's update operation: POST with `update=` or an
//! `application/sparql-update` body. Updates need the server's write
//! credential (`Authorization: Bearer …`); each runs on a write thread
//! (the store lets one writer at a time in, and queries go on meanwhile)
//! and is answered once it is durable (`--wal-sync`: synced, or written to
//! the kernel). Small data-only updates that wait for no sync run on the
//! HTTP thread itself when the store is free.

use crate::error::RequestError;
use crate::protocol::QueryParams;
use crate::server::AppState;
use crate::write_pool::{run_write, write_place};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;
use tern_engine::{CancelFlag, UpdateReport, UpdateRequest};
use tokio::sync::oneshot;

/// Refuses a request without the write credential: 403 when the server
/// takes no updates at all, 401 without credentials, 403 with wrong ones.
pub fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), RequestError> {
    let Some(expected) = &state.config.update_token else {
        return Err(RequestError::Forbidden(
            "this server is read-only: start it with --update-token FILE (or \
             TERN_UPDATE_TOKEN) to accept updates"
                .into(),
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        None => Err(RequestError::Unauthorized(
            "updates need the server's write credential: send Authorization: Bearer TOKEN".into(),
        )),
        Some(given) if constant_time_eq(given.trim().as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(RequestError::Forbidden(
            "the write credential is not this server's".into(),
        )),
    }
}

/// Compares without stopping at the first difference (no timing hint).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub async fn handle(
    state: &Arc<AppState>,
    _slot: Option<crate::clients::ClientSlot>,
    headers: &HeaderMap,
    params: QueryParams,
    text: String,
    base_iri: String,
    received: Instant,
) -> Result<Response, RequestError> {
    authorize(state, headers)?;
    if text.len() > state.config.max_update_bytes {
        return Err(RequestError::TooLarge {
            len: text.len(),
            max: state.config.max_update_bytes,
        });
    }
    let cancel = CancelFlag::default();
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let request = UpdateRequest {
        base_iri: Some(base_iri),
        using_graphs: (!params.using_graphs.is_empty()).then_some(params.using_graphs),
        using_named_graphs: (!params.using_named_graphs.is_empty())
            .then_some(params.using_named_graphs),
        timeout: params.timeout.or(state.config.timeout),
        cancel,
        load: tern_engine::LoadPolicy {
            allowed_dirs: state.config.load_dirs.clone(),
            http: state.config.load_http.clone(),
        },
    };
    let report = run(state, text, request).await?;
    let took = received.elapsed();
    state.metrics.record_update(took, &report);
    tracing::info!(
        target: "tern::access",
        method = "POST",
        status = 200,
        outcome = "update",
        total_ms = crate::metrics::millis(took),
        version = report.version,
        inserted = report.inserted,
        deleted = report.deleted,
        "update"
    );
    let body = format!(
        "{{\"version\":{},\"operations\":{},\"inserted\":{},\"deleted\":{},\"ms\":{:.3}}}\n",
        report.version,
        report.operations,
        report.inserted,
        report.deleted,
        took.as_secs_f64() * 1e3
    );
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// Runs an update on a write thread (see `write_pool`).
pub async fn run(
    state: &Arc<AppState>,
    text: String,
    request: UpdateRequest,
) -> Result<UpdateReport, RequestError> {
    let engine = state.engine.clone();
    // A small data-only update whose commit waits for no sync runs here
    // when no other write is under way: a hand-over to a write thread and
    // back cost more than the update (single-writer INSERT DATA of one
    // triple: +15-25% requests/s). With other writes in flight it goes to
    // the write threads, so parsing and applying use the other cores (16
    // writers: -12% requests/s when every update ran here).
    let parsed = if text.len() <= INLINE_UPDATE_BYTES
        && engine.store().commits_without_sync()
        && state.writers.available_permits() == crate::write_pool::WRITE_PLACES
    {
        let parsed = engine
            .parse_update(&text, request.base_iri.as_deref())
            .map_err(syntax_error)?;
        let _place = write_place(state).await?;
        if let Some(report) = engine.try_update_now(&parsed) {
            return report.map_err(RequestError::from);
        }
        Some(parsed)
    } else {
        None
    };
    let report = run_write(state, move || match parsed {
        Some(parsed) => engine.update_parsed(&parsed, &request),
        None => engine.update(&text, &request),
    })
    .await?;
    report.map_err(syntax_error)
}

/// Longest update text tried on the HTTP thread.
const INLINE_UPDATE_BYTES: usize = 16 << 10;

fn syntax_error(e: tern_engine::EngineError) -> RequestError {
    match e {
        tern_engine::EngineError::Parse(msg) => {
            RequestError::BadRequest(format!("update syntax error: {msg}"))
        }
        other => other.into(),
    }
}

/// Cancels the update's WHERE evaluation if the client goes away first
/// (the update then changes nothing).
struct CancelOnDrop(CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// `POST /compact`: compacts the store now (write credential needed) and
/// answers when the new base is in use, with what the compaction did.
pub async fn compact(state: Arc<AppState>, headers: HeaderMap) -> Result<Response, RequestError> {
    authorize(&state, &headers)?;
    let store = state.engine.store().clone();
    let (done, result) = oneshot::channel();
    std::thread::Builder::new()
        .name("tern-compaction".into())
        .spawn(move || {
            let _ = done.send(store.compact());
        })
        .map_err(|e| RequestError::Internal(format!("cannot start the compaction: {e}")))?;
    let report = result
        .await
        .map_err(|_| RequestError::Internal("the compaction ended without an answer".into()))?
        .map_err(|e| RequestError::Internal(format!("compaction failed: {e}")))?;
    let body = match report {
        None => "{\"compacted\":false,\"reason\":\"nothing to compact, or a compaction is running\"}\n".to_owned(),
        Some(r) => format!(
            "{{\"compacted\":true,\"version\":{},\"quads\":{},\"delta_changes\":{},\"replayed\":{},\"seconds\":{:.3},\"swap_seconds\":{:.4}}}\n",
            r.version, r.quads, r.delta_changes, r.replayed, r.seconds, r.swap_seconds
        ),
    };
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}
