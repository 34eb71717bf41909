//! The read API the engine builds on: open an index, translate terms and IDs,
//! scan permutations and count bound prefixes.

use crate::error::{IndexError, IoContext, Result};
use crate::memo::Memo;
use crate::meta::{IndexMeta, FORMAT_VERSION, META_FILE};
use crate::permutation::{
    BlockCache, Lookup, Permutation, PermutationReader, Row, ScanIter, DEFAULT_BLOCK_CACHE_BYTES,
};
use crate::stats::{Statistics, STATS_FILE};
use crate::term_key::{self, Classified, KeyParts};
use crate::vocab::{Keys, Vocabulary};
use crate::{inline, Id, Tag};
use oxrdf::{BlankNode, Literal, NamedNode, Term, TermRef};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A range on the column that follows the bound prefix of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanRange {
    pub start: Bound<Id>,
    pub end: Bound<Id>,
}

impl ScanRange {
    pub const ALL: ScanRange = ScanRange {
        start: Bound::Unbounded,
        end: Bound::Unbounded,
    };

    pub fn is_all(&self) -> bool {
        *self == ScanRange::ALL
    }
}

/// An open index. Reading is thread-safe; share it behind an `Arc`.
pub struct Index {
    dir: PathBuf,
    meta: IndexMeta,
    stats: Statistics,
    pub(crate) vocab: Vocabulary,
    permutations: Vec<PermutationReader>,
    /// Decoded blocks of all five permutations.
    block_cache: Arc<BlockCache>,
    /// Vocabulary index of the first literal, found on first use.
    first_literal: std::sync::OnceLock<u64>,
    /// The named graphs and their sizes, found on first use.
    graph_quads: std::sync::OnceLock<Arc<[(Id, u64)]>>,
    /// The namespaces the data uses most, found on first use.
    namespaces: std::sync::OnceLock<Arc<[String]>>,
    /// Vocabulary keys looked up lately: the constants of queries.
    found_keys: Memo<Vec<u8>, Option<u64>>,
}

/// Vocabulary keys remembered with their index (or absence).
const FOUND_KEYS: usize = 4096;

/// The error for a directory without an index, saying how to make one.
pub(crate) fn not_an_index(dir: &Path) -> IndexError {
    let reason = if dir.is_dir() {
        format!("no {META_FILE}; build one with `tern load --index DIR FILES`")
    } else {
        "no such directory; build an index there with `tern load --index DIR FILES`".into()
    };
    IndexError::NotAnIndex {
        path: dir.to_owned(),
        reason,
    }
}

