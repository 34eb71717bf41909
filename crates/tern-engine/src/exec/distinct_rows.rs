//! The distinct rows of a union read whole (see [`super::UnionScan`]):
//! one-column rows of the base vocabulary as bits, wider rows sorted and
//! deduplicated as they grow, sameAs synonyms added once at the end.

use super::union_of_patterns::{dedup_sorted, UnionRow};
use crate::context::{QueryContext, SynonymTable};
use tern_index::{Id, Tag};

/// Distinct rows gathered from many branches. One-column rows of the
/// base vocabulary (most classes' instances) are kept as bits, one per
/// term: no sorting, no hashing, a few hundred KB per million terms; other
/// rows are sorted and deduplicated as they grow.
pub struct DistinctRows {
    width: usize,
    bits: Vec<u64>,
    vocabulary: u64,
    rows: Vec<UnionRow>,
    /// Rows in `rows` when it is next sorted and deduplicated.
    compact_at: usize,
    /// Values whose synonyms are still to be added (see
    /// [`add_with_synonyms`](Self::add_with_synonyms)), as bits and, out of
    /// the base vocabulary, as a list.
    synonym_bits: Vec<u64>,
    expand_later: Vec<Id>,
}

impl DistinctRows {
    pub fn new(ctx: &QueryContext, width: usize) -> DistinctRows {
        let vocabulary = match width {
            1 => ctx.index.base().vocabulary().len(),
            _ => 0,
        };
        DistinctRows {
            width,
            bits: vec![0; vocabulary.div_ceil(64) as usize],
            vocabulary,
            rows: Vec::new(),
            compact_at: 1 << 16,
            synonym_bits: Vec::new(),
            expand_later: Vec::new(),
        }
    }

    /// Columns of its rows.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Takes one value of a one-column union.
    #[inline]
    pub fn add_value(&mut self, id: Id) {
        debug_assert_eq!(self.width, 1);
        if id.tag() == Tag::Vocab && id.payload() < self.vocabulary {
            let p = id.payload() as usize;
            self.bits[p / 64] |= 1 << (p % 64);
        } else {
            self.rows
                .push([id, Id::UNDEFINED, Id::UNDEFINED, Id::UNDEFINED]);
            if self.rows.len() >= self.compact_at {
                self.compact();
                self.compact_at = (self.rows.len() * 2).max(1 << 16);
            }
        }
    }

    /// Takes one value of a one-column union that stands for all its
    /// sameAs synonyms: marked, and its synonyms added once at the end
    /// ([`expand_synonyms`](Self::expand_synonyms)) instead of per row.
    #[inline]
    pub fn add_with_synonyms(&mut self, id: Id) {
        if id.tag() == Tag::Vocab && id.payload() < self.vocabulary {
            if self.synonym_bits.is_empty() {
                self.synonym_bits = vec![0; self.bits.len()];
            }
            let p = id.payload() as usize;
            self.synonym_bits[p / 64] |= 1 << (p % 64);
        } else {
            self.expand_later.push(id);
        }
    }

    /// Adds every synonym of the values taken by
    /// [`add_with_synonyms`](Self::add_with_synonyms): one pass over the
    /// synonym table.
    pub fn expand_synonyms(&mut self, table: &SynonymTable) {
        let later = std::mem::take(&mut self.expand_later);
        let marks = std::mem::take(&mut self.synonym_bits);
        let marked = |id: Id| {
            let p = id.payload() as usize;
            id.tag() == Tag::Vocab
                && id.payload() < self.vocabulary
                && marks[p / 64] & (1 << (p % 64)) != 0
        };
        let mut found = Vec::new();
        if !marks.is_empty() {
            for (member, class) in table.classes() {
                if marked(member) {
                    found.extend_from_slice(class);
                }
            }
        }
        for id in later {
            match table.class_of(id) {
                Some(class) => found.extend_from_slice(class),
                None => found.push(id),
            }
        }
        for (word, bits) in self.bits.iter_mut().zip(&marks) {
            *word |= bits;
        }
        found.into_iter().for_each(|id| self.add_value(id));
    }

    /// Takes the rows of `chunk`.
    pub fn add(&mut self, chunk: &mut Vec<UnionRow>) {
        if self.width == 1 {
            for row in chunk.drain(..) {
                let id = row[0];
                if id.tag() == Tag::Vocab && id.payload() < self.vocabulary {
                    let p = id.payload() as usize;
                    self.bits[p / 64] |= 1 << (p % 64);
                } else {
                    self.rows.push(row);
                }
            }
        } else {
            self.rows.append(chunk);
        }
        if self.rows.len() >= self.compact_at {
            self.compact();
            self.compact_at = (self.rows.len() * 2).max(1 << 16);
        }
    }

    fn compact(&mut self) {
        self.rows.sort_unstable();
        let distinct = dedup_sorted(&mut self.rows);
        self.rows.truncate(distinct);
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        (self.bits.len() + self.synonym_bits.len() + self.expand_later.len()) * 8
            + self.rows.capacity() * std::mem::size_of::<UnionRow>()
    }

    /// The distinct rows, as columns.
    pub fn finish(mut self) -> super::Batch {
        self.compact();
        let mut out = super::Batch::with_columns(self.width);
        for (word, &bits) in self.bits.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let bit = rest.trailing_zeros() as u64;
                rest &= rest - 1;
                out.columns[0].push(Id::new(Tag::Vocab, word as u64 * 64 + bit));
            }
        }
        for row in &self.rows {
            for (column, id) in out.columns.iter_mut().zip(row) {
                column.push(*id);
            }
        }
        out.len = out.columns.first().map_or(self.rows.len(), Vec::len);
        out
    }

    /// Takes everything `other` gathered (a sink of another thread).
    pub fn merge(&mut self, other: DistinctRows) {
        for (word, bits) in self.bits.iter_mut().zip(&other.bits) {
            *word |= bits;
        }
        if !other.synonym_bits.is_empty() {
            if self.synonym_bits.is_empty() {
                self.synonym_bits = other.synonym_bits;
            } else {
                for (word, bits) in self.synonym_bits.iter_mut().zip(&other.synonym_bits) {
                    *word |= bits;
                }
            }
        }
        self.expand_later.extend(other.expand_later);
        let mut rows = other.rows;
        self.add(&mut rows);
    }
}
