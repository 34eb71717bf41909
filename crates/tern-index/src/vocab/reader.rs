use super::block::{BlockDecoder, DecodedBlock, Dictionaries};
use super::kinds::{KindRuns, TermKind};
use super::{
    BLOCKS_FILE, DICTIONARY_FILE, FIRSTS_FILE, HEADER, INDEX_FILE, LONG_BLOCKS_FILE,
    LONG_INDEX_FILE, LONG_RECORD, MAGIC, RECORD,
};
use crate::block_file::BlockFile;
use crate::error::{IndexError, IoContext, Result};
use memmap2::Mmap;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod block_cache;
mod sorted;

use block_cache::{BlockCache, Cached};

/// Memory for decoded blocks, by default: the whole vocabulary of BSBM 1M
/// (60 MB of keys) stays decoded during a full export.
pub const DEFAULT_CACHE_BYTES: usize = 128 << 20;

/// Blocks missing from the cache that one lookup decodes in parallel, at
/// least: waking rayon's threads costs as much as decoding a few blocks.
const PARALLEL_DECODE: usize = 16;

/// Read access to a vocabulary: index → key and key → index.
pub struct Vocabulary {
    dir: PathBuf,
    entries: u64,
    blocks: BlockFile,
    firsts: Mmap,
    long_blocks: BlockFile,
    main_decoder: BlockDecoder,
    long_decoder: BlockDecoder,
    /// Main blocks: first entries (and the total), then per block its byte
    /// offset, separator offset and long entries before it (each with a
    /// final total).
    main: Locator,
    offsets: Vec<u64>,
    separators: Vec<u64>,
    first_longs: Vec<u64>,
    /// Long blocks: first long entries (and the total), byte offsets.
    long: Locator,
    long_offsets: Vec<u64>,
    directory_bytes: u64,
    dictionary_bytes: u64,
    /// Decoded main blocks, expanded or front-coded (see `block_cache.rs`).
    cache: Mutex<BlockCache>,
    /// Each entry's kind, for sorting by ID.
    kinds: KindRuns,
}

/// Keys of many entries (see [`Vocabulary::key_refs`]).
pub struct Keys(KeyStore);

enum KeyStore {
    /// Borrowed from the decoded blocks.
    Blocks {
        blocks: Vec<Arc<DecodedBlock>>,
        /// Per key: its block in `blocks`, its entry in the block.
        refs: Vec<(u32, u32)>,
    },
    /// Copied out of the blocks, which were let go of one round at a time
    /// (see [`Vocabulary::key_refs`]).
    Copied(sorted::CopiedKeys),
}

