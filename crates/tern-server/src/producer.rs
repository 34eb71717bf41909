//! Runs one query as a scheduler task and writes its results into 1 MiB
//! chunks sent through a bounded channel: the producer runs ahead of the
//! network by at most the channel's capacity, and a slow or gone client
//! pauses or stops it instead of growing memory.
//!
//! The task is resumable: between quanta it keeps its result stream and
//! writer, and a chunk the channel had no room for waits in the task (the
//! worker moves on to other queries) instead of blocking the worker.
//!
//! The response head waits for the first chunk (which leaves once rows
//! have waited [`MAX_HOLD`], at the end of the query's turn, or with the
//! whole result): a query that fails before producing anything still gets
//! a proper status code and message, and a short result leaves whole, in
//! one piece that can be compressed where it was written. A paged request (see
//! `paging`) keeps its whole page until its quantum ends, so that the head
//! can carry the continuation token.

use crate::batch_pipeline::{BatchPipeline, End};
use crate::chunk::{Chunk, Ending};
use crate::clients::ClientSlot;
use crate::decode_ahead::DecodeAhead;
use crate::encoding::{Coding, Encoding};
use crate::error::RequestError;
use crate::paging::{PageRequest, PageStats};
use crate::parallel_write::{write_rows, ParallelWriter, PARALLEL_WRITE_MAX, PARALLEL_WRITE_ROWS};
use crate::scheduler::{RoomWaiter, Step, Task};
use bytes::Bytes;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tern_engine::{
    Engine, EngineError, Execution, Polled, QueryOutcome, QueryRequest, RowBatch, SolutionRow,
    SolutionStream,
};
use tern_export::{GraphFormat, Prefixes, SolutionsFormat, SolutionsWriter, TripleRows};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::sync::oneshot;

/// Size at which a buffer is handed to the network. Smaller chunks cost
/// export speed: 256 KiB ones took a full TSV export of BSBM 1M from
/// 0.16 s to 0.41 s.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Chunks in flight per stage (producer → compressor → network): two export
/// as fast as four, and a query whose client reads nothing holds about
/// (this + 2) chunks (the network's and the producer's own).
pub const QUEUE_CHUNKS: usize = 2;
/// Partial buffers leave after waiting this long, so slow results still
/// trickle out instead of sitting in a half-full buffer.
const MAX_HOLD: Duration = Duration::from_millis(10);
/// Rows between two looks at the clock for the end of a quantum.
const ROWS_PER_CLOCK_CHECK: u64 = 64;

/// Everything a worker needs to run a query.
pub struct QueryJob {
    pub engine: Engine,
    pub text: String,
    pub request: QueryRequest,
    pub solutions_format: Option<SolutionsFormat>,
    pub graph_format: Option<GraphFormat>,
    pub encoding: Encoding,
    /// The compression level follows the client's pace (see `encoding`).
    pub adaptive_compression: bool,
    pub explain: bool,
    pub fault_after: Option<u64>,
    pub received: Instant,
    pub head: oneshot::Sender<Result<Head, RequestError>>,
    /// The client asked for one page (a quantum of work) and a token.
    pub page: Option<PageRequest>,
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
        /// A page's continuation token and figures.
        page: Option<PageStats>,
    },
    /// A small, complete answer (the `explain` profile).
    Whole {
        content_type: &'static str,
        body: Vec<u8>,
    },
}

/// Why production stops for now.
enum Stop {
    /// The client is gone (the response was dropped): stop quietly.
    Gone,
    /// The channel is full: try again on a later turn.
    Blocked,
}

struct Sink {
    /// Until the first delivery: where to send the head, and the head itself.
    head: Option<(oneshot::Sender<Result<Head, RequestError>>, Head)>,
    /// Where chunks go: the response body, or the compression stage once
    /// it runs.
    tx: mpsc::Sender<Chunk>,
    /// Compression not decided yet (until the first delivery).
    coding: Option<Coding>,
    buf: Vec<u8>,
    /// Chunks made but not yet accepted by the channel.
    outbox: VecDeque<Chunk>,
    payload: u64,
    last_flush: Instant,
    /// Wait for room in the channel (first come, first served) instead of
    /// giving the worker back.
    blocking: bool,
    /// Send the first row at once (under an injected fault, which is
    /// meant to come after the first byte).
    first_row_alone: bool,
}

