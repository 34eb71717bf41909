use crate::size::{default_memory, parse_size};
use anyhow::{Context, Result};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tern_engine::{Engine, EngineOptions};
use tern_index::Index;
use tern_server::ServerConfig;

#[derive(Args)]
pub struct ServeArgs {
    /// Directory of the index.
    #[arg(long)]
    index: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 7070)]
    port: u16,
    /// Query worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Server-wide query timeout in seconds; a request's `timeout` parameter can lower it.
    #[arg(long, default_value_t = 300.0)]
    timeout: f64,
    /// Queries that may wait for a worker; beyond them, 503 with Retry-After.
    #[arg(long, default_value_t = 64)]
    max_queued: usize,
    /// Memory budget of each query's materialized state, e.g. 2G (default: a
    /// quarter of RAM), so one query cannot take the server down.
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Longest accepted query, in bytes (413 beyond).
    #[arg(long, default_value_t = 1 << 20)]
    max_query_bytes: usize,
    /// Testing only: honour the `tern-fault-after=N` parameter (fail after N rows).
    #[arg(long, hide = true)]
    inject_faults: bool,
}

pub fn run(args: ServeArgs) -> Result<()> {
    // One structured line per query on stderr (target tern::access);
    // RUST_LOG-style filtering is not needed for that.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(true)
        .with_ansi(false)
        .init();
    let index =
        Arc::new(Index::open(&args.index).with_context(|| format!("{}", args.index.display()))?);
    let timeout = (args.timeout > 0.0).then(|| Duration::from_secs_f64(args.timeout));
    let engine = Engine::new(
        index,
        EngineOptions {
            default_graph_is_union: true,
            timeout,
            // default_memory() is 40% of RAM; 5/8 of it is a quarter.
            memory_budget: Some(args.memory.unwrap_or(default_memory() / 8 * 5)),
        },
    );
    let mut config = ServerConfig {
        addr: SocketAddr::new(args.bind, args.port),
        max_queued: args.max_queued,
        timeout,
        max_query_bytes: args.max_query_bytes,
        fault_injection: args.inject_faults,
        ..ServerConfig::default()
    };
    if let Some(w) = args.workers {
        config.workers = w.max(1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tern_server::bind(config.clone()).await?;
        let addr = listener.local_addr()?;
        eprintln!(
            "tern serve: SPARQL endpoint at http://{addr}/sparql ({} workers, queue {})",
            config.workers, config.max_queued
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        tern_server::serve(listener, engine, config, shutdown).await?;
        Ok(())
    })
}