impl Keys {
    pub fn len(&self) -> usize {
        match &self.0 {
            KeyStore::Blocks { refs, .. } => refs.len(),
            KeyStore::Copied(copied) => copied.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key of the `i`-th index asked for.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        match &self.0 {
            KeyStore::Blocks { blocks, refs } => {
                let (block, entry) = refs[i];
                blocks[block as usize].key(entry as usize)
            }
            KeyStore::Copied(copied) => copied.get(i),
        }
    }

    /// The key of the `i`-th index asked for as text, if it is UTF-8 (keys of
    /// IRIs and literals are).
    #[inline]
    pub fn get_str(&self, i: usize) -> Option<&str> {
        match &self.0 {
            KeyStore::Blocks { blocks, refs } => {
                let (block, entry) = refs[i];
                blocks[block as usize].key_str(entry as usize)
            }
            KeyStore::Copied(copied) => copied.get_str(i),
        }
    }

    /// The keys' bytes, all told (a key asked for twice counts once when
    /// they were copied).
    pub fn bytes(&self) -> usize {
        match &self.0 {
            KeyStore::Blocks { .. } => self.iter().map(<[u8]>::len).sum(),
            KeyStore::Copied(copied) => copied.bytes(),
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Starts loading the `i`-th key into the cache, if there is one, so that
    /// a loop over keys that lie scattered in memory (the objects of a
    /// scan) does not wait for each in turn.
    #[inline]
    pub fn touch(&self, i: usize) {
        if i < self.len() {
            prefetch(self.get(i).as_ptr());
        }
    }
}

/// Asks the CPU to bring the cache line at `at` in, without waiting for it.
#[inline]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(at.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

fn map(path: &Path) -> Result<Mmap> {
    let file = File::open(path).at(path)?;
    // SAFETY: index files are written once, renamed into place and never modified.
    unsafe { Mmap::map(&file) }.at(path)
}

/// Little-endian u64 fields of fixed-size records.
fn fields(bytes: &[u8], record: usize, field: usize) -> Vec<u64> {
    bytes
        .chunks_exact(record)
        .map(|r| u64::from_le_bytes(r[field * 8..field * 8 + 8].try_into().unwrap()))
        .collect()
}

impl Vocabulary {
    /// The kind of entry `index`, without decoding it; none for an index
    /// written without kinds.
    pub fn kind_of(&self, index: u64) -> Option<TermKind> {
        (index < self.entries)
            .then(|| self.kinds.kind_of(index))
            .flatten()
    }

    pub fn open(dir: &Path) -> Result<Vocabulary> {
        let index_path = dir.join(INDEX_FILE);
        let index = std::fs::read(&index_path).at(&index_path)?;
        let corrupt = |file: &str, reason: &str| IndexError::Corrupt {
            path: dir.join(file),
            reason: reason.to_owned(),
        };
        if index.len() < HEADER || &index[..8] != MAGIC {
            return Err(corrupt(INDEX_FILE, "bad header"));
        }
        let header = fields(&index[8..HEADER], 8, 0);
        let (entries, long_entries) = (header[0], header[2]);
        let (block_count, long_block_count) = (header[1] as usize, header[3] as usize);
        let records = &index[HEADER..];
        if Some(records.len())
            != block_count
                .checked_add(1)
                .and_then(|n| n.checked_mul(RECORD))
        {
            return Err(corrupt(INDEX_FILE, "truncated block directory"));
        }
        let long_path = dir.join(LONG_INDEX_FILE);
        let long_records = std::fs::read(&long_path).at(&long_path)?;
        if Some(long_records.len())
            != long_block_count
                .checked_add(1)
                .and_then(|n| n.checked_mul(LONG_RECORD))
        {
            return Err(corrupt(LONG_INDEX_FILE, "truncated block directory"));
        }
        let dictionary_path = dir.join(DICTIONARY_FILE);
        let dictionary_bytes = std::fs::read(&dictionary_path).at(&dictionary_path)?;
        let dictionaries = Dictionaries::from_bytes(&dictionary_bytes)
            .ok_or_else(|| corrupt(DICTIONARY_FILE, "bad header"))?;
        let long_decoder = match dictionaries.long_code() {
            Some(code) => BlockDecoder::tokens(code),
            None if dictionaries.long_tokens.is_empty() => BlockDecoder::new(&dictionaries.long),
            None => return Err(corrupt(DICTIONARY_FILE, "bad token code")),
        };
        let blocks = BlockFile::open(&dir.join(BLOCKS_FILE))?;
        let long_blocks = BlockFile::open(&dir.join(LONG_BLOCKS_FILE))?;
        let firsts = map(&dir.join(FIRSTS_FILE))?;
        let offsets = fields(records, RECORD, 1);
        let separators = fields(records, RECORD, 2);
        let first_longs = fields(records, RECORD, 3);
        let long_offsets = fields(&long_records, LONG_RECORD, 1);
        let sorted = |v: &[u64], strictly: bool, last: u64| {
            v.first() == Some(&0)
                && v.last() == Some(&last)
                && v.windows(2)
                    .all(|w| w[0] < w[1] || (!strictly && w[0] == w[1]))
        };
        let main = Locator::new(fields(records, RECORD, 0));
        let long = Locator::new(fields(&long_records, LONG_RECORD, 0));
        if !sorted(&main.firsts, true, entries)
            || !sorted(&offsets, false, blocks.len())
            || !sorted(&separators, false, firsts.len() as u64)
            || !sorted(&first_longs, false, long_entries)
        {
            return Err(corrupt(INDEX_FILE, "inconsistent block directory"));
        }
        if !sorted(&long.firsts, true, long_entries)
            || !sorted(&long_offsets, false, long_blocks.len())
        {
            return Err(corrupt(LONG_INDEX_FILE, "inconsistent block directory"));
        }
        Ok(Vocabulary {
            kinds: KindRuns::open(dir)?,
            dir: dir.to_owned(),
            entries,
            main_decoder: BlockDecoder::new(&dictionaries.main),
            long_decoder,
            directory_bytes: (index.len() + long_records.len()) as u64,
            dictionary_bytes: dictionary_bytes.len() as u64,
            blocks,
            firsts,
            long_blocks,
            main,
            offsets,
            separators,
            first_longs,
            long,
            long_offsets,
            cache: Mutex::new(BlockCache::new(block_count, DEFAULT_CACHE_BYTES)),
        })
    }

    pub fn len(&self) -> u64 {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Bytes on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.blocks.len()
            + self.long_blocks.len()
            + self.firsts.len() as u64
            + self.directory_bytes
            + self.dictionary_bytes
    }

    /// Number of blocks of the main section, which holds every entry (long
    /// keys as stubs).
    pub fn block_count(&self) -> usize {
        self.main.blocks()
    }

    /// The entries held by main block `block` (`block < block_count()`).
    pub fn block_range(&self, block: usize) -> std::ops::Range<u64> {
        self.main.firsts[block]..self.main.firsts[block + 1]
    }

    /// The main block holding entry `index` (`index < len()`).
    pub fn block_of(&self, index: u64) -> usize {
        self.main.locate(index)
    }

    /// Sets the memory for decoded blocks (default [`DEFAULT_CACHE_BYTES`]);
    /// blocks over the budget are dropped, least recently used first (roughly).
    pub fn set_cache_budget(&self, bytes: usize) {
        self.cache.lock().unwrap().set_budget(bytes);
    }

    /// Memory held by decoded blocks now.
    pub fn cache_bytes(&self) -> usize {
        self.cache.lock().unwrap().bytes()
    }

    /// Drops every decoded block (for measuring cold lookups).
    pub fn clear_cache(&self) {
        self.cache.lock().unwrap().clear();
    }

    fn corrupt(&self, file: &str, reason: String) -> IndexError {
        IndexError::Corrupt {
            path: self.dir.join(file),
            reason,
        }
    }

    /// Decodes block `id`: a main block, or long block `id - block_count()`.
    fn decode(&self, id: usize) -> Result<DecodedBlock> {
        let main_blocks = self.main.blocks();
        let (file, bytes, decoder, firsts, offsets, block) = if id < main_blocks {
            let offsets = &self.offsets;
            (
                BLOCKS_FILE,
                &self.blocks,
                &self.main_decoder,
                &self.main.firsts,
                offsets,
                id,
            )
        } else {
            let offsets = &self.long_offsets;
            let block = id - main_blocks;
            (
                LONG_BLOCKS_FILE,
                &self.long_blocks,
                &self.long_decoder,
                &self.long.firsts,
                offsets,
                block,
            )
        };
        let entries = (firsts[block + 1] - firsts[block]) as usize;
        bytes
            .read(offsets[block]..offsets[block + 1], |b| {
                decoder.decode(b, entries)
            })?
            .ok_or_else(|| self.undecodable(file, block))
    }

    /// Block `block` of `file` does not decode.
    fn undecodable(&self, file: &str, block: usize) -> IndexError {
        self.corrupt(file, format!("block {block} does not decode"))
    }

    /// Main block `id` expanded from its front coding.
    fn expand(&self, id: usize, front_coded: &[u8]) -> Result<DecodedBlock> {
        DecodedBlock::from_front_coded(front_coded, self.main_entries(id))
            .ok_or_else(|| self.undecodable(BLOCKS_FILE, id))
    }

    /// Entries of main block `id`.
    fn main_entries(&self, id: usize) -> usize {
        (self.main.firsts[id + 1] - self.main.firsts[id]) as usize
    }

    /// The front coding of main block `id`, read and decompressed now, and
    /// cached.
    fn read_front_coded(&self, id: usize) -> Result<Arc<[u8]>> {
        let front_coded = self
            .blocks
            .read(self.offsets[id]..self.offsets[id + 1], |b| {
                self.main_decoder
                    .with_front_coded(b, |raw| Arc::<[u8]>::from(raw))
            })?
            .ok_or_else(|| self.undecodable(BLOCKS_FILE, id))?;
        let cached = Cached::FrontCoded(front_coded.clone());
        self.cache.lock().unwrap().insert(id, cached);
        Ok(front_coded)
    }

    /// Decoded blocks (see [`decode`](Self::decode) for ids), from the cache or
    /// decoded now, in parallel when there are several; main blocks decoded
    /// now are cached (the cache keeps no long block: one holds a key,
    /// rarely asked for again soon, and would take the place of main
    /// blocks, which serve many).
    fn fetch(&self, ids: &[usize]) -> Result<Vec<Arc<DecodedBlock>>> {
        let mut out = Vec::with_capacity(ids.len());
        // Blocks to decode, with their front coding if it is cached.
        let mut misses: Vec<(usize, Option<Arc<[u8]>>)> = Vec::new();
        {
            let mut cache = self.cache.lock().unwrap();
            for (k, &id) in ids.iter().enumerate() {
                match cache.get(id) {
                    Some(Cached::Expanded(block)) => out.push(Some(block)),
                    Some(Cached::FrontCoded(front_coded)) => {
                        misses.push((k, Some(front_coded)));
                        out.push(None);
                    }
                    None => {
                        misses.push((k, None));
                        out.push(None);
                    }
                }
            }
        }
        if !misses.is_empty() {
            let decode = |(k, front_coded): &(usize, Option<Arc<[u8]>>)| {
                match front_coded {
                    Some(front_coded) => self.expand(ids[*k], front_coded),
                    None => self.decode(ids[*k]),
                }
                .map(Arc::new)
            };
            let decoded: Vec<Result<Arc<DecodedBlock>>> = if misses.len() >= PARALLEL_DECODE {
                misses.par_iter().map(decode).collect()
            } else {
                misses.iter().map(decode).collect()
            };
            let mut cache = self.cache.lock().unwrap();
            for ((k, _), block) in misses.iter().zip(decoded) {
                let block = block?;
                cache.insert(ids[*k], Cached::Expanded(block.clone()));
                out[*k] = Some(block);
            }
        }
        Ok(out.into_iter().map(|b| b.expect("fetched")).collect())
    }

    fn out_of_range(&self, index: u64) -> IndexError {
        self.corrupt(INDEX_FILE, format!("vocabulary index {index} out of range"))
    }

    /// Keys of many entries at once: each block is decoded at most once
    /// (and not at all if it is in the cache). A few keys are borrowed from
    /// their blocks; many (from [`SORTED_KEYS`] on) are read in vocabulary
    /// order, a round of blocks at a time, and copied out, so that memory
    /// holds the keys asked for, not every block they lie in: a large result
    /// whose terms lie all over a vocabulary larger than the cache decodes
    /// each block once per call instead of once per key.
    pub fn key_refs(&self, indexes: &[u64]) -> Result<Keys> {
        if indexes.len() >= sorted::SORTED_KEYS {
            return self.copied_keys(indexes).map(|k| Keys(KeyStore::Copied(k)));
        }
        let mut refs = Vec::with_capacity(indexes.len());
        // Block ids of `blocks`, and back.
        let mut ids: Vec<usize> = Vec::new();
        let mut slots: FxHashMap<usize, u32> = FxHashMap::default();
        let mut slot_of = |id: usize, ids: &mut Vec<usize>| {
            *slots.entry(id).or_insert_with(|| {
                ids.push(id);
                (ids.len() - 1) as u32
            })
        };
        let mut last = (usize::MAX, 0);
        for &index in indexes {
            if index >= self.entries {
                return Err(self.out_of_range(index));
            }
            let block = self.main.locate(index);
            if block != last.0 {
                last = (block, slot_of(block, &mut ids));
            }
            refs.push((last.1, (index - self.main.firsts[block]) as u32));
        }
        let mut blocks = self.fetch(&ids)?;
        if blocks.iter().any(|b| b.has_long()) {
            // Long keys: from the stub's rank to the long section.
            let main_slots = ids.len();
            let main_blocks = self.main.blocks();
            let mut last = (usize::MAX, 0);
            for r in refs.iter_mut() {
                let Some(rank) = blocks[r.0 as usize].long_rank(r.1 as usize) else {
                    continue;
                };
                let long_index = self.first_longs[ids[r.0 as usize]] + u64::from(rank);
                if long_index >= self.long.len() {
                    return Err(
                        self.corrupt(INDEX_FILE, format!("long key {long_index} out of range"))
                    );
                }
                let block = self.long.locate(long_index);
                if block != last.0 {
                    last = (block, slot_of(main_blocks + block, &mut ids));
                }
                *r = (last.1, (long_index - self.long.firsts[block]) as u32);
            }
            blocks.extend(self.fetch(&ids[main_slots..])?);
        }
        Ok(Keys(KeyStore::Blocks { blocks, refs }))
    }

    /// Keys of many entries at once, copied; see [`key_refs`](Self::key_refs).
    pub fn keys(&self, indexes: &[u64]) -> Result<Vec<Vec<u8>>> {
        Ok(self.key_refs(indexes)?.iter().map(<[u8]>::to_vec).collect())
    }

    /// The key of entry `index` (`index < len()`).
    pub fn key(&self, index: u64) -> Result<Vec<u8>> {
        Ok(self.key_refs(&[index])?.get(0).to_vec())
    }

    /// A key that sorts after every key of the previous block and at or before
    /// this block's first key.
    fn separator(&self, block: usize) -> &[u8] {
        &self.firsts[self.separators[block] as usize..self.separators[block + 1] as usize]
    }

    /// The index of the first entry whose key is >= `key` (`len()` if none).
    pub fn lower_bound(&self, key: &[u8]) -> Result<u64> {
        let block_count = self.main.blocks();
        // Last block whose separator <= key.
        let (mut lo, mut hi) = (0, block_count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.separator(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 {
            return Ok(0);
        }
        let block = lo - 1;
        let decoded = self.fetch(&[block])?.pop().expect("fetched");
        let (mut lo, mut hi) = (0, decoded.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let stored = decoded.key(mid);
            // A stub orders the long key unless it is a prefix of `key`.
            let less = match decoded.long_rank(mid) {
                Some(_) if key.starts_with(stored) => {
                    self.key(self.main.firsts[block] + mid as u64)?.as_slice() < key
                }
                _ => stored < key,
            };
            if less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(self.main.firsts[block] + lo as u64)
    }

    /// The index of `key`, if it is in the vocabulary.
    pub fn find(&self, key: &[u8]) -> Result<Option<u64>> {
        let index = self.lower_bound(key)?;
        if index < self.entries && self.key(index)? == key {
            Ok(Some(index))
        } else {
            Ok(None)
        }
    }
}

/// Finds the block holding an entry: a table from the entry number's high bits
/// to the block holding the first such entry, then a short walk forward.
struct Locator {
    /// First entry of each block, then the number of entries.
    firsts: Vec<u64>,
    shift: u32,
    table: Vec<u32>,
}

impl Locator {
    fn new(firsts: Vec<u64>) -> Locator {
        let blocks = firsts.len().saturating_sub(1);
        let entries = firsts.last().copied().unwrap_or(0);
        if blocks == 0 || firsts.windows(2).any(|w| w[0] >= w[1]) {
            // Empty, or corrupt (which `open` reports).
            return Locator {
                firsts,
                shift: 0,
                table: Vec::new(),
            };
        }
        // Buckets of about half a block.
        let shift = (entries / blocks as u64 / 2).max(1).ilog2();
        let mut table = Vec::with_capacity((entries >> shift) as usize + 1);
        let mut block = 0;
        for bucket in 0..=((entries - 1) >> shift) {
            let first = bucket << shift;
            while firsts[block + 1] <= first {
                block += 1;
            }
            table.push(block as u32);
        }
        Locator {
            firsts,
            shift,
            table,
        }
    }

    fn blocks(&self) -> usize {
        self.firsts.len().saturating_sub(1)
    }

    fn len(&self) -> u64 {
        self.firsts.last().copied().unwrap_or(0)
    }

    /// The block holding entry `index < len()`.
    #[inline]
    fn locate(&self, index: u64) -> usize {
        let mut block = self.table[(index >> self.shift) as usize] as usize;
        while self.firsts[block + 1] <= index {
            block += 1;
        }
        block
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::{LONG_KEY, STUB};
    use super::super::{dictionaries, VocabWriter};
    use super::*;
    use proptest::prelude::*;

    fn write(keys: &[Vec<u8>]) -> (tempfile::TempDir, Vocabulary) {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = VocabWriter::create(dir.path(), &dictionaries(keys)).unwrap();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(writer.push(key.clone()).unwrap(), i as u64);
        }
        assert_eq!(writer.finish().unwrap(), keys.len() as u64);
        let vocab = Vocabulary::open(dir.path()).unwrap();
        (dir, vocab)
    }

    /// Keys near and around the probes that matter: equal to a key, just
    /// before or after one, a long key's stub or a prefix of it.
    fn probes(keys: &[Vec<u8>], step: usize) -> Vec<Vec<u8>> {
        let mut probes = vec![Vec::new(), vec![0], vec![0xFF; 3]];
        for key in keys.iter().step_by(step) {
            probes.push(key.clone());
            probes.push([key.as_slice(), &[0]].concat());
            let mut after = key.clone();
            *after.last_mut().unwrap() = after.last().unwrap().wrapping_add(1);
            probes.push(after);
            probes.push(key[..key.len() - 1].to_vec());
            for cut in [STUB - 1, STUB, STUB + 1, LONG_KEY - 1, LONG_KEY] {
                if cut < key.len() {
                    probes.push(key[..cut].to_vec());
                }
            }
        }
        probes
    }

    /// Checks every key, and searches around every `step`-th key.
    fn check(keys: &[Vec<u8>], vocab: &Vocabulary, step: usize) {
        assert_eq!(vocab.len(), keys.len() as u64);
        let all: Vec<u64> = (0..keys.len() as u64).collect();
        assert_eq!(vocab.keys(&all).unwrap(), keys);
        let shuffled: Vec<u64> = all
            .iter()
            .rev()
            .chain(&all)
            .map(|i| i * 7 % keys.len().max(1) as u64)
            .collect();
        let refs = vocab.key_refs(&shuffled).unwrap();
        for (n, &i) in shuffled.iter().enumerate() {
            assert_eq!(refs.get(n), keys[i as usize]);
        }
        for probe in probes(keys, step) {
            let expected = keys.partition_point(|k| *k < probe) as u64;
            assert_eq!(vocab.lower_bound(&probe).unwrap(), expected, "{probe:?}");
            let found = keys.binary_search(&probe).ok().map(|i| i as u64);
            assert_eq!(vocab.find(&probe).unwrap(), found);
        }
        assert!(vocab.key(keys.len() as u64).is_err());
    }

    /// Sorted distinct keys with shared prefixes, lengths on both sides of
    /// the long-key threshold and long keys whose stubs are equal.
    fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let key = (0..4u8, 0..3usize, prop::collection::vec(0..4u8, 0..6)).prop_map(
            |(head, size, tail)| {
                let len = [3, LONG_KEY - 1, LONG_KEY + 40][size];
                let mut key = vec![head; len.min(STUB + 2)];
                key.resize(len, b'x');
                key.extend(tail);
                key
            },
        );
        prop::collection::btree_set(key, 0..60).prop_map(|s| s.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn lookups_agree_with_the_sorted_keys(keys in keys_strategy()) {
            let (_dir, vocab) = write(&keys);
            check(&keys, &vocab, 1);
        }
    }

    #[test]
    fn many_blocks_in_both_sections_with_any_cache_budget() {
        // Words that repeat, as in real text, so both dictionaries are made.
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
        ];
        let mut keys: Vec<Vec<u8>> = (0..12_000u32)
            .map(|i| {
                let mut key = format!("\x03{:06}", i * 31 % 12_000).into_bytes();
                let len = [20, 90, 255, 256, 600, 3000][(i % 6) as usize];
                let mut w = i as usize;
                while key.len() < len {
                    key.push(b' ');
                    key.extend_from_slice(words[w % words.len()].as_bytes());
                    w = (w * 5 + 1) % 1_000_003;
                }
                key.truncate(len);
                key
            })
            .collect();
        keys.sort();
        keys.dedup();
        let (_dir, vocab) = write(&keys);
        assert!(vocab.block_count() > 10);
        // Text: the long section is token-coded, one key to a block.
        assert!(dictionaries(&keys).long_code().is_some());
        let long_keys = keys.iter().filter(|k| k.len() >= LONG_KEY).count();
        assert_eq!(vocab.long.blocks(), long_keys);
        check(&keys, &vocab, 7);
        for budget in [0, 100_000] {
            vocab.clear_cache();
            vocab.set_cache_budget(budget);
            check(&keys, &vocab, 97);
            assert!(vocab.cache_bytes() <= budget);
        }
        // Some blocks expanded (a search expands its block), the rest
        // front-coded: copying every key walks some and borrows from others.
        vocab.clear_cache();
        vocab.set_cache_budget(1 << 30);
        for key in keys.iter().step_by(50) {
            vocab.lower_bound(key).unwrap();
        }
        check(&keys, &vocab, 97);
    }
}