impl Sink {
    fn started(&self) -> bool {
        self.head.is_none()
    }

    /// Moves the buffer to the outbox and delivers what the channel takes.
    fn flush(&mut self) -> Result<(), Stop> {
        if !self.buf.is_empty() {
            let full =
                std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK_BYTES + (64 << 10)));
            self.payload += full.len() as u64;
            // A batch written on all cores can make several chunks' worth:
            // they go as pieces of at most a chunk (sharing one buffer), so
            // the channel's capacity bounds the bytes in flight.
            let mut full = Bytes::from(full);
            while full.len() > CHUNK_BYTES {
                self.outbox
                    .push_back(Chunk::Data(full.split_to(CHUNK_BYTES)));
            }
            self.outbox.push_back(Chunk::Data(full));
        }
        self.last_flush = Instant::now();
        self.deliver()
    }

    /// Appends bytes written elsewhere: taken as the buffer when it is
    /// empty (after each chunk handed on) rather than copied.
    fn append(&mut self, bytes: Vec<u8>) {
        if self.buf.is_empty() {
            self.buf = bytes;
        } else {
            self.buf.extend_from_slice(&bytes);
        }
    }

    fn deliver(&mut self) -> Result<(), Stop> {
        if let Some(coding) = self.coding.take() {
            self.start_coding(coding);
        }
        if let Some((sender, head)) = self.head.take() {
            sender.send(Ok(head)).map_err(|_| Stop::Gone)?;
        }
        while let Some(chunk) = self.outbox.pop_front() {
            if self.blocking {
                self.tx.blocking_send(chunk).map_err(|_| Stop::Gone)?;
                continue;
            }
            match self.tx.try_send(chunk) {
                Ok(()) => {}
                Err(TrySendError::Full(chunk)) => {
                    self.outbox.push_front(chunk);
                    return Err(Stop::Blocked);
                }
                Err(TrySendError::Closed(_)) => return Err(Stop::Gone),
            }
        }
        Ok(())
    }

    /// A small result whole by its first delivery is compressed here;
    /// anything else goes through the compression stage from now on.
    fn start_coding(&mut self, coding: Coding) {
        if coding.compress_whole(&mut self.outbox) {
            return;
        }
        let (input, from_producer) = mpsc::channel(QUEUE_CHUNKS + 1);
        let to_body = std::mem::replace(&mut self.tx, input);
        coding.start(from_producer, to_body);
    }

    /// After each step that wrote rows (`before` rows were written before
    /// it, `rows` now): hand the buffer on when it is full, or when rows
    /// have waited in it (checked every row early on, then every 256 rows so
    /// the clock is not read millions of times a second; a step writing
    /// many rows at once may pass a multiple of 256 without landing on it).
    /// The first rows wait too (counted from the start of production), so
    /// that a short result leaves whole.
    #[inline]
    fn after_rows(&mut self, before: u64, rows: u64) -> Result<(), Stop> {
        if self.buf.len() >= CHUNK_BYTES {
            return self.flush();
        }
        let waited = self.last_flush.elapsed() >= MAX_HOLD;
        if clock_due(before, rows) && (waited || (self.first_row_alone && !self.started())) {
            return self.flush();
        }
        Ok(())
    }

    fn end(&mut self, mut ending: Ending) -> Result<(), Stop> {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.payload += rest.len() as u64;
            self.outbox.push_back(Chunk::Data(Bytes::from(rest)));
        }
        ending.payload_bytes = self.payload;
        self.outbox.push_back(Chunk::End(ending));
        self.deliver()
    }

    /// A failure: before the first byte it becomes the response's status;
    /// after it, an in-band marker (written by `in_band`) and the trailer.
    fn fail(
        &mut self,
        error: RequestError,
        mut ending: Ending,
        in_band: impl FnOnce(&mut Vec<u8>, &str),
    ) -> Result<(), Stop> {
        if let Some((sender, _)) = self.head.take() {
            let _ = sender.send(Err(error));
            self.outbox.clear();
            return Ok(());
        }
        let message = error.to_string();
        in_band(&mut self.buf, &message);
        ending.error = Some(message);
        ending.outcome = error.outcome();
        self.end(ending)
    }
}

