//! Writing a large result a whole batch per core. Each batch of a fast
//! stream (a large export) is decoded whole, in vocabulary order, and
//! written by a fork of the result's writer, all on one core of the pool,
//! while the other cores do the same with the batches after it; the
//! producer hands the batches' bytes on in order.
//!
//! Splitting each batch's work over the cores instead (decode its columns
//! side by side, then write its rows in a run per core) made the cores
//! wait for each other at every step: on two cores an export of BSBM 10M
//! kept them 75-80% busy and spent a tenth of its time in the kernel
//! switching threads. A batch per core has nothing to wait for but the
//! batch before it.
//!
//! Each batch runs on a lane: a pool of one thread, one lane per core. The
//! parallel loops inside a batch's work (a column's blocks decoded side by
//! side) then run inline on the lane, instead of handing pieces to cores
//! that are busy with batches of their own and waiting for them: on the
//! shared pool, the threads slept and woke about 1,200 times a second each.
//!
//! A writer whose forks' rows make units of the output (Parquet's row
//! groups) asks for runs of many rows; a fork is then given that many jobs
//! in a row, on one lane, and the next fork the jobs after them, on the
//! next lane.
//!
//! Memory: at most one job being written per core, each its decoded terms
//! and its bytes (about 4 + 4 MB for 8K rows of BSBM); with runs of
//! several jobs, the jobs queued behind the first of each hold only their
//! IDs.

use crate::parallel_write::write_rows;
use crate::pool_job::PoolJob;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use tern_engine::{EngineError, RowBatch};
use tern_export::{FormatError, SolutionsWriter};

/// A batch written.
pub struct WrittenBatch {
    pub bytes: Vec<u8>,
    pub rows: usize,
    /// A row the writer could not write (RDF/XML): the result is cut there.
    pub failure: Option<FormatError>,
}

/// Why no more batches are started.
pub enum End {
    /// The stream ended (or failed).
    Stream(Result<(), EngineError>),
    /// The writer would not fork: the rest is written as before the
    /// pipeline (no writer does this once it forked, but nothing relies on
    /// it).
    Unforked,
}

/// Rows of a batch written by one job at most: the stream's batches (16K
/// rows of a scan) are cut in two, which halves what each job holds at once
/// (its decoded terms and its bytes, about 8 MB for 16K rows of BSBM) at no
/// cost measured in speed.
const JOB_ROWS: usize = 8 * 1024;

/// Jobs per lane in flight at most, however long a run: 8 jobs of 8K rows,
/// about 200 KB of IDs each for three columns.
const MAX_QUEUED_JOBS: usize = 8;

/// Batches being written on the pool, oldest first, and how the stream
/// ended once it has.
pub struct BatchPipeline {
    in_flight: VecDeque<PoolJob<Result<WrittenBatch, EngineError>>>,
    ended: Option<End>,
    /// Runs started: the next one goes to lane `runs % lanes`.
    runs: usize,
    /// Jobs the latest run is given before the next fork takes over.
    jobs_per_run: usize,
    /// The run being given jobs, if its last has not been started.
    open: Option<OpenRun>,
}

/// A fork of the writer given consecutive jobs, all on one lane, which
/// runs them one after the other in the order they were started (a pool
/// runs what is spawned on it from outside in that order).
struct OpenRun {
    fork: Arc<Mutex<Fork>>,
    lane: Option<usize>,
    /// Jobs started so far.
    jobs: usize,
}

/// A run's fork and the number of the job whose rows it writes next.
struct Fork {
    writer: Box<dyn SolutionsWriter>,
    next_job: usize,
}

/// The lanes: one single-threaded pool per core of the shared pool (none
/// if threads cannot be made; batches then go to the shared pool).
fn lanes() -> &'static [ThreadPool] {
    static LANES: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    LANES.get_or_init(|| {
        (0..rayon::current_num_threads().clamp(1, 16))
            .map_while(|lane| {
                ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(move |_| format!("tern-export-{lane}"))
                    .build()
                    .ok()
            })
            .collect()
    })
}

