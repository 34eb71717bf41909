//! Rows of a materialized input indexed on their key columns (the build
//! side of joins, OPTIONAL and MINUS), and how such a table is built a
//! bounded step at a time.

use super::FlatRows;
use crate::suspend::StashSize;
use tern_index::Id;

/// Rows of a materialized input, indexed by their values on some columns, for
/// joins, OPTIONAL and MINUS. Rows with an unbound key column cannot be hashed:
/// they are kept aside and checked against every probe.
///
/// The index is the rows' key hashes, sorted: building it is one pass and a
/// sort, with no allocation per row or per key (a hash map of keys to row
/// lists allocated three times per row, and freeing those was as slow).
/// Rows whose keys merely share a hash come out as candidates too; every
/// caller checks the rows it gets.
///
/// The rows are stored one after the other in one vector: a probe goes from
/// its hash to the row's values with one memory access less than through a
/// vector per row, and building frees nothing per row later.
pub struct RowTable {
    rows: FlatRows,
    key_columns: Vec<usize>,
    /// (hash of the key, row) of the rows whose key is bound, sorted.
    keyed: Vec<(u64, u32)>,
    /// `directory[b]`: where in `keyed` the hashes with `b` as their top
    /// bits start, so that a probe finds its hash without a binary search
    /// (which cost most of a probe in large tables); about one row per
    /// bucket.
    directory: Vec<u32>,
    /// Shifts a hash right to its bucket.
    shift: u32,
    unkeyed: Vec<u32>,
    /// One bit per low bits of a hash, set for the keyed rows' hashes (8
    /// bits per row): most probes that match nothing stop here, in a
    /// bitset small enough for the cache, before the directory and the
    /// entries (two memory accesses that miss the cache in large tables).
    present: HashBits,
}

/// A set of hashes, by their low bits; it may hold hashes never added.
#[derive(Default)]
struct HashBits {
    words: Vec<u64>,
    mask: u64,
}

impl HashBits {
    /// Room for `entries` hashes at 8 bits each (about 12% of absent
    /// hashes found).
    fn for_entries(entries: usize) -> HashBits {
        let bits = (entries * 8).next_power_of_two().max(64);
        HashBits {
            words: vec![0; bits / 64],
            mask: bits as u64 - 1,
        }
    }

    fn insert(&mut self, hash: u64) {
        let bit = hash & self.mask;
        self.words[(bit / 64) as usize] |= 1 << (bit % 64);
    }

    fn may_contain(&self, hash: u64) -> bool {
        let bit = hash & self.mask;
        self.words[(bit / 64) as usize] >> (bit % 64) & 1 == 1
    }
}

/// The rows a probe may match: those with its key's hash, those with an
/// unbound key column, and (for a probe with an unbound key value) all.
pub type Candidates<'a> = std::iter::Chain<
    std::iter::Chain<
        std::iter::Map<std::slice::Iter<'a, (u64, u32)>, fn(&(u64, u32)) -> u32>,
        std::iter::Copied<std::slice::Iter<'a, u32>>,
    >,
    std::ops::Range<u32>,
>;

fn row_of(&(_, row): &(u64, u32)) -> u32 {
    row
}

/// Tables with at least this many keyed rows are probed with prefetching
/// (about 2 MB of entries and rows).
const LARGE_TABLE_ROWS: usize = 64 * 1024;

/// Asks the processor to bring `value`'s cache line in; no effect on what
/// the program computes.
#[inline]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint to the cache; it reads nothing the
        // program sees and cannot fault, and the pointer comes from a
        // reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Rows (or buckets) one step of building a table goes through.
const STEP_ROWS: usize = 64 * 1024;

fn key_hash(key: impl Iterator<Item = Id>) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = rustc_hash::FxBuildHasher.build_hasher();
    for id in key {
        hasher.write_u64(id.0);
    }
    hasher.finish()
}

impl RowTable {
    /// Row `i` (a candidate's number).
    pub fn row(&self, i: u32) -> &[Id] {
        self.rows.row(i as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &[Id]> + '_ {
        self.rows.iter()
    }

    /// The candidates of a probe row `probe` whose key values are at
    /// `columns` (no key vector built per probe row), without the first
    /// `skip` of them (a probe row carried on from where an earlier batch
    /// stopped it).
    pub fn probe_from(
        &self,
        probe: &[Id],
        columns: impl Iterator<Item = usize> + Clone,
        skip: usize,
    ) -> Candidates<'_> {
        self.candidates_from(columns.map(|c| probe[c]), skip)
    }

    /// Whether the table is too large for the cache to hold it, so that
    /// probes gain from fetching entries ahead.
    pub fn is_large(&self) -> bool {
        self.keyed.len() >= LARGE_TABLE_ROWS
    }

