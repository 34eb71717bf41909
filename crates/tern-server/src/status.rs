//! `GET /status`: the server at a glance, as JSON, for the workbench's
//! status page (the same figures as `/metrics`, shaped for people).

use crate::server::AppState;
use crate::workbench::json;
use axum::extract::State;
use axum::response::Response;
use std::sync::Arc;

pub async fn status(State(state): State<Arc<AppState>>) -> Response {
    let snapshot = state.engine.snapshot();
    let stats = snapshot.stats();
    let meta = snapshot.meta();
    let store = state.engine.store().status();
    let totals = state.metrics.totals();
    let (vocab_cache, block_cache) = snapshot.base().cache_bytes();
    json(&serde_json::json!({
        "index": {
            "triples": stats.triples,
            "subjects": stats.distinct_subjects,
            "predicates": stats.distinct_predicates,
            "objects": stats.distinct_objects,
            "named_graphs": stats.named_graphs,
            "terms": meta.distinct_terms,
            "index_bytes": meta.index_bytes,
            "bytes_per_triple": meta.bytes_per_triple,
            "built": meta.index_id,
            "path": snapshot.dir().display().to_string(),
        },
        "store": {
            "snapshot": store.snapshot,
            "version": store.version,
            "writable": store.writable,
            "delta_changes": store.delta_changes,
            "delta_runs": store.delta_runs,
            "delta_terms": store.delta_terms,
            "wal_bytes": store.wal_bytes,
            "compacting": store.compacting,
            "compactions": store.compactions,
            "snapshots_kept": store.kept_snapshots,
        },
        "queries": {
            "active": state.scheduler.active(),
            "running": state.scheduler.running(),
            "queued": state.scheduler.queued(),
            "stalled": state.scheduler.stalled(),
            "total": totals.queries,
            "by_outcome": totals.by_outcome,
            "rows_sent": totals.rows,
            "mean_latency_ms": totals.mean_latency_ms,
            "updates": totals.updates,
            "in_server": state.live_queries.list(),
        },
        "memory": {
            "queries_bytes": state.engine.memory_in_use(),
            "vocab_cache_bytes": vocab_cache,
            "block_cache_bytes": block_cache,
            "derived_extents_bytes": state.engine.derived_extents().0,
        },
        "server": {
            "version": env!("CARGO_PKG_VERSION"),
            "uptime_s": state.started.elapsed().as_secs_f64(),
            "workers": state.config.workers,
            "quantum_ms": state.config.quantum.map(|q| q.as_secs_f64() * 1e3),
            "timeout_s": state.config.timeout.map(|t| t.as_secs_f64()),
        },
    }))
}
