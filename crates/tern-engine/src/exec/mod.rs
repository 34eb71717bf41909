//! Physical operators, one per file. Each pulls batches of ID columns from its
//! inputs and produces batches for its parent; every operator checks the
//! query's cancellation flag and deadline once per batch.

mod bind_left_join;
mod build_side;
mod condition;
mod cursor;
mod distinct;
mod equality_join;
mod extend;
mod filter;
mod group;
mod hash_join;
mod index_join;
mod join_inputs;
mod left_join;
mod measured;
mod merge_join;
mod minus;
mod order_by;
mod path;
mod pattern_rows;
mod project;
mod row_table;
mod rows;
mod scan;
mod semi_join;
mod slice;
mod sort_steps;
mod union;
mod values;

pub use bind_left_join::{BindLeftJoin, PlanRight};
pub use build_side::{BuildSide, Collector, Pulled, COLLECTING};
pub use distinct::Distinct;
pub use equality_join::EqualityJoin;
pub use extend::Extend;
pub use filter::Filter;
pub use group::Group;
pub use hash_join::HashJoin;
pub use index_join::IndexJoin;
pub use join_inputs::{EmptyBuild, JoinInputs};
pub use left_join::LeftJoin;
pub use measured::Measured;
pub use merge_join::MergeJoin;
pub use minus::Minus;
pub use order_by::OrderBy;
pub use path::PathScan;
pub use pattern_rows::PatternRows;
pub use project::Project;
pub use row_table::{RowTable, TableSteps};
pub use rows::Solution;
pub use scan::{GraphScope, PatternTerm, Scan};
pub use semi_join::SemiJoin;
pub use slice::Slice;
pub use union::Union;
pub use values::Values;

use crate::profile::{OperatorInfo, ProfileNode};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

/// Rows per batch produced by operators that build batches themselves.
pub const BATCH_ROWS: usize = 4096;

/// A batch of solutions: one column of IDs per variable of the producing
/// operator's schema; [`Id::UNDEFINED`] where a variable is unbound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub columns: Vec<Vec<Id>>,
    pub len: usize,
}

impl Batch {
    pub fn with_columns(width: usize) -> Batch {
        Batch {
            columns: vec![Vec::new(); width],
            len: 0,
        }
    }

    /// Adds the merge of two compatible rows (see [`Solution::merge`](rows::Solution::merge))
    /// without building it first.
    pub fn push_merged(
        &mut self,
        left: &[Id],
        right: &[Id],
        sources: &[(Option<usize>, Option<usize>)],
    ) {
        for (column, &source) in self.columns.iter_mut().zip(sources) {
            column.push(rows::Solution::merged(left, right, source));
        }
        self.len += 1;
    }

    pub fn push_row(&mut self, row: &[Id]) {
        for (column, &id) in self.columns.iter_mut().zip(row) {
            column.push(id);
        }
        self.len += 1;
    }

    pub fn row(&self, i: usize) -> Vec<Id> {
        self.columns.iter().map(|c| c[i]).collect()
    }

    /// The rows for which `keep` says true, in order (for FILTER, DISTINCT,
    /// MINUS).
    pub fn retain_rows(
        &self,
        mut keep: impl FnMut(&[Id]) -> Result<bool, EngineError>,
    ) -> Result<Batch, EngineError> {
        let mut out = Batch::with_columns(self.columns.len());
        for i in 0..self.len {
            let row = self.row(i);
            if keep(&row)? {
                out.push_row(&row);
            }
        }
        Ok(out)
    }
}

/// A physical operator.
pub trait Operator: Send {
    /// The variable of each output column.
    fn variables(&self) -> &[Variable];

    /// The next batch, or `None` at the end. Batches are never empty.
    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError>;

    /// Name and details for EXPLAIN.
    fn describe(&self) -> OperatorInfo;

    /// The inputs, in the order their states are saved.
    fn children(&self) -> Vec<&dyn Operator> {
        Vec::new()
    }

    /// The planner's estimate of the rows this operator produces, where it
    /// has one (joins of triple patterns and what passes their rows on).
    fn estimated_rows(&self) -> Option<u64> {
        None
    }

    /// This operator's node of the live plan profile.
    fn profile(&self) -> ProfileNode {
        ProfileNode {
            info: self.describe(),
            estimated_rows: None,
            stats: None,
            children: self.children().into_iter().map(|c| c.profile()).collect(),
        }
    }

    /// Saves where the operator stands between two batches, moving any
    /// materialized state into the stash. The operator is dropped afterwards.
    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError>;

