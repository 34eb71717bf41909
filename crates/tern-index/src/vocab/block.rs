//! Vocabulary blocks: keys front-coded against their predecessor, then zstd
//! with a dictionary shared by all blocks of a section.
//!
//! Blocks must stay small so that looking up one term decodes little, but small
//! blocks alone compress poorly: the words of a literal-heavy vocabulary repeat
//! across blocks, not within them. A raw-content dictionary made of sample blocks
//! gives every block those repeats. It is kept small (tens to a few hundred KB)
//! so that it stays in the core's cache while blocks are decoded. The main
//! section's dictionary also carries entropy tables learnt from sample
//! blocks (`entropy_tables`), so that its blocks need none of their own.
//!
//! Long keys (at least [`LONG_KEY`] bytes: descriptions, reviews, abstracts)
//! hold most of the bytes of a typical vocabulary but few of its entries, and
//! are rarely the terms a query looks up by the thousand. They live in their
//! own section; the main section keeps a [`STUB`] of each, so that the main
//! blocks stay dense in entries and cheap to decode, and searches can order
//! most keys without the long section.

use super::decoding_slot::DecodingSlot;
use super::entropy_tables::with_entropy_tables;
use super::token_code::TokenCode;
use crate::varint;
use std::sync::Mutex;
use zstd::bulk::Compressor;
use zstd::dict::EncoderDictionary;

/// Key bytes of a block (stubs for long keys in the main section) after which
/// it is compressed. Small blocks, because writing results looks up terms
/// from all over the vocabulary and each lookup missing the cache decodes a
/// whole block: on BSBM 10M, going from 32 KiB to 8 KiB (main) and 4 KiB
/// (long) made a full export with a 64 MiB cache run at 450 instead of 250
/// MB/s, for 3% more vocabulary bytes on disk. At 100M (23 M terms, a
/// 64 MiB cache holding a few percent of them) nearly every term an export
/// writes costs a block decoded for it alone: 8 KiB → 4 KiB made a full
/// TSV export of BSBM 100M run at 335 instead of 257 MB/s (same binary,
/// both indexes), for 19.3 instead of 19.0 bytes/triple. 4 KiB → 2 KiB
/// (measured 2026-12-01, same binary per index, alternating): BSBM 100M
/// TSV 204-211 → 276-299 MB/s, server CPU 225-235 → 157-170 s; 10M
/// unchanged within noise; 19.3 → 20.0 (1M), 19.1 → 19.7 (10M), 19.3 → 20.0
/// (100M) bytes/triple. 1 KiB gained some 10% more at 100M (310-326 MB/s)
/// for 21.0-21.2 bytes/triple, most of it in the directory (a separator and
/// a record per block), so 2 KiB it is.
pub const MAIN_TARGET_RAW_BYTES: usize = 2 * 1024;
pub const LONG_TARGET_RAW_BYTES: usize = 4 * 1024;
/// A token-coded long block holds one key. The code's statistics are the
/// section's, learnt once, so a block of one key compresses about as well as
/// a larger one, while a lookup decodes only the key it wants: an export
/// reads long texts in an order unrelated to the vocabulary's, and on BSBM
/// 10M, with four keys to a 4 KiB block, it decoded each block about four
/// times (decoding tokens was 13% of a Turtle export's profile).
pub const TOKEN_LONG_TARGET_RAW_BYTES: usize = 1;
/// Room for a decoded block that a new decoding slot gets at least (main
/// blocks hold a little over [`MAIN_TARGET_RAW_BYTES`]).
const SLOT_ROOM: usize = 16 * 1024;
/// Decoding buffers larger than this are not kept for the next block.
const KEPT_BUFFER_BYTES: usize = 128 * 1024;
/// Entries of a main block at most.
pub const MAX_ENTRIES: usize = 1024;
/// Keys this long or longer go to the long section.
pub const LONG_KEY: usize = 256;
/// Bytes of a long key kept in the main section.
pub const STUB: usize = 16;
/// zstd levels. The main section's blocks reuse its dictionary's entropy
/// tables (see `entropy_tables`) when compressed at level 5 or below,
/// whose strategies take the dictionary's tables for any block of fewer than
/// 1,000 matches; levels 6 and up weigh each block's own tables against
/// them, and on BSBM 10M level 9 still gave most blocks their own (building
/// FSE tables was 1.3% of a TSV export, against 0.1% at level 5), for 4%
/// fewer bytes in `vocab.blocks` (23.4 MB against 24.4). The long section
/// is most of the vocabulary's bytes: on BSBM's, level 9 is 2% smaller than
/// 6 but takes 1.8 times as long to compress, for the same decoding speed.
const MAIN_LEVEL: i32 = 5;
const LONG_LEVEL: i32 = 6;
/// Bytes of a serialized token code at most (its tokens are at most 255
/// bytes, 131,072 of them).
const MAX_TOKEN_CODE_BYTES: usize = 40 << 20;
/// zstd level of the stored token code: 19 took 0.8 s of a 2.6 s BSBM 1M load.
const TOKEN_CODE_LEVEL: i32 = 9;
/// Bytes of long keys the token code is trained on.
const TOKEN_SAMPLE_BYTES: usize = 8 << 20;
/// Dictionary samples per section, and bytes taken from each.
const MAIN_SAMPLES: (usize, usize) = (16, 4 * 1024);
/// Blocks the main section's entropy tables are learnt from, and their key
/// bytes (those of a block).
const MAIN_TABLE_SAMPLES: (usize, usize) = (64, MAIN_TARGET_RAW_BYTES);
const LONG_SAMPLES: (usize, usize) = (32, 8 * 1024);