/// The results being written. (One per query, inside the boxed
/// `Producing`: the size of its variants does not matter.)
#[allow(clippy::large_enum_variant)]
enum Results {
    Solutions {
        rows: SolutionStream,
        writer: Box<dyn SolutionsWriter>,
        /// The batch being written and the next row of it to write.
        pending: Option<(RowBatch, usize)>,
        /// The next batch, fetched before `pending` is written out (never
        /// for pages, whose state must fit a token).
        ahead: Option<Ahead>,
        /// Once a fast stream's first rows are out and its writer forks,
        /// every batch from then on is written whole on a core of its own.
        pipeline: Option<BatchPipeline>,
    },
    /// Everything is written; only the outbox may still hold chunks.
    Written,
}

/// The batch after the one being written, fetched early.
enum Ahead {
    /// Fetched while the last rows of the batch before were written.
    Fetched(Polled<RowBatch>),
    /// Being decoded on the pool while the batch before is written (a fast
    /// stream of long batches: a large export).
    Decoding(DecodeAhead),
}

/// A query as a scheduler task: not started yet, then producing.
/// A query as a scheduler task, with its client's admission slot (given
/// back when the task is dropped).
pub struct QueryTask {
    state: State,
    _client: Option<ClientSlot>,
}

enum State {
    New(Box<QueryJob>),
    Producing(Box<Producing>),
    Finished,
}

struct Producing {
    results: Results,
    sink: Sink,
    ending: Ending,
    executing: Instant,
    /// When its timeout ends (see [`Task::deadline`]).
    deadline: Option<Instant>,
    received: Instant,
    fault_after: Option<u64>,
    page: Option<PageRequest>,
    parallel: ParallelWriter,
}

impl QueryTask {
    pub fn new(job: QueryJob, slot: Option<ClientSlot>) -> QueryTask {
        QueryTask {
            state: State::New(Box::new(job)),
            _client: slot,
        }
    }
}

impl Task for QueryTask {
    fn deadline(&self) -> Option<Instant> {
        match &self.state {
            State::New(job) => job.request.timeout.map(|t| job.received + t),
            State::Producing(producing) => producing.deadline,
            State::Finished => None,
        }
    }

    fn room(&self) -> Option<RoomWaiter> {
        let State::Producing(producing) = &self.state else {
            return None;
        };
        // Resolves once the channel has room again, or is closed because
        // the client went away; the permit is given back at once.
        let tx = producing.sink.tx.clone();
        Some(Box::pin(async move {
            let _ = tx.reserve_owned().await;
        }))
    }

    fn run(&mut self, until: Option<Instant>) -> Step {
        loop {
            match std::mem::replace(&mut self.state, State::Finished) {
                State::New(job) => match start(*job, until.is_none()) {
                    Some(producing) => self.state = State::Producing(producing),
                    None => return Step::Done,
                },
                State::Producing(mut producing) => {
                    let step = producing.run(until);
                    if step != Step::Done {
                        self.state = State::Producing(producing);
                    }
                    return step;
                }
                State::Finished => return Step::Done,
            }
        }
    }
}

