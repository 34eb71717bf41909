use super::block_search::rows_between;
use super::writer::{data_file, meta_file, BlockMeta, META_RECORD};
use super::{codec, Batch, Permutation, Row};
use crate::block_file::BlockFile;
use crate::error::{IndexError, IoContext, Result};
use crate::memo::Memo;
use crate::Id;
use rustc_hash::FxHashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

struct Inner {
    perm: Permutation,
    blocks: Vec<BlockMeta>,
    /// `rows_before[b]`: rows in the blocks before `b` (one more entry than
    /// blocks), so that counting the whole blocks of a range is a
    /// subtraction, not a walk over them.
    rows_before: Vec<u64>,
    /// Counts of lately counted ranges: `(lo, hi, k)` → rows.
    counts: Memo<(Row, Row, usize), u64>,
    data: BlockFile,
    path: std::path::PathBuf,
    /// Shared with the index's other permutations.
    cache: Arc<BlockCache>,
}

/// Decoded blocks most recently read, of all the permutations of an index.
/// Selective queries look up a few rows in the same blocks again and again
/// (the planner counts them, then scans them, index joins probe them per
/// row); decoding a block costs far more than finding rows in it. One budget
/// for all five permutations: a workload leans on one or two of them (index
/// joins on PSO), which a fixed share each would leave thrashing.
pub struct BlockCache {
    entries: Mutex<CacheState>,
}

/// The columns of one decoded block.
type DecodedBlock = Arc<Vec<Vec<u64>>>;

struct CacheState {
    /// Counts lookups; the entry used longest ago is evicted first.
    clock: u64,
    /// (permutation, block number) → (clock at last use, columns).
    blocks: FxHashMap<(Permutation, usize), (u64, DecodedBlock)>,
    bytes: usize,
    /// Bytes held per permutation, in [`Permutation::ALL`] order.
    bytes_of: [usize; Permutation::COUNT],
    budget: usize,
}

/// Memory for decoded blocks of all permutations unless set otherwise: 768
/// blocks of 4,096 rows x 4 columns x 8 bytes.
pub const DEFAULT_BLOCK_CACHE_BYTES: usize = 96 << 20;

/// A full cache evicts this fraction of its blocks at once (see
/// [`CacheState::make_room`]).
const EVICTED_AT_ONCE: usize = 8;

/// Ranges whose counts are remembered.
const COUNTS_KEPT: usize = 4096;

/// Blocks of a long scan that go into the cache (a short one keeps all;
/// see [`BlockCache::holds_scan_of`]).
const CACHED_BLOCKS_PER_SCAN: u64 = 2;

/// Memory of a decoded block of [`BLOCK_ROWS`](super::BLOCK_ROWS) rows.
const FULL_BLOCK_BYTES: usize = super::BLOCK_ROWS * 4 * 8;

fn block_bytes(columns: &DecodedBlock) -> usize {
    columns.iter().map(|c| c.capacity() * 8).sum()
}

impl BlockCache {
    pub fn new(budget: usize) -> BlockCache {
        BlockCache {
            entries: Mutex::new(CacheState {
                clock: 0,
                blocks: FxHashMap::default(),
                bytes: 0,
                bytes_of: [0; Permutation::COUNT],
                budget,
            }),
        }
    }

    fn get(&self, key: (Permutation, usize)) -> Option<DecodedBlock> {
        let mut guard = self.entries.lock().unwrap();
        let state = &mut *guard;
        state.clock += 1;
        let tick = state.clock;
        state.blocks.get_mut(&key).map(|(used, columns)| {
            *used = tick;
            columns.clone()
        })
    }

    fn insert(&self, key: (Permutation, usize), columns: DecodedBlock) {
        let size = block_bytes(&columns);
        let mut state = self.entries.lock().unwrap();
        if size > state.budget || state.blocks.contains_key(&key) {
            return;
        }
        state.make_room(size);
        state.bytes += size;
        state.bytes_of[key.0 as usize] += size;
        let tick = state.clock;
        state.blocks.insert(key, (tick, columns));
    }