/// The bytes a section stores for a key: the key itself, or for a long key in
/// the main section its stub (cut between two UTF-8 characters, so that a
/// block of keys is UTF-8 as a whole).
pub fn stored(key: &[u8]) -> (&[u8], bool) {
    if key.len() >= LONG_KEY {
        let mut end = STUB;
        while end > 1 && key[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        (&key[..end], true)
    } else {
        (key, false)
    }
}

/// Front-codes keys as they come: per key, the length shared with the previous
/// key, then `suffix length << 1 | long`, then the suffix.
#[derive(Default)]
pub struct FrontCoder {
    raw: Vec<u8>,
    prev: Vec<u8>,
    entries: usize,
    /// Bytes of the keys as stored (before front coding).
    key_bytes: usize,
}

impl FrontCoder {
    pub fn push(&mut self, key: &[u8], long: bool) {
        let shared = self
            .prev
            .iter()
            .zip(key)
            .take_while(|(a, b)| a == b)
            .count();
        varint::write(shared as u64, &mut self.raw);
        varint::write(
            ((key.len() - shared) as u64) << 1 | u64::from(long),
            &mut self.raw,
        );
        self.raw.extend_from_slice(&key[shared..]);
        self.prev.truncate(shared);
        self.prev.extend_from_slice(&key[shared..]);
        self.entries += 1;
        self.key_bytes += key.len();
    }

    pub fn entries(&self) -> usize {
        self.entries
    }

    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// The front-coded bytes so far; starts a new block.
    pub fn take(&mut self) -> Vec<u8> {
        self.prev.clear();
        self.entries = 0;
        self.key_bytes = 0;
        std::mem::take(&mut self.raw)
    }
}

/// The dictionaries of the two sections, stored together in `vocab.dict`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dictionaries {
    pub main: Vec<u8>,
    /// The long section's zstd dictionary, when its blocks are zstd frames.
    pub long: Vec<u8>,
    /// The long section's word-token code ([`TokenCode::to_bytes`], zstd
    /// compressed: its word list is a megabyte on BSBM, a third of that
    /// compressed), when its blocks are coded with it instead of zstd.
    pub long_tokens: Vec<u8>,
}

