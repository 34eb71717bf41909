//! Sorting the final quads into the five permutations, in memory when they fit
//! and with an external merge sort under the memory budget when they do not.

use super::error::{LoadError, LoadIo};
use super::runs::{write_quads, QuadReader};
use crate::permutation::{Permutation, PermutationWriter, Row};
use crate::stats::{DistinctCounter, PredicateStats, Statistics};
use crate::Id;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

/// Holds the final quads: in memory up to `chunk_rows`, beyond that as unsorted
/// chunk files of `chunk_rows` quads each.
pub struct QuadStore {
    work_dir: PathBuf,
    chunk_rows: usize,
    current: Vec<[u64; 4]>,
    chunks: Vec<PathBuf>,
}

impl QuadStore {
    pub fn new(work_dir: &Path, chunk_rows: usize) -> QuadStore {
        QuadStore {
            work_dir: work_dir.to_owned(),
            chunk_rows: chunk_rows.max(1024),
            current: Vec::new(),
            chunks: Vec::new(),
        }
    }

    pub fn push(&mut self, quad: [u64; 4]) -> Result<(), LoadError> {
        self.current.push(quad);
        if self.current.len() >= self.chunk_rows {
            self.spill()?;
        }
        Ok(())
    }

    /// Takes a whole vector of quads, without copying when it fits.
    pub fn extend(&mut self, quads: Vec<[u64; 4]>) -> Result<(), LoadError> {
        if self.current.is_empty() && quads.len() <= self.chunk_rows {
            self.current = quads;
            return Ok(());
        }
        quads.into_iter().try_for_each(|q| self.push(q))
    }

    fn spill(&mut self) -> Result<(), LoadError> {
        let path = self
            .work_dir
            .join(format!("chunk-{}.quads", self.chunks.len()));
        write_quads(&path, &self.current)?;
        self.current.clear();
        self.chunks.push(path);
        Ok(())
    }
}

/// Collects statistics from the rows of the permutations as they are written.
#[derive(Default)]
struct StatsBuilder {
    stats: Statistics,
    graphs: FxHashSet<u64>,
    /// Position in `stats.predicates` while POS rows stream by.
    pos_cursor: usize,
}

impl StatsBuilder {
    fn observe(&mut self, perm: Permutation, row: &Row, shared: usize) {
        let s = &mut self.stats;
        match perm {
            Permutation::Spo => {
                s.triples += 1;
                if row[3] != Id::DEFAULT_GRAPH.0 && self.graphs.len() < 1 << 20 {
                    self.graphs.insert(row[3]);
                }
            }
            Permutation::Pso => {
                if shared == 0 {
                    s.predicates.push(PredicateStats {
                        predicate: row[0],
                        ..Default::default()
                    });
                }
                let p = s.predicates.last_mut().unwrap();
                p.triples += 1;
                if shared < 2 {
                    p.distinct_subjects += 1;
                }
            }
            Permutation::Pos => {
                if shared == 0 {
                    while s.predicates[self.pos_cursor].predicate != row[0] {
                        self.pos_cursor += 1;
                    }
                }
                if shared < 2 {
                    s.predicates[self.pos_cursor].distinct_objects += 1;
                }
            }
            Permutation::Osp if shared == 0 && Id(row[0]).is_inline_value() => {
                s.distinct_inline_values += 1;
            }
            _ => {}
        }
    }

    fn finish_permutation(&mut self, perm: Permutation, counter: &DistinctCounter) {
        match perm {
            Permutation::Spo => self.stats.distinct_subjects = counter.distinct[0],
            Permutation::Pso => self.stats.distinct_predicates = counter.distinct[0],
            Permutation::Osp => self.stats.distinct_objects = counter.distinct[0],
            _ => {}
        }
    }
}

/// Writes all five permutations (removing duplicate quads) and returns statistics.
pub fn write_permutations(mut store: QuadStore, index_dir: &Path) -> Result<Statistics, LoadError> {
    let mut stats = StatsBuilder::default();
    if store.chunks.is_empty() {
        let mut rows = std::mem::take(&mut store.current);
        let mut previous = None::<Permutation>;
        for perm in Permutation::ALL {
            rows.par_iter_mut().for_each(|row| {
                let quad = previous.map_or(*row, |p| p.quad_of(*row));
                *row = perm.row_of(quad);
            });
            rows.par_sort_unstable();
            rows.dedup();
            write_sorted(perm, rows.iter().copied().map(Ok), index_dir, &mut stats)?;
            previous = Some(perm);
        }
    } else {
        if !store.current.is_empty() {
            store.spill()?;
        }
        // The store's buffer is reused for sorting each chunk.
        let mut buffer = std::mem::take(&mut store.current);
        for perm in Permutation::ALL {
            let runs = sorted_runs(&store, perm, &mut buffer)?;
            let merged = MergedRuns::new(&runs)?;
            write_sorted(perm, merged, index_dir, &mut stats)?;
            for path in &runs {
                std::fs::remove_file(path).at(path)?;
            }
        }
        for path in &store.chunks {
            std::fs::remove_file(path).at(path)?;
        }
    }
    stats.stats.named_graphs = stats.graphs.len() as u64;
    Ok(stats.stats)
}

fn write_sorted(
    perm: Permutation,
    rows: impl Iterator<Item = Result<Row, LoadError>>,
    index_dir: &Path,
    stats: &mut StatsBuilder,
) -> Result<(), LoadError> {
    let mut writer = PermutationWriter::create(index_dir, perm)?;
    let mut counter = DistinctCounter::default();
    let mut last: Option<Row> = None;
    for row in rows {
        let row = row?;
        if last == Some(row) {
            continue;
        }
        let shared = counter.push(&row);
        stats.observe(perm, &row, shared);
        writer.push(row)?;
        last = Some(row);
    }
    stats.finish_permutation(perm, &counter);
    writer.finish()?;
    Ok(())
}

/// Sorts each chunk in `perm` order into a run file.
fn sorted_runs(
    store: &QuadStore,
    perm: Permutation,
    rows: &mut Vec<Row>,
) -> Result<Vec<PathBuf>, LoadError> {
    let mut runs = Vec::with_capacity(store.chunks.len());
    for (i, chunk) in store.chunks.iter().enumerate() {
        rows.clear();
        let mut reader = QuadReader::open(chunk)?;
        while let Some(quad) = reader.next_quad()? {
            rows.push(perm.row_of(quad));
        }
        rows.par_sort_unstable();
        rows.dedup();
        let path = store.work_dir.join(format!("{}-{i}.run", perm.name()));
        write_quads(&path, rows)?;
        runs.push(path);
    }
    Ok(runs)
}

/// K-way merge of sorted run files.
struct MergedRuns {
    readers: Vec<QuadReader>,
    heap: BinaryHeap<Reverse<(Row, usize)>>,
}

impl MergedRuns {
    fn new(paths: &[PathBuf]) -> Result<MergedRuns, LoadError> {
        let mut readers = paths
            .iter()
            .map(|p| QuadReader::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(row) = r.next_quad()? {
                heap.push(Reverse((row, i)));
            }
        }
        Ok(MergedRuns { readers, heap })
    }
}

impl Iterator for MergedRuns {
    type Item = Result<Row, LoadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse((row, i)) = self.heap.pop()?;
        match self.readers[i].next_quad() {
            Ok(Some(next)) => self.heap.push(Reverse((next, i))),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(row))
    }
}