/// Plans (or resumes) the query and sends what cannot wait for rows:
/// errors, `explain`, ASK answers. `None` when nothing is left to do.
fn start(mut job: QueryJob, blocking: bool) -> Option<Box<Producing>> {
    let started = Instant::now();
    // Waiting for a worker, the client may have given up.
    if job.request.cancel.is_cancelled() || job.head.is_closed() {
        return None;
    }
    let queued = started - job.received;
    // The timeout counts from when the request came, as its client sees it:
    // the time it waited for a worker is taken off.
    if let Some(limit) = job.request.timeout {
        match limit.checked_sub(queued).filter(|left| !left.is_zero()) {
            Some(left) => job.request.timeout = Some(left),
            None => {
                let _ = job
                    .head
                    .send(Err(EngineError::Timeout(limit.as_secs_f64()).into()));
                return None;
            }
        }
    }
    let resume_started = Instant::now();
    let execution = match &mut job.page {
        Some(page) => page.start(&job.engine, &job.text, &job.request),
        None => job.engine.execute(&job.text, &job.request),
    };
    let execution = match execution {
        Ok(e) => e,
        Err(e) => {
            let _ = job.head.send(Err(e.into()));
            return None;
        }
    };
    if let Some(page) = job.page.as_mut().filter(|p| p.is_resume()) {
        page.set_resume_time(resume_started.elapsed());
    }
    let (parse, plan) = (execution.timings.parse, execution.timings.plan);
    if job.explain {
        explain(job, execution, queued);
        return None;
    }
    let (content_type, format): (&'static str, &'static str) = match &execution.outcome {
        QueryOutcome::Solutions { .. } | QueryOutcome::Boolean(_) => match job.solutions_format {
            Some(f) => (f.media_type(), f.name()),
            None => {
                not_acceptable(job.head, "SELECT and ASK");
                return None;
            }
        },
        QueryOutcome::Graph(_) => match job.graph_format {
            Some(f) => (f.media_type(), f.name()),
            None => {
                not_acceptable(job.head, "CONSTRUCT and DESCRIBE");
                return None;
            }
        },
    };
    // One slot more for the end marker: a result of up to two chunks ends
    // in the turn that wrote it, instead of parking until the network takes
    // a chunk and waking a worker to send its end (two thread hand-offs,
    // 0.1-0.3 ms on an idle server).
    let (tx, body) = mpsc::channel(QUEUE_CHUNKS + 1);
    let page_stats = job.page.as_ref().map(PageRequest::stats);
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
                page: page_stats,
            },
        )),
        tx,
        coding: Coding::new(job.encoding, job.adaptive_compression),
        buf: Vec::with_capacity(CHUNK_BYTES + (64 << 10)),
        outbox: VecDeque::new(),
        payload: 0,
        last_flush: Instant::now(),
        blocking,
        first_row_alone: job.fault_after.is_some(),
    };
    let mut ending = Ending {
        outcome: "ok",
        ..Ending::default()
    };
    let mut results = match execution.outcome {
        QueryOutcome::Solutions { variables, rows } => {
            let mut writer = job.solutions_format.expect("checked").writer();
            writer.header(&mut sink.buf, &variables);
            Results::Solutions {
                rows,
                writer,
                pending: None,
                ahead: None,
                pipeline: None,
            }
        }
        QueryOutcome::Boolean(value) => {
            job.solutions_format
                .expect("checked")
                .writer()
                .boolean(&mut sink.buf, value);
            ending.rows = 1;
            Results::Written
        }
        QueryOutcome::Graph(triples) => {
            // Triples leave the engine as rows of IDs and are written like
            // any SELECT result: decoded and formatted on all cores.
            let format = job.graph_format.expect("checked");
            let mut prefixes = Prefixes::for_query(&job.text);
            if format.uses_prefixes() {
                // The data's own namespaces; an index that cannot say
                // which costs longer IRIs, not the result.
                if let Ok(namespaces) = job.engine.snapshot().base().frequent_namespaces() {
                    prefixes.add_namespaces(&namespaces);
                }
            }
            let graph_writer = format.writer(prefixes);
            let mut writer: Box<dyn SolutionsWriter> = Box::new(TripleRows::new(graph_writer));
            let rows = triples.into_rows();
            writer.header(&mut sink.buf, &rows.variables());
            Results::Solutions {
                rows,
                writer,
                pending: None,
                ahead: None,
                pipeline: None,
            }
        }
    };
    // A page with a row limit may end within a batch: the stream then
    // notes where each batch began, so that the page's token still resumes
    // anywhere.
    if let (Some(page), Results::Solutions { rows, .. }) = (&job.page, &mut results) {
        if page.room(0).is_some() {
            rows.mark_batches();
        }
    }
    let mut producing = Box::new(Producing {
        results,
        sink,
        ending,
        executing: Instant::now(),
        deadline: job.request.timeout.map(|left| started + left),
        received: job.received,
        fault_after: job.fault_after.filter(|_| job.page.is_none()),
        page: job.page,
        parallel: ParallelWriter::default(),
    });
    if matches!(producing.results, Results::Written) {
        let ending = producing.finish();
        if let Err(Stop::Gone) = producing.sink.end(ending) {
            return None;
        }
    }
    Some(producing)
}

