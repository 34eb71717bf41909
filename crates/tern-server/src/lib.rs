//! Tern's SPARQL 1.1 Protocol endpoint (`tern serve`).
//!
//! Queries run on a fixed pool of worker threads, never on the async
//! runtime; each writes its results into ~1 MiB chunks that go through a
//! bounded channel (and an optional compression thread) to a streaming
//! response body, so memory stays bounded whatever the result size, and a
//! client that disconnects cancels its query.
//!
//! Modules, one job each: `protocol` (parameters of a request), `negotiate`
//! (formats and codings), `producer` (runs a query into chunks), `encoding`
//! (compression stage), `body` (streaming body with trailers), `pool`
//! (workers and admission), `metrics`, `service` (service description),
//! `server` (routes).

mod body;
mod chunk;
mod config;
mod encoding;
mod error;
mod metrics;
mod negotiate;
mod pool;
mod producer;
mod protocol;
mod server;
mod service;

pub use config::ServerConfig;
pub use error::RequestError;

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
    let state = Arc::new(server::AppState {
        engine,
        pool: pool::Pool::new(config.workers, config.max_queued),
        config,
        metrics: metrics::Metrics::default(),
    });
    axum::serve(listener, server::router(state))
        .with_graceful_shutdown(shutdown)
        .await
}
