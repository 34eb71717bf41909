//! Runs: the builder's unit of bounded memory.
//!
//! Pieces are merged into the current run, which gives every distinct vocabulary
//! key a run-local number. When the run reaches its memory budget, its keys are
//! sorted, its quads renumbered to the keys' sorted positions, and both are
//! written to disk; a new run starts. A load that fits in one run never touches
//! the disk here, and its sorted positions are already the final vocabulary IDs.

use super::error::{LoadError, LoadIo};
use super::piece::{HashedKey, Piece, StoredHash};
use crate::{Id, Tag};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::fs::File;
use std::hash::BuildHasherDefault;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Rough heap cost of one distinct key besides its bytes (hash slot with the
/// stored hash, box, vec).
const KEY_OVERHEAD: usize = 64;

/// The run's keys and their run-local numbers, hashed by the hashes the
/// pieces bring.
type KeyMap = HashMap<HashedKey, u64, BuildHasherDefault<StoredHash>>;

const QUAD_BYTES: usize = 32;

/// A run written to disk: its sorted keys and its renumbered quads.
pub struct SpilledRun {
    pub keys: PathBuf,
    pub quads: PathBuf,
    pub key_count: u64,
}

/// The runs of a load.
pub enum Runs {
    /// Everything fit in one run: sorted keys and quads whose vocabulary IDs are
    /// final.
    InMemory {
        keys: Vec<Box<[u8]>>,
        quads: Vec<[u64; 4]>,
    },
    Spilled(Vec<SpilledRun>),
}

pub struct RunBuilder {
    keys: KeyMap,
    key_bytes: usize,
    quads: Vec<[u64; 4]>,
    budget: usize,
    work_dir: PathBuf,
    spilled: Vec<SpilledRun>,
    /// Blank node labels of the current file, numbered across the whole load.
    file_blanks: FxHashMap<Box<str>, u64>,
    pub blank_nodes: u64,
    pub statements: u64,
    /// The current file names blank nodes as an index does (see
    /// [`Input::index_blank_labels`](super::Input)).
    index_blank_labels: bool,
}

impl RunBuilder {
    pub fn new(work_dir: &Path, budget: usize) -> RunBuilder {
        RunBuilder {
            keys: KeyMap::default(),
            key_bytes: 0,
            quads: Vec::new(),
            budget,
            work_dir: work_dir.to_owned(),
            spilled: Vec::new(),
            file_blanks: FxHashMap::default(),
            blank_nodes: 0,
            statements: 0,
            index_blank_labels: false,
        }
    }

    /// Blank node labels are scoped to their file, unless the file names
    /// them as an index does (`b<number>`: they keep their number).
    pub fn start_file(&mut self, index_blank_labels: bool) {
        self.file_blanks = FxHashMap::default();
        self.index_blank_labels = index_blank_labels;
    }

    fn memory(&self) -> usize {
        self.key_bytes + self.keys.len() * KEY_OVERHEAD + self.quads.len() * QUAD_BYTES
    }

    pub fn add(&mut self, piece: Piece) -> Result<(), LoadError> {
        let key_ids: Vec<u64> = piece
            .keys
            .into_iter()
            .map(|key| {
                let next = self.keys.len() as u64;
                let len = key.bytes.len();
                let id = *self.keys.entry(key).or_insert(next);
                if id == next {
                    self.key_bytes += len;
                }
                id
            })
            .collect();
        let blank_ids: Vec<u64> = piece
            .blanks
            .into_iter()
            .map(|label| {
                if self.index_blank_labels {
                    if let Some(n) = label.strip_prefix('b').and_then(|n| n.parse::<u64>().ok()) {
                        self.blank_nodes = self.blank_nodes.max(n + 1);
                        return n;
                    }
                }
                let next = self.blank_nodes;
                let id = *self.file_blanks.entry(label).or_insert(next);
                if id == next {
                    self.blank_nodes += 1;
                }
                id
            })
            .collect();
        self.statements += piece.quads.len() as u64;
        self.quads.reserve(piece.quads.len());
        for quad in piece.quads {
            self.quads.push(quad.map(|v| {
                let id = Id(v);
                match id.tag() {
                    Tag::Vocab => Id::vocab(key_ids[id.payload() as usize]).0,
                    Tag::BlankNode => Id::blank_node(blank_ids[id.payload() as usize]).0,
                    _ => v,
                }
            }));
        }
        if self.memory() > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Sorts the run's keys and renumbers its quads to their sorted positions.
    fn sorted(&mut self) -> (Vec<Box<[u8]>>, Vec<[u64; 4]>) {
        let mut entries: Vec<(Box<[u8]>, u64)> = std::mem::take(&mut self.keys)
            .into_iter()
            .map(|(key, local)| (key.bytes, local))
            .collect();
        entries.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut rank = vec![0u64; entries.len()];
        for (position, (_, local)) in entries.iter().enumerate() {
            rank[*local as usize] = position as u64;
        }
        let mut quads = std::mem::take(&mut self.quads);
        quads.par_iter_mut().for_each(|quad| {
            for v in quad.iter_mut() {
                if Id(*v).tag() == Tag::Vocab {
                    *v = Id::vocab(rank[Id(*v).payload() as usize]).0;
                }
            }
        });
        self.key_bytes = 0;
        (entries.into_iter().map(|(k, _)| k).collect(), quads)
    }

    fn spill(&mut self) -> Result<(), LoadError> {
        let n = self.spilled.len();
        let (keys, quads) = self.sorted();
        let keys_path = self.work_dir.join(format!("run-{n}.keys"));
        let quads_path = self.work_dir.join(format!("run-{n}.quads"));
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&keys_path).at(&keys_path)?);
        let mut len = Vec::with_capacity(10);
        for key in &keys {
            len.clear();
            crate::varint::write(key.len() as u64, &mut len);
            w.write_all(&len).at(&keys_path)?;
            w.write_all(key).at(&keys_path)?;
        }
        w.flush().at(&keys_path)?;
        write_quads(&quads_path, &quads)?;
        self.spilled.push(SpilledRun {
            keys: keys_path,
            quads: quads_path,
            key_count: keys.len() as u64,
        });
        Ok(())
    }

    pub fn finish(mut self) -> Result<Runs, LoadError> {
        if self.spilled.is_empty() {
            let (keys, quads) = self.sorted();
            return Ok(Runs::InMemory { keys, quads });
        }
        if !self.quads.is_empty() || !self.keys.is_empty() {
            self.spill()?;
        }
        Ok(Runs::Spilled(self.spilled))
    }
}

pub fn write_quads(path: &Path, quads: &[[u64; 4]]) -> Result<(), LoadError> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path).at(path)?);
    for quad in quads {
        for v in quad {
            w.write_all(&v.to_le_bytes()).at(path)?;
        }
    }
    w.flush().at(path)
}

/// Reads quads written by [`write_quads`], up to `max` at a time.
pub struct QuadReader {
    reader: std::io::BufReader<File>,
    path: PathBuf,
}

impl QuadReader {
    pub fn open(path: &Path) -> Result<QuadReader, LoadError> {
        Ok(QuadReader {
            reader: std::io::BufReader::with_capacity(1 << 16, File::open(path).at(path)?),
            path: path.to_owned(),
        })
    }

    pub fn next_quad(&mut self) -> Result<Option<[u64; 4]>, LoadError> {
        use std::io::Read;
        let mut buf = [0u8; 32];
        match self.reader.read_exact(&mut buf) {
            Ok(()) => Ok(Some(std::array::from_fn(|i| {
                u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap())
            }))),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(LoadError::Io {
                path: self.path.clone(),
                source: e,
            }),
        }
    }
}