impl Dictionaries {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for part in [&self.main, &self.long, &self.long_tokens] {
            out.extend_from_slice(&(part.len() as u64).to_le_bytes());
            out.extend_from_slice(part);
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Dictionaries> {
        let mut rest = bytes;
        let mut part = || -> Option<Vec<u8>> {
            let len = usize::try_from(u64::from_le_bytes(rest.get(..8)?.try_into().ok()?)).ok()?;
            let part = rest.get(8..8usize.checked_add(len)?)?.to_vec();
            rest = &rest[8 + len..];
            Some(part)
        };
        let dictionaries = Dictionaries {
            main: part()?,
            long: part()?,
            long_tokens: part()?,
        };
        rest.is_empty().then_some(dictionaries)
    }

    /// The long section's token code, if its blocks use one.
    pub fn long_code(&self) -> Option<TokenCode> {
        if self.long_tokens.is_empty() {
            return None;
        }
        let bytes = zstd::bulk::decompress(&self.long_tokens, MAX_TOKEN_CODE_BYTES).ok()?;
        TokenCode::from_bytes(&bytes)
    }
}

/// Builds both dictionaries from sorted keys (all of them, or an evenly spread
/// sample). The long section gets a word-token code where that makes its
/// sample smaller than zstd with a dictionary does (text: descriptions,
/// reviews, abstracts), a zstd dictionary otherwise (geometries, JSON…).
pub fn dictionaries<K: AsRef<[u8]>>(sorted_keys: &[K]) -> Dictionaries {
    let main_keys = || sorted_keys.iter().map(|k| stored(k.as_ref()));
    let content = sample(main_keys, MAIN_SAMPLES);
    // Tables learnt from blocks other than the content's (a block of the
    // content would be all one match).
    let blocks = stretches(main_keys, MAIN_TABLE_SAMPLES, 1);
    let main = with_entropy_tables(&content, &blocks, MAIN_LEVEL).unwrap_or(content);
    let long_keys = || {
        sorted_keys
            .iter()
            .map(|k| k.as_ref())
            .filter(|k| k.len() >= LONG_KEY)
    };
    let long = sample(|| long_keys().map(|k| (k, false)), LONG_SAMPLES);
    // Judged as each would be stored: token-coded blocks of one key, zstd
    // blocks of LONG_TARGET_RAW_BYTES, each block with its directory record.
    let keys = token_sample(long_keys());
    let single = front_coded_blocks(&keys, TOKEN_LONG_TARGET_RAW_BYTES);
    let code = TokenCode::train(single.iter().map(Vec::as_slice));
    let mut coded = Vec::new();
    let tokens: usize = single
        .iter()
        .map(|b| {
            coded.clear();
            code.encode(b, &mut coded);
            4 + coded.len() + super::LONG_RECORD
        })
        .sum();
    let zstd = BlockEncoder::long(&long);
    let framed: usize = front_coded_blocks(&keys, LONG_TARGET_RAW_BYTES)
        .iter()
        .map(|b| zstd.encode_all(std::iter::once(b.as_slice()))[0].len() + super::LONG_RECORD)
        .sum();
    if tokens < framed {
        Dictionaries {
            main,
            long: Vec::new(),
            long_tokens: zstd::bulk::compress(&code.to_bytes(), TOKEN_CODE_LEVEL)
                .expect("zstd compression of an in-memory buffer"),
        }
    } else {
        Dictionaries {
            main,
            long,
            long_tokens: Vec::new(),
        }
    }
}

/// Long keys to train and judge the token code on: up to
/// [`TOKEN_SAMPLE_BYTES`], taken evenly over the keys.
fn token_sample<'a>(keys: impl Iterator<Item = &'a [u8]> + Clone) -> Vec<&'a [u8]> {
    let total: usize = keys.clone().map(<[u8]>::len).sum();
    let keep_every = total.div_ceil(TOKEN_SAMPLE_BYTES).max(1);
    keys.step_by(keep_every).collect()
}

/// `keys` front-coded into blocks sealed at `target_raw_bytes`, as the
/// writer seals them.
fn front_coded_blocks(keys: &[&[u8]], target_raw_bytes: usize) -> Vec<Vec<u8>> {
    let mut blocks = Vec::new();
    let mut group = FrontCoder::default();
    for key in keys {
        group.push(key, false);
        if group.key_bytes() >= target_raw_bytes {
            blocks.push(group.take());
        }
    }
    if group.entries() > 0 {
        blocks.push(group.take());
    }
    blocks
}

