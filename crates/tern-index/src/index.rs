//! The read API the engine builds on: open an index, translate terms and IDs,
//! scan permutations and count bound prefixes.

use crate::error::{IndexError, IoContext, Result};
use crate::meta::{IndexMeta, FORMAT_VERSION, META_FILE};
use crate::permutation::{Permutation, PermutationReader, Row, ScanIter};
use crate::stats::{Statistics, STATS_FILE};
use crate::term_key::{self, Classified};
use crate::vocab::Vocabulary;
use crate::{inline, Id, Tag};
use oxrdf::{BlankNode, Literal, NamedNode, Term, TermRef};
use std::ops::Bound;
use std::path::{Path, PathBuf};

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
    vocab: Vocabulary,
    permutations: Vec<PermutationReader>,
}

impl Index {
    pub fn open(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref();
        let meta_path = dir.join(META_FILE);
        if !meta_path.exists() {
            return Err(IndexError::NotAnIndex {
                path: dir.to_owned(),
                reason: format!("no {META_FILE}"),
            });
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
        let permutations = Permutation::ALL
            .iter()
            .map(|&p| PermutationReader::open(dir, p))
            .collect::<Result<_>>()?;
        Ok(Index {
            dir: dir.to_owned(),
            meta,
            stats,
            vocab: Vocabulary::open(dir)?,
            permutations,
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
            Classified::Vocab => Ok(self.vocab.find(&key)?.map(Id::vocab)),
        }
    }

    /// The term of an ID; `None` for [`Id::UNDEFINED`] and per-query IDs.
    pub fn term_of(&self, id: Id) -> Result<Option<Term>> {
        Ok(self.terms_of(&[id])?.pop().flatten())
    }

    /// Terms of many IDs, decoding each vocabulary block once.
    pub fn terms_of(&self, ids: &[Id]) -> Result<Vec<Option<Term>>> {
        let vocab_indexes: Vec<u64> = ids
            .iter()
            .filter(|id| id.tag() == Tag::Vocab)
            .map(|id| id.payload())
            .collect();
        let mut keys = self.vocab.keys(&vocab_indexes)?.into_iter();
        ids.iter()
            .map(|&id| {
                Ok(match id.tag() {
                    Tag::Undefined | Tag::LocalVocab => None,
                    Tag::BlankNode => Some(
                        BlankNode::new_unchecked(term_key::blank_node_label(id.payload())).into(),
                    ),
                    Tag::Vocab => {
                        let key = keys.next().unwrap_or_default();
                        Some(
                            term_key::key_to_term(&key).map_err(|e| IndexError::Corrupt {
                                path: self.dir.clone(),
                                reason: format!("{e} for {id:?}"),
                            })?,
                        )
                    }
                    _ => {
                        let mut lexical = String::new();
                        inline::write_lexical(id, &mut lexical);
                        let datatype = inline::datatype(id).unwrap_or(inline::XSD_INTEGER);
                        Some(
                            Literal::new_typed_literal(lexical, NamedNode::new_unchecked(datatype))
                                .into(),
                        )
                    }
                })
            })
            .collect()
    }

    /// Scans `perm` for rows starting with `prefix` (0–3 IDs) whose next column is
    /// in `range`. Batches come in permutation column order, sorted.
    pub fn scan(&self, perm: Permutation, prefix: &[Id], range: ScanRange) -> ScanIter {
        let (lo, hi) = bounds(prefix, range).unwrap_or(([u64::MAX; 4], [0; 4]));
        self.permutation(perm).scan_rows(lo, hi)
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
