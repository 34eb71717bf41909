//! Many keys at once, read in vocabulary order: the indexes asked for are
//! sorted, the blocks they lie in are fetched a round at a time (in
//! parallel, through the cache) and the keys copied out before the next
//! round, by a walk through each block's front coding unless the block is
//! cached expanded. A column of a large result (the objects of a scan) names terms
//! from all over the vocabulary; asked one slice at a time, each slice
//! decodes a block per key once the vocabulary outgrows the cache, while
//! asked whole and in order, a block serves every key of the column that
//! lies in it.

use super::super::front_coded_walk::FrontCodedWalk;
use super::block_cache::Cached;
use super::{DecodedBlock, Result, Vocabulary};
use crate::error::IndexError;
use rayon::prelude::*;
use std::sync::Arc;

/// Keys from which [`Vocabulary::key_refs`] reads in vocabulary order.
/// Borrowing keys from their blocks instead holds every block a column
/// touches until the column is written: on a full export of BSBM 10M, a
/// job's column of objects (a few thousand keys) held some 10 MB of
/// blocks, where copying holds a round of them; the copies cost no
/// measurable speed.
pub const SORTED_KEYS: usize = 256;
/// Blocks decoded per round (2 KiB of keys each): what the copying holds at
/// once besides the copies. Rounds go in vocabulary order, so a larger
/// round decodes no block fewer; it only holds more of them. (A few in
/// tests, so that their vocabularies take many rounds.)
const ROUND_BLOCKS: usize = if cfg!(test) { 4 } else { 32 };

/// Keys copied side by side (in vocabulary order), with where each key
/// asked for lies.
pub struct CopiedKeys {
    bytes: Vec<u8>,
    /// Per key asked for: start and end in `bytes`.
    spans: Vec<(u32, u32)>,
    /// Whether every key was copied from text (a UTF-8 block, checked when
    /// it was decoded), so that `bytes` is UTF-8 at every span's bounds and
    /// keys need no second check when they are read as text.
    text: bool,
}

impl CopiedKeys {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Bytes of the keys copied.
    pub fn bytes(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let (start, end) = self.spans[i];
        &self.bytes[start as usize..end as usize]
    }

    /// The `i`-th key as text, if UTF-8: unchecked when every key came from
    /// a UTF-8 block.
    #[inline]
    pub fn get_str(&self, i: usize) -> Option<&str> {
        let bytes = self.get(i);
        if self.text {
            // SAFETY: with `text`, `copy` appended every key from a `&str`
            // (`DecodedBlock::key_str`) and every span is one such key.
            Some(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            std::str::from_utf8(bytes).ok()
        }
    }
}

/// A key to copy: who asked for it (its position), and where it is.
#[derive(Clone, Copy)]
struct Wanted {
    position: u32,
    /// The entry's index in the main section, then in the long section
    /// for a long key.
    index: u64,
}

impl Vocabulary {
    /// The keys of `indexes`, copied (see the module comment).
    pub(super) fn copied_keys(&self, indexes: &[u64]) -> Result<CopiedKeys> {
        if indexes.len() >= u32::MAX as usize {
            return Err(self.corrupt(super::INDEX_FILE, "too many keys at once".to_owned()));
        }
        let mut wanted: Vec<Wanted> = indexes
            .iter()
            .enumerate()
            .map(|(position, &index)| Wanted {
                position: position as u32,
                index,
            })
            .collect();
        wanted.sort_unstable_by_key(|w| w.index);
        if let Some(last) = wanted.last() {
            if last.index >= self.entries {
                return Err(self.out_of_range(last.index));
            }
        }
        let mut copied = CopiedKeys {
            bytes: Vec::new(),
            spans: vec![(0, 0); indexes.len()],
            text: true,
        };
        // Equal indexes share the first one's copy.
        let mut repeats: Vec<(u32, u32)> = Vec::new();
        let mut distinct: Vec<Wanted> = Vec::with_capacity(wanted.len());
        for w in wanted {
            match distinct.last() {
                Some(last) if last.index == w.index => repeats.push((w.position, last.position)),
                _ => distinct.push(w),
            }
        }
        let mut at = 0;
        while at < distinct.len() {
            at = self.copy_round(&distinct, at, &mut copied)?;
        }
        for (position, first) in repeats {
            copied.spans[position as usize] = copied.spans[first as usize];
        }
        Ok(copied)
    }

    /// Copies the keys of `distinct[at..]` that lie in the next
    /// [`ROUND_BLOCKS`] main blocks; where the next round starts.
    fn copy_round(&self, distinct: &[Wanted], at: usize, copied: &mut CopiedKeys) -> Result<usize> {
        let mut blocks: Vec<usize> = Vec::new();
        let mut block_of: Vec<u32> = Vec::new();
        let mut end = at;
        while end < distinct.len() {
            let block = self.main.locate(distinct[end].index);
            if blocks.last() != Some(&block) {
                if blocks.len() == ROUND_BLOCKS {
                    break;
                }
                blocks.push(block);
            }
            block_of.push((blocks.len() - 1) as u32);
            end += 1;
        }
        let fetched = self.fetch_for_copy(&blocks)?;
        let mut long: Vec<Wanted> = Vec::new();
        // Entries ascend within a block: one walk serves them all.
        let mut walk = FrontCodedWalk::default();
        let mut walking = None;
        for (w, &slot) in distinct[at..end].iter().zip(&block_of) {
            let block = blocks[slot as usize];
            let entry = (w.index - self.main.firsts[block]) as usize;
            let long_rank = match &fetched[slot as usize] {
                Cached::Expanded(decoded) => {
                    let rank = decoded.long_rank(entry);
                    if rank.is_none() {
                        copy_entry(copied, w.position, decoded, entry)?;
                    }
                    rank
                }
                Cached::FrontCoded(front_coded) => {
                    if walking != Some(slot) {
                        walk.restart(front_coded, self.main_entries(block));
                        walking = Some(slot);
                    }
                    let found = walk
                        .entry(entry)
                        .ok_or_else(|| self.undecodable(super::BLOCKS_FILE, block))?;
                    if found.long_rank.is_none() {
                        let text = std::str::from_utf8(found.key).is_ok();
                        copy(copied, w.position, found.key, text)?;
                    }
                    found.long_rank
                }
            };
            if let Some(rank) = long_rank {
                long.push(Wanted {
                    position: w.position,
                    index: self.first_longs[block] + u64::from(rank),
                });
            }
        }
        drop(walk);
        drop(fetched);
        // Long keys come in the order of their stubs, which is theirs.
        let mut k = 0;
        while k < long.len() {
            k = self.copy_long_round(&long, k, copied)?;
        }
        Ok(end)
    }