    /// The hash of a probe key that may have entries (no unbound value,
    /// its hash among the table's).
    fn present_hash(&self, key: impl Iterator<Item = Id> + Clone) -> Option<u64> {
        if key.clone().any(|id| id == Id::UNDEFINED) {
            return None;
        }
        let hash = key_hash(key);
        self.present.may_contain(hash).then_some(hash)
    }

    /// Starts fetching the first entry of a probe key's bucket into the
    /// cache (the bucket itself is read now: fetching it earlier still, as
    /// a separate step, cost more in hashing than it saved).
    pub fn prefetch_entries(&self, key: impl Iterator<Item = Id> + Clone) {
        if let Some(hash) = self.present_hash(key) {
            let start = self.directory[(hash >> self.shift) as usize] as usize;
            if let Some(entry) = self.keyed.get(start) {
                prefetch(entry);
            }
        }
    }

    /// Indexes of rows that may be compatible with a probe whose key values
    /// (in the order of this table's key columns) are `key`, without the
    /// first `skip` of them.
    pub fn candidates_from(
        &self,
        key: impl Iterator<Item = Id> + Clone,
        skip: usize,
    ) -> Candidates<'_> {
        debug_assert_eq!(key.clone().count(), self.key_columns.len());
        let hash = (!key.clone().any(|id| id == Id::UNDEFINED)).then(|| key_hash(key));
        self.candidates_of_hash(hash, skip)
    }

    /// The candidates of a key with this hash (`None`: a key with an unbound
    /// value, which every row may match).
    fn candidates_of_hash(&self, hash: Option<u64>, skip: usize) -> Candidates<'_> {
        let (keyed, unkeyed, all) = match hash {
            None => (
                &self.keyed[..0],
                &self.unkeyed[..0],
                0..self.rows.len() as u32,
            ),
            Some(hash) if !self.present.may_contain(hash) => {
                (&self.keyed[..0], &self.unkeyed[..], 0..0)
            }
            Some(hash) => {
                let bucket = (hash >> self.shift) as usize;
                let in_bucket = &self.keyed
                    [self.directory[bucket] as usize..self.directory[bucket + 1] as usize];
                let start = in_bucket.partition_point(|&(h, _)| h < hash);
                let end = start + in_bucket[start..].partition_point(|&(h, _)| h == hash);
                (&in_bucket[start..end], &self.unkeyed[..], 0..0)
            }
        };
        let from_keyed = skip.min(keyed.len());
        let from_unkeyed = (skip - from_keyed).min(unkeyed.len());
        let from_all = (skip - from_keyed - from_unkeyed).min(all.len()) as u32;
        keyed[from_keyed..]
            .iter()
            .map(row_of as fn(&(u64, u32)) -> u32)
            .chain(unkeyed[from_unkeyed..].iter().copied())
            .chain(all.start + from_all..all.end)
    }
}

/// Building a [`RowTable`] a bounded step at a time, so that an operator
/// can pause between steps at the end of a turn (a table of millions of
/// rows took one uninterrupted call). The key hashes are sorted by a
/// counting sort on their top bits, which are also the directory's
/// buckets: hash the rows, count them per bucket, put each in its place,
/// then sort each bucket (about one row) by the rest of the hash. Each
/// pass goes [`STEP_ROWS`] rows or buckets per step.
pub struct TableSteps {
    rows: FlatRows,
    key_columns: Vec<usize>,
    phase: Phase,
    /// Rows, entries or buckets done in the current phase.
    done: usize,
    /// (hash, row) of the keyed rows: in row order, then (from
    /// `Phase::SortingBuckets` on) by bucket.
    keyed: Vec<(u64, u32)>,
    unkeyed: Vec<u32>,
    shift: u32,
    present: HashBits,
    /// Per bucket: while counting, its count (at the next bucket's index);
    /// then where its entries start.
    directory: Vec<u32>,
    /// While scattering: where each bucket's next entry goes, and the
    /// entries in their places.
    next: Vec<u32>,
    scattered: Vec<(u64, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Hashing,
    Counting,
    Scattering,
    SortingBuckets,
    Built,
}

impl TableSteps {
    pub fn new(rows: FlatRows, key_columns: Vec<usize>) -> TableSteps {
        let present = HashBits::for_entries(rows.len());
        TableSteps {
            keyed: Vec::with_capacity(rows.len()),
            rows,
            key_columns,
            phase: Phase::Hashing,
            done: 0,
            present,
            unkeyed: Vec::new(),
            shift: 0,
            directory: Vec::new(),
            next: Vec::new(),
            scattered: Vec::new(),
        }
    }

    pub fn built(&self) -> bool {
        self.phase == Phase::Built
    }

