//! Counters for `/metrics`, rendered in the Prometheus text format. Each
//! query updates them once, at its end, so plain mutexes are cheap enough.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;
use tern_engine::StashUsage;

use crate::paging::PageStats;

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 300.0,
];

#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    queries: BTreeMap<&'static str, u64>,
    latency_counts: [u64; BUCKETS.len()],
    latency_sum: f64,
    latency_count: u64,
    /// (format, encoding) → bytes on the wire.
    bytes_sent: BTreeMap<(&'static str, &'static str), u64>,
    /// format → bytes before compression.
    payload_bytes: BTreeMap<&'static str, u64>,
    rows: u64,
    pages: u64,
    pages_with_next: u64,
    /// Resumed pages that continued a parked query, and that rebuilt it
    /// from the token's saved state.
    resumed_parked: u64,
    resumed_from_token: u64,
    suspend_us: Summary,
    resume_us: Summary,
    token_bytes: Summary,
    updates: u64,
    update_seconds: f64,
    quads_inserted: u64,
    quads_deleted: u64,
}

/// Count, sum and maximum of an observed quantity.
#[derive(Default)]
struct Summary {
    count: u64,
    sum: u64,
    max: u64,
}

impl Summary {
    fn observe(&mut self, value: u64) {
        self.count += 1;
        self.sum += value;
        self.max = self.max.max(value);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} summary");
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
        let _ = writeln!(out, "# HELP {name}_max Largest {name} so far.");
        let _ = writeln!(out, "# TYPE {name}_max gauge");
        let _ = writeln!(out, "{name}_max {}", self.max);
    }
}

/// Counts so far, for `/status`.
pub struct Totals {
    pub queries: u64,
    pub by_outcome: BTreeMap<&'static str, u64>,
    pub rows: u64,
    pub mean_latency_ms: Option<f64>,
    pub updates: u64,
}

/// Gauges read when `/metrics` is rendered.
pub struct Gauges {
    pub active: usize,
    pub running: usize,
    pub queued: usize,
    pub quanta_yielded: u64,
    /// First turns run on the thread that received the query.
    pub turns_here: u64,
    /// Times a query was parked because its client did not read.
    pub parks: u64,
    pub stash: StashUsage,
    /// Queries parked until their clients read.
    pub stalled: usize,
    /// Parked queries dropped after the stall timeout.
    pub stall_drops: u64,
    /// Bytes the running queries' operators hold.
    pub query_memory: u64,
    /// Spill files made and bytes written to them since the start.
    pub spilled: (u64, u64),
    /// Bytes and count of the rows inference derived that are kept for
    /// later queries.
    pub derived_extents: (u64, usize),
    /// Bytes of decoded vocabulary and permutation blocks cached.
    pub cache_bytes: (usize, usize),
    /// Delta, log, snapshots and compactions of the store.
    pub store: tern_index::store::StoreStatus,
}

/// One finished (or failed, or abandoned) query.
pub struct QueryRecord {
    pub outcome: &'static str,
    pub latency: Duration,
    pub format: &'static str,
    pub encoding: &'static str,
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub rows: u64,
}