/// A raw-content dictionary: front-coded runs of keys taken at evenly spaced
/// places *by bytes*, so it holds what the bulk of the blocks look like.
/// Small sections get no dictionary: it would cost more than it saves.
fn sample<'a, I: Iterator<Item = (&'a [u8], bool)>>(
    keys: impl Fn() -> I,
    (samples, sample_bytes): (usize, usize),
) -> Vec<u8> {
    stretches(keys, (samples, sample_bytes), 2)
        .iter()
        .flat_map(|raw| &raw[..raw.len().min(sample_bytes)])
        .copied()
        .collect()
}

/// Front-coded runs of keys of `sample_bytes` (as stored) each, one per
/// `samples`-th of the keys' bytes, starting `quarter` quarters into it;
/// none if the keys are fewer than eight times the bytes taken.
fn stretches<'a, I: Iterator<Item = (&'a [u8], bool)>>(
    keys: impl Fn() -> I,
    (samples, sample_bytes): (usize, usize),
    quarter: usize,
) -> Vec<Vec<u8>> {
    let total: usize = keys().map(|(k, _)| k.len()).sum();
    if total < 8 * samples * sample_bytes {
        return Vec::new();
    }
    let spacing = total / samples;
    let mut runs = Vec::with_capacity(samples);
    // Byte position in the section where the next run starts.
    let mut next_sample = spacing * quarter / 4;
    let mut seen = 0;
    let mut group = FrontCoder::default();
    for (key, long) in keys() {
        if group.entries() > 0 || seen >= next_sample {
            group.push(key, long);
            if group.key_bytes() >= sample_bytes {
                runs.push(group.take());
                next_sample += spacing;
            }
        }
        seen += key.len();
    }
    runs
}

/// Compresses blocks of one section; shared by the threads that compress,
/// with the dictionary digested once.
pub enum BlockEncoder {
    Zstd {
        dictionary: EncoderDictionary<'static>,
        /// Literals stored as they are instead of Huffman-coded (see
        /// [`BlockEncoder::main`]).
        raw_literals: bool,
    },
    Tokens(TokenCode),
}

impl BlockEncoder {
    /// For main blocks, whose literals are left uncoded: an export of a
    /// large vocabulary decodes a main block for nearly every term it
    /// writes, and decoding Huffman-coded literals was 14% of the server's
    /// time on BSBM 100M. Left raw, a full TSV export of BSBM 100M ran at
    /// 622-656 instead of 558-581 MB/s (server CPU 72-76 instead of 82-85
    /// s, alternating), for main blocks 12% larger: 19.7 → 20.1 (10M) and
    /// 20.0 → 20.4 (100M) bytes/triple. Readers are unchanged (a frame says
    /// how its literals are stored).
    pub fn main(dictionary: &[u8]) -> BlockEncoder {
        BlockEncoder::Zstd {
            dictionary: EncoderDictionary::copy(dictionary, MAIN_LEVEL),
            raw_literals: true,
        }
    }

    /// For a long section's zstd blocks (long keys that are not text).
    pub fn long(dictionary: &[u8]) -> BlockEncoder {
        BlockEncoder::Zstd {
            dictionary: EncoderDictionary::copy(dictionary, LONG_LEVEL),
            raw_literals: false,
        }
    }

