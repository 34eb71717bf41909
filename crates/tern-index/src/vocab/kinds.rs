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
//! The file is one varint per run: the distance from the previous run's
//! first entry (from 0 for the first run), times 8, plus the run's kind.
//! Runs are short where kinds alternate (BSBM's simple and language strings
//! interleave), so a run mostly costs a byte or two. On first use, every
//! [`SAMPLE_RUNS`]th run's first entry and offset are kept for binary
//! search. An index written before this file existed has none, and nothing
//! is sorted by ID there.

use crate::error::{IoContext, Result};
use crate::term_key::LITERAL;
use crate::varint;
use memmap2::Mmap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// One run in this many is sampled for binary search when the file is read.
const SAMPLE_RUNS: usize = 32;
const KIND_BITS: u32 = 3;

/// Writes the runs as the vocabulary's keys are pushed, in order.
pub(crate) struct KindRunsWriter {
    path: PathBuf,
    file: BufWriter<File>,
    last: Option<TermKind>,
    last_start: u64,
    buffer: Vec<u8>,
}

impl KindRunsWriter {
    pub fn create(dir: &Path) -> Result<KindRunsWriter> {
        let path = dir.join(KINDS_FILE);
        let file = File::create(&path).map(BufWriter::new).at(&path)?;
        Ok(KindRunsWriter {
            path,
            file,
            last: None,
            last_start: 0,
            buffer: Vec::with_capacity(10),
        })
    }

    /// Entry `index` (the next one) has `kind`.
    pub fn push(&mut self, index: u64, kind: TermKind) -> Result<()> {
        if self.last != Some(kind) {
            self.buffer.clear();
            let distance = index - self.last_start;
            varint::write(distance << KIND_BITS | kind as u64, &mut self.buffer);
            self.file.write_all(&self.buffer).at(&self.path)?;
            self.last = Some(kind);
            self.last_start = index;
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
    /// Every [`SAMPLE_RUNS`]th run: its first entry and its offset; made on
    /// first use (opening an index reads nothing of the file), empty for a
    /// damaged file.
    samples: OnceLock<Vec<(u64, usize)>>,
}

impl KindRuns {
    pub fn open(dir: &Path) -> Result<KindRuns> {
        let path = dir.join(KINDS_FILE);
        let runs = if path.exists() {
            let file = File::open(&path).at(&path)?;
            // SAFETY: index files are written once, renamed into place and never modified.
            Some(unsafe { Mmap::map(&file) }.at(&path)?)
        } else {
            None
        };
        Ok(KindRuns {
            runs,
            samples: OnceLock::new(),
        })
    }

    fn samples(&self, runs: &[u8]) -> &[(u64, usize)] {
        self.samples.get_or_init(|| {
            let mut samples = Vec::new();
            let (mut pos, mut start, mut count) = (0, 0u64, 0usize);
            while pos < runs.len() {
                let at = pos;
                // A damaged file: no kinds (nothing relies on them then).
                let Some(run) = varint::read(runs, &mut pos) else {
                    return Vec::new();
                };
                start = start.saturating_add(run >> KIND_BITS);
                if count % SAMPLE_RUNS == 0 {
                    samples.push((start, at));
                }
                count += 1;
            }
            samples
        })
    }

    /// The kind of entry `index`; none when the index has no runs.
    pub fn kind_of(&self, index: u64) -> Option<TermKind> {
        let runs = self.runs.as_deref()?;
        let samples = self.samples(runs);
        // The last sample starting at or before `index`, then the runs
        // after it up to the last one starting at or before `index`.
        let sample = samples.partition_point(|&(start, _)| start <= index);
        let (mut start, mut pos) = samples[sample.checked_sub(1)?];
        let mut run = varint::read(runs, &mut pos)?;
        while pos < runs.len() {
            let mut next_pos = pos;
            let next = varint::read(runs, &mut next_pos)?;
            let next_start = start.saturating_add(next >> KIND_BITS);
            if next_start > index {
                break;
            }
            (start, run, pos) = (next_start, next, next_pos);
        }
        TermKind::from_bits(run & ((1 << KIND_BITS) - 1))
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
        // Runs of every length, past several samples, long gaps included.
        let all = [
            TermKind::Iri,
            TermKind::SimpleLiteral,
            TermKind::LanguageLiteral,
            TermKind::OtherLiteral,
            TermKind::ValuedLiteral,
        ];
        let mut kinds = Vec::new();
        let mut runs = 0;
        for i in 0..400usize {
            let length = [1, 1, 2, 7, 300, 1][i % 6];
            let kind = all[(i * 7 + i / 5) % all.len()];
            if kinds.last() != Some(&kind) {
                runs += 1;
            }
            kinds.extend(std::iter::repeat_n(kind, length));
        }
        let mut writer = KindRunsWriter::create(dir.path()).unwrap();
        for (i, &kind) in kinds.iter().enumerate() {
            writer.push(i as u64, kind).unwrap();
        }
        writer.finish().unwrap();
        let read = KindRuns::open(dir.path()).unwrap();
        assert_eq!(read.kind_of(0), Some(kinds[0]));
        assert!(read.samples.get().unwrap().len() > 4);
        for (i, &kind) in kinds.iter().enumerate() {
            assert_eq!(read.kind_of(i as u64), Some(kind), "entry {i}");
        }
        // Past the last entry: the last run's kind (the vocabulary checks
        // the bound).
        assert_eq!(read.kind_of(kinds.len() as u64 + 5), kinds.last().copied());
        // Mostly a byte a run.
        let bytes = std::fs::metadata(dir.path().join(KINDS_FILE))
            .unwrap()
            .len();
        assert!(bytes < 2 * runs as u64, "{bytes} bytes for {runs} runs");
        let none = tempfile::tempdir().unwrap();
        assert_eq!(KindRuns::open(none.path()).unwrap().kind_of(0), None);
        std::fs::write(none.path().join(KINDS_FILE), [0x80]).unwrap();
        assert_eq!(KindRuns::open(none.path()).unwrap().kind_of(0), None);
    }
}
