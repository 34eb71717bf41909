//! A hash join whose build side does not fit in memory (Grace hash join):
//! both sides are written to disk in parts by the hash of their key, then
//! each part's build rows become a table that its probe rows go through.
//! A part still too large is split again by another hash. Build rows with
//! an unbound key value may match any probe row: they stay in memory and
//! join every part's table.
//!
//! Every phase goes a bounded step at a time, and the whole state is
//! stashed when the query is suspended (the files go with it).

use super::{PerRow, ProbeProgress};
use crate::context::{row_vec_bytes, MemoryCharge, QueryContext};
use crate::exec::cursor::{Filled, RowCursor};
use crate::exec::spill::{Partitions, RowFile, Segment, SegmentReader};
use crate::exec::BuildSide;
use crate::exec::{Batch, BoxedOperator, FlatRows, RowTable, TableSteps, BATCH_ROWS};
use crate::suspend::StashSize;
use crate::EngineError;
use tern_index::Id;

/// Levels of splitting at most (each splits a part in 16).
const MAX_LEVEL: u64 = 8;
/// Rows written between two looks at the clock.
const WRITE_STEP_ROWS: usize = 16 * 1024;

pub struct SpilledJoin {
    build_key: Vec<usize>,
    probe_key: Vec<usize>,
    build_width: usize,
    probe_width: usize,
    /// Build rows with an unbound key value.
    build_wild: FlatRows,
    phase: Phase,
    /// Pairs of parts waiting to be joined.
    pairs: Vec<Pair>,
    current: Option<Box<Current>>,
    /// What the current table and the rows being written hold.
    memory: MemoryCharge,
}

enum Phase {
    /// Writing the build side: the rows pulled before it was found too
    /// large (from `.1` on), then the rest of its input.
    Build(Partitions, FlatRows, usize),
    /// Writing the probe side.
    Probe(Vec<(RowFile, Segment)>, Partitions),
    /// Joining part by part.
    Joining,
}

struct Pair {
    build: (RowFile, Segment),
    probe: (RowFile, Segment),
    level: u64,
}

/// The pair of parts being joined: its table, then its probe rows.
struct Current {
    steps: Option<Box<TableSteps>>,
    table: Option<RowTable>,
    probe: RowFile,
    reader: SegmentReader,
    block: Vec<Id>,
    count: usize,
    at: usize,
}

/// What the join should do next.
pub enum SpillStep {
    /// Hand out this batch (possibly empty: the turn ended).
    Batch(Batch),
    /// The join is done.
    Done,
}

impl SpilledJoin {
    /// Starts writing a build side to disk with `rows`, the rows pulled
    /// from it so far; `key`: (probe column, build column) pairs.
    pub fn new(
        ctx: &QueryContext,
        rows: FlatRows,
        key: &[(usize, usize)],
        build_width: usize,
        probe_width: usize,
    ) -> Result<SpilledJoin, EngineError> {
        let build_key: Vec<usize> = key.iter().map(|&(_, b)| b).collect();
        let memory = ctx.memory_charge();
        memory.set_unchecked(row_vec_bytes(rows.len(), build_width));
        Ok(SpilledJoin {
            phase: Phase::Build(
                Partitions::new(ctx, build_width, build_key.clone(), 0)?,
                rows,
                0,
            ),
            build_key,
            probe_key: key.iter().map(|&(p, _)| p).collect(),
            build_width,
            probe_width,
            build_wild: FlatRows::default(),
            pairs: Vec::new(),
            current: None,
            memory,
        })
    }