    /// Sets the memory for decoded blocks, dropping blocks used longest ago.
    pub fn set_budget(&self, bytes: usize) {
        let mut state = self.entries.lock().unwrap();
        state.budget = bytes;
        state.make_room(0);
    }

    /// Memory held by decoded blocks of all permutations now.
    pub fn bytes(&self) -> usize {
        self.entries.lock().unwrap().bytes
    }

    /// Whether a scan of `blocks` blocks is small enough to keep all of
    /// them: at most a sixteenth of the budget, so that the scans a query
    /// mix repeats (a predicate of a few dozen blocks) are decoded once,
    /// while a long scan (an export) cannot push out more than that.
    fn holds_scan_of(&self, blocks: usize) -> bool {
        blocks.saturating_mul(FULL_BLOCK_BYTES) <= self.entries.lock().unwrap().budget / 16
    }

    fn bytes_of(&self, perm: Permutation) -> usize {
        self.entries.lock().unwrap().bytes_of[perm as usize]
    }
}

impl CacheState {
    /// Evicts the blocks used longest ago until `size` more bytes fit.
    /// When it must evict, it evicts at least the oldest eighth of the
    /// blocks at once (more if `size` needs it): finding the oldest block
    /// walks them all, and a cache of a
    /// few thousand blocks that a lookup-heavy query keeps missing would
    /// otherwise walk them all on every miss.
    fn make_room(&mut self, size: usize) {
        if self.bytes + size <= self.budget {
            return;
        }
        let mut ages: Vec<(u64, (Permutation, usize))> = self
            .blocks
            .iter()
            .map(|(&key, (used, _))| (*used, key))
            .collect();
        ages.sort_unstable();
        let at_least = ages.len() / EVICTED_AT_ONCE;
        for (evicted, (_, key)) in ages.into_iter().enumerate() {
            if evicted >= at_least && self.bytes + size <= self.budget {
                break;
            }
            self.evict(key);
        }
    }

    fn evict(&mut self, key: (Permutation, usize)) {
        if let Some((_, columns)) = self.blocks.remove(&key) {
            let size = block_bytes(&columns);
            self.bytes -= size;
            self.bytes_of[key.0 as usize] -= size;
        }
    }
}

/// Read access to one permutation. Cheap to clone.
#[derive(Clone)]
pub struct PermutationReader {
    inner: Arc<Inner>,
}

impl PermutationReader {
    /// Opens a permutation whose decoded blocks go to `cache` (an index
    /// shares one between its permutations).
    pub fn open(
        dir: &Path,
        perm: Permutation,
        cache: Arc<BlockCache>,
    ) -> Result<PermutationReader> {
        let meta_path = dir.join(meta_file(perm));
        let meta = std::fs::read(&meta_path).at(&meta_path)?;
        if meta.len() % META_RECORD != 0 {
            return Err(IndexError::Corrupt {
                path: meta_path,
                reason: "truncated block directory".into(),
            });
        }
        let blocks: Vec<BlockMeta> = meta
            .chunks_exact(META_RECORD)
            .map(BlockMeta::from_bytes)
            .collect();
        let path = dir.join(data_file(perm));
        let data = BlockFile::open(&path)?;
        if let Some(last) = blocks.last() {
            if last.offset + last.byte_len() > data.len() {
                return Err(IndexError::Corrupt {
                    path,
                    reason: "data shorter than its block directory".into(),
                });
            }
        }
        let rows_before = std::iter::once(0)
            .chain(blocks.iter().scan(0, |total, b| {
                *total += b.rows;
                Some(*total)
            }))
            .collect();
        Ok(PermutationReader {
            inner: Arc::new(Inner {
                perm,
                blocks,
                rows_before,
                counts: Memo::new(COUNTS_KEPT),
                data,
                path,
                cache,
            }),
        })
    }

    pub fn permutation(&self) -> Permutation {
        self.inner.perm
    }

    pub fn rows(&self) -> u64 {
        self.inner.rows_before.last().copied().unwrap_or(0)
    }

    pub fn block_count(&self) -> usize {
        self.inner.blocks.len()
    }

    pub fn disk_bytes(&self) -> u64 {
        self.inner.data.len() + (self.inner.blocks.len() * META_RECORD) as u64
    }