impl BatchPipeline {
    /// A pipeline whose first run is written by `fork`, a fork of `writer`.
    pub fn new(writer: &dyn SolutionsWriter, fork: Box<dyn SolutionsWriter>) -> BatchPipeline {
        let mut pipeline = BatchPipeline {
            in_flight: VecDeque::new(),
            ended: None,
            runs: 0,
            jobs_per_run: 1,
            open: None,
        };
        pipeline.open_run(fork, writer.rows_per_fork());
        pipeline
    }

    /// Whether every lane has a run in flight. (One more job per lane, so
    /// that each has the next queued, was faster but held more than an
    /// export may; jobs queued behind the first of a run hold only their
    /// IDs until they start.) Runs of more than [`MAX_QUEUED_JOBS`] jobs
    /// keep the next lane waiting rather than hold more rows.
    pub fn is_full(&self) -> bool {
        self.in_flight.len()
            >= rayon::current_num_threads().clamp(1, 16) * self.jobs_per_run.min(MAX_QUEUED_JOBS)
    }

    /// Whether the stream has ended (or failed): nothing more to start.
    pub fn stream_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// Notes why no more batches start, to be told once the batches before
    /// are handed on; a run given fewer jobs than it could is ended.
    pub fn end_with(&mut self, end: End) {
        if let Some(run) = self.open.take() {
            let (fork, job) = (run.fork, run.jobs);
            self.spawn(run.lane, move || write_batch(None, &fork, job, true));
        }
        self.ended = Some(end);
    }

    /// Starts decoding and writing `batch`, cut into jobs of at most
    /// [`JOB_ROWS`] rows, each on the lane of its run; the rows it could
    /// not start, if the writer would not fork for a new run.
    pub fn start(
        &mut self,
        batch: RowBatch,
        writer: &mut dyn SolutionsWriter,
    ) -> Result<(), RowBatch> {
        let mut rest = batch;
        while !rest.is_empty() {
            if self.open.is_none() {
                let rows = writer.rows_per_fork();
                match writer.fork_rows() {
                    Some(fork) => self.open_run(fork, rows),
                    None => return Err(rest),
                }
            }
            let run = self.open.as_mut().expect("a run was opened");
            let tail = rest.split_off(JOB_ROWS);
            let job = run.jobs;
            run.jobs += 1;
            let last = run.jobs == self.jobs_per_run;
            let (fork, lane) = (Arc::clone(&run.fork), run.lane);
            if last {
                self.open = None;
            }
            let batch = std::mem::replace(&mut rest, tail);
            self.spawn(lane, move || write_batch(Some(batch), &fork, job, last));
        }
        Ok(())
    }

    /// The oldest batch once it is written; `None` when none is in flight.
    pub fn next(&mut self) -> Option<Result<WrittenBatch, EngineError>> {
        self.in_flight.pop_front().map(PoolJob::wait)
    }

    /// Why no more batches start, once every batch before is handed on.
    pub fn take_end(&mut self) -> Option<End> {
        if self.in_flight.is_empty() {
            self.ended.take()
        } else {
            None
        }
    }

    /// Opens a run for `fork`, of as many jobs as make `rows` rows. A
    /// writer that would have its forks write more rows than a job (a
    /// large Parquet file's row groups) gets runs of several jobs, on one
    /// lane each; on the shared pool (no lanes) jobs may run in any order,
    /// so a run is one job there.
    fn open_run(&mut self, fork: Box<dyn SolutionsWriter>, rows: usize) {
        let lanes = lanes();
        self.jobs_per_run = if lanes.is_empty() {
            1
        } else {
            rows.div_ceil(JOB_ROWS).max(1)
        };
        let lane = (!lanes.is_empty()).then(|| self.runs % lanes.len());
        self.runs += 1;
        self.open = Some(OpenRun {
            fork: Arc::new(Mutex::new(Fork {
                writer: fork,
                next_job: 0,
            })),
            lane,
            jobs: 0,
        });
    }

