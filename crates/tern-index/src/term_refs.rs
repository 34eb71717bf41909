//! Terms of many IDs written out side by side ([`TermRefs`]): how results
//! are decoded for writing, without a `Term` (and its strings) per value.

use crate::error::Result;
use crate::index::Index;
use crate::term_key::{self, KeyParts};
use crate::{inline, Id, Tag};
use oxrdf::{BlankNodeRef, LiteralRef, NamedNodeRef, TermRef};

impl Index {
    /// Terms of many IDs, their text side by side in one buffer: like
    /// [`terms_of`](Self::terms_of) without making a `Term` (and its strings)
    /// per ID, for writing results out.
    ///
    /// An ID seen lately shares the slot of its first row: a column in scan
    /// order repeats its values in runs (a subject for each of its triples),
    /// and columns such as predicates and classes repeat a few values all
    /// over; each is looked up, checked and copied once (see [`Repeats`]).
    pub fn term_refs(&self, ids: &[Id]) -> Result<TermRefs> {
        let mut repeats = Repeats::default();
        let sources: Vec<Source> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| repeats.source(i, id))
            .collect();
        let indexes: Vec<u64> = ids
            .iter()
            .zip(&sources)
            .filter(|(id, source)| id.tag() == Tag::Vocab && matches!(source, Source::New))
            .map(|(id, _)| id.payload())
            .collect();
        let keys = self.vocab.key_refs(&indexes)?;
        // Room for the keys and, per row, an inline value or a label: a
        // column of long texts outgrew a guess per row and was copied again
        // as it grew.
        let mut text = String::with_capacity(keys.bytes() + ids.len() * 24);
        let mut slots: Vec<Slot> = Vec::with_capacity(ids.len());
        let mut next = 0;
        for (&id, source) in ids.iter().zip(sources) {
            if let Source::Row(row) = source {
                slots.push(slots[row]);
                continue;
            }
            let start = text.len();
            slots.push(match id.tag() {
                Tag::Undefined | Tag::LocalVocab | Tag::DeltaVocab => Slot::None,
                Tag::BlankNode => {
                    term_key::write_blank_node_label(id.payload(), &mut text);
                    Slot::Blank {
                        label: (start, text.len()),
                    }
                }
                Tag::Vocab => {
                    keys.touch(next + KEYS_AHEAD);
                    let (key, parts, escaped) = self.checked_key(id, &keys, next, &mut text)?;
                    let value = escaped.then_some((start, text.len()));
                    next += 1;
                    let key_start = text.len();
                    text.push_str(key);
                    Slot::Key {
                        key: (key_start, text.len()),
                        parts,
                        value,
                    }
                }
                _ => {
                    inline::write_lexical(id, &mut text);
                    Slot::Inline {
                        lexical: (start, text.len()),
                        datatype: inline::datatype(id).unwrap_or(inline::XSD_INTEGER),
                    }
                }
            });
        }
        Ok(TermRefs { text, slots })
    }
}

/// How far ahead [`Index::term_refs`] touches keys.
const KEYS_AHEAD: usize = 8;

/// Where [`Index::term_refs`] finds the term of a row.
#[derive(Clone, Copy)]
enum Source {
    /// Decoded for this row.
    New,
    /// The same ID as this earlier row.
    Row(usize),
}

/// IDs seen lately, in a small table indexed by a hash of the ID (a new ID
/// takes the place of the one there): one multiply and one compare a row,
/// where a hash map of every ID of a batch costs more than most lookups
/// it saves. A column's few frequent values (predicates, classes, a
/// country) stay in it; a column of distinct values costs the compare.
struct Repeats {
    seen: [(Id, u32); REPEATS],
}

/// Slots of [`Repeats`] (a power of two).
const REPEATS: usize = 256;

impl Default for Repeats {
    fn default() -> Repeats {
        Repeats {
            seen: [(Id::UNDEFINED, 0); REPEATS],
        }
    }
}

impl Repeats {
    /// The source of row `row`'s ID `id`, which is remembered if new.
    fn source(&mut self, row: usize, id: Id) -> Source {
        if id == Id::UNDEFINED || row > u32::MAX as usize {
            return Source::New;
        }
        // The product's top bits, as many as index the table.
        let at =
            (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - REPEATS.trailing_zeros())) as usize;
        let (seen, first) = self.seen[at];
        if seen == id {
            return Source::Row(first as usize);
        }
        self.seen[at] = (id, row as u32);
        Source::New
    }
}

/// Terms of many IDs, their text side by side in one buffer (see
/// [`Index::term_refs`]).
pub struct TermRefs {
    /// Keys, escaped literal values unescaped, inline values and blank node
    /// labels, in row order. Keys are copied here even when the vocabulary
    /// has copied them already (in its own order): a writer then reads one
    /// buffer front to back. Keeping the vocabulary's copy instead, read in
    /// row order all over, measured no faster on a full export of BSBM 10M.
    text: String,
    slots: Vec<Slot>,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    None,
    /// A key, checked and copied into `text`; so is an escaped literal
    /// value's unescaped form.
    Key {
        key: (usize, usize),
        parts: KeyParts,
        value: Option<(usize, usize)>,
    },
    Blank {
        label: (usize, usize),
    },
    Inline {
        lexical: (usize, usize),
        datatype: &'static str,
    },
}

impl TermRefs {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The term of the `i`-th ID; `None` for [`Id::UNDEFINED`] and per-query IDs.
    pub fn get(&self, i: usize) -> Option<TermRef<'_>> {
        Some(match self.slots[i] {
            Slot::None => return None,
            Slot::Key { key, parts, value } => term_key::term_ref(
                self.text_at(key),
                parts,
                value.map(|range| self.text_at(range)),
            ),
            Slot::Blank { label } => BlankNodeRef::new_unchecked(self.text_at(label)).into(),
            Slot::Inline { lexical, datatype } => LiteralRef::new_typed_literal(
                self.text_at(lexical),
                NamedNodeRef::new_unchecked(datatype),
            )
            .into(),
        })
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<TermRef<'_>>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    fn text_at(&self, (start, end): (usize, usize)) -> &str {
        &self.text[start..end]
    }

    /// Sets the `i`-th term to the one stored under vocabulary key `key`
    /// (for terms the base vocabulary does not hold).
    /// Gives rows `rows` the term `term`, which the index does not hold (a
    /// term a query made): written once, shared by the rows. False for a
    /// term with no vocabulary key (a blank node, an inline value): the
    /// caller keeps it aside.
    pub fn set_term(&mut self, rows: &[usize], term: TermRef<'_>) -> bool {
        let Some(&first) = rows.first() else {
            return true;
        };
        let Some(key) = term_key::key_of(term).and_then(|k| String::from_utf8(k).ok()) else {
            return false;
        };
        if self.set_key(first, &key).is_err() {
            return false;
        }
        let slot = self.slots[first];
        for &row in &rows[1..] {
            self.slots[row] = slot;
        }
        true
    }

    pub(crate) fn set_key(&mut self, i: usize, key: &str) -> Result<(), term_key::CorruptKey> {
        let parts = term_key::key_parts(key)?;
        let start = self.text.len();
        let value = match parts {
            KeyParts::Literal {
                value_end,
                escaped: true,
                ..
            } => {
                term_key::unescape_into(&key.as_bytes()[1..value_end], &mut self.text)?;
                Some((start, self.text.len()))
            }
            _ => None,
        };
        let key_start = self.text.len();
        self.text.push_str(key);
        self.slots[i] = Slot::Key {
            key: (key_start, self.text.len()),
            parts,
            value,
        };
        Ok(())
    }
}
