//! The preemptive protocol: a client that asks for it (`quantum=` or a
//! `Tern-Quantum` header) gets at most one quantum of work per request: a
//! page of results and a continuation token (`Tern-Next` header, and a
//! top-level `"next"` member in SPARQL JSON). Sending the token back
//! (`next=TOKEN`) resumes the query where it stopped; the last page has no
//! token.
//!
//! The token carries the query, its dataset and the state of its pipelined
//! operators, so any server with the same index and key can resume it.
//! Materialized state (hash tables, sorted rows, DISTINCT's set) stays in
//! this server's stash under a memory quota and a time to live; a token
//! whose state is gone, or held by another server, gets 410.
//!
//! A query whose plan is pipelined throughout is also kept running here,
//! parked in the stash: a token that comes back to this server continues it
//! without parsing, planning or restoring anything. Elsewhere, or once the
//! parked query is gone, the token's saved state serves as usual.

use crate::error::RequestError;
use oxrdf::NamedNode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tern_engine::Stash;
use tern_engine::{ContinuationToken, TokenKey};
use tern_engine::{Engine, EngineError, Execution, QueryRequest, SavedQuery};
use tern_index::Snapshot;

/// A page's bytes beyond which it ends before its quantum does, so that a
/// page of a fast query stays a reasonable response.
pub const MAX_PAGE_BYTES: usize = 16 << 20;
/// Quanta a client may ask for.
const MIN_QUANTUM: Duration = Duration::from_micros(100);
const MAX_QUANTUM: Duration = Duration::from_secs(60);

/// What the server needs to issue and accept tokens.
pub struct Paging {
    pub key: TokenKey,
    pub stash: Arc<Stash>,
    /// This process, as named in the tokens whose state it holds.
    pub owner: u64,
    /// Finds the snapshot a token names (the engine's store, which a
    /// reopen may replace).
    pub engine: tern_engine::Engine,
    /// Tokens older than this are refused (410), like their stashed state.
    pub token_ttl: Duration,
}

impl Paging {
    /// Opens a token sent back by a client, with the snapshot it names:
    /// 400 if it is not ours or not for this store, 410 if it, its state
    /// or its snapshot has expired or lives elsewhere.
    pub fn open(&self, text: &str) -> Result<(ContinuationToken, Snapshot), RequestError> {
        let token = ContinuationToken::open(text, &self.key)
            .map_err(|e| RequestError::BadRequest(e.to_string()))?;
        let snapshot = self.snapshot_of(&token)?;
        let age = now_ms().saturating_sub(token.issued_at_ms);
        if age > self.token_ttl.as_millis() as u64 {
            return Err(RequestError::Gone(format!(
                "the continuation token expired: issued {:.0} s ago, tokens last {} s; \
                 run the query again",
                age as f64 / 1e3,
                self.token_ttl.as_secs()
            )));
        }
        if token.saved.uses_stash() && token.stash_owner != self.owner {
            return Err(RequestError::Gone(
                "this query's intermediate results (sort, group, distinct or join tables) \
                 are held by the server that issued the token, or were lost when it \
                 restarted; resume it there or run the query again"
                    .into(),
            ));
        }
        Ok((token, snapshot))
    }

    /// The snapshot a token names (its `index_id`: base build and update
    /// number), if this server still serves it.
    fn snapshot_of(&self, token: &ContinuationToken) -> Result<Snapshot, RequestError> {
        if let Some(snapshot) = self.engine.store().snapshot_named(&token.index_id) {
            return Ok(snapshot);
        }
        let store = self.engine.store();
        let current = store.snapshot();
        let base = token.index_id.split('@').next().unwrap_or_default();
        if !store.knows_base(base) {
            return Err(RequestError::BadRequest(format!(
                "the continuation token was issued for index {base} (snapshot {}); this \
                 server serves index {} (snapshot {})",
                token.index_id,
                current.meta().index_id,
                current.name()
            )));
        }
        Err(RequestError::Gone(format!(
            "the data changed since this continuation token was issued (it reads snapshot {}, \
             the store is at {}) and that snapshot is no longer kept: snapshots named by \
             tokens are kept for {} s after their last use (at most {} of them, and not across \
             restarts); run the query again",
            token.index_id,
            current.name(),
            store.options().token_ttl.as_secs(),
            store.options().max_kept_snapshots
        )))
    }