    /// Compresses front-coded blocks (with one compression context). Each
    /// block's bytes: raw length (u32 LE), then the zstd frame or the
    /// token-coded bits.
    pub fn encode_all<'a>(&self, raws: impl Iterator<Item = &'a [u8]>) -> Vec<Vec<u8>> {
        match self {
            BlockEncoder::Zstd {
                dictionary,
                raw_literals,
            } => {
                let mut compressor = Compressor::with_prepared_dictionary(dictionary)
                    .expect("zstd context for an in-memory buffer");
                if *raw_literals {
                    use zstd::zstd_safe::{CParameter, ParamSwitch};
                    compressor
                        .set_parameter(CParameter::LiteralCompressionMode(ParamSwitch::Disable))
                        .expect("zstd takes a literal compression mode");
                }
                raws.map(|raw| {
                    let frame = compressor
                        .compress(raw)
                        .expect("zstd compression of an in-memory buffer");
                    [(raw.len() as u32).to_le_bytes().as_slice(), &frame].concat()
                })
                .collect()
            }
            BlockEncoder::Tokens(code) => raws
                .map(|raw| {
                    let mut out = (raw.len() as u32).to_le_bytes().to_vec();
                    code.encode(raw, &mut out);
                    out
                })
                .collect(),
        }
    }
}

/// Decodes blocks of one section.
///
/// Decompression contexts are pooled, each with its buffer (see
/// `decoding_slot`): making one per block costs as much as decoding a block.
pub struct BlockDecoder {
    dictionary: Vec<u8>,
    pool: Mutex<Vec<DecodingSlot>>,
    /// The section's token code, if its blocks are token-coded.
    tokens: Option<TokenCode>,
    /// Buffers for token-decoded blocks, kept like the zstd contexts' (a
    /// block's keys are copied out of it, so it is only scratch).
    token_buffers: Mutex<Vec<Vec<u8>>>,
}

impl BlockDecoder {
    pub fn new(dictionary: &[u8]) -> BlockDecoder {
        BlockDecoder {
            dictionary: dictionary.to_vec(),
            pool: Mutex::new(Vec::new()),
            tokens: None,
            token_buffers: Mutex::new(Vec::new()),
        }
    }

    pub fn tokens(code: TokenCode) -> BlockDecoder {
        BlockDecoder {
            tokens: Some(code),
            ..BlockDecoder::new(&[])
        }
    }

    pub fn decode(&self, block: &[u8], entries: usize) -> Option<DecodedBlock> {
        self.with_front_coded(block, |raw| DecodedBlock::from_front_coded(raw, entries))
            .flatten()
    }

    /// Calls `with` on the keys of `block` front-coded, as they were before
    /// compression; `None` if the block does not decompress.
    pub fn with_front_coded<R>(&self, block: &[u8], with: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let raw_len = u32::from_le_bytes(block.get(..4)?.try_into().ok()?) as usize;
        if let Some(code) = &self.tokens {
            let mut raw = self.token_buffers.lock().unwrap().pop().unwrap_or_default();
            raw.clear();
            let decoded = code
                .decode(&block[4..], raw_len, &mut raw)
                .map(|()| with(&raw));
            if raw.capacity() <= KEPT_BUFFER_BYTES {
                self.token_buffers.lock().unwrap().push(raw);
            }
            return decoded;
        }
        let pooled = self.pool.lock().unwrap().pop();
        let mut slot = match pooled {
            Some(slot) if slot.room() >= raw_len => slot,
            _ => DecodingSlot::new(&self.dictionary, raw_len.max(SLOT_ROOM)),
        };
        let decoded = slot.decompress(&block[4..], raw_len, with);
        if slot.room() <= KEPT_BUFFER_BYTES {
            self.pool.lock().unwrap().push(slot);
        }
        decoded
    }
}

/// A block with its keys expanded, for lookups.
pub struct DecodedBlock {
    data: Data,
    ends: Vec<u32>,
    /// Per entry, its rank among the block's long entries, `u32::MAX` for a
    /// key stored whole; empty if the block has no long entries.
    long_ranks: Vec<u32>,
}

/// The keys one after the other: text if they are UTF-8 (checked once here
/// rather than per key when terms are made of them).
enum Data {
    Text(String),
    Bytes(Vec<u8>),
}

impl Data {
    fn bytes(&self) -> &[u8] {
        match self {
            Data::Text(text) => text.as_bytes(),
            Data::Bytes(bytes) => bytes,
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Data::Text(text) => text.capacity(),
            Data::Bytes(bytes) => bytes.capacity(),
        }
    }
}