    fn spawn(
        &mut self,
        lane: Option<usize>,
        work: impl FnOnce() -> Result<WrittenBatch, EngineError> + Send + 'static,
    ) {
        let pool = lane.map(|lane| &lanes()[lane]);
        self.in_flight.push_back(PoolJob::spawn(pool, work));
    }
}

/// Decodes `batch` whole and writes it with the run's fork, as its job
/// number `job`; the last job of a run ends it. A run cut short by the end
/// of the stream is ended by a last job without rows.
fn write_batch(
    mut batch: Option<RowBatch>,
    fork: &Mutex<Fork>,
    job: usize,
    last: bool,
) -> Result<WrittenBatch, EngineError> {
    if let Some(batch) = &mut batch {
        batch.prepare()?;
    }
    let mut fork = fork.lock().unwrap_or_else(PoisonError::into_inner);
    fork.take_turn(job);
    let mut bytes = Vec::new();
    let rows = match batch {
        Some(batch) => {
            let rows = batch.len();
            write_rows(fork.writer.as_mut(), &batch, 0..rows, &mut bytes)?;
            rows
        }
        None => 0,
    };
    if last {
        fork.writer.end_run(&mut bytes);
    }
    Ok(WrittenBatch {
        bytes,
        rows,
        failure: fork.writer.take_failure(),
    })
}

impl Fork {
    /// Checks that job `job` is the one whose turn it is: a run's rows
    /// must reach its fork in order.
    fn take_turn(&mut self, job: usize) {
        assert_eq!(job, self.next_job, "the jobs of a run ran out of order");
        self.next_job += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, Term, TermRef, Variable};

    /// Writes each row's number after the number of its fork, and a line
    /// at each run's end: what the pipeline hands on shows which fork
    /// wrote which rows, in what order.
    struct Numbering {
        fork: usize,
        forks_made: usize,
        /// Rows asked of the next fork, after so many were made.
        rows_per_fork: fn(usize) -> usize,
    }

    impl SolutionsWriter for Numbering {
        fn header(&mut self, _out: &mut Vec<u8>, _variables: &[Variable]) {}
        fn row(&mut self, out: &mut Vec<u8>, row: &[Option<TermRef<'_>>]) {
            let Some(TermRef::Literal(n)) = row[0] else {
                panic!("a row of one number")
            };
            out.extend_from_slice(format!("{} {}\n", self.fork, n.value()).as_bytes());
        }
        fn footer(&mut self, _out: &mut Vec<u8>) {}
        fn boolean(&mut self, _out: &mut Vec<u8>, _value: bool) {}
        fn fork_rows(&mut self) -> Option<Box<dyn SolutionsWriter>> {
            self.forks_made += 1;
            Some(Box::new(Numbering {
                fork: self.forks_made,
                forks_made: 0,
                rows_per_fork: self.rows_per_fork,
            }))
        }
        fn rows_per_fork(&self) -> usize {
            (self.rows_per_fork)(self.forks_made)
        }
        fn end_run(&mut self, out: &mut Vec<u8>) {
            out.extend_from_slice(format!("{} end\n", self.fork).as_bytes());
        }
    }

    fn numbers(rows: std::ops::Range<usize>) -> RowBatch {
        RowBatch::from_rows(
            rows.map(|n| vec![Some(Term::from(Literal::from(n as i64)))])
                .collect(),
        )
    }