impl Index {
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref();
        let meta_path = dir.join(META_FILE);
        if !meta_path.exists() {
            return Err(not_an_index(dir));
        }
        let meta: IndexMeta = read_json(&meta_path)?;
        if meta.format_version != FORMAT_VERSION {
            return Err(IndexError::Version {
                path: dir.to_owned(),
                found: meta.format_version,
                expected: FORMAT_VERSION,
            });
        }
        let stats = read_json(&dir.join(STATS_FILE))?;
        let block_cache = Arc::new(BlockCache::new(DEFAULT_BLOCK_CACHE_BYTES));
        let permutations = Permutation::ALL
            .iter()
            .map(|&p| PermutationReader::open(dir, p, block_cache.clone()))
            .collect::<Result<_>>()?;
        Ok(Index {
            dir: dir.to_owned(),
            meta,
            stats,
            vocab: Vocabulary::open(dir)?,
            permutations,
            block_cache,
            first_literal: std::sync::OnceLock::new(),
            graph_quads: std::sync::OnceLock::new(),
            namespaces: std::sync::OnceLock::new(),
            found_keys: Memo::new(FOUND_KEYS),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    pub fn stats(&self) -> &Statistics {
        &self.stats
    }

    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    pub fn permutation(&self, perm: Permutation) -> &PermutationReader {
        &self.permutations[perm as usize]
    }

    /// Sets the memory for decoded blocks: of the vocabulary, and of the five
    /// permutations (one budget for all five). Caches only: with any budget every
    /// block can still be read, it is then decoded again.
    pub fn set_cache_budget(&self, vocabulary: usize, permutations: usize) {
        self.vocab.set_cache_budget(vocabulary);
        self.block_cache.set_budget(permutations);
    }

    /// Memory the caches of decoded blocks hold now: (vocabulary,
    /// permutations). Each stays within its budget.
    pub fn cache_bytes(&self) -> (usize, usize) {
        (self.vocab.cache_bytes(), self.block_cache.bytes())
    }

    /// Whether a vocabulary or inline ID stands for a literal (false for
    /// blank nodes, [`Id::UNDEFINED`] and per-query IDs, which the index
    /// does not know). IRI keys sort before literal keys, so the vocabulary's
    /// literals are the IDs from the first literal key on.
    pub fn is_literal(&self, id: Id) -> Result<bool> {
        Ok(match id.tag() {
            Tag::Undefined | Tag::BlankNode | Tag::LocalVocab | Tag::DeltaVocab => false,
            Tag::Vocab => id >= self.first_literal()?,
            _ => true,
        })
    }

    /// The graphs other than the default graph that hold a triple, sorted.
    pub fn named_graphs(&self) -> Result<Arc<[Id]>> {
        Ok(self.graph_quads()?.iter().map(|&(g, _)| g).collect())
    }

    /// The named graphs with their number of quads, sorted by graph. The
    /// graph is every permutation's last column, so finding them reads a
    /// whole permutation once; the index never changes, so that is once per
    /// process.
    pub fn graph_quads(&self) -> Result<Arc<[(Id, u64)]>> {
        if let Some(graphs) = self.graph_quads.get() {
            return Ok(graphs.clone());
        }
        let mut graphs: rustc_hash::FxHashMap<Id, u64> = rustc_hash::FxHashMap::default();
        if self.stats.named_graphs > 0 {
            for batch in self.scan(Permutation::Spo, &[], ScanRange::ALL) {
                for &g in &batch?.columns[3] {
                    if g != Id::DEFAULT_GRAPH {
                        *graphs.entry(g).or_default() += 1;
                    }
                }
            }
        }
        let mut graphs: Vec<(Id, u64)> = graphs.into_iter().collect();
        graphs.sort_unstable();
        Ok(self.graph_quads.get_or_init(|| graphs.into()).clone())
    }

    /// The IRI namespaces the data uses most, most used first (see
    /// [`crate::namespaces`]): what writers abbreviate with prefixes. The
    /// index never changes, so they are estimated once per process.
    pub fn frequent_namespaces(&self) -> Result<Arc<[String]>> {
        if let Some(namespaces) = self.namespaces.get() {
            return Ok(namespaces.clone());
        }
        let first_literal = self.first_literal()?.payload();
        let found = crate::namespaces::frequent(&self.stats, &self.vocab, first_literal)?;
        Ok(self.namespaces.get_or_init(|| found.into()).clone())
    }

    /// The ID of the vocabulary's first literal: vocabulary IDs from it on
    /// (up to [`Tag::LocalVocab`]) are literals, those before it IRIs.
    pub fn first_literal(&self) -> Result<Id> {
        let first = match self.first_literal.get() {
            Some(&first) => first,
            None => {
                let first = self.vocab.lower_bound(&[term_key::LITERAL])?;
                *self.first_literal.get_or_init(|| first)
            }
        };
        Ok(Id::new(Tag::Vocab, first))
    }

    /// The kind of a vocabulary term, without decoding it (for sorting by
    /// ID: see `vocab::TermKind`); none for other IDs, and for an index
    /// written without kinds.
    pub fn term_kind(&self, id: Id) -> Option<crate::vocab::TermKind> {
        (id.tag() == Tag::Vocab)
            .then(|| self.vocab.kind_of(id.payload()))
            .flatten()
    }

    /// The vocabulary IDs `[low, high)` of the literals whose lexical form
    /// starts with `prefix` (of every language and datatype; inline values
    /// never match: they are not strings).
    pub fn literal_prefix_ids(&self, prefix: &str) -> Result<(Id, Id)> {
        self.ids_between(term_key::literal_prefix_keys(prefix))
    }

    /// The IDs `[low, high)` of the IRIs that start with `prefix` (the
    /// vocabulary is sorted, so they are consecutive).
    pub fn iri_prefix_ids(&self, prefix: &str) -> Result<(Id, Id)> {
        self.ids_between(term_key::iri_prefix_keys(prefix))
    }

    fn ids_between(&self, (low, high): (Vec<u8>, Option<Vec<u8>>)) -> Result<(Id, Id)> {
        let low = self.vocab.lower_bound(&low)?;
        let high = match high {
            Some(high) => self.vocab.lower_bound(&high)?,
            None => self.vocab.len(),
        };
        Ok((Id::new(Tag::Vocab, low), Id::new(Tag::Vocab, high)))
    }

    /// The ID of a term, `None` when the index does not contain it. Inline values
    /// get their ID even if no triple uses them.
    pub fn id_of(&self, term: TermRef<'_>) -> Result<Option<Id>> {
        let mut key = Vec::new();
        match term_key::classify(term, &mut key) {
            Classified::Inline(id) => Ok(Some(id)),
            Classified::Blank(_) => Ok(match term {
                TermRef::BlankNode(b) => term_key::blank_node_number(b)
                    .filter(|&n| n < self.meta.blank_nodes)
                    .map(Id::blank_node),
                _ => None,
            }),
            Classified::Vocab => self.vocab_id(&key),
        }
    }

    /// The ID of the vocabulary term with key `key` (see `term_key`).
    pub(crate) fn vocab_id(&self, key: &[u8]) -> Result<Option<Id>> {
        if let Some(found) = self.found_keys.get(key) {
            return Ok(found.map(Id::vocab));
        }
        let found = self.vocab.find(key)?;
        self.found_keys.insert(key.to_vec(), found);
        Ok(found.map(Id::vocab))
    }

    /// The term of an ID; `None` for [`Id::UNDEFINED`] and per-query IDs.
    pub fn term_of(&self, id: Id) -> Result<Option<Term>> {
        Ok(self.terms_of(&[id])?.pop().flatten())
    }

    /// Terms of many IDs, decoding each vocabulary block at most once.
    pub fn terms_of(&self, ids: &[Id]) -> Result<Vec<Option<Term>>> {
        let keys = self.vocab.key_refs(&vocab_indexes(ids))?;
        let mut next = 0;
        let mut text = String::new();
        ids.iter()
            .map(|&id| {
                text.clear();
                Ok(match id.tag() {
                    Tag::Undefined | Tag::LocalVocab | Tag::DeltaVocab => None,
                    Tag::BlankNode => Some(
                        BlankNode::new_unchecked(term_key::blank_node_label(id.payload())).into(),
                    ),
                    Tag::Vocab => {
                        let (key, parts, escaped) = self.checked_key(id, &keys, next, &mut text)?;
                        next += 1;
                        let unescaped = escaped.then_some(text.as_str());
                        Some(term_key::term_ref(key, parts, unescaped).into_owned())
                    }
                    _ => {
                        inline::write_lexical(id, &mut text);
                        let datatype = inline::datatype(id).unwrap_or(inline::XSD_INTEGER);
                        Some(
                            Literal::new_typed_literal(
                                text.as_str(),
                                NamedNode::new_unchecked(datatype),
                            )
                            .into(),
                        )
                    }
                })
            })
            .collect()
    }

    /// The `n`-th of `keys`, the key of `id`, checked; an escaped literal
    /// value is unescaped at the end of `text` (and the flag says so).
    pub(crate) fn checked_key<'k>(
        &self,
        id: Id,
        keys: &'k Keys,
        n: usize,
        text: &mut String,
    ) -> Result<(&'k str, KeyParts, bool)> {
        let corrupt = |e: term_key::CorruptKey| IndexError::Corrupt {
            path: self.dir.clone(),
            reason: format!("{e} for {id:?}"),
        };
        let key = keys
            .get_str(n)
            .ok_or(term_key::CorruptKey)
            .map_err(corrupt)?;
        let parts = term_key::key_parts(key).map_err(corrupt)?;
        Ok(match parts {
            KeyParts::Literal {
                value_end,
                escaped: true,
                ..
            } => {
                term_key::unescape_into(&key.as_bytes()[1..value_end], text).map_err(corrupt)?;
                (key, parts, true)
            }
            _ => (key, parts, false),
        })
    }

    /// Scans `perm` for rows starting with `prefix` (0–3 IDs) whose next column is
    /// in `range`. Batches come in permutation column order, sorted.
    pub fn scan(&self, perm: Permutation, prefix: &[Id], range: ScanRange) -> ScanIter {
        let (lo, hi) = bounds(prefix, range).unwrap_or(([u64::MAX; 4], [0; 4]));
        self.permutation(perm).scan_rows(lo, hi)
    }

    /// Rows cutting a [`scan`](Self::scan) into `parts` of about equal
    /// rows, at changes of the value after the prefix (see
    /// [`PermutationReader::split_rows`]).
    pub fn split_scan(
        &self,
        perm: Permutation,
        prefix: &[Id],
        range: ScanRange,
        parts: usize,
    ) -> Result<Vec<Row>> {
        match bounds(prefix, range) {
            None => Ok(Vec::new()),
            Some((lo, hi)) => self
                .permutation(perm)
                .split_rows(&lo, &hi, parts, prefix.len() + 1),
        }
    }

    /// Repeated small scans of `perm` (see [`Lookup`]); give each
    /// [`bounds`](Self::bounds) of a prefix.
    pub fn lookup(&self, perm: Permutation) -> Lookup {
        Lookup::new(self.permutation(perm).clone())
    }

    /// Inclusive row bounds of the rows a [`scan`](Self::scan) with the same
    /// arguments returns; `None` when the range is empty.
    pub fn bounds(prefix: &[Id], range: ScanRange) -> Option<(Row, Row)> {
        bounds(prefix, range)
    }

    /// Exact number of rows a [`scan`](Self::scan) with the same arguments returns.
    pub fn count(&self, perm: Permutation, prefix: &[Id], range: ScanRange) -> Result<u64> {
        let k = (prefix.len() + usize::from(!range.is_all())).min(4);
        match bounds(prefix, range) {
            None => Ok(0),
            Some((lo, hi)) => self.permutation(perm).count_rows(lo, hi, k),
        }
    }
}

/// The vocabulary indexes of the vocabulary IDs among `ids`.
fn vocab_indexes(ids: &[Id]) -> Vec<u64> {
    ids.iter()
        .filter(|id| id.tag() == Tag::Vocab)
        .map(|id| id.payload())
        .collect()
}

/// Inclusive row bounds of a prefix and range; `None` if the range is empty.
fn bounds(prefix: &[Id], range: ScanRange) -> Option<(Row, Row)> {
    assert!(prefix.len() <= 4, "a prefix has at most four columns");
    let mut lo = [0u64; 4];
    let mut hi = [u64::MAX; 4];
    for (c, id) in prefix.iter().enumerate() {
        lo[c] = id.0;
        hi[c] = id.0;
    }
    if prefix.len() < 4 {
        let c = prefix.len();
        lo[c] = match range.start {
            Bound::Unbounded => 0,
            Bound::Included(id) => id.0,
            Bound::Excluded(id) => id.0.checked_add(1)?,
        };
        hi[c] = match range.end {
            Bound::Unbounded => u64::MAX,
            Bound::Included(id) => id.0,
            Bound::Excluded(id) => id.0.checked_sub(1)?,
        };
        if lo[c] > hi[c] {
            return None;
        }
    }
    Some((lo, hi))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read(path).at(path)?;
    serde_json::from_slice(&text).map_err(|e| IndexError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}
