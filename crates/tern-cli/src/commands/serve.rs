use crate::duration::parse_duration;
use crate::size::{default_memory, parse_size};
use anyhow::{Context, Result};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tern_engine::{Engine, EngineOptions};
use tern_index::{Store, StoreOptions, SyncPolicy};
use tern_server::ServerConfig;

#[derive(Args)]
pub struct ServeArgs {
    /// Directory of the index. Without it: the FILEs in a temporary index,
    /// or with no FILEs the sample data bundled with tern (built on first
    /// use into ~/.cache/tern).
    #[arg(long)]
    index: Option<PathBuf>,
    /// Files to load and serve (.nt .nq .ttl .trig, optionally .gz or
    /// .zst): built at start into --index (which must not hold an index
    /// yet), or into a temporary index removed when the server stops.
    files: Vec<PathBuf>,
    /// A TOML file of settings: keys are these flags' names (`port = 8080`,
    /// `load-dir = ["/data"]`); see tern.example.toml. Flags on the command
    /// line win, then environment variables (TERN_PORT=8080), then the
    /// file. Default: the TERN_CONFIG environment variable.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A prefix queries and updates may use without declaring it (repeat
    /// for more): NAME=IRI. Added to the well-known ones (rdf, rdfs, xsd,
    /// owl, skos, foaf, dc, dcterms, schema, sd, void, prov, wd, wdt); a
    /// query's own PREFIX wins.
    #[arg(long, value_name = "NAME=IRI")]
    prefix: Vec<String>,
    /// Predeclare only the --prefix ones, not the well-known prefixes.
    #[arg(long)]
    no_default_prefixes: bool,
    /// Example queries for the workbench at / (each after a line
    /// `# title: NAME`; see data/sample-examples.rq).
    #[arg(long, value_name = "FILE")]
    examples: Option<PathBuf>,
    /// Serve the workbench's files (index.html, app.js, app.css) from this
    /// directory instead of the copies built into tern (for working on it:
    /// ui/dist).
    #[arg(long, value_name = "DIR")]
    ui_dir: Option<PathBuf>,
    /// Default entailment regime of queries: none, rdfs or owl-rl (see
    /// docs/inference.md); a request's `inference` parameter or a query's
    /// `FROM <urn:tern:inference:MODE>` chooses another.
    #[arg(long, default_value = "none", value_name = "MODE")]
    inference: tern_engine::Inference,
    /// How owl:sameAs synonyms are answered under owl-rl: all (every
    /// synonym) or canonical (one member per class).
    #[arg(long, default_value = "all", value_name = "MODE")]
    sameas: tern_engine::SameAsAnswers,
    /// Memory for rows that inference derived, kept for later queries on
    /// the same snapshot (the instances of a class with every subclass,
    /// domain and range, read whole), e.g. 256M; 0 keeps nothing inference
    /// derived, not even rewritten queries. A write makes a new snapshot,
    /// whose queries derive them again.
    #[arg(long, value_parser = crate::size::parse_size, default_value = "256M")]
    extent_cache: u64,
    /// Read the inference schema (class and property axioms) from this
    /// named graph only (default: from every graph).
    #[arg(long, value_name = "IRI", value_parser = parse_graph_iri)]
    schema_graph: Option<oxrdf::NamedNode>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 7070)]
    port: u16,
    /// Query worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Server-wide query timeout, e.g. 300 (seconds), 90s or 10m (0: none);
    /// a request's `timeout` parameter can lower it.
    #[arg(long, default_value = "300", value_parser = parse_duration)]
    timeout: Duration,
    /// Queries that may wait for a worker (or for their next turn); beyond
    /// them, 503 with Retry-After. Waiting costs little: new queries go
    /// before long ones, and memory has budgets of its own.
    #[arg(long, default_value_t = 512)]
    max_queued: usize,
    /// Memory budget of each query's materialized state, e.g. 2G (default: a
    /// quarter of RAM), so one query cannot take the server down.
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Memory for the materialized state of all running queries together,
    /// e.g. 8G (default: half of RAM); a query that would pass it ends with
    /// 507, the others go on.
    #[arg(long, value_parser = parse_size)]
    server_memory: Option<u64>,
    /// Directory where sorts, groups and hash joins larger than a query's
    /// memory budget write their rows (default: the system's temporary
    /// directory, TMPDIR). The files have no names and go with the query.
    #[arg(long)]
    spill_dir: Option<std::path::PathBuf>,
    /// Most cores one query uses at once (default: all). Large joins run as
    /// copies on several cores; with many clients, 1 leaves the other cores
    /// to other queries.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    cores_per_query: Option<u16>,
    #[command(flatten)]
    cache: crate::cache::CacheArgs,
    /// Longest accepted query, in bytes (413 beyond).
    #[arg(long, default_value_t = 1 << 20)]
    max_query_bytes: usize,
    /// Time slice of a query before other queries get their turn, e.g. 5ms
    /// (0: run each query to its end, first come first served).
    #[arg(long, default_value = "5ms", value_parser = parse_duration)]
    quantum: Duration,
    /// Longest first turn a query gets on the thread that read its request
    /// when the server is idle, saving two thread hand-offs on short
    /// queries (0, or --quantum 0: every query goes to a query worker).
    #[arg(long, default_value = "1ms", value_parser = parse_duration)]
    first_turn_here: Duration,
    /// File holding the secret (at least 16 bytes) that signs continuation
    /// tokens; servers sharing it and the index resume each other's tokens.
    /// Default: the TERN_TOKEN_KEY environment variable, else random per process.
    #[arg(long)]
    token_key: Option<PathBuf>,
    /// How long continuation tokens (and the state they refer to) stay valid.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    token_ttl: Duration,
    /// Memory for suspended queries' intermediate results, e.g. 1G (oldest dropped first).
    #[arg(long, value_parser = parse_size, default_value = "1G")]
    stash_memory: u64,
    /// How long a client may take to send a request's line and headers
    /// before its connection is closed.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    header_timeout: Duration,
    /// How long a client may take to send a request's body (408 beyond).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    body_timeout: Duration,
    /// Most queries parked at once because their clients do not read what
    /// they produced (they hold no worker and no queue slot meanwhile).
    #[arg(long, default_value_t = 256)]
    max_stalled: usize,
    /// A parked query whose client reads nothing this long is dropped.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    stall_timeout: Duration,
    /// Most queries one client address may have in the server at once
    /// (running, waiting or parked); beyond, 429. Behind a proxy every
    /// client has the proxy's address: raise it there.
    #[arg(long, default_value_t = 32)]
    max_per_client: usize,
    /// File holding the bearer token that updates must carry (SPARQL Update
    /// and the Graph Store Protocol). Default: the TERN_UPDATE_TOKEN
    /// environment variable; without either the server is read-only.
    #[arg(long)]
    update_token: Option<PathBuf>,
    /// Longest accepted update, in bytes (413 beyond).
    #[arg(long, value_parser = parse_size, default_value = "64M")]
    max_update_bytes: u64,
    /// A directory whose files LOAD may read (repeat for more; none by default).
    #[arg(long)]
    load_dir: Vec<PathBuf>,
    /// Let LOAD fetch http(s) documents (off by default). Hosts that are, or
    /// resolve to, loopback, private, link-local or reserved addresses are
    /// refused, also after redirects, unless named by --load-http-allow-host.
    #[arg(long)]
    load_http: bool,
    /// A host LOAD may fetch from although it is not on the public internet,
    /// e.g. a data mirror on the intranet (repeat for more; with --load-http).
    #[arg(long, requires = "load_http")]
    load_http_allow_host: Vec<String>,
    /// Largest document LOAD fetches over http(s), e.g. 512M.
    #[arg(long, value_parser = parse_size, default_value = "1G")]
    load_max_bytes: u64,
    /// Start a background compaction when this many inserted or deleted quads
    /// wait in the delta (0: never).
    #[arg(long, default_value_t = 1_000_000)]
    compact_after: usize,
    /// Memory for a compaction's build, e.g. 1G.
    #[arg(long, value_parser = parse_size, default_value = "1G")]
    compaction_memory: u64,
    /// Most older snapshots kept for continuation tokens of queries that
    /// started before updates (each for --token-ttl after its last use).
    #[arg(long, default_value_t = 256)]
    kept_snapshots: usize,
    /// When an update's write-ahead log record reaches the disk: `commit`
    /// syncs it before the update is acknowledged (an acknowledged update
    /// survives a power loss); a duration such as `100ms` acknowledges once
    /// the record is written to the operating system and syncs in the
    /// background at that interval (it survives a crash or kill -9 of the
    /// server, but a power loss may lose up to that interval's updates).
    #[arg(long, default_value = "commit", value_parser = parse_sync_policy)]
    wal_sync: SyncPolicy,
    /// Threads that speak HTTP (queries, writes, compression and result
    /// encoding run on threads of their own). One is the default: with two,
    /// the wake-ups between them took a quarter of a small request's time
    /// (single-client ASK 4,400 -> 7,600 requests/s with one), with no loss
    /// of throughput for 8 to 32 clients or for a large export.
    #[arg(long, default_value_t = 1)]
    http_threads: usize,
    /// Testing only: honour the `tern-fault-after=N` parameter (fail after N rows).
    #[arg(long, hide = true)]
    inject_faults: bool,
}