    /// Memory held by this permutation's decoded blocks now.
    pub fn cache_bytes(&self) -> usize {
        self.inner.cache.bytes_of(self.inner.perm)
    }

    /// Decodes the first `columns` columns of block `b`.
    fn decode(&self, b: usize, columns: usize) -> Result<Vec<Vec<u64>>> {
        let meta = &self.inner.blocks[b];
        let lens = &meta.column_bytes[..columns];
        let end = meta.offset + lens.iter().map(|&l| u64::from(l)).sum::<u64>();
        let decoded = self.inner.data.read(meta.offset..end, |bytes| {
            let mut slices = Vec::with_capacity(columns);
            let mut at = 0;
            for &len in lens {
                slices.push(&bytes[at..at + len as usize]);
                at += len as usize;
            }
            codec::decode(&slices, meta.rows as usize)
        })?;
        decoded.ok_or_else(|| IndexError::Corrupt {
            path: self.inner.path.clone(),
            reason: format!("block {b} does not decode"),
        })
    }

    /// All four columns of block `b`, from the cache when it was read lately;
    /// kept in the cache if `keep`.
    fn decode_cached(&self, b: usize, keep: bool) -> Result<DecodedBlock> {
        if let Some(columns) = self.inner.cache.get((self.inner.perm, b)) {
            return Ok(columns);
        }
        let columns = Arc::new(self.decode(b, 4)?);
        if keep {
            self.inner
                .cache
                .insert((self.inner.perm, b), columns.clone());
        }
        Ok(columns)
    }

    /// Blocks that may hold rows in `[lo, hi]`.
    fn candidate_blocks(&self, lo: &Row, hi: &Row) -> std::ops::Range<usize> {
        let blocks = &self.inner.blocks;
        let start = blocks.partition_point(|m| m.last < *lo);
        let end = start + blocks[start..].partition_point(|m| m.first <= *hi);
        start..end
    }

    /// Rows that cut the rows in `[lo, hi]` into `parts` runs of about as
    /// many rows each, increasing, each above `lo`: a scan split into
    /// morsels starts each morsel at one. A cut keeps its first `columns`
    /// columns and is 0 after them, so that the rows with one value there
    /// (a subject's, when the rows before it are fixed) fall into one run,
    /// as do a triple's copies in several graphs. Fewer cuts (none) when
    /// the rows do not have enough values.
    pub fn split_rows(&self, lo: &Row, hi: &Row, parts: usize, columns: usize) -> Result<Vec<Row>> {
        let blocks = self.candidate_blocks(lo, hi);
        if blocks.is_empty() || parts < 2 {
            return Ok(Vec::new());
        }
        let rows_before = &self.inner.rows_before;
        let (first, last) = (blocks.start, blocks.end - 1);
        let start = rows_before[first]
            + rows_between(&self.decode_cached(first, true)?, lo, hi).start as u64;
        let end =
            rows_before[last] + rows_between(&self.decode_cached(last, true)?, lo, hi).end as u64;
        if end <= start + parts as u64 {
            return Ok(Vec::new());
        }
        let mut cuts: Vec<Row> = Vec::with_capacity(parts - 1);
        for j in 1..parts as u64 {
            let target = start + (end - start) * j / parts as u64;
            let b = rows_before.partition_point(|&r| r <= target) - 1;
            let block = self.decode_cached(b, true)?;
            let i = (target - rows_before[b]) as usize;
            let mut cut = [0; 4];
            for (c, value) in cut.iter_mut().enumerate().take(columns.min(3)) {
                *value = block[c][i];
            }
            if cut > *lo && cut <= *hi && cuts.last().is_none_or(|last| cut > *last) {
                cuts.push(cut);
            }
        }
        Ok(cuts)
    }

    /// The first row `r` with `lo <= r <= hi`, if any: a seek that decodes
    /// (or finds cached) the one block it lands in and copies no batch.
    pub fn first(&self, lo: &Row, hi: &Row) -> Result<Option<Row>> {
        for b in self.candidate_blocks(lo, hi) {
            let columns = self.decode_cached(b, true)?;
            let rows = rows_between(&columns, lo, hi);
            if !rows.is_empty() {
                return Ok(Some(row_at(&columns, rows.start)));
            }
        }
        Ok(None)
    }