impl Producing {
    fn finish(&mut self) -> Ending {
        let mut ending = std::mem::take(&mut self.ending);
        ending.execute = self.executing.elapsed();
        ending.total = self.received.elapsed();
        ending
    }

    fn run(&mut self, until: Option<Instant>) -> Step {
        match self.produce(until) {
            Ok(step) => step,
            Err(Stop::Blocked) => {
                // It may wait long for its client: what it only reuses
                // between writes goes back meanwhile.
                self.parallel.release();
                if self.sink.buf.is_empty() {
                    self.sink.buf = Vec::new();
                }
                Step::Blocked
            }
            Err(Stop::Gone) => Step::Done,
        }
    }

    fn produce(&mut self, until: Option<Instant>) -> Result<Step, Stop> {
        // First what an earlier turn could not hand over (a page's head
        // waits for its end: it may carry a token).
        if !self.sink.outbox.is_empty() {
            self.sink.deliver()?;
        }
        if matches!(self.results, Results::Written) {
            return Ok(Step::Done);
        }
        // A page ends at the end of its own quantum, whatever the
        // scheduler's turns are; a plain request at the end of the turn.
        let page_until = self.page.as_mut().map(|p| p.turn_until(until));
        let until = page_until.or(until);
        let paged = self.page.is_some();
        let mut since_clock = 0u64;
        loop {
            if let Results::Solutions {
                pipeline: Some(_), ..
            } = &self.results
            {
                return self.produce_pipelined(until);
            }
            let rows_before = self.ending.rows;
            since_clock += 1;
            let rows_full = self
                .page
                .as_ref()
                .is_some_and(|p| p.rows_full(self.ending.rows));
            if rows_full {
                return self.pause(true);
            }
            if since_clock >= ROWS_PER_CLOCK_CHECK {
                since_clock = 0;
                let page_full = paged && self.sink.buf.len() >= crate::paging::MAX_PAGE_BYTES;
                if page_full || until.is_some_and(|u| Instant::now() >= u) {
                    return self.pause(page_full);
                }
            }
            let failure = match &mut self.results {
                Results::Solutions {
                    rows,
                    writer,
                    pending,
                    ahead,
                    pipeline,
                } => {
                    // Rows are written from batches whose terms are
                    // borrowed from the index: no `Term` is made per value.
                    if pending
                        .as_ref()
                        .is_none_or(|(batch, at)| *at >= batch.len())
                    {
                        *pending = None;
                        let next = match ahead.take() {
                            Some(Ahead::Fetched(next)) => next,
                            Some(Ahead::Decoding(decoding)) => Polled::Ready(decoding.wait()),
                            None => rows.next_batch_in_turn(until),
                        };
                        match next {
                            Polled::End => {
                                writer.footer(&mut self.sink.buf);
                                return self.end();
                            }
                            Polled::Pending => return self.pause(false),
                            Polled::Ready(Ok(mut batch)) => {
                                // A page of `page-rows` rows takes what it
                                // has room for; the rest goes back to the
                                // stream, first on the next page.
                                let room =
                                    self.page.as_ref().and_then(|p| p.room(self.ending.rows));
                                if let Some(room) = room.filter(|&r| (batch.len() as u64) > r) {
                                    rows.hand_back(batch.split_off(room as usize));
                                }
                                // A long batch is decoded whole, in
                                // vocabulary order, before its rows are
                                // written.
                                if let Err(e) = batch.prepare() {
                                    return self.fail(RequestError::from(e));
                                }
                                *pending = Some((batch, 0));
                            }
                            Polled::Ready(Err(e)) => {
                                let error = RequestError::from(e);
                                return self.fail(error);
                            }
                        }
                    }
                    let (batch, at) = pending.as_mut().expect("a batch with rows left");
                    // A long batch came whole, so the stream is fast: once
                    // the first rows are out, the rest is written a whole
                    // batch per core if the writer forks, else the next
                    // batch is fetched and decoded on the pool while this
                    // one is written.
                    if ahead.is_none()
                        && !paged
                        && self.fault_after.is_none()
                        && self.ending.rows > 0
                        && batch.decoded_whole()
                    {
                        if let Some(fork) = writer.fork_rows() {
                            // The rows of this batch not written yet
                            // are the pipeline's first jobs.
                            let mut started = BatchPipeline::new(writer.as_ref(), fork);
                            start_on(&mut started, batch.split_off(*at), rows, writer.as_mut());
                            *pending = None;
                            *pipeline = Some(started);
                            continue;
                        }
                        *ahead = match rows.next_batch_in_turn(until) {
                            Polled::Ready(Ok(next)) if next.decodes_whole() => {
                                Some(Ahead::Decoding(DecodeAhead::start(next)))
                            }
                            // A paused stream is simply asked again.
                            Polled::Pending => None,
                            next => Some(Ahead::Fetched(next)),
                        };
                    }
                    let left = batch.len() - *at;
                    let forked = if self.fault_after.is_some() || left < PARALLEL_WRITE_ROWS {
                        None
                    } else if paged || left > PARALLEL_WRITE_MAX || ahead.is_some() {
                        self.parallel
                            .write(writer.as_mut(), batch, *at, &mut self.sink.buf)
                    } else {
                        // The batch's last rows: fetch the next batch meanwhile.
                        let fetch = || rows.next_batch_in_turn(until);
                        self.parallel
                            .write_while(writer.as_mut(), batch, *at, &mut self.sink.buf, fetch)
                            .map(|(written, next)| {
                                // A paused stream is simply asked again.
                                if !matches!(next, Polled::Pending) {
                                    *ahead = Some(Ahead::Fetched(next));
                                }
                                written
                            })
                    };
                    let written = match forked {
                        Some(written) => written,
                        None => {
                            // On this core: the first row alone (it leaves
                            // at once if it took long), one row at a time under an injected
                            // fault, else the rest of a short batch or a
                            // format that cannot fork.
                            let rows = if self.fault_after.is_some() || self.ending.rows == 0 {
                                1
                            } else {
                                left.min(PARALLEL_WRITE_MAX)
                            };
                            write_rows(writer.as_mut(), batch, *at..*at + rows, &mut self.sink.buf)
                                .map(|()| rows)
                        }
                    };
                    // RDF/XML cannot write every triple: the result is cut
                    // at the first it could not.
                    match (written, writer.take_failure()) {
                        (Ok(_), Some(e)) => Some(RequestError::NotAcceptable(e.to_string())),
                        (Ok(written), None) => {
                            *at += written;
                            self.ending.rows += written as u64;
                            // Many rows at once: look at the clock (and the
                            // page's size) before the next ones.
                            if written > 1 {
                                since_clock = ROWS_PER_CLOCK_CHECK;
                            }
                            self.fault()
                        }
                        (Err(e), _) => Some(RequestError::from(e)),
                    }
                }
                Results::Written => return Ok(Step::Done),
            };
            if let Some(error) = failure {
                return self.fail(error);
            }
            if !paged {
                self.sink.after_rows(rows_before, self.ending.rows)?;
            }
        }
    }

