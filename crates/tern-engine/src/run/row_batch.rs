//! Solutions in batches as they leave the engine: [`RowBatch`] still as
//! IDs, and [`TermBatch`], a slice of one decoded for a writer.

use super::SolutionRow;
use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{Term, TermRef};
use std::sync::Arc;
use tern_index::TermRefs;

/// A batch of solutions still as IDs. A writer decodes the slice of rows it
/// is about to write ([`decode`](Self::decode)): decoding terms is most of
/// the cost of exporting a large result, and done slice by slice it is
/// spread over the cores that write, and is still in their caches when they
/// write.
pub struct RowBatch(pub(super) Rows);

pub(super) enum Rows {
    Ids {
        /// The shown columns.
        columns: Vec<Vec<tern_index::Id>>,
        len: usize,
        ctx: Arc<QueryContext>,
    },
    /// Rows decoded before (by [`SolutionStream::next_in_turn`]).
    Owned(Vec<SolutionRow>),
}

impl RowBatch {
    pub fn len(&self) -> usize {
        match &self.0 {
            Rows::Ids { len, .. } => *len,
            Rows::Owned(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The terms of rows `rows` (row 0 of the result is row `rows.start` of
    /// this batch).
    pub fn decode(&self, rows: std::ops::Range<usize>) -> Result<TermBatch, EngineError> {
        let (columns, ctx) = match &self.0 {
            Rows::Ids { columns, ctx, .. } => (columns, ctx),
            Rows::Owned(owned) => return Ok(TermBatch(Terms::Owned(owned[rows].to_vec()))),
        };
        let mut refs = Vec::with_capacity(columns.len());
        let mut local = Vec::with_capacity(columns.len());
        for column in columns {
            let ids = &column[rows.clone()];
            refs.push(ctx.index.term_refs(ids)?);
            let mut made = Vec::new();
            for (row, id) in ids.iter().enumerate() {
                if id.tag() == tern_index::Tag::LocalVocab {
                    if let Some(term) = ctx.term(*id)? {
                        made.push((row, term));
                    }
                }
            }
            local.push(made);
        }
        Ok(TermBatch(Terms::Borrowed {
            columns: refs,
            local,
            len: rows.len(),
        }))
    }
}

/// A slice of a [`RowBatch`] with its terms decoded into one buffer per
/// column: how large results are written out without making a `Term`, and
/// its strings, per value.
pub struct TermBatch(Terms);

enum Terms {
    Borrowed {
        columns: Vec<TermRefs>,
        /// Terms the query made itself (its local vocabulary), which the
        /// index does not know: per column, by row.
        local: Vec<Vec<(usize, Term)>>,
        len: usize,
    },
    /// Rows decoded before.
    Owned(Vec<SolutionRow>),
}

impl TermBatch {
    pub fn len(&self) -> usize {
        match &self.0 {
            Terms::Borrowed { len, .. } => *len,
            Terms::Owned(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The terms of row `i`, into `out` (cleared first).
    pub fn row<'a>(&'a self, i: usize, out: &mut Vec<Option<TermRef<'a>>>) {
        out.clear();
        match &self.0 {
            Terms::Borrowed { columns, local, .. } => {
                for (column, made) in columns.iter().zip(local) {
                    out.push(match column.get(i) {
                        Some(term) => Some(term),
                        None => made
                            .binary_search_by_key(&i, |(row, _)| *row)
                            .ok()
                            .map(|k| made[k].1.as_ref()),
                    });
                }
            }
            Terms::Owned(rows) => out.extend(rows[i].iter().map(|t| t.as_ref().map(Term::as_ref))),
        }
    }
}