    /// The first and the last row `r` with `lo <= r <= hi`, if any.
    pub fn ends(&self, lo: &Row, hi: &Row) -> Result<Option<(Row, Row)>> {
        let blocks = self.candidate_blocks(lo, hi);
        let Some(first) = self.first(lo, hi)? else {
            return Ok(None);
        };
        for b in blocks.rev() {
            let columns = self.decode_cached(b, true)?;
            let rows = rows_between(&columns, lo, hi);
            if !rows.is_empty() {
                return Ok(Some((first, row_at(&columns, rows.end - 1))));
            }
        }
        Ok(None)
    }

    /// Rows `r` with `lo <= r <= hi`, in order, as batches of one block each.
    pub fn scan_rows(&self, lo: Row, hi: Row) -> ScanIter {
        let blocks = self.candidate_blocks(&lo, &hi);
        let keep_all = self.inner.cache.holds_scan_of(blocks.len());
        ScanIter {
            reader: self.clone(),
            lo,
            hi,
            blocks,
            blocks_read: 0,
            keep_all,
        }
    }

    /// Exact number of rows with `lo[..k] <= r[..k] <= hi[..k]`: the blocks
    /// in between are counted from the directory, only the (at most two)
    /// blocks at the edges are decoded. The planner counts every pattern of
    /// every query it plans, resumed pages included.
    pub fn count_rows(&self, lo: Row, hi: Row, k: usize) -> Result<u64> {
        self.inner
            .counts
            .get_or_try((lo, hi, k), || self.count_uncached(lo, hi, k))
    }

    fn count_uncached(&self, lo: Row, hi: Row, k: usize) -> Result<u64> {
        let blocks = self.candidate_blocks(&lo, &hi);
        let (lo, hi) = (&lo[..k], &hi[..k]);
        let whole = |b: usize| {
            let meta = &self.inner.blocks[b];
            meta.first[..k] >= *lo && meta.last[..k] <= *hi
        };
        let (mut first, mut last) = (blocks.start, blocks.end);
        let mut total = 0;
        // Edge blocks partly in the range; at most one at each end, since
        // the rows are sorted.
        while first < last && !whole(first) {
            total += self.count_in_block(first, lo, hi)?;
            first += 1;
        }
        while first < last && !whole(last - 1) {
            total += self.count_in_block(last - 1, lo, hi)?;
            last -= 1;
        }
        let rows_before = &self.inner.rows_before;
        Ok(total + rows_before[last] - rows_before[first])
    }

    /// Rows of block `b` whose first `lo.len()` columns lie in `[lo, hi]`.
    fn count_in_block(&self, b: usize, lo: &[u64], hi: &[u64]) -> Result<u64> {
        let columns = self.decode_cached(b, true)?;
        let n = self.inner.blocks[b].rows as usize;
        debug_assert_eq!(columns[0].len(), n);
        Ok(rows_between(&columns, lo, hi).len() as u64)
    }
}

fn row_at(columns: &[Vec<u64>], i: usize) -> Row {
    [columns[0][i], columns[1][i], columns[2][i], columns[3][i]]
}

/// Finds the rows of many small ranges one after another, as an index join
/// does for each of its left rows. It keeps the block it read last, since
/// consecutive lookups mostly land in the same block, and hands each row
/// straight to the caller: no batch is built per lookup.
pub struct Lookup {
    reader: PermutationReader,
    held: Option<(usize, DecodedBlock)>,
}

impl Lookup {
    pub fn new(reader: PermutationReader) -> Lookup {
        Lookup { reader, held: None }
    }

    /// Calls `each` with every row `r` with `lo <= r <= hi`, in order.
    pub fn rows(&mut self, lo: Row, hi: Row, mut each: impl FnMut(Row)) -> Result<()> {
        for b in self.reader.candidate_blocks(&lo, &hi) {
            let columns = match &self.held {
                Some((held, columns)) if *held == b => columns.clone(),
                _ => {
                    let columns = self.reader.decode_cached(b, true)?;
                    self.held = Some((b, columns.clone()));
                    columns
                }
            };
            for i in rows_between(&columns, &lo, &hi) {
                each([columns[0][i], columns[1][i], columns[2][i], columns[3][i]]);
            }
        }
        Ok(())
    }
}