    /// Production once a pipeline writes the batches (see
    /// `batch_pipeline`): keeps a batch in flight per core, hands their
    /// bytes on in order, and ends, fails or pauses where the stream does.
    fn produce_pipelined(&mut self, until: Option<Instant>) -> Result<Step, Stop> {
        loop {
            let Results::Solutions {
                rows,
                writer,
                pipeline: Some(pipeline),
                ..
            } = &mut self.results
            else {
                return Ok(Step::Done);
            };
            fill(pipeline, rows, writer.as_mut(), until);
            let oldest = pipeline.next();
            // The next batch starts before this one's bytes are handed on,
            // so that every core has a batch while the producer waits for
            // the network.
            fill(pipeline, rows, writer.as_mut(), until);
            match oldest {
                Some(Ok(written)) => {
                    let before = self.ending.rows;
                    let mut bytes = written.bytes;
                    writer.ready_bytes(&mut bytes);
                    self.sink.append(bytes);
                    self.ending.rows += written.rows as u64;
                    if let Some(e) = written.failure {
                        return self.fail(RequestError::NotAcceptable(e.to_string()));
                    }
                    self.sink.after_rows(before, self.ending.rows)?;
                }
                Some(Err(e)) => return self.fail(RequestError::from(e)),
                None => match pipeline.take_end() {
                    Some(End::Stream(Ok(()))) => {
                        writer.footer(&mut self.sink.buf);
                        return self.end();
                    }
                    Some(End::Stream(Err(e))) => return self.fail(RequestError::from(e)),
                    Some(End::Unforked) => {
                        if let Results::Solutions { pipeline, .. } = &mut self.results {
                            *pipeline = None;
                        }
                        return self.produce(until);
                    }
                    None => return self.pause(false),
                },
            }
            if until.is_some_and(|u| Instant::now() >= u) {
                return self.pause(false);
            }
        }
    }

