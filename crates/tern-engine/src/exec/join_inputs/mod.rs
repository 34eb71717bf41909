//! The two inputs of a join that hashes one side: the probe side read row by
//! row, the build side pulled into a table first. Hash join, OPTIONAL and
//! the equality join share how these are listed, saved and restored, and
//! how they go to disk when the build side does not fit in memory
//! (`spilled`).

mod spilled;

use super::build_side::Prepared;
use super::cursor::{Filled, RowCursor};
use super::{Batch, BoxedOperator, BuildSide, Operator, RowTable, BATCH_ROWS};
use crate::context::{MemoryCharge, QueryContext};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use spilled::{SpillStep, SpilledJoin};
use tern_index::Id;

/// What an empty build side means for the join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyBuild {
    /// No rows at all (inner joins).
    EndsJoin,
    /// Every probe row still counts (OPTIONAL).
    ProbeAnyway,
}

pub struct JoinInputs {
    pub probe: RowCursor,
    pub build: BuildSide,
    /// The probe side's columns of the table's key.
    probe_key: Vec<usize>,
    /// The output batch being made.
    output: Option<MemoryCharge>,
    /// How far the probe side's current row got: one probe row of a cross
    /// product (or of a skewed key) matches the whole table, so its output
    /// is made a batch at a time, and the row stays current until it is
    /// done.
    at: ProbeProgress,
    /// (probe column, build column) of the key.
    key: Vec<(usize, usize)>,
    /// Both sides on disk, once the build side did not fit in memory.
    spilled: Option<Box<SpilledJoin>>,
    /// Whether the join may go to disk (see [`in_memory_only`](Self::in_memory_only)).
    spillable: bool,
}

/// What a join does with a probe row and the table: adds its output rows
/// from `ProbeProgress` on, and says whether it is done with the row.
pub type PerRow<'a> =
    dyn FnMut(&[Id], &RowTable, &mut Batch, &mut ProbeProgress) -> Result<bool, EngineError> + 'a;

/// Where `per_row` carries on with the current probe row.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProbeProgress {
    /// Candidates of the table it went through.
    pub next: usize,
    /// Whether one of them matched (OPTIONAL keeps an unmatched row alone).
    pub matched: bool,
}

/// Candidates `per_row` goes through before it returns, so that the
/// cancellation flag and the clock are read often also when few match.
pub const CANDIDATES_PER_CALL: usize = 4096;

/// Walks `candidates` from `at.next` on, at most [`CANDIDATES_PER_CALL`] of
/// them, handing each to `visit`, which adds its output and says whether the
/// batch is full. Returns whether every candidate was seen (the probe row is
/// done with them).
pub fn walk_candidates(
    candidates: impl Iterator<Item = u32>,
    at: &mut ProbeProgress,
    mut visit: impl FnMut(u32, &mut ProbeProgress) -> Result<bool, EngineError>,
) -> Result<bool, EngineError> {
    let mut seen = 0;
    for candidate in candidates.take(CANDIDATES_PER_CALL) {
        seen += 1;
        at.next += 1;
        if visit(candidate, at)? {
            return Ok(false);
        }
    }
    Ok(seen < CANDIDATES_PER_CALL)
}

/// How many probe rows ahead the table's entries for a row are fetched into
/// the cache.
const PREFETCH_AHEAD: usize = 8;

impl JoinInputs {
    /// `key`: the probe side's columns with the build side's columns its
    /// table is keyed on.
    pub fn new(probe: BoxedOperator, build: BoxedOperator, key: Vec<(usize, usize)>) -> JoinInputs {
        JoinInputs {
            probe: RowCursor::new(probe),
            build: BuildSide::new(build, key.iter().map(|&(_, b)| b).collect()),
            probe_key: key.iter().map(|&(p, _)| p).collect(),
            output: None,
            at: ProbeProgress::default(),
            key,
            spilled: None,
            spillable: true,
        }
    }

    /// Keeps the build side in memory whatever its size (failing past the
    /// budget): for a join whose rows match on something other than equal
    /// key IDs (equal literal values), which parts split by the hash of
    /// the IDs would separate.
    pub fn in_memory_only(mut self) -> JoinInputs {
        self.spillable = false;
        self
    }

    /// Asks the cache for what probing the row a little ahead of `pos`
    /// will read: in a table larger than the cache each probe waits on
    /// memory reads (the bucket, then its entries), and fetching the
    /// entries in advance overlaps those waits (the BSBM 10M BI joins of
    /// 100K reviews spent most of their time in them).
    fn prefetch(probe_key: &[usize], table: &RowTable, batch: &Batch, pos: usize) {
        let key_at = |at: usize| probe_key.iter().map(move |&c| batch.columns[c][at]);
        if pos + PREFETCH_AHEAD < batch.len {
            table.prefetch_entries(key_at(pos + PREFETCH_AHEAD));
        }
    }