impl DecodedBlock {
    pub fn from_front_coded(raw: &[u8], entries: usize) -> Option<DecodedBlock> {
        // First pass: the expanded size, so that the keys are copied once into
        // a buffer of the right size.
        let (mut pos, mut total, mut longs) = (0, 0usize, 0);
        for _ in 0..entries {
            let shared = varint::read(raw, &mut pos)? as usize;
            let suffix = varint::read(raw, &mut pos)?;
            longs += (suffix & 1) as usize;
            let suffix = (suffix >> 1) as usize;
            pos = pos.checked_add(suffix)?;
            total = total.checked_add(shared)?.checked_add(suffix)?;
        }
        if pos != raw.len() || u32::try_from(total).is_err() {
            return None;
        }
        let mut data: Vec<u8> = Vec::with_capacity(total);
        let mut ends = Vec::with_capacity(entries);
        let mut long_ranks = Vec::with_capacity(if longs > 0 { entries } else { 0 });
        let mut pos = 0;
        let mut prev_start = 0;
        let mut rank = 0;
        for _ in 0..entries {
            let shared = varint::read(raw, &mut pos)? as usize;
            let suffix = varint::read(raw, &mut pos)?;
            let start = data.len();
            if shared > start - prev_start {
                return None;
            }
            data.extend_from_within(prev_start..prev_start + shared);
            let len = (suffix >> 1) as usize;
            data.extend_from_slice(&raw[pos..pos + len]);
            pos += len;
            prev_start = start;
            ends.push(data.len() as u32);
            if longs > 0 {
                if suffix & 1 == 1 {
                    long_ranks.push(rank);
                    rank += 1;
                } else {
                    long_ranks.push(u32::MAX);
                }
            }
        }
        let data = match String::from_utf8(data) {
            Ok(text) => Data::Text(text),
            Err(e) => Data::Bytes(e.into_bytes()),
        };
        Some(DecodedBlock {
            data,
            ends,
            long_ranks,
        })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes held in memory, for the cache's budget.
    pub fn memory(&self) -> usize {
        self.data.capacity() + 4 * (self.ends.capacity() + self.long_ranks.capacity()) + 96
    }

    /// The stored bytes of entry `i`: the key, or the stub of a long key.
    #[inline]
    pub fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.data.bytes()[start..self.ends[i] as usize]
    }

