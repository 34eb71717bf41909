//! Physical operators, one per file. Each pulls batches of ID columns from its
//! inputs and produces batches for its parent; every operator checks the
//! query's cancellation flag and deadline once per batch.

mod distinct;
mod extend;
mod filter;
mod group;
mod hash_join;
mod left_join;
mod minus;
mod order_by;
mod path;
mod project;
mod rows;
mod scan;
mod slice;
mod union;
mod values;

pub use distinct::Distinct;
pub use extend::Extend;
pub use filter::Filter;
pub use group::Group;
pub use hash_join::HashJoin;
pub use left_join::LeftJoin;
pub use minus::Minus;
pub use order_by::OrderBy;
pub use path::PathScan;
pub use project::Project;
pub use rows::{RowTable, Solution};
pub use scan::{GraphScope, PatternTerm, Scan};
pub use slice::Slice;
pub use union::Union;
pub use values::Values;

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
}

pub type BoxedOperator = Box<dyn Operator>;

/// Pulls every row out of an operator (for materializing operators).
pub fn collect_rows(
    input: &mut dyn Operator,
    ctx: &crate::context::QueryContext,
) -> Result<Vec<Vec<Id>>, EngineError> {
    let mut rows = Vec::new();
    let width = input.variables().len();
    while let Some(batch) = input.next_batch()? {
        ctx.check()?;
        for i in 0..batch.len {
            rows.push(batch.row(i));
        }
        ctx.check_memory((rows.len() * (width * 8 + 24)) as u64)?;
    }
    Ok(rows)
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