fn parse_sync_policy(text: &str) -> Result<SyncPolicy, String> {
    if text == "commit" {
        return Ok(SyncPolicy::EveryCommit);
    }
    match parse_duration(text) {
        Ok(every) if !every.is_zero() => Ok(SyncPolicy::Interval(every)),
        _ => Err(format!(
            "expected `commit` or a sync interval such as 100ms, not `{text}`"
        )),
    }
}

pub fn run(args: ServeArgs) -> Result<()> {
    // One structured line per query on stderr (target tern::access);
    // RUST_LOG-style filtering is not needed for that.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Its default reports a failed write with eprintln!, which panics
        // when stderr cannot be written either (a full disk under the log
        // took down request threads): a lost log line is better.
        .log_internal_errors(false)
        .with_target(true)
        .with_ansi(false)
        .init();
    let update_token = secret(
        args.update_token.as_deref(),
        "TERN_UPDATE_TOKEN",
        "the update token",
    )?
    .map(|t| String::from_utf8(t).context("the update token must be text"))
    .transpose()?;
    let options = StoreOptions {
        compact_after: args.compact_after,
        compaction_memory: args.compaction_memory,
        token_ttl: args.token_ttl,
        max_kept_snapshots: args.kept_snapshots,
        cache_budget: Some(args.cache.budget()),
        sync: args.wal_sync,
    };
    let served = crate::served_index::resolve(args.index.as_deref(), &args.files)?;
    let examples = match (&args.examples, served.sample) {
        (Some(file), _) => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading the examples {}", file.display()))?;
            tern_server::parse_examples(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?
        }
        (None, true) => tern_server::parse_examples(crate::served_index::SAMPLE_EXAMPLES)
            .map_err(|e| anyhow::anyhow!("the sample's examples: {e}"))?,
        (None, false) => Vec::new(),
    };
    let mut prefixes = predeclared_prefixes(&args.prefix, args.no_default_prefixes)?;
    if served.sample && !prefixes.iter().any(|(name, _)| name == "ex") {
        // The sample's own namespace, as its example queries write it.
        prefixes.push(("ex".into(), crate::served_index::SAMPLE_NAMESPACE.into()));
    }
    // Writable only when updates are allowed: a read-only server leaves the
    // log as it is (another process may be writing it).
    let reopen = Reopen {
        dir: served.dir.clone(),
        options: options.clone(),
        writable: update_token.is_some(),
    };
    let store = Store::open(&served.dir, update_token.is_some(), options)?;
    if let Some(dir) = &args.spill_dir {
        // Found out now rather than by the first query too large for memory.
        tempfile::tempfile_in(dir)
            .with_context(|| format!("--spill-dir {}: cannot create files there", dir.display()))?;
    }
    let timeout = (!args.timeout.is_zero()).then_some(args.timeout);
    let engine = Engine::new(
        store,
        EngineOptions {
            default_graph_is_union: true,
            timeout,
            // default_memory() is 40% of RAM; 5/8 of it is a quarter.
            memory_budget: Some(args.memory.unwrap_or(default_memory() / 8 * 5)),
            // Half of RAM (default_memory() is 40% of it) for all queries.
            server_memory_budget: Some(args.server_memory.unwrap_or(default_memory() / 4 * 5)),
            prefixes,
            inference: tern_engine::InferenceMode {
                regime: args.inference,
                same_as: args.sameas,
            },
            derived_extents: args.extent_cache,
            schema_graph: args.schema_graph.clone(),
            spill_dir: args.spill_dir.clone(),
            cores_per_query: args.cores_per_query.map(usize::from),
            ..EngineOptions::default()
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
    config.quantum = (!args.quantum.is_zero()).then_some(args.quantum);
    config.first_turn_here = (!args.first_turn_here.is_zero()).then_some(args.first_turn_here);
    config.token_ttl = args.token_ttl;
    config.on_idle = Some(tern_server::IdleHook(Arc::new(crate::malloc::server_idle)));
    crate::malloc::trim_while_busy();
    config.header_timeout = args.header_timeout.max(Duration::from_millis(1));
    config.max_stalled = args.max_stalled;
    config.stall_timeout = args.stall_timeout.max(Duration::from_millis(1));
    config.max_per_client = args.max_per_client.max(1);
    config.body_timeout = args.body_timeout.max(Duration::from_millis(1));
    config.stash_bytes = args.stash_memory;
    config.token_key = secret(args.token_key.as_deref(), "TERN_TOKEN_KEY", "the token key")?;
    config.update_token = update_token;
    config.max_update_bytes = usize::try_from(args.max_update_bytes).unwrap_or(usize::MAX);
    config.load_dirs = args.load_dir.clone();
    config.load_http = args.load_http.then(|| tern_engine::HttpLoad {
        allowed_hosts: args.load_http_allow_host.clone(),
        max_bytes: args.load_max_bytes,
        timeout: timeout.unwrap_or(Duration::from_secs(300)),
    });
    if let Some(w) = args.workers {
        config.workers = w.max(1);
    }
    config.ui_dir = args.ui_dir.clone();
    config.examples = examples;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.http_threads.max(1))
        // A query's first turn may run on these threads (`first_turn_here`).
        .thread_stack_size(tern_engine::QUERY_STACK_BYTES)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tern_server::bind(config.clone()).await.map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => {
                    " (another server uses that port: choose one with --port)"
                }
                _ => "",
            };
            anyhow::anyhow!("cannot listen on {}{hint}: {e}", config.addr)
        })?;
        let addr = listener.local_addr()?;
        say!("tern serve: serving {}", served.what);
        say!("tern serve: query workbench at http://{addr}/");
        say!(
            "tern serve: SPARQL endpoint at http://{addr}/sparql ({} workers, queue {}, {})",
            config.workers,
            config.max_queued,
            match config.quantum {
                Some(q) => format!("quantum {} ms", q.as_secs_f64() * 1e3),
                None => "no quantum: first come, first served".into(),
            }
        );
        // Ctrl-C, or SIGTERM from a service manager or `kill`: stop, and
        // remove a temporary index.
        let shutdown = async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => {
                        tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        }
                    }
                    Err(_) => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        };
        reopen.on_hangup(engine.clone());
        tern_server::serve(listener, engine, config, shutdown).await?;
        Ok(())
    })
}

