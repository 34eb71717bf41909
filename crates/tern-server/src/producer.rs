//! Runs one query on a worker thread and writes its results into ~1 MiB
//! chunks sent through a bounded channel: the producer runs ahead of the
//! network by at most the channel's capacity, and a slow or gone client
//! blocks or stops it instead of growing memory.
//!
//! The response head waits for the first chunk (which leaves as soon as the
//! first row is written): a query that fails before producing anything
//! still gets a proper status code and message.

use crate::chunk::{Chunk, Ending};
use crate::encoding::{compress_stage, Encoding};
use crate::error::RequestError;
use bytes::Bytes;
use std::time::{Duration, Instant};
use tern_engine::{Engine, EngineError, QueryOutcome, QueryRequest};
use tern_export::{GraphFormat, Prefixes, SolutionsFormat};
use tokio::sync::{mpsc, oneshot};

/// Size at which a buffer is handed to the network.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Chunks in flight per stage (producer → compressor → network).
pub const QUEUE_CHUNKS: usize = 4;
/// Partial buffers leave after waiting this long, so slow results still
/// trickle out instead of sitting in a half-full buffer.
const MAX_HOLD: Duration = Duration::from_millis(10);

/// Everything a worker needs to run a query.
pub struct QueryJob {
    pub engine: Engine,
    pub text: String,
    pub request: QueryRequest,
    pub solutions_format: Option<SolutionsFormat>,
    pub graph_format: Option<GraphFormat>,
    pub encoding: Encoding,
    pub explain: bool,
    pub fault_after: Option<u64>,
    pub received: Instant,
    pub head: oneshot::Sender<Result<Head, RequestError>>,
}

/// The start of a response, sent once from the worker to the handler.
pub enum Head {
    Stream {
        content_type: &'static str,
        format: &'static str,
        queued: Duration,
        parse: Duration,
        plan: Duration,
        body: mpsc::Receiver<Chunk>,
    },
    /// A small, complete answer (the `explain` profile).
    Whole {
        content_type: &'static str,
        body: Vec<u8>,
    },
}

/// The client is gone (the response was dropped): stop quietly.
struct Gone;

struct Sink {
    /// Until the first flush: where to send the head, and the head itself.
    head: Option<(oneshot::Sender<Result<Head, RequestError>>, Head)>,
    tx: mpsc::Sender<Chunk>,
    buf: Vec<u8>,
    payload: u64,
    last_flush: Instant,
}

impl Sink {
    fn started(&self) -> bool {
        self.head.is_none()
    }

    fn flush(&mut self) -> Result<(), Gone> {
        if let Some((sender, head)) = self.head.take() {
            sender.send(Ok(head)).map_err(|_| Gone)?;
        }
        if !self.buf.is_empty() {
            let full =
                std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK_BYTES + (64 << 10)));
            self.payload += full.len() as u64;
            self.tx
                .blocking_send(Chunk::Data(Bytes::from(full)))
                .map_err(|_| Gone)?;
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// After each row: hand the buffer on when it is full, or when rows
    /// have waited in it (checked every row early on, then every 256 rows so
    /// the clock is not read millions of times a second).
    #[inline]
    fn after_row(&mut self, rows: u64) -> Result<(), Gone> {
        if self.buf.len() >= CHUNK_BYTES {
            return self.flush();
        }
        if (rows <= 4096 || rows.is_multiple_of(256))
            && (!self.started() || self.last_flush.elapsed() >= MAX_HOLD)
        {
            return self.flush();
        }
        Ok(())
    }

    fn end(mut self, mut ending: Ending) -> Result<(), Gone> {
        self.flush()?;
        ending.payload_bytes = self.payload;
        self.tx.blocking_send(Chunk::End(ending)).map_err(|_| Gone)
    }

    /// A failure: before the first byte it becomes the response's status;
    /// after it, an in-band marker (written by `in_band`) and the trailer.
    fn fail(
        mut self,
        error: RequestError,
        mut ending: Ending,
        in_band: impl FnOnce(&mut Vec<u8>, &str),
    ) -> Result<(), Gone> {
        if let Some((sender, _)) = self.head.take() {
            let _ = sender.send(Err(error));
            return Ok(());
        }
        let message = error.to_string();
        in_band(&mut self.buf, &message);
        ending.error = Some(message);
        ending.outcome = error.outcome();
        self.end(ending)
    }
}