    fn fault(&self) -> Option<RequestError> {
        match self.fault_after {
            Some(n) if self.ending.rows >= n => Some(RequestError::Internal(format!(
                "injected fault after {n} rows"
            ))),
            _ => None,
        }
    }

    fn end(&mut self) -> Result<Step, Stop> {
        self.results = Results::Written;
        let ending = self.finish();
        self.sink.end(ending)?;
        Ok(Step::Done)
    }

    fn fail(&mut self, error: RequestError) -> Result<Step, Stop> {
        let results = std::mem::replace(&mut self.results, Results::Written);
        let ending = self.finish();
        match results {
            Results::Solutions { mut writer, .. } => {
                self.sink.fail(error, ending, |buf, msg| {
                    writer.error(buf, msg);
                })?
            }
            _ => self.sink.fail(error, ending, |_, _| {})?,
        }
        Ok(Step::Done)
    }

    /// The end of a turn. A plain request hands out what it has and waits
    /// for its next turn; a page suspends its query into a token and ends.
    fn pause(&mut self, page_full: bool) -> Result<Step, Stop> {
        let Some(page) = &mut self.page else {
            // Rows that waited long enough go out, and the first ones at
            // the end of their first turn; a header alone does not, so that
            // a query failing before its first row still gets a status
            // code.
            if self.ending.rows > 0
                && !self.sink.buf.is_empty()
                && (!self.sink.started() || self.sink.last_flush.elapsed() >= MAX_HOLD)
            {
                self.sink.flush()?;
            }
            return Ok(Step::Yielded);
        };
        if !page_full && !page.used_up() {
            // The scheduler's turn ended before the page's quantum.
            return Ok(Step::Yielded);
        }
        // Rows of the batch not written yet belong to this page: written
        // from the batch as usual, before the suspension is timed.
        if let Results::Solutions {
            writer, pending, ..
        } = &mut self.results
        {
            if let Some((batch, at)) = pending.take() {
                if let Err(e) =
                    write_rows(writer.as_mut(), &batch, at..batch.len(), &mut self.sink.buf)
                {
                    return self.fail(RequestError::from(e));
                }
                self.ending.rows += (batch.len() - at) as u64;
            }
        }
        // Suspension proper is timed: saving the operators and sealing the
        // token, not writing the rows that were decoded before it.
        let started = Instant::now();
        let stash = page.stash();
        let suspended = match std::mem::replace(&mut self.results, Results::Written) {
            Results::Solutions {
                rows,
                writer,
                pending,
                ahead,
                pipeline,
            } => {
                debug_assert!(ahead.is_none(), "pages do not fetch ahead");
                debug_assert!(pipeline.is_none(), "pages are not pipelined");
                debug_assert!(pending.is_none(), "written above");
                rows.suspend_keeping(&stash)
                    .map(|(rows, saved, parked)| (saved, Some(parked), Leftover(rows, writer)))
            }
            Results::Written => return Ok(Step::Done),
        };
        let (saved, parked, leftover) = match suspended {
            Ok(suspended) => suspended,
            Err(e) => return self.fail(RequestError::from(e)),
        };
        let token = page.seal(&saved, parked, self.ending.rows + leftover.len() as u64);
        page.record_suspend(started.elapsed());
        self.ending.rows += leftover.len() as u64;
        leftover.end_page(&mut self.sink.buf, &token);
        if let Some((_, Head::Stream { page: stats, .. })) = &mut self.sink.head {
            *stats = Some(page.stats());
        }
        let ending = self.finish();
        self.sink.end(ending)?;
        Ok(Step::Done)
    }
}