/// Reopening the index on SIGHUP, for a server that serves an index
/// `tern load --force` rebuilt: new queries read the new index, running
/// ones finish on the old (its files stay readable while open).
struct Reopen {
    dir: PathBuf,
    options: StoreOptions,
    /// A server that takes updates owns its store's log and delta: it is
    /// not reopened under them.
    writable: bool,
}

impl Reopen {
    fn on_hangup(self, engine: Engine) {
        #[cfg(unix)]
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut hangups) = signal(SignalKind::hangup()) else {
                return;
            };
            while hangups.recv().await.is_some() {
                if self.writable {
                    say!(
                        "tern serve: SIGHUP: a server that takes updates keeps its store                          (its log and delta belong to it); restart it to serve a rebuilt index"
                    );
                    continue;
                }
                let (dir, options) = (self.dir.clone(), self.options.clone());
                let opened =
                    tokio::task::spawn_blocking(move || Store::open(&dir, false, options)).await;
                match opened {
                    Ok(Ok(store)) => {
                        let before = engine.snapshot().meta().index_id.clone();
                        let after = store.snapshot().meta().index_id.clone();
                        engine.replace_store(store);
                        say!(
                            "tern serve: reopened {} (index {before} -> {after})",
                            self.dir.display()
                        );
                    }
                    Ok(Err(e)) => say!(
                        "tern serve: SIGHUP: cannot reopen {}: {e}; still serving the index it had",
                        self.dir.display()
                    ),
                    Err(e) => say!("tern serve: SIGHUP: the reopen failed: {e}"),
                }
            }
        });
        #[cfg(not(unix))]
        let _ = engine;
    }
}

