//! Solutions in batches as they leave the engine: [`RowBatch`] still as
//! IDs, and [`TermBatch`], a slice of one decoded for a writer.

use super::SolutionRow;
use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{Term, TermRef};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use tern_index::TermRefs;

/// Batches from this long are decoded whole before they are written (see
/// [`RowBatch::prepare`]).
const WHOLE_DECODE_ROWS: usize = 8 * 1024;

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
        /// Every column decoded whole (see [`RowBatch::prepare`]).
        decoded: Option<Arc<Vec<DecodedColumn>>>,
    },
    /// Rows decoded before (by [`SolutionStream::next_in_turn`]).
    Owned(Vec<SolutionRow>),
}

/// One column's terms.
pub(super) struct DecodedColumn {
    refs: TermRefs,
    /// Terms the query made itself that have no vocabulary key (blank
    /// nodes of BNODE()), by row; the others are in `refs`.
    unkeyed: Vec<(usize, Term)>,
}

impl DecodedColumn {
    /// Decodes `ids`: the index's terms, then the query's own (a
    /// CONSTRUCT template's constant, a BIND's string), each looked up
    /// once however many rows hold it.
    fn of(ctx: &QueryContext, ids: &[tern_index::Id]) -> Result<DecodedColumn, EngineError> {
        let mut refs = ctx.index.term_refs(ids)?;
        let mut made: FxHashMap<tern_index::Id, Vec<usize>> = FxHashMap::default();
        for (row, id) in ids.iter().enumerate() {
            if id.tag() == tern_index::Tag::LocalVocab {
                made.entry(*id).or_default().push(row);
            }
        }
        let mut unkeyed = Vec::new();
        for (id, rows) in made {
            let Some(term) = ctx.term(id)? else {
                continue;
            };
            if !refs.set_term(&rows, term.as_ref()) {
                unkeyed.extend(rows.into_iter().map(|row| (row, term.clone())));
            }
        }
        unkeyed.sort_unstable_by_key(|(row, _)| *row);
        Ok(DecodedColumn { refs, unkeyed })
    }

    fn get(&self, row: usize) -> Option<TermRef<'_>> {
        self.refs.get(row).or_else(|| {
            self.unkeyed
                .binary_search_by_key(&row, |(r, _)| *r)
                .ok()
                .map(|k| self.unkeyed[k].1.as_ref())
        })
    }
}

impl RowBatch {
    /// A batch of rows decoded already (a writer's tests make their own).
    pub fn from_rows(rows: Vec<SolutionRow>) -> RowBatch {
        RowBatch(Rows::Owned(rows))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Rows::Ids { len, .. } => *len,
            Rows::Owned(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cuts the batch after `at` rows and returns the rest (for a page
    /// that ends within the batch; see [`SolutionStream::hand_back`]).
    ///
    /// [`SolutionStream::hand_back`]: super::SolutionStream::hand_back
    pub fn split_off(&mut self, at: usize) -> RowBatch {
        match &mut self.0 {
            Rows::Ids {
                columns, len, ctx, ..
            } => {
                let at = at.min(*len);
                let tail = columns
                    .iter_mut()
                    .map(|column| column.split_off(at))
                    .collect();
                let tail_len = *len - at;
                *len = at;
                // Whole-batch decoding (`prepare`) stays with the head: its
                // rows are a prefix of what was decoded.
                RowBatch(Rows::Ids {
                    columns: tail,
                    len: tail_len,
                    ctx: Arc::clone(ctx),
                    decoded: None,
                })
            }
            Rows::Owned(rows) => RowBatch(Rows::Owned(rows.split_off(at.min(rows.len())))),
        }
    }

    /// The rows as terms, each a `Term` of its own (for the few rows a
    /// suspension hands out).
    pub(super) fn into_rows(self) -> Result<Vec<SolutionRow>, EngineError> {
        if let Rows::Owned(rows) = self.0 {
            return Ok(rows);
        }
        let terms = self.decode(0..self.len())?;
        let mut out = Vec::new();
        Ok((0..terms.len())
            .map(|i| {
                terms.row(i, &mut out);
                out.iter().map(|t| t.map(TermRef::into_owned)).collect()
            })
            .collect())
    }

    /// Whether [`prepare`](Self::prepare) has work to do: a long batch of
    /// IDs not decoded yet.
    pub fn decodes_whole(&self) -> bool {
        matches!(&self.0, Rows::Ids { len, decoded: None, .. } if *len >= WHOLE_DECODE_ROWS)
    }

    /// Whether the batch was decoded whole (by [`prepare`](Self::prepare)).
    pub fn decoded_whole(&self) -> bool {
        matches!(
            &self.0,
            Rows::Ids {
                decoded: Some(_),
                ..
            }
        )
    }

    /// Decodes every column of a long batch whole, now (on all cores), so
    /// that [`decode`](Self::decode) only hands out slices of it. Asked for
    /// all at once, the vocabulary reads the terms of a column in its own
    /// order and decodes each block once for the batch (see
    /// `tern_index::Vocabulary::key_refs`), where slices asked for one by
    /// one decode a block per term once the vocabulary is larger than its
    /// cache: a full export of BSBM 10M (2.7 M terms) with the default cache.
    /// What it holds is the text of the batch's terms.
    pub fn prepare(&mut self) -> Result<(), EngineError> {
        let Rows::Ids {
            columns,
            len,
            ctx,
            decoded,
        } = &mut self.0
        else {
            return Ok(());
        };
        if *len < WHOLE_DECODE_ROWS || decoded.is_some() {
            return Ok(());
        }
        use rayon::prelude::*;
        let whole = columns
            .par_iter()
            .map(|column| DecodedColumn::of(ctx, column))
            .collect::<Result<Vec<_>, _>>()?;
        *decoded = Some(Arc::new(whole));
        Ok(())
    }

    /// The terms of rows `rows` (row 0 of the result is row `rows.start` of
    /// this batch).
    pub fn decode(&self, rows: std::ops::Range<usize>) -> Result<TermBatch, EngineError> {
        let (columns, ctx, decoded) = match &self.0 {
            Rows::Ids {
                columns,
                ctx,
                decoded,
                ..
            } => (columns, ctx, decoded),
            Rows::Owned(owned) => return Ok(TermBatch(Terms::Owned(owned[rows].to_vec()))),
        };
        let (columns, offset) = match decoded {
            Some(whole) => (Arc::clone(whole), rows.start),
            None => {
                let slices = columns
                    .iter()
                    .map(|column| DecodedColumn::of(ctx, &column[rows.clone()]))
                    .collect::<Result<Vec<_>, _>>()?;
                (Arc::new(slices), 0)
            }
        };
        Ok(TermBatch(Terms::Borrowed {
            columns,
            offset,
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
        /// Decoded for these rows, or for the whole batch from `offset` on.
        columns: Arc<Vec<DecodedColumn>>,
        offset: usize,
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
            Terms::Borrowed {
                columns, offset, ..
            } => out.extend(columns.iter().map(|column| column.get(offset + i))),
            Terms::Owned(rows) => out.extend(rows[i].iter().map(|t| t.as_ref().map(Term::as_ref))),
        }
    }
}
