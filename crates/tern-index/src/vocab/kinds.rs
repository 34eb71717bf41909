//! The kind of every vocabulary term, as runs of consecutive entries of one
//! kind (`vocab.kinds`), so that whoever sorts IDs can tell without
//! decoding a term whether ID order is its order.
//!
//! Keys sort literals by lexical form first, then language tag or datatype
//! (`term_key`), while SPARQL's ORDER BY groups literals by kind (strings,
//! language strings, numbers, dates…) and compares numbers and dates by
//! value. Among literals of one kind that compare by lexical form (simple
//! strings; language strings; literals of a datatype that is not XML
//! Schema's) the two orders agree, so a column of such IDs sorts by ID.
//! Literals of XML Schema datatypes (numbers, dates, booleans that are not
//! in canonical form, so not inline) are "valued": never sorted by ID.
//!
//! The file is a sorted list of little-endian u64s, one per run: the run's
//! first entry, with its kind in the top 3 bits. An index written before
//! this file existed has none, and nothing is sorted by ID there.

use crate::error::{IoContext, Result};
use crate::term_key::LITERAL;
use memmap2::Mmap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub(crate) const KINDS_FILE: &str = "vocab.kinds";

/// What a vocabulary term is, as far as ordering goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TermKind {
    Iri = 0,
    /// A simple literal (or `xsd:string`).
    SimpleLiteral = 1,
    LanguageLiteral = 2,
    /// A literal of a datatype outside XML Schema's namespace.
    OtherLiteral = 3,
    /// A literal of an XML Schema datatype other than `xsd:string`.
    ValuedLiteral = 4,
}

impl TermKind {
    fn from_bits(bits: u64) -> Option<TermKind> {
        Some(match bits {
            0 => TermKind::Iri,
            1 => TermKind::SimpleLiteral,
            2 => TermKind::LanguageLiteral,
            3 => TermKind::OtherLiteral,
            4 => TermKind::ValuedLiteral,
            _ => return None,
        })
    }

    /// The kind of the term stored under `key`.
    pub fn of_key(key: &[u8]) -> TermKind {
        if key.first() != Some(&LITERAL) {
            return TermKind::Iri;
        }
        // Escaped values hold no 0x00: the first one ends the value.
        let Some(end) = key.iter().position(|&b| b == 0) else {
            return TermKind::ValuedLiteral; // not a key we write; never by ID
        };
        match &key[end + 1..] {
            [] => TermKind::SimpleLiteral,
            [b'@', ..] => TermKind::LanguageLiteral,
            [b'^', datatype @ ..]
                if !datatype.starts_with(b"http://www.w3.org/2001/XMLSchema#") =>
            {
                TermKind::OtherLiteral
            }
            _ => TermKind::ValuedLiteral,
        }
    }
}

const KIND_SHIFT: u32 = 61;
const ENTRY_MASK: u64 = (1 << KIND_SHIFT) - 1;

/// Writes the runs as the vocabulary's keys are pushed, in order.
pub(crate) struct KindRunsWriter {
    path: PathBuf,
    file: BufWriter<File>,
    last: Option<TermKind>,
}

impl KindRunsWriter {
    pub fn create(dir: &Path) -> Result<KindRunsWriter> {
        let path = dir.join(KINDS_FILE);
        let file = File::create(&path).map(BufWriter::new).at(&path)?;
        Ok(KindRunsWriter {
            path,
            file,
            last: None,
        })
    }

    /// Entry `index` (the next one) has `kind`.
    pub fn push(&mut self, index: u64, kind: TermKind) -> Result<()> {
        if self.last != Some(kind) {
            let run = (kind as u64) << KIND_SHIFT | (index & ENTRY_MASK);
            self.file.write_all(&run.to_le_bytes()).at(&self.path)?;
            self.last = Some(kind);
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.file.flush().at(&self.path)
    }
}

/// The runs of an open vocabulary (none for an index without the file).
pub(crate) struct KindRuns {
    runs: Option<Mmap>,
}

impl KindRuns {
    pub fn open(dir: &Path) -> Result<KindRuns> {
        let path = dir.join(KINDS_FILE);
        if !path.exists() {
            return Ok(KindRuns { runs: None });
        }
        let file = File::open(&path).at(&path)?;
        // SAFETY: index files are written once, renamed into place and never modified.
        let runs = unsafe { Mmap::map(&file) }.at(&path)?;
        Ok(KindRuns { runs: Some(runs) })
    }

    /// The kind of entry `index`; none when the index has no runs (or they
    /// are damaged: then nothing relies on them).
    pub fn kind_of(&self, index: u64) -> Option<TermKind> {
        let runs = self.runs.as_deref()?;
        let count = runs.len() / 8;
        let run = |i: usize| u64::from_le_bytes(runs[i * 8..i * 8 + 8].try_into().unwrap());
        // The last run starting at or before `index`.
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = (low + high) / 2;
            if run(middle) & ENTRY_MASK <= index {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        let found = run(low.checked_sub(1)?);
        TermKind::from_bits(found >> KIND_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term_key::key_of;
    use oxrdf::{Literal, NamedNode, Term};

    #[test]
    fn keys_tell_their_kind() {
        let kind = |term: Term| TermKind::of_key(&key_of(term.as_ref()).unwrap());
        let iri = NamedNode::new_unchecked("http://example.org/a");
        assert_eq!(kind(iri.clone().into()), TermKind::Iri);
        assert_eq!(
            kind(Literal::new_simple_literal("a").into()),
            TermKind::SimpleLiteral
        );
        let xsd = |name: &str| {
            NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{name}"))
        };
        assert_eq!(
            kind(Literal::new_typed_literal("a", xsd("string")).into()),
            TermKind::SimpleLiteral
        );
        assert_eq!(
            kind(Literal::new_language_tagged_literal_unchecked("a", "en").into()),
            TermKind::LanguageLiteral
        );
        assert_eq!(
            kind(Literal::new_typed_literal("12.5", iri).into()),
            TermKind::OtherLiteral
        );
        for (value, datatype) in [
            ("010", "integer"),
            ("1.50", "decimal"),
            ("2020-1-1", "date"),
        ] {
            assert_eq!(
                kind(Literal::new_typed_literal(value, xsd(datatype)).into()),
                TermKind::ValuedLiteral
            );
        }
    }

    #[test]
    fn runs_answer_for_every_entry() {
        let dir = tempfile::tempdir().unwrap();
        let kinds = [
            TermKind::Iri,
            TermKind::Iri,
            TermKind::SimpleLiteral,
            TermKind::ValuedLiteral,
            TermKind::SimpleLiteral,
            TermKind::SimpleLiteral,
            TermKind::LanguageLiteral,
        ];
        let mut writer = KindRunsWriter::create(dir.path()).unwrap();
        for (i, &kind) in kinds.iter().enumerate() {
            writer.push(i as u64, kind).unwrap();
        }
        writer.finish().unwrap();
        let runs = KindRuns::open(dir.path()).unwrap();
        for (i, &kind) in kinds.iter().enumerate() {
            assert_eq!(runs.kind_of(i as u64), Some(kind), "entry {i}");
        }
        // 5 runs of 8 bytes.
        let bytes = std::fs::metadata(dir.path().join(KINDS_FILE))
            .unwrap()
            .len();
        assert_eq!(bytes, 5 * 8);
        let none = tempfile::tempdir().unwrap();
        assert_eq!(KindRuns::open(none.path()).unwrap().kind_of(0), None);
    }
}