/// An absolute IRI given on the command line.
fn parse_graph_iri(text: &str) -> std::result::Result<oxrdf::NamedNode, String> {
    oxrdf::NamedNode::new(text).map_err(|e| format!("not an absolute IRI: {e}"))
}

/// The prefixes queries may use undeclared: the well-known ones (unless
/// `none_by_default`), then those given as NAME=IRI.
fn predeclared_prefixes(given: &[String], none_by_default: bool) -> Result<Vec<(String, String)>> {
    let mut prefixes: Vec<(String, String)> = if none_by_default {
        Vec::new()
    } else {
        tern_export::prefixes::WELL_KNOWN
            .iter()
            .map(|(name, iri)| ((*name).to_owned(), (*iri).to_owned()))
            .collect()
    };
    for text in given {
        let (name, iri) = text
            .split_once('=')
            .with_context(|| format!("--prefix takes NAME=IRI, not {text:?}"))?;
        let (name, iri) = (
            name.trim().trim_end_matches(':'),
            iri.trim().trim_start_matches('<').trim_end_matches('>'),
        );
        oxrdf::NamedNode::new(iri)
            .with_context(|| format!("--prefix {name}: {iri:?} is not an IRI"))?;
        if !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
        {
            anyhow::bail!("--prefix: {name:?} is not a prefix name");
        }
        prefixes.retain(|(n, _)| n != name);
        prefixes.push((name.to_owned(), iri.to_owned()));
    }
    Ok(prefixes)
}