    /// The next step of the join: `build` holds the rest of the build
    /// side's input while it is not read whole, `probe` is the probe side,
    /// `per_row` what the join does with a probe row and a table (as for a
    /// join in memory).
    pub fn next_batch(
        &mut self,
        ctx: &QueryContext,
        width: usize,
        at: &mut ProbeProgress,
        probe: &mut RowCursor,
        build: &mut BuildSide,
        per_row: &mut PerRow<'_>,
    ) -> Result<SpillStep, EngineError> {
        let paused = || Ok(SpillStep::Batch(Batch::with_columns(width)));
        if let Phase::Build(..) = self.phase {
            if !self.write_build(ctx, build.spilled_input())? {
                return paused();
            }
            build.end_spilled_input();
        }
        if let Phase::Probe(..) = self.phase {
            if !self.write_probe(ctx, probe)? {
                return paused();
            }
        }
        let mut out = Batch::with_columns(width);
        while out.len < BATCH_ROWS {
            if self.current.is_none() {
                let Some(pair) = self.pairs.pop() else {
                    break;
                };
                self.start_pair(ctx, pair)?;
                continue;
            }
            let current = self.current.as_mut().expect("checked above");
            if let Some(steps) = current.steps.as_mut() {
                while !steps.built() {
                    steps.step();
                    ctx.check()?;
                    if !steps.built() && ctx.should_yield() {
                        return Ok(SpillStep::Batch(out));
                    }
                }
                current.table = Some(current.steps.take().expect("built").finish());
            }
            if current.at >= current.count {
                current.count = current
                    .probe
                    .read_block(&mut current.reader, &mut current.block)?;
                current.at = 0;
                if current.count == 0 {
                    self.current = None;
                    self.memory.set(0)?;
                    continue;
                }
                if ctx.stop_turn(out.len) {
                    return Ok(SpillStep::Batch(out));
                }
            }
            let w = self.probe_width;
            let row = &current.block[current.at * w..(current.at + 1) * w];
            let table = current.table.as_ref().expect("built above");
            if per_row(row, table, &mut out, at)? {
                current.at += 1;
                *at = ProbeProgress::default();
            } else {
                ctx.check()?;
            }
        }
        if out.len == 0 && self.current.is_none() && self.pairs.is_empty() {
            return Ok(SpillStep::Done);
        }
        Ok(SpillStep::Batch(out))
    }

    /// Writes the build side's rows to its parts; false when the turn
    /// ended first.
    fn write_build(
        &mut self,
        ctx: &QueryContext,
        input: Option<&mut BoxedOperator>,
    ) -> Result<bool, EngineError> {
        let Phase::Build(parts, pulled, next) = &mut self.phase else {
            return Ok(true);
        };
        let key = &self.build_key;
        let wild = &mut self.build_wild;
        let mut write = |row: &[Id]| {
            if key.iter().any(|&c| row[c] == Id::UNDEFINED) {
                wild.push_row(row);
                Ok(())
            } else {
                parts.push(row)
            }
        };
        while *next < pulled.len() {
            let end = (*next + WRITE_STEP_ROWS).min(pulled.len());
            for i in *next..end {
                write(pulled.row(i))?;
            }
            *next = end;
            ctx.check()?;
            if *next < pulled.len() && ctx.should_yield() {
                return Ok(false);
            }
        }
        if !pulled.is_empty() {
            *pulled = FlatRows::default();
            self.memory.set_unchecked(0);
        }
        if let Some(input) = input {
            let mut row = Vec::with_capacity(self.build_width);
            while let Some(batch) = input.next_batch()? {
                ctx.check()?;
                for i in 0..batch.len {
                    batch.row_into(i, &mut row);
                    write(&row)?;
                }
                if batch.len == 0 || ctx.should_yield() {
                    return Ok(false);
                }
            }
        }
        let Phase::Build(parts, ..) = std::mem::replace(&mut self.phase, Phase::Joining) else {
            unreachable!("matched above");
        };
        self.memory
            .set(row_vec_bytes(self.build_wild.len(), self.build_width))?;
        self.phase = Phase::Probe(
            parts.finish()?,
            Partitions::new(ctx, self.probe_width, self.probe_key.clone(), 0)?,
        );
        Ok(true)
    }