    /// [`key`](Self::key) as text, if the block is UTF-8 and so is the key
    /// (every key starts with an ASCII kind byte, so keys of a UTF-8 block
    /// are UTF-8).
    #[inline]
    pub fn key_str(&self, i: usize) -> Option<&str> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        match &self.data {
            Data::Text(text) => text.get(start..self.ends[i] as usize),
            Data::Bytes(_) => None,
        }
    }

    /// For a long entry (stored as a stub), its rank among the block's long
    /// entries.
    #[inline]
    pub fn long_rank(&self, i: usize) -> Option<u32> {
        self.long_ranks.get(i).copied().filter(|&r| r != u32::MAX)
    }

    pub fn has_long(&self) -> bool {
        !self.long_ranks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(keys: &[&[u8]]) -> DecodedBlock {
        let mut coder = FrontCoder::default();
        for key in keys {
            let (bytes, long) = stored(key);
            coder.push(bytes, long);
        }
        let dict = Dictionaries::default();
        let encoded =
            BlockEncoder::main(&dict.main).encode_all([coder.take()].iter().map(|r| r.as_slice()));
        BlockDecoder::new(&dict.main)
            .decode(&encoded[0], keys.len())
            .unwrap()
    }

    #[test]
    fn blocks_round_trip_with_stubs_for_long_keys() {
        let long_a = [b"\x02a".as_slice(), &[b'x'; 300]].concat();
        let long_b = [b"\x02a".as_slice(), &[b'y'; 400]].concat();
        let keys: Vec<&[u8]> = vec![
            b"\x01http://a/",
            b"\x01http://a/b",
            &long_a,
            &long_b,
            b"\x02b",
        ];
        let decoded = block(&keys);
        assert_eq!(decoded.len(), 5);
        assert_eq!(decoded.key(0), keys[0]);
        assert_eq!(decoded.key(1), keys[1]);
        assert_eq!(decoded.key(2), &long_a[..STUB]);
        assert_eq!(decoded.key(3), &long_b[..STUB]);
        assert_eq!(decoded.key(4), keys[4]);
        assert_eq!(
            (0..5).map(|i| decoded.long_rank(i)).collect::<Vec<_>>(),
            [None, None, Some(0), Some(1), None]
        );
        let short = block(&[b"a", b"ab"]);
        assert!(!short.has_long());
        assert_eq!(short.long_rank(1), None);
    }

    #[test]
    fn corrupt_blocks_do_not_decode() {
        let mut coder = FrontCoder::default();
        coder.push(b"abc", false);
        coder.push(b"abd", false);
        let raw = coder.take();
        assert!(DecodedBlock::from_front_coded(&raw, 2).is_some());
        assert!(DecodedBlock::from_front_coded(&raw, 3).is_none());
        assert!(DecodedBlock::from_front_coded(&raw[..raw.len() - 1], 2).is_none());
        // A shared length longer than the previous key.
        assert!(DecodedBlock::from_front_coded(&[0, 2, b'a', 5, 0], 2).is_none());
    }

    #[test]
    fn dictionaries_round_trip_and_sample_both_sections() {
        let keys: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| {
                let len = if i % 3 == 0 { 300 } else { 40 };
                let mut k = format!("\x02{i:08}").into_bytes();
                k.resize(len, b'a' + (i % 26) as u8);
                k
            })
            .collect();
        let dicts = dictionaries(&keys);
        assert!(!dicts.main.is_empty());
        assert!(
            dicts.long.is_empty() != dicts.long_tokens.is_empty(),
            "the long section has a zstd dictionary or a token code"
        );
        assert_eq!(Dictionaries::from_bytes(&dicts.to_bytes()), Some(dicts));
        let none = dictionaries(&keys[..10]);
        assert!(none.main.is_empty() && none.long.is_empty());
        assert_eq!(Dictionaries::from_bytes(&none.to_bytes()), Some(none));
        assert_eq!(Dictionaries::from_bytes(&[1, 2]), None);
    }

    /// Long keys of English-like text from a vocabulary of 3,000 words.
    fn text_keys(count: usize) -> Vec<Vec<u8>> {
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize
        };
        let words: Vec<String> = (0..3_000)
            .map(|i| {
                format!(
                    "{}{}",
                    ["al", "be", "cor", "dun", "ex", "fi"][i % 6],
                    i * 37
                )
            })
            .collect();
        let mut keys: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let mut key = b"\x02".to_vec();
                while key.len() < 700 {
                    // Skewed: low word numbers are far more frequent.
                    let w = (next() % 3_000) * (next() % 3_000) / 3_000;
                    key.extend_from_slice(words[w].as_bytes());
                    key.push(b' ');
                }
                key
            })
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    #[test]
    fn text_gets_a_token_code_and_long_blocks_round_trip_with_it() {
        let keys = text_keys(3_000);
        let dicts = dictionaries(&keys);
        let code = dicts.long_code().expect("text is token-coded");
        assert!(dicts.long.is_empty());
        let encoder = BlockEncoder::Tokens(code.clone());
        let decoder = BlockDecoder::tokens(code);
        let mut coder = FrontCoder::default();
        for key in &keys[..6] {
            coder.push(key, false);
        }
        let raw = coder.take();
        let encoded = encoder.encode_all(std::iter::once(raw.as_slice()));
        assert!(encoded[0].len() * 2 < raw.len(), "at least 2x on text");
        let decoded = decoder.decode(&encoded[0], 6).unwrap();
        for (i, key) in keys[..6].iter().enumerate() {
            assert_eq!(decoded.key(i), key.as_slice());
        }
        assert!(decoder
            .decode(&encoded[0][..encoded[0].len() / 2], 6)
            .is_none());
        assert_eq!(Dictionaries::from_bytes(&dicts.to_bytes()), Some(dicts));
    }
}