    /// What [`save`](Self::save) would return now, taken without changing
    /// the operator, for operators whose state between batches is positions
    /// only; `None` for those that would stash materialized state. A
    /// [`RowCursor`](cursor::RowCursor) takes it before each batch it pulls,
    /// so that a suspension in the middle of that batch re-reads it on
    /// resuming instead of stashing its unused rows. The rows produced
    /// after restoring a checkpoint must be the ones produced after taking
    /// it, in the same order; the batches may be cut elsewhere (an operator
    /// that stops at the end of a turn hands out what it has).
    fn checkpoint(&self) -> Option<OperatorState> {
        None
    }

    /// Puts a freshly planned operator back where [`save`](Self::save) left
    /// the same operator of the same plan.
    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError>;

    /// Only the first `rows` rows will be read (a LIMIT above): a sort then
    /// keeps only the best ones, and operators that pass rows on one for
    /// one tell their input. Called once, right after planning, on a
    /// resumed plan as on the first.
    fn first_rows_only(&mut self, _rows: usize) {}
}

pub type BoxedOperator = Box<dyn Operator>;

/// Below this many rows, per-row work stays on the calling thread: handing
/// it to other cores costs more than it saves.
const PARALLEL_MIN_ROWS: usize = 512;

/// `f` of every row of a batch, in row order, computed on all cores for
/// large batches (FILTER conditions, BIND values).
pub fn map_rows<T: Send>(
    batch: &Batch,
    f: impl Fn(&[Id]) -> Result<T, EngineError> + Sync + Send,
) -> Result<Vec<T>, EngineError> {
    map_indexes(batch.len, |i| f(&batch.row(i)))
}

/// `f` of every index below `len`, in order, on all cores when `len` is large.
pub fn map_indexes<T: Send>(
    len: usize,
    f: impl Fn(usize) -> Result<T, EngineError> + Sync + Send,
) -> Result<Vec<T>, EngineError> {
    use rayon::prelude::*;
    if len < PARALLEL_MIN_ROWS {
        return (0..len).map(f).collect();
    }
    (0..len)
        .into_par_iter()
        .with_min_len(PARALLEL_MIN_ROWS / 2)
        .map(f)
        .collect()
}

/// The next batch of a materialized result, `None` when it is used up.
pub fn next_chunk(rows: &mut std::vec::IntoIter<Vec<Id>>, width: usize) -> Option<Batch> {
    let chunk: Vec<Vec<Id>> = rows.by_ref().take(BATCH_ROWS).collect();
    (!chunk.is_empty()).then(|| batch_of(&chunk, width))
}

/// Cuts rows into batches for output.
pub fn batch_of(rows: &[Vec<Id>], width: usize) -> Batch {
    let mut batch = Batch::with_columns(width);
    for row in rows {
        batch.push_row(row);
    }
    batch
}

/// `?a ?b ?c`, for EXPLAIN.
pub fn variable_list(variables: &[Variable]) -> String {
    variables
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The join variables of a two-input operator, for EXPLAIN.
pub fn join_detail(shared: &[(usize, usize)], left: &[Variable]) -> String {
    let on: Vec<Variable> = shared.iter().map(|&(l, _)| left[l].clone()).collect();
    if on.is_empty() {
        "cross product".to_owned()
    } else {
        format!("on {}", variable_list(&on))
    }
}

/// State of an operator that computes its whole result on the first call and
/// then hands it out: before that, its input's state; after, the rows not yet
/// handed out, stashed.
pub fn save_materialized(
    materialized: bool,
    output: &mut std::vec::IntoIter<Vec<Id>>,
    input: Option<&mut BoxedOperator>,
    stash: &Stash,
) -> Result<OperatorState, EngineError> {
    if materialized {
        return Ok(OperatorState::stashed(stash.put(std::mem::take(output))));
    }
    let children = match input {
        Some(input) => vec![input.save(stash)?],
        None => Vec::new(),
    };
    Ok(OperatorState::new(Vec::new(), children))
}

/// Restores what [`save_materialized`] saved; true when the result was
/// already materialized (the caller then drops its input).
pub fn restore_materialized(
    state: OperatorState,
    output: &mut std::vec::IntoIter<Vec<Id>>,
    input: Option<&mut BoxedOperator>,
    stash: &Stash,
) -> Result<bool, EngineError> {
    if let Some(handle) = state.stashed {
        *output = stash.take(handle)?;
        return Ok(true);
    }
    if let Some(input) = input {
        input.restore(state.into_child()?, stash)?;
    }
    Ok(false)
}