    /// As [`copy_round`](Self::copy_round) for long keys.
    fn copy_long_round(
        &self,
        long: &[Wanted],
        at: usize,
        copied: &mut CopiedKeys,
    ) -> Result<usize> {
        let main_blocks = self.main.blocks();
        let mut ids: Vec<usize> = Vec::new();
        let mut block_of: Vec<u32> = Vec::new();
        let mut end = at;
        while end < long.len() {
            let index = long[end].index;
            if index >= self.long.len() {
                return Err(
                    self.corrupt(super::INDEX_FILE, format!("long key {index} out of range"))
                );
            }
            let block = self.long.locate(index);
            if ids.last() != Some(&(main_blocks + block)) {
                if ids.len() == ROUND_BLOCKS {
                    break;
                }
                ids.push(main_blocks + block);
            }
            block_of.push((ids.len() - 1) as u32);
            end += 1;
        }
        // Not cached (see `fetch`).
        let decoded = self.fetch(&ids)?;
        for (w, &slot) in long[at..end].iter().zip(&block_of) {
            let block = ids[slot as usize] - main_blocks;
            let entry = (w.index - self.long.firsts[block]) as usize;
            copy_entry(copied, w.position, &decoded[slot as usize], entry)?;
        }
        Ok(end)
    }
}

impl Vocabulary {
    /// Main blocks `ids` to copy keys from, expanded if the cache holds
    /// them so, else front-coded. Blocks missing from the cache
    /// are read and decompressed (in parallel when there are many) and
    /// their front coding cached, not their expanded keys: copying walks to
    /// the few keys it wants in each, and a block expanded for them would
    /// take three times the memory.
    fn fetch_for_copy(&self, ids: &[usize]) -> Result<Vec<Cached>> {
        let mut out: Vec<Option<Cached>> = Vec::with_capacity(ids.len());
        let mut misses = Vec::new();
        // Front-coded blocks used again since the clock last passed: hot
        // enough to expand, so that the next lookups borrow instead of walk
        // (after an export filled the cache with front codings, a DESCRIBE
        // of all products walked them at 2.2 s against 0.9 s).
        let mut hot: Vec<usize> = Vec::new();
        {
            let mut cache = self.cache.lock().unwrap();
            for (k, &id) in ids.iter().enumerate() {
                out.push(match cache.get_again(id) {
                    Some((expanded @ Cached::Expanded(_), _)) => Some(expanded),
                    Some((Cached::FrontCoded(_), true)) if cache.may_expand() => {
                        hot.push(k);
                        None
                    }
                    Some((front_coded, _)) => Some(front_coded),
                    None => {
                        misses.push(k);
                        None
                    }
                });
            }
        }
        if !hot.is_empty() {
            // `fetch` expands them and caches them expanded.
            let hot_ids: Vec<usize> = hot.iter().map(|&k| ids[k]).collect();
            for (&k, block) in hot.iter().zip(self.fetch(&hot_ids)?) {
                out[k] = Some(Cached::Expanded(block));
            }
        }
        let read = |&k: &usize| self.read_front_coded(ids[k]);
        let read: Vec<Result<Arc<[u8]>>> = if misses.len() >= super::PARALLEL_DECODE {
            misses.par_iter().map(read).collect()
        } else {
            misses.iter().map(read).collect()
        };
        for (&k, block) in misses.iter().zip(read) {
            out[k] = Some(Cached::FrontCoded(block?));
        }
        Ok(out.into_iter().map(|b| b.expect("fetched")).collect())
    }
}

/// Appends entry `entry` of `block` for position `position`.
fn copy_entry(
    copied: &mut CopiedKeys,
    position: u32,
    block: &DecodedBlock,
    entry: usize,
) -> Result<()> {
    // Text (the block UTF-8, the key whole characters) is not checked again.
    match block.key_str(entry) {
        Some(key) => copy(copied, position, key.as_bytes(), true),
        None => copy(copied, position, block.key(entry), false),
    }
}

/// Appends `key` for position `position`; `text` if it is known to be
/// UTF-8.
fn copy(copied: &mut CopiedKeys, position: u32, key: &[u8], text: bool) -> Result<()> {
    copied.text &= text;
    let start = copied.bytes.len();
    copied.bytes.extend_from_slice(key);
    let end = copied.bytes.len();
    if end > u32::MAX as usize {
        return Err(IndexError::Corrupt {
            path: std::path::PathBuf::new(),
            reason: "more than 4 GiB of keys asked for at once".to_owned(),
        });
    }
    copied.spans[position as usize] = (start as u32, end as u32);
    Ok(())
}