impl Metrics {
    pub fn record(&self, r: &QueryRecord) {
        let Ok(mut m) = self.inner.lock() else { return };
        *m.queries.entry(r.outcome).or_default() += 1;
        let secs = r.latency.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                m.latency_counts[i] += 1;
            }
        }
        m.latency_sum += secs;
        m.latency_count += 1;
        if r.wire_bytes > 0 {
            *m.bytes_sent.entry((r.format, r.encoding)).or_default() += r.wire_bytes;
        }
        if r.payload_bytes > 0 {
            *m.payload_bytes.entry(r.format).or_default() += r.payload_bytes;
        }
        m.rows += r.rows;
    }

    /// An update was committed.
    pub fn totals(&self) -> Totals {
        let inner = self.inner.lock().unwrap();
        Totals {
            queries: inner.queries.values().sum(),
            by_outcome: inner.queries.clone(),
            rows: inner.rows,
            mean_latency_ms: (inner.latency_count > 0)
                .then(|| inner.latency_sum / inner.latency_count as f64 * 1e3),
            updates: inner.updates,
        }
    }

    pub fn record_update(&self, took: Duration, report: &tern_engine::UpdateReport) {
        let Ok(mut m) = self.inner.lock() else { return };
        m.updates += 1;
        m.update_seconds += took.as_secs_f64();
        m.quads_inserted += report.inserted as u64;
        m.quads_deleted += report.deleted as u64;
    }

    /// A page of a paged query was sent.
    pub fn record_page(&self, page: &PageStats) {
        let Ok(mut m) = self.inner.lock() else { return };
        m.pages += 1;
        if let Some(next) = &page.next {
            m.pages_with_next += 1;
            m.token_bytes.observe(next.len() as u64);
        }
        if let Some(us) = page.suspend_us {
            m.suspend_us.observe(us);
        }
        if let Some(us) = page.resume_us {
            m.resume_us.observe(us);
        }
        match page.resumed_parked {
            Some(true) => m.resumed_parked += 1,
            Some(false) => m.resumed_from_token += 1,
            None => {}
        }
    }

    pub fn render(&self, gauges: &Gauges) -> String {
        let Gauges {
            active,
            running,
            queued,
            quanta_yielded,
            turns_here,
            parks,
            stash,
            stalled,
            stall_drops,
            query_memory,
            spilled,
            derived_extents,
            cache_bytes,
            store,
        } = gauges;
        let mut out = String::new();
        let Ok(m) = self.inner.lock() else { return out };
        render_store(&mut out, &m, store);
        let _ = writeln!(out, "# HELP tern_queries_total Queries by outcome.");
        let _ = writeln!(out, "# TYPE tern_queries_total counter");
        for outcome in [
            "ok",
            "client_error",
            "timeout",
            "memory",
            "cancelled",
            "error",
            "rejected",
        ] {
            let n = m.queries.get(outcome).copied().unwrap_or(0);
            let _ = writeln!(out, "tern_queries_total{{outcome=\"{outcome}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP tern_query_duration_seconds Time from request to the end of the response."
        );
        let _ = writeln!(out, "# TYPE tern_query_duration_seconds histogram");
        for (bound, n) in BUCKETS.iter().zip(m.latency_counts) {
            let _ = writeln!(
                out,
                "tern_query_duration_seconds_bucket{{le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "tern_query_duration_seconds_bucket{{le=\"+Inf\"}} {}",
            m.latency_count
        );
        let _ = writeln!(out, "tern_query_duration_seconds_sum {}", m.latency_sum);
        let _ = writeln!(out, "tern_query_duration_seconds_count {}", m.latency_count);
        let _ = writeln!(out, "# HELP tern_response_bytes_total Response bytes on the wire, by format and content coding.");
        let _ = writeln!(out, "# TYPE tern_response_bytes_total counter");
        for ((format, encoding), n) in &m.bytes_sent {
            let _ = writeln!(
                out,
                "tern_response_bytes_total{{format=\"{format}\",encoding=\"{encoding}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP tern_payload_bytes_total Result bytes before compression, by format."
        );
        let _ = writeln!(out, "# TYPE tern_payload_bytes_total counter");
        for (format, n) in &m.payload_bytes {
            let _ = writeln!(out, "tern_payload_bytes_total{{format=\"{format}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP tern_result_rows_total Rows (solutions or triples) sent."
        );
        let _ = writeln!(out, "# TYPE tern_result_rows_total counter");
        let _ = writeln!(out, "tern_result_rows_total {}", m.rows);
        let _ = writeln!(
            out,
            "# HELP tern_queries_active Queries started and not finished (on a worker or between quanta)."
        );
        let _ = writeln!(out, "# TYPE tern_queries_active gauge");
        let _ = writeln!(out, "tern_queries_active {active}");
        let _ = writeln!(
            out,
            "# HELP tern_queries_running Queries on a worker right now."
        );
        let _ = writeln!(out, "# TYPE tern_queries_running gauge");
        let _ = writeln!(out, "tern_queries_running {running}");
        let _ = writeln!(
            out,
            "# HELP tern_queries_queued Queries admitted that have not started."
        );
        let _ = writeln!(out, "# TYPE tern_queries_queued gauge");
        let _ = writeln!(out, "tern_queries_queued {queued}");
        let _ = writeln!(
            out,
            "# HELP tern_quanta_yielded_total Times a query used up its time quantum and went to the back of the run queue."
        );
        let _ = writeln!(out, "# TYPE tern_quanta_yielded_total counter");
        let _ = writeln!(out, "tern_quanta_yielded_total {quanta_yielded}");
        let _ = writeln!(
            out,
            "# HELP tern_queries_stalled Queries parked until their clients read what they produced."
        );
        let _ = writeln!(out, "# TYPE tern_queries_stalled gauge");
        let _ = writeln!(out, "tern_queries_stalled {stalled}");
        let _ = writeln!(
            out,
            "# HELP tern_stalled_dropped_total Parked queries dropped because their clients read nothing for the stall timeout."
        );
        let _ = writeln!(out, "# TYPE tern_stalled_dropped_total counter");
        let _ = writeln!(out, "tern_stalled_dropped_total {stall_drops}");
        let _ = writeln!(
            out,
            "# HELP tern_queries_parked_total Times a query was parked until its client read what it produced."
        );
        let _ = writeln!(out, "# TYPE tern_queries_parked_total counter");
        let _ = writeln!(out, "tern_queries_parked_total {parks}");
        let _ = writeln!(
            out,
            "# HELP tern_first_turns_here_total Queries whose first turn ran on the thread that read the request (the server was idle)."
        );
        let _ = writeln!(out, "# TYPE tern_first_turns_here_total counter");
        let _ = writeln!(out, "tern_first_turns_here_total {turns_here}");
        let _ = writeln!(
            out,
            "# HELP tern_query_memory_bytes Materialized state (hash tables, sorts, groups) of the running queries."
        );
        let _ = writeln!(out, "# TYPE tern_query_memory_bytes gauge");
        let _ = writeln!(out, "tern_query_memory_bytes {query_memory}");
        let _ = writeln!(
            out,
            "# HELP tern_spill_files_total Temporary files of sorts, groups and hash joins larger than their query's memory budget."
        );
        let _ = writeln!(out, "# TYPE tern_spill_files_total counter");
        let _ = writeln!(out, "tern_spill_files_total {}", spilled.0);
        let _ = writeln!(
            out,
            "# HELP tern_spill_bytes_total Bytes written to spill files (compressed)."
        );
        let _ = writeln!(out, "# TYPE tern_spill_bytes_total counter");
        let _ = writeln!(out, "tern_spill_bytes_total {}", spilled.1);
        let _ = writeln!(
            out,
            "# HELP tern_derived_extent_bytes Rows of large unions that inference read whole, kept for later queries on the same snapshot."
        );
        let _ = writeln!(out, "# TYPE tern_derived_extent_bytes gauge");
        let _ = writeln!(out, "tern_derived_extent_bytes {}", derived_extents.0);
        let _ = writeln!(out, "# TYPE tern_derived_extents gauge");
        let _ = writeln!(out, "tern_derived_extents {}", derived_extents.1);
        let _ = writeln!(
            out,
            "# HELP tern_pages_total Pages sent to paging clients (quantum= or next=)."
        );
        let _ = writeln!(out, "# TYPE tern_pages_total counter");
        let _ = writeln!(out, "tern_pages_total {}", m.pages);
        let _ = writeln!(
            out,
            "# HELP tern_pages_suspended_total Pages that ended with a continuation token."
        );
        let _ = writeln!(out, "# TYPE tern_pages_suspended_total counter");
        let _ = writeln!(out, "tern_pages_suspended_total {}", m.pages_with_next);
        let _ = writeln!(
            out,
            "# HELP tern_pages_resumed_total Pages that resumed a query: its operators parked on \
             this server, or rebuilt from the token's saved state."
        );
        let _ = writeln!(out, "# TYPE tern_pages_resumed_total counter");
        let _ = writeln!(
            out,
            "tern_pages_resumed_total{{from=\"parked\"}} {}",
            m.resumed_parked
        );
        let _ = writeln!(
            out,
            "tern_pages_resumed_total{{from=\"token\"}} {}",
            m.resumed_from_token
        );
        m.suspend_us.render(
            &mut out,
            "tern_suspend_microseconds",
            "Time to suspend a query at the end of a page and seal its token.",
        );
        m.resume_us.render(
            &mut out,
            "tern_resume_microseconds",
            "Time to resume a query from a token (parse, plan, restore).",
        );
        m.token_bytes.render(
            &mut out,
            "tern_token_bytes",
            "Size of the continuation tokens issued.",
        );
        let _ = writeln!(out, "# HELP tern_stash_entries Materialized states of suspended queries kept for their tokens.");
        let _ = writeln!(out, "# TYPE tern_stash_entries gauge");
        let _ = writeln!(out, "tern_stash_entries {}", stash.entries);
        let _ = writeln!(
            out,
            "# HELP tern_stash_bytes Approximate memory of those states."
        );
        let _ = writeln!(out, "# TYPE tern_stash_bytes gauge");
        let _ = writeln!(out, "tern_stash_bytes {}", stash.bytes);
        let _ = writeln!(out, "# HELP tern_stash_evicted_total States dropped before their query resumed (expired or over quota).");
        let _ = writeln!(out, "# TYPE tern_stash_evicted_total counter");
        let _ = writeln!(out, "tern_stash_evicted_total {}", stash.evicted);
        let _ = writeln!(
            out,
            "# HELP tern_cache_bytes Decoded index blocks kept between queries, within the --vocab-cache and --block-cache budgets."
        );
        let _ = writeln!(out, "# TYPE tern_cache_bytes gauge");
        let _ = writeln!(
            out,
            "tern_cache_bytes{{cache=\"vocabulary\"}} {}",
            cache_bytes.0
        );
        let _ = writeln!(
            out,
            "tern_cache_bytes{{cache=\"permutations\"}} {}",
            cache_bytes.1
        );
        out
    }
}

/// The update counters and the store's gauges.
/// A duration in milliseconds rounded to the microsecond, for log lines
/// and reports: `3.88`, not the `3.8800079999999997` of a raw conversion.
/// A short name of a query text for the access log (FNV-1a, 64 bits, in
/// hex): the same text always gets the same name, so a log can be grouped
/// by query without holding the text.
pub fn query_hash(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn render_store(out: &mut String, m: &Inner, store: &tern_index::store::StoreStatus) {
    let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name} {value}");
    };
    metric(
        "tern_updates_total",
        "counter",
        "Updates committed.",
        m.updates as f64,
    );
    metric(
        "tern_update_seconds_total",
        "counter",
        "Time from request to answer of committed updates.",
        m.update_seconds,
    );
    metric(
        "tern_quads_inserted_total",
        "counter",
        "Quads inserted by updates.",
        m.quads_inserted as f64,
    );
    metric(
        "tern_quads_deleted_total",
        "counter",
        "Quads deleted by updates.",
        m.quads_deleted as f64,
    );
    metric(
        "tern_store_version",
        "gauge",
        "Updates applied since the store was built.",
        store.version as f64,
    );
    metric(
        "tern_delta_quads",
        "gauge",
        "Inserted and deleted quads waiting for compaction.",
        store.delta_changes as f64,
    );
    metric(
        "tern_delta_runs",
        "gauge",
        "Sorted runs the delta is in.",
        store.delta_runs as f64,
    );
    metric(
        "tern_delta_terms",
        "gauge",
        "Terms added by updates since the base was built.",
        store.delta_terms as f64,
    );
    metric(
        "tern_delta_bytes",
        "gauge",
        "Memory the delta holds.",
        store.delta_bytes as f64,
    );
    metric(
        "tern_wal_bytes",
        "gauge",
        "Bytes in the write-ahead log.",
        store.wal_bytes as f64,
    );
    metric(
        "tern_snapshots_kept",
        "gauge",
        "Older snapshots kept for continuation tokens.",
        store.kept_snapshots as f64,
    );
    metric(
        "tern_compactions_total",
        "counter",
        "Compactions finished.",
        store.compactions as f64,
    );
    metric(
        "tern_compacting",
        "gauge",
        "A compaction is running.",
        f64::from(u8::from(store.compacting)),
    );
    if let Some(last) = &store.last_compaction {
        metric(
            "tern_last_compaction_seconds",
            "gauge",
            "Duration of the last compaction.",
            last.seconds,
        );
        metric(
            "tern_last_compaction_quads",
            "gauge",
            "Quads the last compaction wrote.",
            last.quads as f64,
        );
    }
}

#[cfg(test)]
mod millis_tests {
    use super::*;

    #[test]
    fn milliseconds_are_rounded_to_the_microsecond() {
        assert_eq!(millis(Duration::from_nanos(3_880_008)).to_string(), "3.88");
        assert_eq!(millis(Duration::from_nanos(1_234_567)).to_string(), "1.235");
        assert_eq!(millis(Duration::ZERO).to_string(), "0");
    }
}
