//! What `tern serve` is told on its command line.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Called on a query worker whenever the last query in the server ends
/// (e.g. to hand freed memory back to the system).
#[derive(Clone)]
pub struct IdleHook(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for IdleHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdleHook")
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    /// Query worker threads: queries are blocking CPU work, run on them
    /// (all but the first turn of a query on an idle server, see
    /// `first_turn_here`).
    pub workers: usize,
    /// Queries admitted to wait for a worker; beyond them clients get 503.
    pub max_queued: usize,
    /// Server-wide query timeout; a request's `timeout` can only lower it.
    pub timeout: Option<Duration>,
    /// Longest accepted query text, in bytes (413 beyond).
    pub max_query_bytes: usize,
    /// Honour the `tern-fault-after=N` request parameter, which makes a query
    /// fail after N rows (for testing error reporting after the first byte).
    pub fault_injection: bool,
    /// Time slice of a query on a worker before it goes to the back of the
    /// run queue; `None`: run to the end (first come, first served).
    pub quantum: Option<Duration>,
    /// The longest first turn a new query gets on the async thread that
    /// received it, when a worker is free and no query waits (see
    /// `Scheduler::submit_here`); `None` (or no `quantum`): every query
    /// goes to a worker.
    /// The runtime's threads then need `tern_engine::QUERY_STACK_BYTES`
    /// stacks.
    pub first_turn_here: Option<Duration>,
    /// How long continuation tokens and the state they refer to last.
    pub token_ttl: Duration,
    /// Memory for suspended queries' materialized state (oldest goes first).
    pub stash_bytes: u64,
    /// Signs continuation tokens; servers sharing it (and the index) can
    /// resume each other's tokens. Random per process when not given.
    pub token_key: Option<Vec<u8>>,
    /// How long a client may take to send a request's head (its line and
    /// headers) before its connection is closed.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body (408 beyond).
    pub body_timeout: Duration,
    pub on_idle: Option<IdleHook>,
    /// Most queries parked at once because their clients do not read.
    pub max_stalled: usize,
    /// A parked query whose client reads nothing this long is dropped.
    pub stall_timeout: Duration,
    /// Most queries one client address may have in the server at once
    /// (running, waiting or parked); beyond, 503.
    pub max_per_client: usize,
    /// The bearer token that updates must carry; `None`: updates are
    /// refused (403), the server is read-only.
    pub update_token: Option<String>,
    /// Directories whose files LOAD may read.
    pub load_dirs: Vec<std::path::PathBuf>,
    /// Whether and how LOAD fetches http(s) documents (`None`: never).
    pub load_http: Option<tern_engine::HttpLoad>,
    /// Longest accepted update text, in bytes (413 beyond): an update is
    /// parsed whole, so this bounds its memory.
    pub max_update_bytes: usize,
    /// Serve the workbench's files from this directory instead of the
    /// copies built into the binary (for working on the workbench).
    pub ui_dir: Option<std::path::PathBuf>,
    /// Example queries the workbench offers (`/examples`).
    pub examples: Vec<crate::workbench::Example>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 7070)),
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_queued: 512,
            timeout: Some(Duration::from_secs(300)),
            max_query_bytes: 1 << 20,
            fault_injection: false,
            quantum: Some(Duration::from_millis(5)),
            first_turn_here: Some(Duration::from_millis(1)),
            token_ttl: Duration::from_secs(3600),
            stash_bytes: 1 << 30,
            token_key: None,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            on_idle: None,
            max_stalled: 256,
            stall_timeout: Duration::from_secs(60),
            max_per_client: 32,
            update_token: None,
            load_dirs: Vec::new(),
            load_http: None,
            max_update_bytes: 64 << 20,
            ui_dir: None,
            examples: Vec::new(),
        }
    }
}
