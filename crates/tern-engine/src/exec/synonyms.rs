//! `owl:sameAs` at query time: each value of the chosen columns is replaced
//! by every member of its sameAs class (one output row per combination),
//! or by the class's canonical member alone. The rewritten query puts one
//! above each stored pattern it reads (see `infer`), so joins, closures
//! and class definitions all see every synonym; a DISTINCT above removes
//! the rows that two synonyms of one input make twice.

use super::profile::OperatorInfo;
use super::{Batch, BoxedOperator, Operator};
use crate::context::{QueryContext, SynonymTable};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use std::sync::Arc;
use tern_index::Id;

pub struct Synonyms {
    ctx: Arc<QueryContext>,
    input: BoxedOperator,
    columns: Vec<usize>,
    table: Arc<SynonymTable>,
    canonical: bool,
}

impl Synonyms {
    pub fn new(
        ctx: Arc<QueryContext>,
        input: BoxedOperator,
        columns: Vec<usize>,
        table: Arc<SynonymTable>,
        canonical: bool,
    ) -> Synonyms {
        Synonyms {
            ctx,
            input,
            columns,
            table,
            canonical,
        }
    }

    fn expand(&self, batch: Batch) -> Batch {
        let width = batch.columns.len();
        // Most values have no synonym: those rows pass as they are.
        let plain = (0..batch.len).all(|i| {
            self.columns
                .iter()
                .all(|&c| self.table.class_of(batch.columns[c][i]).is_none())
        });
        if plain {
            return batch;
        }
        let mut out = Batch::with_columns(width);
        let mut row = Vec::with_capacity(width);
        let mut lists: Vec<&[Id]> = Vec::with_capacity(self.columns.len());
        let mut picks = vec![0usize; self.columns.len()];
        for i in 0..batch.len {
            batch.row_into(i, &mut row);
            lists.clear();
            for &c in &self.columns {
                lists.push(match self.table.class_of(row[c]) {
                    Some(class) if self.canonical => &class[..1],
                    Some(class) => class,
                    None => std::slice::from_ref(&batch.columns[c][i]),
                });
            }
            // Every combination of the columns' values.
            picks.iter_mut().for_each(|p| *p = 0);
            loop {
                for (k, &c) in self.columns.iter().enumerate() {
                    row[c] = lists[k][picks[k]];
                }
                out.push_row(&row);
                let mut k = 0;
                while k < picks.len() {
                    picks[k] += 1;
                    if picks[k] < lists[k].len() {
                        break;
                    }
                    picks[k] = 0;
                    k += 1;
                }
                if k == picks.len() {
                    break;
                }
            }
        }
        out
    }
}

impl Operator for Synonyms {
    fn variables(&self) -> &[Variable] {
        self.input.variables()
    }

    fn estimated_rows(&self) -> Option<u64> {
        self.input.estimated_rows()
    }

    fn describe(&self) -> OperatorInfo {
        let columns: Vec<String> = self
            .columns
            .iter()
            .map(|&c| self.input.variables()[c].to_string())
            .collect();
        let how = if self.canonical {
            "canonical member of"
        } else {
            "every synonym of"
        };
        OperatorInfo::new("SameAs", format!("{how} {}", columns.join(" ")))
    }

    fn children(&self) -> Vec<&dyn Operator> {
        vec![self.input.as_ref()]
    }

    fn first_rows_only(&mut self, rows: usize) {
        self.input.first_rows_only(rows);
    }

    fn small_first_batches(&mut self, rows: usize) {
        self.input.small_first_batches(rows);
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        // Whole input batches are expanded at once: its state is the input's.
        Ok(OperatorState::new(
            Vec::new(),
            vec![self.input.save(stash)?],
        ))
    }

    fn checkpoint(&self) -> Option<OperatorState> {
        Some(OperatorState::new(
            Vec::new(),
            vec![self.input.checkpoint()?],
        ))
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        self.input.restore(state.into_child()?, stash)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        self.ctx.check()?;
        Ok(self.input.next_batch()?.map(|batch| self.expand(batch)))
    }
}
