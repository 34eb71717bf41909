//! The queries the server holds now (waiting, running, between quanta or
//! parked), for the status page, and their cancellation by the operator
//! (`POST /queries/{id}/cancel` with the write credential).

use crate::error::RequestError;
use crate::server::AppState;
use crate::workbench::json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tern_engine::CancelFlag;

/// Characters of a query's text the status page shows.
const SHOWN_TEXT: usize = 500;

#[derive(Default)]
pub struct LiveQueries {
    next_id: AtomicU64,
    queries: Mutex<BTreeMap<u64, LiveQuery>>,
}

struct LiveQuery {
    text: String,
    client: String,
    started: Instant,
    paged: bool,
    cancel: CancelFlag,
}

/// A query's place in the list; dropping it takes the query off.
pub struct Registered {
    live: Arc<AppState>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.live
            .live_queries
            .queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

impl LiveQueries {
    /// Puts a query on the list until the returned guard is dropped.
    pub fn register(
        state: &Arc<AppState>,
        text: &str,
        client: &str,
        paged: bool,
        cancel: CancelFlag,
    ) -> Registered {
        let live = &state.live_queries;
        let id = live.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let shown: String = text.chars().take(SHOWN_TEXT).collect();
        live.queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                LiveQuery {
                    text: shown,
                    client: client.to_owned(),
                    started: Instant::now(),
                    paged,
                    cancel,
                },
            );
        Registered {
            live: state.clone(),
            id,
        }
    }

    /// The list, oldest first, as the status page shows it.
    pub fn list(&self) -> serde_json::Value {
        let queries = self.queries.lock().unwrap_or_else(|e| e.into_inner());
        queries
            .iter()
            .map(|(id, q)| {
                serde_json::json!({
                    "id": id,
                    "client": q.client,
                    "seconds": q.started.elapsed().as_secs_f64(),
                    "paged": q.paged,
                    "cancelled": q.cancel.is_cancelled(),
                    "query": q.text,
                })
            })
            .collect()
    }

    fn cancel(&self, id: u64) -> bool {
        let queries = self.queries.lock().unwrap_or_else(|e| e.into_inner());
        match queries.get(&id) {
            Some(q) => {
                q.cancel.cancel();
                true
            }
            None => false,
        }
    }
}

/// `POST /queries/{id}/cancel`: stops a query (its client gets what a
/// cancelled query gives: the end of its response). Needs the write
/// credential: it is the operator's.
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = crate::update::authorize(&state, &headers) {
        return e.into_response();
    }
    if state.live_queries.cancel(id) {
        json(&serde_json::json!({ "cancelled": id }))
    } else {
        RequestError::NotFound(format!("no query {id} is running (it may have ended)"))
            .into_response()
    }
}