    /// The probe input, then the build input while it is not pulled in.
    pub fn children(&self) -> Vec<&dyn Operator> {
        let mut children = vec![self.probe.input.as_ref()];
        children.extend(self.build.input());
        children
    }

    /// The next batch of a join of `width` columns: the build side pulled in
    /// first (an empty batch when the turn ends meanwhile), then probe rows
    /// handed with the table to `per_row`, which adds their output rows,
    /// until the batch is full, the probe side ends (`None` if nothing came)
    /// or pauses, or the turn is over. `per_row` goes on from `progress`,
    /// returns after at most [`CANDIDATES_PER_CALL`] candidates or when the
    /// batch is full, and says whether it is done with the row.
    pub fn next_batch(
        &mut self,
        ctx: &QueryContext,
        width: usize,
        empty: EmptyBuild,
        mut per_row: impl FnMut(
            &[Id],
            &RowTable,
            &mut Batch,
            &mut ProbeProgress,
        ) -> Result<bool, EngineError>,
    ) -> Result<Option<Batch>, EngineError> {
        ctx.check()?;
        if self.spilled.is_none() {
            match self.build.prepare(ctx, self.spillable)? {
                Prepared::Paused => return Ok(Some(Batch::with_columns(width))),
                Prepared::Ready => {}
                Prepared::TooLarge(rows) => {
                    let build_width = self
                        .build
                        .spilled_input()
                        .map_or(0, |input| input.variables().len());
                    let probe_width = self.probe.input.variables().len();
                    self.spilled = Some(Box::new(SpilledJoin::new(
                        ctx,
                        rows,
                        &self.key,
                        build_width,
                        probe_width,
                    )?));
                }
            }
        }
        if let Some(spilled) = self.spilled.as_mut() {
            let step = spilled.next_batch(
                ctx,
                width,
                &mut self.at,
                &mut self.probe,
                &mut self.build,
                &mut per_row,
            )?;
            return Ok(match step {
                SpillStep::Batch(batch) => Some(batch),
                SpillStep::Done => None,
            });
        }
        let table = self.build.built_table().expect("prepared");
        if empty == EmptyBuild::EndsJoin && table.is_empty() {
            return Ok(None);
        }
        let mut out = Batch::with_columns(width);
        let mut probed = 0usize;
        let mut row = Vec::new();
        let prefetch = table.is_large();
        while out.len < BATCH_ROWS {
            probed += 1;
            // A selective join may probe millions of rows for few results:
            // hand out what there is (or nothing) when the turn is over.
            if probed.is_multiple_of(1024) && ctx.stop_turn(out.len) {
                return Ok(Some(out));
            }
            match self.probe.fill(ctx)? {
                Filled::Row => {}
                Filled::Paused => {
                    ctx.input_paused(out.len);
                    return Ok(Some(out));
                }
                Filled::Ended => break,
            }
            let (batch, pos) = self.probe.current();
            if prefetch {
                Self::prefetch(&self.probe_key, table, batch, pos);
            }
            row.clear();
            row.extend(batch.columns.iter().map(|c| c[pos]));
            if per_row(&row, table, &mut out, &mut self.at)? {
                self.probe.advance(1);
                self.at = ProbeProgress::default();
            } else {
                // A row with many candidates: look at the clock between
                // its parts.
                ctx.check()?;
                probed = probed.next_multiple_of(1024) - 1;
            }
        }
        self.output
            .get_or_insert_with(|| ctx.memory_charge())
            .set((out.len * width * 8) as u64)?;
        Ok((out.len > 0).then_some(out))
    }

    /// The probe side's state, then the build side's (and the parts on
    /// disk, stashed, when there are any).
    pub fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        let streamed = self.probe.save(stash)?;
        let table = self.build.save(stash)?;
        let spilled = self
            .spilled
            .take()
            .map_or(0, |spilled| stash.put(*spilled) + 1);
        let at = vec![self.at.next as u64, u64::from(self.at.matched), spilled];
        Ok(OperatorState::new(at, vec![streamed, table]))
    }

    pub fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let spilled;
        (self.at, spilled) = match state.numbers[..] {
            [next, matched, spilled] => (
                ProbeProgress {
                    next: usize::try_from(next).map_err(|_| bad_state("a join's progress"))?,
                    matched: matched != 0,
                },
                spilled,
            ),
            _ => return Err(bad_state("a join's progress")),
        };
        if let Some(handle) = spilled.checked_sub(1) {
            self.spilled = Some(Box::new(stash.take(handle)?));
        }
        let [streamed, table] = state.into_children()?;
        self.probe.restore(streamed, stash)?;
        self.build.restore(table, stash)
    }
}