pub fn run(job: QueryJob) {
    let started = Instant::now();
    // Waiting for a worker, the client may have given up.
    if job.request.cancel.is_cancelled() || job.head.is_closed() {
        return;
    }
    let queued = started - job.received;
    let execution = match job.engine.execute(&job.text, &job.request) {
        Ok(e) => e,
        Err(e) => {
            let _ = job.head.send(Err(e.into()));
            return;
        }
    };
    let (parse, plan) = (execution.timings.parse, execution.timings.plan);
    if job.explain {
        explain(job, execution, queued);
        return;
    }
    let (content_type, format): (&'static str, &'static str) = match &execution.outcome {
        QueryOutcome::Solutions { .. } | QueryOutcome::Boolean(_) => match job.solutions_format {
            Some(f) => (f.media_type(), f.name()),
            None => return not_acceptable(job.head, "SELECT and ASK"),
        },
        QueryOutcome::Graph(_) => match job.graph_format {
            Some(f) => (f.media_type(), f.name()),
            None => return not_acceptable(job.head, "CONSTRUCT and DESCRIBE"),
        },
    };
    let (tx, rx) = mpsc::channel(QUEUE_CHUNKS);
    let body = compress_stage(rx, job.encoding, QUEUE_CHUNKS);
    let mut sink = Sink {
        head: Some((
            job.head,
            Head::Stream {
                content_type,
                format,
                queued,
                parse,
                plan,
                body,
            },
        )),
        tx,
        buf: Vec::with_capacity(CHUNK_BYTES + (64 << 10)),
        payload: 0,
        last_flush: Instant::now(),
    };
    let executing = Instant::now();
    let mut ending = Ending {
        outcome: "ok",
        ..Ending::default()
    };
    let finish = |mut ending: Ending| {
        ending.execute = executing.elapsed();
        ending.total = job.received.elapsed();
        ending
    };
    let fault = |rows: u64| match job.fault_after {
        Some(n) if rows >= n => Some(RequestError::Internal(format!(
            "injected fault after {n} rows"
        ))),
        _ => None,
    };
    // `Err(Gone)` everywhere below just means: the client left; stop.
    let _ = (|| -> Result<(), Gone> {
        match execution.outcome {
            QueryOutcome::Solutions { variables, rows } => {
                let mut writer = job.solutions_format.expect("checked").writer();
                writer.header(&mut sink.buf, &variables);
                for row in rows {
                    let failure = match row {
                        Ok(row) => {
                            writer.row(&mut sink.buf, &row);
                            ending.rows += 1;
                            fault(ending.rows)
                        }
                        Err(e) => Some(engine_error(e)?),
                    };
                    if let Some(error) = failure {
                        let ending = finish(ending);
                        return sink.fail(error, ending, |buf, msg| {
                            writer.error(buf, msg);
                        });
                    }
                    sink.after_row(ending.rows)?;
                }
                writer.footer(&mut sink.buf);
            }
            QueryOutcome::Boolean(value) => {
                job.solutions_format
                    .expect("checked")
                    .writer()
                    .boolean(&mut sink.buf, value);
                ending.rows = 1;
            }
            QueryOutcome::Graph(triples) => {
                let prefixes = Prefixes::for_query(&job.text);
                let mut writer = job.graph_format.expect("checked").writer(prefixes);
                writer.header(&mut sink.buf);
                for triple in triples {
                    let failure = match triple {
                        Ok(triple) => match writer.triple(&mut sink.buf, &triple) {
                            Ok(()) => {
                                ending.rows += 1;
                                fault(ending.rows)
                            }
                            Err(e) => Some(RequestError::NotAcceptable(e.to_string())),
                        },
                        Err(e) => Some(engine_error(e)?),
                    };
                    if let Some(error) = failure {
                        let ending = finish(ending);
                        return sink.fail(error, ending, |_, _| {});
                    }
                    sink.after_row(ending.rows)?;
                }
                writer.footer(&mut sink.buf);
            }
        }
        let ending = finish(ending);
        sink.end(ending)
    })();
}

/// A cancelled query has nobody to report to.
fn engine_error(e: EngineError) -> Result<RequestError, Gone> {
    match e {
        EngineError::Cancelled => Err(Gone),
        other => Ok(other.into()),
    }
}

fn not_acceptable(head: oneshot::Sender<Result<Head, RequestError>>, what: &str) {
    let _ = head.send(Err(RequestError::NotAcceptable(format!(
        "none of the media types in Accept (or format=) is available for {what} results"
    ))));
}

/// `explain=true`: run the query to its end, discard the results, and
/// answer with the plan's runtime profile and the timings as JSON.
fn explain(job: QueryJob, execution: tern_engine::Execution, queued: Duration) {
    let executing = Instant::now();
    let mut rows = 0u64;
    let result: Result<(), EngineError> = (|| {
        match execution.outcome {
            QueryOutcome::Solutions { rows: stream, .. } => {
                for row in stream {
                    row?;
                    rows += 1;
                }
            }
            QueryOutcome::Boolean(_) => rows = 1,
            QueryOutcome::Graph(triples) => {
                for t in triples {
                    t?;
                    rows += 1;
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = job.head.send(Err(e.into()));
        return;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let report = serde_json::json!({
        "rows": rows,
        "queue_ms": ms(queued),
        "parse_ms": ms(execution.timings.parse),
        "plan_ms": ms(execution.timings.plan),
        "execute_ms": ms(executing.elapsed()),
        "total_ms": ms(job.received.elapsed()),
        "profile": execution.profile.snapshot(),
    });
    let mut body = serde_json::to_vec_pretty(&report).unwrap_or_default();
    body.push(b'\n');
    let _ = job.head.send(Ok(Head::Whole {
        content_type: "application/json",
        body,
    }));
}
