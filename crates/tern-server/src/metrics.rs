//! Counters for `/metrics`, rendered in the Prometheus text format. Each
//! query updates them once, at its end, so plain mutexes are cheap enough.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

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

    pub fn render(&self, active: usize, queued: usize) -> String {
        let mut out = String::new();
        let Ok(m) = self.inner.lock() else { return out };
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
            "# HELP tern_queries_active Queries running on a worker."
        );
        let _ = writeln!(out, "# TYPE tern_queries_active gauge");
        let _ = writeln!(out, "tern_queries_active {active}");
        let _ = writeln!(
            out,
            "# HELP tern_queries_queued Queries waiting for a worker."
        );
        let _ = writeln!(out, "# TYPE tern_queries_queued gauge");
        let _ = writeln!(out, "tern_queries_queued {queued}");
        out
    }
}