    /// Everything the pipeline hands on, as lines, once the stream ends
    /// after `batches`.
    fn written(
        rows_per_fork: fn(usize) -> usize,
        batches: &[std::ops::Range<usize>],
    ) -> Vec<String> {
        let mut writer = Numbering {
            fork: 0,
            forks_made: 0,
            rows_per_fork,
        };
        let first = writer.fork_rows().unwrap();
        let mut pipeline = BatchPipeline::new(&writer, first);
        let mut bytes = Vec::new();
        for batch in batches {
            assert!(pipeline.start(numbers(batch.clone()), &mut writer).is_ok());
            while pipeline.is_full() {
                bytes.extend(pipeline.next().unwrap().unwrap().bytes);
            }
        }
        pipeline.end_with(End::Stream(Ok(())));
        while let Some(batch) = pipeline.next() {
            bytes.extend(batch.unwrap().bytes);
        }
        assert!(matches!(pipeline.take_end(), Some(End::Stream(Ok(())))));
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Each fork gets a job's rows and ends its run with them.
    #[test]
    fn a_fork_per_job_by_default() {
        let lines = written(|_| 1, &[0..JOB_ROWS, JOB_ROWS..JOB_ROWS + 10]);
        let mut expected: Vec<String> = (0..JOB_ROWS).map(|n| format!("1 {n}")).collect();
        expected.push("1 end".to_owned());
        expected.extend((JOB_ROWS..JOB_ROWS + 10).map(|n| format!("2 {n}")));
        expected.push("2 end".to_owned());
        assert_eq!(lines, expected);
    }

    /// A writer that asks for runs of three jobs gets them, in order, in
    /// batches that do not line up with the runs; the last run, cut short
    /// by the end of the stream, is ended all the same.
    #[test]
    fn runs_of_several_jobs_keep_their_rows_in_order() {
        let rows = 7 * JOB_ROWS + 5;
        let batches: Vec<_> = (0..rows)
            .step_by(2 * JOB_ROWS + 3)
            .map(|start| start..(start + 2 * JOB_ROWS + 3).min(rows))
            .collect();
        let lines = written(|_| 3 * JOB_ROWS, &batches);
        let rows_of: Vec<_> = lines.iter().filter(|l| !l.ends_with("end")).collect();
        assert_eq!(rows_of.len(), rows);
        let mut ends = Vec::new();
        for (at, line) in lines.iter().enumerate() {
            let (fork, what) = line.split_once(' ').unwrap();
            if what == "end" {
                ends.push((fork.to_owned(), at));
            }
        }
        // Each run ends right after its own rows: batches of 2 jobs and 3
        // rows make jobs of 8K, 8K, 3, 8K, 8K, 3, ... rows, three a run.
        let forks: Vec<&str> = ends.iter().map(|(fork, _)| fork.as_str()).collect();
        assert_eq!(forks, ["1", "2", "3", "4"]);
        let mut n = 0;
        let mut fork = 1;
        for line in &lines {
            let (by, what) = line.split_once(' ').unwrap();
            if what == "end" {
                assert_eq!(by, fork.to_string());
                fork += 1;
            } else {
                assert_eq!(
                    (by, what),
                    (fork.to_string().as_str(), n.to_string().as_str())
                );
                n += 1;
            }
        }
        assert_eq!(n, rows);
    }

    /// A writer that asks for longer runs once it has made two forks gets
    /// them from the next run on.
    #[test]
    fn runs_grow_when_the_writer_asks() {
        let lines = written(
            |forks| if forks < 2 { 1 } else { 2 * JOB_ROWS },
            &[0..3 * JOB_ROWS, 3 * JOB_ROWS..6 * JOB_ROWS],
        );
        let mut runs: Vec<(String, usize)> = Vec::new();
        for line in &lines {
            let (fork, what) = line.split_once(' ').unwrap();
            match runs.last_mut() {
                Some((last, rows)) if last == fork => *rows += usize::from(what != "end"),
                _ => runs.push((fork.to_owned(), usize::from(what != "end"))),
            }
        }
        // The first fork was made before the pipeline (a job), the second
        // by it (a job), then runs of two jobs.
        let rows: Vec<usize> = runs.iter().map(|(_, rows)| *rows).collect();
        assert_eq!(rows, [JOB_ROWS, JOB_ROWS, 2 * JOB_ROWS, 2 * JOB_ROWS]);
        assert_eq!(lines.iter().filter(|l| l.ends_with("end")).count(), 4);
    }
}