/// An iterator over the batches of a scan; each batch is the matching part of
/// one block.
pub struct ScanIter {
    reader: PermutationReader,
    lo: Row,
    hi: Row,
    blocks: std::ops::Range<usize>,
    blocks_read: u64,
    /// Whether every block read goes into the cache (a short scan).
    keep_all: bool,
}

impl ScanIter {
    /// Number of blocks decoded so far.
    pub fn blocks_read(&self) -> u64 {
        self.blocks_read
    }

    /// Continues the scan after `row` (a row it returned before, or any row
    /// in its range): how a suspended query picks up where it stopped,
    /// finding its block by binary search.
    pub fn resume_after(&mut self, row: Row) {
        let Some(next) = successor(row) else {
            self.blocks = self.blocks.end..self.blocks.end;
            return;
        };
        if next > self.lo {
            self.lo = next;
        }
        let blocks = &self.reader.inner.blocks;
        let skip = blocks[self.blocks.clone()].partition_point(|m| m.last < self.lo);
        self.blocks.start += skip;
    }
}

/// The smallest row after `row`, if any.
fn successor(mut row: Row) -> Option<Row> {
    for c in (0..4).rev() {
        if row[c] < u64::MAX {
            row[c] += 1;
            return Some(row);
        }
        row[c] = 0;
    }
    None
}

impl Iterator for ScanIter {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        for b in self.blocks.by_ref() {
            self.blocks_read += 1;
            // The first blocks of a scan are the ones lookups read again; a
            // long scan's later blocks would only push them out of the cache.
            let keep = self.keep_all || self.blocks_read <= CACHED_BLOCKS_PER_SCAN;
            let columns = match self.reader.decode_cached(b, keep) {
                Ok(c) => c,
                Err(e) => return Some(Err(e)),
            };
            let Range { start, end } = rows_between(&columns, &self.lo, &self.hi);
            if start >= end {
                continue;
            }
            let mut batch = Batch::default();
            for (c, column) in columns.iter().enumerate() {
                batch.columns[c] = column[start..end].iter().map(|&v| Id(v)).collect();
            }
            return Some(Ok(batch));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(rows: usize) -> DecodedBlock {
        Arc::new(vec![vec![0u64; rows]; 4])
    }

    /// A full cache evicts its oldest eighth at once, never the blocks used
    /// lately, and stays within its budget however many blocks come.
    #[test]
    fn full_cache_evicts_the_oldest_in_batches() {
        let size = block_bytes(&block(1024));
        let cache = BlockCache::new(64 * size);
        for b in 0..64 {
            cache.insert((Permutation::Pso, b), block(1024));
        }
        assert_eq!(cache.bytes(), 64 * size);
        // Block 0 is used again: the oldest are now 1, 2, ...
        assert!(cache.get((Permutation::Pso, 0)).is_some());
        cache.insert((Permutation::Pos, 0), block(1024));
        assert_eq!(cache.bytes(), 57 * size, "an eighth (8) out, one in");
        assert!(cache.get((Permutation::Pso, 0)).is_some());
        for b in 1..=8 {
            assert!(cache.get((Permutation::Pso, b)).is_none(), "block {b}");
        }
        for b in 9..64 {
            assert!(cache.get((Permutation::Pso, b)).is_some(), "block {b}");
        }
        for b in 0..1000 {
            cache.insert((Permutation::Spo, b), block(1024));
            assert!(cache.bytes() <= 64 * size);
        }
        assert!(cache.get((Permutation::Spo, 999)).is_some());
        // A block larger than an eighth of the cache still finds room.
        cache.insert((Permutation::Osp, 0), block(1024 * 20));
        assert!(cache.get((Permutation::Osp, 0)).is_some());
        assert!(cache.bytes() <= 64 * size);
        cache.set_budget(size);
        assert!(cache.bytes() <= size);
    }
}
