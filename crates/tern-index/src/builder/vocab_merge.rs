//! Merges the runs' sorted keys into the final vocabulary and gives every quad
//! its final vocabulary IDs.

use super::error::{LoadError, LoadIo};
use super::quad_sort::QuadStore;
use super::runs::{QuadReader, Runs, SpilledRun};
use crate::vocab::VocabWriter;
use crate::{Id, Tag};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Writes the vocabulary of a load that fit in one run: its sorted positions are
/// the final IDs already. Returns the number of vocabulary entries.
pub fn write_sorted(keys: Vec<Box<[u8]>>, index_dir: &Path) -> Result<u64, LoadError> {
    let mut writer = VocabWriter::create(index_dir, &crate::vocab::dictionaries(&keys))?;
    for key in keys {
        writer.push(key.into_vec())?;
    }
    Ok(writer.finish()?)
}

/// Merges spilled runs into the vocabulary in `index_dir` and feeds the quads,
/// with final IDs, to `store`. Returns the number of vocabulary entries.
pub fn merge(runs: Runs, index_dir: &Path, store: &mut QuadStore) -> Result<u64, LoadError> {
    match runs {
        Runs::InMemory { keys, quads } => {
            store.extend(quads)?;
            write_sorted(keys, index_dir)
        }
        Runs::Spilled(runs) => {
            // The first run is a sample of the whole vocabulary.
            let sample = read_keys(&runs[0])?;
            let mut writer = VocabWriter::create(index_dir, &crate::vocab::dictionaries(&sample))?;
            drop(sample);
            let maps = merge_keys(&runs, &mut writer)?;
            for (run, map_path) in runs.iter().zip(maps) {
                remap_run(run, &map_path, store)?;
                for path in [&run.keys, &run.quads, &map_path] {
                    std::fs::remove_file(path).at(path)?;
                }
            }
            Ok(writer.finish()?)
        }
    }
}

/// Reads a run's key → final ID map without holding its bytes twice.
fn read_map(path: &Path, entries: u64) -> Result<Vec<u64>, LoadError> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).at(path)?);
    let mut map = Vec::with_capacity(entries as usize);
    let mut word = [0u8; 8];
    for _ in 0..entries {
        reader.read_exact(&mut word).at(path)?;
        map.push(u64::from_le_bytes(word));
    }
    Ok(map)
}

fn read_keys(run: &SpilledRun) -> Result<Vec<Vec<u8>>, LoadError> {
    let mut reader = KeyReader::open(run)?;
    let mut keys = Vec::with_capacity(run.key_count as usize);
    while let Some(key) = reader.next_key()? {
        keys.push(key);
    }
    Ok(keys)
}

struct KeyReader {
    reader: BufReader<File>,
    path: PathBuf,
    remaining: u64,
}

impl KeyReader {
    fn open(run: &SpilledRun) -> Result<KeyReader, LoadError> {
        Ok(KeyReader {
            reader: BufReader::with_capacity(1 << 16, File::open(&run.keys).at(&run.keys)?),
            path: run.keys.clone(),
            remaining: run.key_count,
        })
    }

    fn next_key(&mut self) -> Result<Option<Vec<u8>>, LoadError> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let mut len = 0u64;
        let mut shift = 0;
        loop {
            let mut b = [0u8];
            self.reader.read_exact(&mut b).at(&self.path)?;
            len |= u64::from(b[0] & 0x7F) << shift;
            if b[0] < 0x80 {
                break;
            }
            shift += 7;
        }
        let mut key = vec![0u8; len as usize];
        self.reader.read_exact(&mut key).at(&self.path)?;
        Ok(Some(key))
    }
}

/// K-way merge of the runs' keys. For each run, writes a file listing the final
/// ID of each of its keys in the run's sorted order; returns those files.
fn merge_keys(runs: &[SpilledRun], writer: &mut VocabWriter) -> Result<Vec<PathBuf>, LoadError> {
    let mut readers = Vec::with_capacity(runs.len());
    let mut maps = Vec::with_capacity(runs.len());
    let mut map_paths = Vec::with_capacity(runs.len());
    for run in runs {
        readers.push(KeyReader::open(run)?);
        let map_path = run.keys.with_extension("map");
        maps.push(BufWriter::with_capacity(
            1 << 16,
            File::create(&map_path).at(&map_path)?,
        ));
        map_paths.push(map_path);
    }
    let mut heap = BinaryHeap::new();
    for (i, reader) in readers.iter_mut().enumerate() {
        if let Some(key) = reader.next_key()? {
            heap.push(Reverse((key, i)));
        }
    }
    let mut last: Option<(Vec<u8>, u64)> = None;
    while let Some(Reverse((key, run))) = heap.pop() {
        let id = match &last {
            Some((k, id)) if *k == key => *id,
            _ => {
                let id = writer.push(key.clone())?;
                last = Some((key, id));
                id
            }
        };
        maps[run].write_all(&id.to_le_bytes()).at(&map_paths[run])?;
        if let Some(next) = readers[run].next_key()? {
            heap.push(Reverse((next, run)));
        }
    }
    for (map, path) in maps.iter_mut().zip(&map_paths) {
        map.flush().at(path)?;
    }
    Ok(map_paths)
}

fn remap_run(run: &SpilledRun, map_path: &Path, store: &mut QuadStore) -> Result<(), LoadError> {
    let map = read_map(map_path, run.key_count)?;
    let mut reader = QuadReader::open(&run.quads)?;
    while let Some(quad) = reader.next_quad()? {
        store.push(quad.map(|v| match Id(v).tag() {
            Tag::Vocab => Id::vocab(map[Id(v).payload() as usize]).0,
            _ => v,
        }))?;
    }
    Ok(())
}