/// A secret (at least 16 bytes): from a file, else from the environment
/// variable `var`, else none.
fn secret(file: Option<&std::path::Path>, var: &str, what: &str) -> Result<Option<Vec<u8>>> {
    let secret = match file {
        Some(path) => {
            let bytes = std::fs::read(path)
                .with_context(|| format!("reading {what} {}", path.display()))?;
            // A trailing newline from `echo` or an editor is not part of it.
            let trimmed = bytes.trim_ascii_end().to_vec();
            Some(trimmed)
        }
        None => std::env::var(var)
            .ok()
            .filter(|k| !k.is_empty())
            .map(String::into_bytes),
    };
    if let Some(secret) = &secret {
        if secret.len() < 16 {
            anyhow::bail!(
                "{what} has {} bytes; it needs at least 16 (e.g. `head -c 32 /dev/urandom | base64 > key`)",
                secret.len()
            );
        }
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_sync_is_commit_or_an_interval() {
        assert_eq!(parse_sync_policy("commit"), Ok(SyncPolicy::EveryCommit));
        assert_eq!(
            parse_sync_policy("100ms"),
            Ok(SyncPolicy::Interval(Duration::from_millis(100)))
        );
        for bad in ["0s", "never", ""] {
            let err = parse_sync_policy(bad).unwrap_err();
            assert!(err.contains("expected `commit`"), "{err}");
        }
    }
}
