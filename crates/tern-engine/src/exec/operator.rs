//! The [`Operator`] trait every physical operator implements: batches out,
//! runtime information for EXPLAIN, and the preemption contract (save,
//! checkpoint, restore); plus helpers shared by operators' EXPLAIN lines and
//! by operators that materialize their whole result.

use super::profile::{OperatorInfo, ProfileNode};
use super::Batch;
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

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

    /// Whether this operator's rows are made by copies of a pipeline on
    /// several cores (`ParallelPipelines`): what consumes them (a grouping)
    /// may then share its own work out too.
    fn runs_as_copies(&self) -> bool {
        false
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
    /// [`RowCursor`](super::cursor::RowCursor) takes it before each batch it pulls,
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
    /// resumed plan as on the first. An operator that may drop rows (a
    /// filter, a join) cannot promise its input that, so by default it
    /// takes it as [`small_first_batches`](Self::small_first_batches).
    fn first_rows_only(&mut self, rows: usize) {
        self.small_first_batches(rows);
    }

    /// The consumer wants about `rows` rows soon but may read on (a LIMIT
    /// above a join that may drop rows): operators that make their own
    /// batches start with small ones ([`BatchRamp`](super::BatchRamp)), and
    /// those that pass batches on tell their inputs. Results are the same
    /// either way; only where batches are cut changes.
    fn small_first_batches(&mut self, _rows: usize) {}
}

pub type BoxedOperator = Box<dyn Operator>;

/// `?a ?b ?c`, for EXPLAIN.
pub fn variable_list(variables: &[Variable]) -> String {
    variables
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variables of a looked-up pattern that the left rows bind (an index
/// join's keys), for EXPLAIN.
pub fn bound_variable_list(variables: &[Variable], bound_from: &[Option<usize>]) -> String {
    let bound: Vec<Variable> = variables
        .iter()
        .zip(bound_from)
        .filter(|(_, b)| b.is_some())
        .map(|(v, _)| v.clone())
        .collect();
    variable_list(&bound)
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