    /// Writes the probe side's rows to its parts; false when the turn (or
    /// the probe input) paused first.
    fn write_probe(
        &mut self,
        ctx: &QueryContext,
        probe: &mut RowCursor,
    ) -> Result<bool, EngineError> {
        let Phase::Probe(_, parts) = &mut self.phase else {
            return Ok(true);
        };
        let mut row = Vec::with_capacity(self.probe_width);
        let mut written = 0usize;
        loop {
            match probe.fill(ctx)? {
                Filled::Row => {}
                Filled::Paused => return Ok(false),
                Filled::Ended => break,
            }
            let (batch, pos) = probe.current();
            batch.row_into(pos, &mut row);
            if self.probe_key.iter().any(|&c| row[c] == Id::UNDEFINED) {
                return Err(EngineError::Unsupported(
                    "a join too large for the memory budget whose probe side has unbound join \
                     values; raise the query's memory budget"
                        .into(),
                ));
            }
            parts.push(&row)?;
            probe.advance(1);
            written += 1;
            if written.is_multiple_of(WRITE_STEP_ROWS) {
                ctx.check()?;
                if ctx.should_yield() {
                    return Ok(false);
                }
            }
        }
        let Phase::Probe(build, parts) = std::mem::replace(&mut self.phase, Phase::Joining) else {
            unreachable!("matched above");
        };
        for (build, probe) in build.into_iter().zip(parts.finish()?) {
            if probe.1.rows > 0 {
                self.pairs.push(Pair {
                    build,
                    probe,
                    level: 1,
                });
            }
        }
        Ok(true)
    }

    /// Reads a pair's build part into a table to build, or splits the
    /// pair when its build part does not fit in memory either.
    fn start_pair(&mut self, ctx: &QueryContext, pair: Pair) -> Result<(), EngineError> {
        let (file, segment) = &pair.build;
        let rows = segment.rows as usize + self.build_wild.len();
        let bytes = row_vec_bytes(rows, self.build_width) + rows as u64 * 24;
        if !self.memory.fits(bytes) && pair.level < MAX_LEVEL {
            return self.split(ctx, pair);
        }
        self.memory.set(bytes)?;
        let mut table = FlatRows::default();
        file.read_segment(segment, |block, count| {
            table.extend_values(self.build_width, block, count);
            ctx.check()
        })?;
        for row in self.build_wild.iter() {
            table.push_row(row);
        }
        let (probe, probe_segment) = pair.probe;
        self.current = Some(Box::new(Current {
            steps: Some(Box::new(TableSteps::new(table, self.build_key.clone()))),
            table: None,
            probe,
            reader: probe_segment.reader(),
            block: Vec::new(),
            count: 0,
            at: 0,
        }));
        Ok(())
    }

    /// Splits both parts of a pair in parts of the next level.
    fn split(&mut self, ctx: &QueryContext, pair: Pair) -> Result<(), EngineError> {
        let split_one = |(file, segment): &(RowFile, Segment), width: usize, key: &[usize]| {
            let mut parts = Partitions::new(ctx, width, key.to_vec(), pair.level)?;
            file.read_segment(segment, |block, count| {
                for i in 0..count {
                    parts.push(&block[i * width..(i + 1) * width])?;
                }
                ctx.check()
            })?;
            parts.finish()
        };
        let build = split_one(&pair.build, self.build_width, &self.build_key)?;
        let probe = split_one(&pair.probe, self.probe_width, &self.probe_key)?;
        for (build, probe) in build.into_iter().zip(probe) {
            // All rows in one part: they share one key, and splitting
            // again cannot help (the table is then tried as it is).
            let level = if build.1.rows == pair.build.1.rows {
                MAX_LEVEL
            } else {
                pair.level + 1
            };
            if probe.1.rows > 0 {
                self.pairs.push(Pair {
                    build,
                    probe,
                    level,
                });
            }
        }
        Ok(())
    }
}

impl StashSize for SpilledJoin {
    fn stash_bytes(&self) -> usize {
        let phase = match &self.phase {
            Phase::Build(parts, pulled, _) => parts.stash_bytes() + pulled.stash_bytes(),
            Phase::Probe(_, parts) => parts.stash_bytes(),
            Phase::Joining => 0,
        };
        let current = self.current.as_ref().map_or(0, |c| {
            c.steps.as_ref().map_or(0, |s| s.stash_bytes())
                + c.table.as_ref().map_or(0, StashSize::stash_bytes)
                + c.block.capacity() * 8
        });
        phase + current + self.build_wild.stash_bytes() + self.pairs.len() * 64
    }
}