    /// Does one step.
    pub fn step(&mut self) {
        let total = match self.phase {
            Phase::Hashing => self.rows.len(),
            Phase::Counting | Phase::Scattering => self.keyed.len(),
            Phase::SortingBuckets => self.directory.len() - 1,
            Phase::Built => return,
        };
        let range = self.done..(self.done + STEP_ROWS).min(total);
        match self.phase {
            Phase::Hashing => {
                for i in range.clone() {
                    let row = self.rows.row(i);
                    if self.key_columns.iter().any(|&c| row[c] == Id::UNDEFINED) {
                        self.unkeyed.push(i as u32);
                    } else {
                        let key = self.key_columns.iter().map(|&c| row[c]);
                        let hash = key_hash(key);
                        self.present.insert(hash);
                        self.keyed.push((hash, i as u32));
                    }
                }
            }
            Phase::Counting => {
                for &(hash, _) in &self.keyed[range.clone()] {
                    self.directory[(hash >> self.shift) as usize + 1] += 1;
                }
            }
            Phase::Scattering => {
                for &entry in &self.keyed[range.clone()] {
                    let next = &mut self.next[(entry.0 >> self.shift) as usize];
                    self.scattered[*next as usize] = entry;
                    *next += 1;
                }
            }
            Phase::SortingBuckets => {
                for bucket in range.clone() {
                    let (start, end) = (self.directory[bucket], self.directory[bucket + 1]);
                    self.keyed[start as usize..end as usize].sort_unstable();
                }
            }
            Phase::Built => {}
        }
        self.done = range.end;
        if self.done == total {
            self.next_phase();
        }
    }

    fn next_phase(&mut self) {
        self.done = 0;
        self.phase = match self.phase {
            Phase::Hashing => {
                // About one entry per bucket.
                let bits = (usize::BITS - self.keyed.len().leading_zeros()).max(1);
                self.shift = u64::BITS - bits;
                self.directory = vec![0; (1 << bits) + 1];
                Phase::Counting
            }
            Phase::Counting => {
                for b in 1..self.directory.len() {
                    self.directory[b] += self.directory[b - 1];
                }
                self.next = self.directory[..self.directory.len() - 1].to_vec();
                self.scattered = vec![(0, 0); self.keyed.len()];
                Phase::Scattering
            }
            Phase::Scattering => {
                self.keyed = std::mem::take(&mut self.scattered);
                self.next = Vec::new();
                Phase::SortingBuckets
            }
            Phase::SortingBuckets | Phase::Built => Phase::Built,
        };
    }

    /// The table, once [`built`](Self::built).
    pub fn finish(self) -> RowTable {
        debug_assert!(self.built());
        RowTable {
            rows: self.rows,
            key_columns: self.key_columns,
            keyed: self.keyed,
            directory: self.directory,
            shift: self.shift,
            unkeyed: self.unkeyed,
            present: self.present,
        }
    }
}

impl StashSize for TableSteps {
    /// Rows, and the entries being sorted (twice while scattering).
    fn stash_bytes(&self) -> usize {
        self.rows.stash_bytes()
            + (self.keyed.capacity() + self.scattered.capacity()) * 16
            + (self.directory.capacity() + self.next.capacity()) * 4
    }
}

impl StashSize for RowTable {
    /// Rows, and the key index over them.
    fn stash_bytes(&self) -> usize {
        self.rows.stash_bytes()
            + self.present.words.capacity() * 8
            + self.keyed.capacity() * 16
            + (self.directory.capacity() + self.unkeyed.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Solution;

    #[test]
    fn tables_built_in_steps_find_every_matching_row() {
        // Large enough to be built in several steps per phase; column 1
        // unbound in some rows.
        let rows: Vec<Vec<Id>> = (0..3 * STEP_ROWS as u64 + 17)
            .map(|i| {
                let second = if i % 97 == 0 {
                    Id::UNDEFINED
                } else {
                    Id(i % 1000)
                };
                vec![Id(i % 5000), second]
            })
            .collect();
        let mut steps = TableSteps::new(FlatRows::from_vecs(rows.clone()), vec![0, 1]);
        let mut count = 0;
        while !steps.built() {
            steps.step();
            count += 1;
        }
        // Hashing the 196,625 rows takes 4 steps; counting and scattering
        // the 194,597 keyed ones 3 each; sorting the 2^18 buckets 4.
        assert_eq!(count, 4 + 3 + 3 + 4);
        let table = steps.finish();
        assert!(table.is_large());
        for probe in [[Id(7), Id(7)], [Id(4321), Id(321)], [Id(4999), Id(999)]] {
            // A hint only: it changes nothing found.
            table.prefetch_entries(probe.iter().copied());
            let mut found: Vec<u32> = table.candidates_from(probe.iter().copied(), 0).collect();
            found.retain(|&i| {
                let row = table.row(i);
                assert_eq!(row, rows[i as usize]);
                Solution::compatible(&probe, row, &[(0, 0), (1, 1)])
            });
            let expected: Vec<u32> = (0..rows.len() as u32)
                .filter(|&i| Solution::compatible(&probe, &rows[i as usize], &[(0, 0), (1, 1)]))
                .collect();
            found.sort_unstable();
            assert_eq!(found, expected, "probe {probe:?}");
            assert!(!expected.is_empty());
        }
    }
}
