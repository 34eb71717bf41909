//! The distinct rows of a union read whole (see [`super::UnionScan`]):
//! one-column rows of the base vocabulary as bits, wider rows sorted and
//! deduplicated as they grow, sameAs synonyms added once at the end.

use super::union_of_patterns::{dedup_sorted, UnionRow};
use crate::context::{QueryContext, SynonymTable};
use crate::suspend::StashSize;
use tern_index::{Id, Tag};

/// Words of one chunk of a [`ChunkedBits`]: 64 Ki bits, 8 KiB.
const CHUNK_WORDS: usize = 1024;

/// A bit per vocabulary term, in chunks made when a bit in them is first
/// set: a union of a few hundred values touches a few pages, not a bit
/// set of the whole vocabulary (each fresh page a fault).
#[derive(Default)]
struct ChunkedBits {
    chunks: Vec<Option<Box<[u64; CHUNK_WORDS]>>>,
}

impl ChunkedBits {
    fn new(bits: u64) -> ChunkedBits {
        let chunks = (bits as usize).div_ceil(CHUNK_WORDS * 64);
        ChunkedBits {
            chunks: (0..chunks).map(|_| None).collect(),
        }
    }

    #[inline]
    fn set(&mut self, p: usize) {
        let chunk =
            self.chunks[p / (CHUNK_WORDS * 64)].get_or_insert_with(|| Box::new([0; CHUNK_WORDS]));
        chunk[(p / 64) % CHUNK_WORDS] |= 1 << (p % 64);
    }

    fn get(&self, p: usize) -> bool {
        self.chunks
            .get(p / (CHUNK_WORDS * 64))
            .and_then(Option::as_ref)
            .is_some_and(|c| c[(p / 64) % CHUNK_WORDS] & (1 << (p % 64)) != 0)
    }

    fn is_empty(&self) -> bool {
        self.chunks.iter().all(Option::is_none)
    }

    /// Sets every bit `other` has.
    fn union(&mut self, other: ChunkedBits) {
        if self.chunks.len() < other.chunks.len() {
            self.chunks.resize_with(other.chunks.len(), || None);
        }
        for (mine, theirs) in self.chunks.iter_mut().zip(other.chunks) {
            match (mine.as_mut(), theirs) {
                (_, None) => {}
                (None, theirs) => *mine = theirs,
                (Some(mine), Some(theirs)) => {
                    for (word, bits) in mine.iter_mut().zip(theirs.iter()) {
                        *word |= bits;
                    }
                }
            }
        }
    }

    fn bytes(&self) -> usize {
        self.chunks.len() * 8 + self.chunks.iter().flatten().count() * CHUNK_WORDS * 8
    }

    /// The set bits, in order.
    fn each(&self, mut f: impl FnMut(u64)) {
        for (c, chunk) in self.chunks.iter().enumerate() {
            let Some(chunk) = chunk else { continue };
            for (w, &bits) in chunk.iter().enumerate() {
                let mut rest = bits;
                while rest != 0 {
                    let bit = rest.trailing_zeros() as u64;
                    rest &= rest - 1;
                    f(((c * CHUNK_WORDS + w) * 64) as u64 + bit);
                }
            }
        }
    }
}

/// Distinct rows gathered from many branches. One-column rows of the
/// base vocabulary (most classes' instances) are kept as bits, one per
/// term: no sorting, no hashing, a few hundred KB per million terms; other
/// rows are sorted and deduplicated as they grow.
pub struct DistinctRows {
    width: usize,
    bits: ChunkedBits,
    vocabulary: u64,
    rows: Vec<UnionRow>,
    /// Rows in `rows` when it is next sorted and deduplicated.
    compact_at: usize,
    /// Values whose synonyms are still to be added (see
    /// [`add_with_synonyms`](Self::add_with_synonyms)), as bits and, out of
    /// the base vocabulary, as a list.
    synonym_bits: ChunkedBits,
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
            bits: ChunkedBits::new(vocabulary),
            vocabulary,
            rows: Vec::new(),
            compact_at: 1 << 16,
            synonym_bits: ChunkedBits::new(vocabulary),
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
            self.bits.set(id.payload() as usize);
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
            self.synonym_bits.set(id.payload() as usize);
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
        let marked = |id: Id| id.tag() == Tag::Vocab && marks.get(id.payload() as usize);
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
        self.bits.union(marks);
        found.into_iter().for_each(|id| self.add_value(id));
    }

    /// Takes the rows of `chunk`.
    pub fn add(&mut self, chunk: &mut Vec<UnionRow>) {
        if self.width == 1 {
            for row in chunk.drain(..) {
                let id = row[0];
                if id.tag() == Tag::Vocab && id.payload() < self.vocabulary {
                    self.bits.set(id.payload() as usize);
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
        // A stable sort finds the sorted runs the rows come in (each pattern
        // is read in an order sorted on its output, and the rows kept so far
        // are one run) and merges them: on LUBM query 2 (885 K rows of
        // three patterns) sorting fell from 28% to 13% of the query's CPU.
        // Its scratch space (up to half the rows) is not charged.
        self.rows.sort();
        let distinct = dedup_sorted(&mut self.rows);
        self.rows.truncate(distinct);
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bits.bytes()
            + self.synonym_bits.bytes()
            + self.expand_later.len() * 8
            + self.rows.capacity() * std::mem::size_of::<UnionRow>()
    }

    /// The distinct rows, as columns.
    pub fn finish(mut self) -> super::Batch {
        self.compact();
        let mut out = super::Batch::with_columns(self.width);
        self.bits
            .each(|p| out.columns[0].push(Id::new(Tag::Vocab, p)));
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
        self.bits.union(other.bits);
        self.synonym_bits.union(other.synonym_bits);
        self.expand_later.extend(other.expand_later);
        let mut rows = other.rows;
        self.add(&mut rows);
    }
}

impl StashSize for DistinctRows {
    fn stash_bytes(&self) -> usize {
        self.bytes()
    }
}
