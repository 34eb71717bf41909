//! Tern's SPARQL 1.1 Protocol endpoint (`tern serve`).
//!
//! Queries run on a fixed pool of worker threads, never on the async
//! runtime; each writes its results into ~1 MiB chunks that go through a
//! bounded channel (and an optional compression thread) to a streaming
//! response body, so memory stays bounded whatever the result size, and a
//! client that disconnects cancels its query.
//!
//! Modules, one job each: `protocol` (parameters of a request), `negotiate`
//! (formats and codings), `producer` (runs a query into chunks, a quantum at
//! a time), `paging` (pages and continuation tokens), `encoding`
//! (compression stage), `body` (streaming body with trailers), `scheduler`
//! (workers sharing their time round-robin, and admission), `metrics`,
//! `service` (service description), `server` (routes).

mod batch_pipeline;
mod body;
mod chunk;
mod clients;
mod complete;
mod config;
mod decode_ahead;
mod encoding;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod graph_store;
mod listen;
mod live_queries;
mod metrics;
mod multipart;
mod negotiate;
mod paging;
mod parallel_write;
mod pool_job;
mod producer;
mod protocol;
mod scheduler;
mod server;
mod service;
mod status;
mod update;
mod workbench;
mod write_pool;

pub use config::{IdleHook, ServerConfig};
pub use error::RequestError;
pub use workbench::{parse_examples, Example};

use std::sync::Arc;
use tern_engine::Engine;

/// Binds the listening socket (so callers learn a bind failure, and the
/// actual port when 0 was asked) and returns a future that serves until
/// `shutdown` completes.
pub async fn bind(config: ServerConfig) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(config.addr).await
}

/// Serves `engine` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: Engine,
    config: ServerConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let key = match &config.token_key {
        Some(secret) => tern_engine::TokenKey::new(secret)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
        None => tern_engine::TokenKey::random(),
    };
    let paging = paging::Paging {
        key,
        stash: Arc::new(tern_engine::Stash::with_limits(
            config.stash_bytes,
            config.token_ttl,
        )),
        // Names this process in the tokens whose state it keeps.
        owner: rand::random(),
        engine: engine.clone(),
        token_ttl: config.token_ttl,
    };
    let scheduler = scheduler::Scheduler::new(config.workers, config.max_queued, config.quantum);
    if let Some(hook) = config.on_idle.clone() {
        scheduler.on_idle(hook);
    }
    scheduler.park_blocked(scheduler::Parking {
        runtime: tokio::runtime::Handle::current(),
        max_stalled: config.max_stalled,
        stall_timeout: config.stall_timeout,
    });
    let state = Arc::new(server::AppState {
        engine,
        scheduler,
        clients: clients::ClientSlots::new(config.max_per_client),
        paging: Arc::new(paging),
        config,
        metrics: metrics::Metrics::default(),
        writers: Arc::new(tokio::sync::Semaphore::new(write_pool::WRITE_PLACES)),
        write_pool: write_pool::WritePool::new(write_pool::WritePool::THREADS)?,
        started: std::time::Instant::now(),
        live_queries: Default::default(),
    });
    let header_timeout = state.config.header_timeout;
    listen::serve(listener, server::router(state), header_timeout, shutdown).await
}