/// Starts batches of `rows` on `pipeline` until it is full or the stream
/// ends or pauses.
fn fill(
    pipeline: &mut BatchPipeline,
    rows: &mut SolutionStream,
    writer: &mut dyn SolutionsWriter,
    until: Option<Instant>,
) {
    while !pipeline.is_full() && !pipeline.stream_ended() {
        match rows.next_batch_in_turn(until) {
            Polled::Ready(Ok(batch)) => start_on(pipeline, batch, rows, writer),
            Polled::Ready(Err(e)) => pipeline.end_with(End::Stream(Err(e))),
            Polled::End => pipeline.end_with(End::Stream(Ok(()))),
            // The turn ended within the stream: it is asked again.
            Polled::Pending => break,
        }
    }
}

/// Starts `batch` on `pipeline`; if the writer would not fork for it, the
/// rows not started go back to `rows` and the pipeline ends there.
fn start_on(
    pipeline: &mut BatchPipeline,
    batch: RowBatch,
    rows: &mut SolutionStream,
    writer: &mut dyn SolutionsWriter,
) {
    if let Err(rest) = pipeline.start(batch, writer) {
        rows.hand_back(rest);
        pipeline.end_with(End::Unforked);
    }
}

/// What a suspended stream had made before the suspension point: it
/// belongs to this page.
struct Leftover(Vec<SolutionRow>, Box<dyn SolutionsWriter>);

impl Leftover {
    fn len(&self) -> usize {
        self.0.len()
    }

    /// Writes the rows and ends the page: with the token where the format
    /// has a place for it, else with the usual footer.
    fn end_page(self, buf: &mut Vec<u8>, token: &str) {
        let Leftover(rows, mut writer) = self;
        for row in rows {
            writer.row(buf, &tern_export::term_refs(&row));
        }
        if !writer.continuation(buf, token) {
            writer.footer(buf);
        }
    }
}

/// Whether a step that took the rows written from `before` to `rows` should
/// look at how long rows have waited: for each of the first 4096 rows, then
/// whenever the count passes a multiple of 256.
fn clock_due(before: u64, rows: u64) -> bool {
    rows <= 4096 || before / 256 != rows / 256
}

fn not_acceptable(head: oneshot::Sender<Result<Head, RequestError>>, what: &str) {
    let _ = head.send(Err(RequestError::NotAcceptable(format!(
        "none of the media types in Accept (or format=) is available for {what} results"
    ))));
}

/// `explain=true`: run the query to its end, discard the results, and
/// answer with the plan's runtime profile and the timings as JSON.
fn explain(job: QueryJob, execution: Execution, queued: Duration) {
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
    let ms = crate::metrics::millis;
    let report = serde_json::json!({
        "rows": rows,
        "queue_ms": ms(queued),
        "parse_ms": ms(execution.timings.parse),
        "plan_ms": ms(execution.timings.plan),
        "execute_ms": ms(executing.elapsed()),
        "total_ms": ms(job.received.elapsed()),
        "memory_peak_bytes": execution.memory.peak_bytes(),
        "profile": execution.profile.snapshot(),
    });
    let mut body = serde_json::to_vec_pretty(&report).unwrap_or_default();
    body.push(b'\n');
    let _ = job.head.send(Ok(Head::Whole {
        content_type: "application/json",
        body,
    }));
}

#[cfg(test)]
mod tests {
    use super::clock_due;

    #[test]
    fn the_clock_is_read_when_a_step_passes_a_multiple_of_256_rows() {
        // Early rows: every step.
        assert!(clock_due(0, 1));
        assert!(clock_due(4000, 4096));
        // A step of many rows that passes 4352 (17 x 256) without landing
        // on it, and one that passes 5120.
        assert!(clock_due(4096, 4500));
        assert!(clock_due(5000, 5200));
        // Steps within one stretch of 256 rows, or writing none.
        assert!(!clock_due(4500, 4600));
        assert!(!clock_due(4600, 4600));
    }
}
