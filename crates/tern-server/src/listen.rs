//! Accepting connections: each speaks HTTP/1.1 or HTTP/2 (h2c with prior
//! knowledge: the client starts with the HTTP/2 preface), told apart by its
//! first bytes. HTTP/1 connections have a header read timeout, so a client
//! that opens connections and never finishes a request head (slowloris)
//! loses them after `header_timeout` instead of holding them open; HTTP/2
//! connections are pinged while idle and closed when the pings go
//! unanswered for as long.

use axum::body::Body;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tower_service::Service;

/// The address of the client that sent a request (a request extension).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

/// How long open connections may take to finish after shutdown began.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` resolves, then lets open
/// connections finish for up to [`DRAIN`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(header_timeout))
        .keep_alive_timeout(header_timeout)
        // Large results: windows that grow with the connection's
        // bandwidth-delay product, not a fixed 64 KiB per stream.
        .adaptive_window(true)
        .max_concurrent_streams(256);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Without TCP_NODELAY a small answer whose head and body are written
        // apart waits for the client's delayed ACK: ~40 ms on a 1 ms query.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(Peer(peer));
            router.clone().call(request)
        });
        let connection = builder.serve_connection(TokioIo::new(tcp), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(target: "tern::connection", "{peer}: {e}");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open {DRAIN:?} after shutdown; closing them");
    }
    Ok(())
}