    /// The request a token resumes with.
    pub fn request_of(token: &ContinuationToken) -> Result<QueryRequest, RequestError> {
        let graphs = |list: &Option<Vec<String>>| -> Result<_, RequestError> {
            list.as_ref()
                .map(|l| {
                    l.iter()
                        .map(|iri| {
                            NamedNode::new(iri.as_str()).map_err(|e| {
                                RequestError::BadRequest(format!("graph IRI in token: {e}"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()
        };
        Ok(QueryRequest {
            base_iri: token.base_iri.clone(),
            default_graphs: graphs(&token.default_graphs)?,
            named_graphs: graphs(&token.named_graphs)?,
            inference: parsed(&token.inference)?,
            same_as: parsed(&token.same_as)?,
            // Planned as the first page was (see `QueryRequest::cores`).
            cores: Some(1),
            ..QueryRequest::default()
        })
    }
}

/// A setting a token carries, parsed again.
fn parsed<T: std::str::FromStr<Err = String>>(
    value: &Option<String>,
) -> Result<Option<T>, RequestError> {
    value
        .as_deref()
        .map(|v| v.parse().map_err(RequestError::BadRequest))
        .transpose()
}

/// Parses a quantum: `50ms`, `2s`, `500us`, or a bare number of milliseconds.
pub fn parse_quantum(text: &str) -> Result<Duration, RequestError> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => text.split_at(i),
        None => (text, "ms"),
    };
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)
        .ok_or_else(|| bad_quantum(text))?;
    let seconds = match unit.trim() {
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" => value,
        _ => return Err(bad_quantum(text)),
    };
    if seconds > MAX_QUANTUM.as_secs_f64() {
        return Err(bad_quantum(text));
    }
    Ok(Duration::from_secs_f64(seconds).max(MIN_QUANTUM))
}

fn bad_quantum(text: &str) -> RequestError {
    RequestError::BadRequest(format!(
        "quantum must be a duration such as 50ms, 2s or 500us (at most 60 s), not {text:?}"
    ))
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A request for one page: the quantum, and the token it resumes, if any.
pub struct PageRequest {
    paging: Arc<Paging>,
    quantum_left: Duration,
    turn_started: Option<Instant>,
    resume: Option<ContinuationToken>,
    /// Time taken to open and check the token, part of the resume time.
    opened_in: Duration,
    /// The query as the token will carry it.
    query: String,
    request: QueryRequest,
    stats: PageStats,
    /// When the query's first page was asked for (ms since the Unix epoch).
    started_at_ms: u64,
    /// `page-rows`: rows after which the page ends, before its quantum.
    row_limit: Option<u64>,
}

/// What the response of a page reports.
#[derive(Debug, Clone, Default)]
pub struct PageStats {
    /// The token for the next page; none on the last page.
    pub next: Option<String>,
    pub suspend_us: Option<u64>,
    pub resume_us: Option<u64>,
    /// The page continued the query parked on this server (true) or
    /// rebuilt it from the token's saved state (false).
    pub resumed_parked: Option<bool>,
    /// Rows of the earlier pages.
    pub rows_before: u64,
}

impl PageRequest {
    pub fn new(
        paging: Arc<Paging>,
        quantum: Duration,
        query: String,
        request: QueryRequest,
        resume: Option<(ContinuationToken, Duration)>,
    ) -> PageRequest {
        let (resume, opened_in) = match resume {
            Some((token, opened_in)) => (Some(token), opened_in),
            None => (None, Duration::ZERO),
        };
        PageRequest {
            opened_in,
            paging,
            quantum_left: quantum,
            turn_started: None,
            stats: PageStats {
                rows_before: resume.as_ref().map_or(0, |t| t.rows_so_far),
                ..PageStats::default()
            },
            started_at_ms: resume.as_ref().map_or_else(now_ms, |t| t.started_at_ms),
            resume,
            query,
            request,
            row_limit: None,
        }
    }

    pub fn is_resume(&self) -> bool {
        self.resume.is_some()
    }

    /// When the query's first page was asked for, in milliseconds since the
    /// Unix epoch.
    pub fn started_at_ms(&self) -> u64 {
        self.started_at_ms
    }

    /// Starts the query, or resumes it: parked here, or from its token.
    pub fn start(
        &mut self,
        engine: &Engine,
        text: &str,
        request: &QueryRequest,
    ) -> Result<Execution, EngineError> {
        let Some(token) = &self.resume else {
            return engine.execute(text, request);
        };
        let stash = &self.paging.stash;
        let here = token
            .parked
            .filter(|_| token.stash_owner == self.paging.owner);
        if let Some(handle) = here {
            if let Some(execution) = engine.continue_parked(handle, &token.saved, request, stash)? {
                self.stats.resumed_parked = Some(true);
                return Ok(execution);
            }
        }
        self.stats.resumed_parked = Some(false);
        engine.resume(text, request, &token.saved, stash)
    }

    /// When this turn must end: the end of the page's quantum, or of the
    /// scheduler's turn if that comes first.
    pub fn turn_until(&mut self, scheduler_until: Option<Instant>) -> Instant {
        let now = Instant::now();
        self.turn_started = Some(now);
        let page_until = now + self.quantum_left;
        scheduler_until.map_or(page_until, |u| u.min(page_until))
    }

    /// The page also ends once it holds `rows` rows.
    pub fn with_row_limit(mut self, rows: Option<u64>) -> PageRequest {
        self.row_limit = rows;
        self
    }

    /// Whether a page with `rows` rows so far is full by its row limit.
    pub fn rows_full(&self, rows: u64) -> bool {
        self.row_limit.is_some_and(|limit| rows >= limit)
    }

    /// Rows a page with `rows` rows so far still has room for, when it has
    /// a row limit.
    pub fn room(&self, rows: u64) -> Option<u64> {
        self.row_limit.map(|limit| limit.saturating_sub(rows))
    }

    /// Counts this turn's work against the quantum; true when it is spent.
    pub fn used_up(&mut self) -> bool {
        if let Some(started) = self.turn_started.take() {
            self.quantum_left = self.quantum_left.saturating_sub(started.elapsed());
        }
        self.quantum_left.is_zero()
    }

    pub fn stash(&self) -> Arc<Stash> {
        self.paging.stash.clone()
    }

    /// Seals the token of the next page.
    pub fn seal(&mut self, saved: &SavedQuery, parked: Option<u64>, rows_in_page: u64) -> String {
        let strings = |graphs: &Option<Vec<NamedNode>>| {
            graphs
                .as_ref()
                .map(|g| g.iter().map(|n| n.as_str().to_owned()).collect())
        };
        let snapshot = self
            .request
            .snapshot
            .clone()
            .unwrap_or_else(|| self.paging.engine.snapshot());
        // Kept as long as tokens for it may come back.
        self.paging.engine.store().keep(&snapshot);
        let token = ContinuationToken {
            index_id: snapshot.name(),
            stash_owner: self.paging.owner,
            parked,
            issued_at_ms: now_ms(),
            started_at_ms: self.started_at_ms,
            query: self.query.clone(),
            base_iri: self.request.base_iri.clone(),
            default_graphs: strings(&self.request.default_graphs),
            named_graphs: strings(&self.request.named_graphs),
            inference: self.request.inference.map(|m| m.name().to_owned()),
            same_as: self.request.same_as.map(|m| m.name().to_owned()),
            rows_so_far: self.stats.rows_before + rows_in_page,
            saved: saved.clone(),
        }
        .seal(&self.paging.key);
        self.stats.next = Some(token.clone());
        token
    }

    pub fn record_suspend(&mut self, took: Duration) {
        self.stats.suspend_us = Some(took.as_micros() as u64);
    }

    /// `took`: from the worker taking the page to the query running again;
    /// the token's opening, when the request came, is added.
    pub fn set_resume_time(&mut self, took: Duration) {
        self.stats.resume_us = Some((took + self.opened_in).as_micros() as u64);
    }

    pub fn stats(&self) -> PageStats {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quanta() {
        assert_eq!(parse_quantum("50ms").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_quantum("50").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_quantum("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_quantum("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_quantum("1us").unwrap(), MIN_QUANTUM);
        for bad in ["", "0", "-5ms", "fast", "5 parsecs", "61s", "NaN"] {
            assert_eq!(parse_quantum(bad).unwrap_err().status().as_u16(), 400);
        }
    }
}
