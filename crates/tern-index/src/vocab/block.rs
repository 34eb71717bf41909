//! One vocabulary block: keys front-coded against their predecessor, then zstd
//! with a dictionary shared by all blocks.
//!
//! Blocks must stay small so that looking up one term decodes little, but small
//! blocks alone compress poorly: the words of a literal-heavy vocabulary repeat
//! across blocks, not within them. A raw-content dictionary made of sample blocks
//! gives every block those repeats (on BSBM's literals: 20.5 MB → 14.4 MB).

use crate::varint;
use zstd::bulk::{Compressor, Decompressor};
use zstd::dict::DecoderDictionary;

/// Raw keys of a block are compressed together once they reach this size.
pub const TARGET_RAW_BYTES: usize = 32 * 1024;
pub const MAX_ENTRIES: usize = 1024;
/// Level 5 with the dictionary: level 9 saves 4% of space for twice the time.
const ZSTD_LEVEL: i32 = 5;
/// Sample blocks taken into the dictionary, and bytes taken from each.
const DICTIONARY_SAMPLES: usize = 64;
const SAMPLE_BYTES: usize = 16 * 1024;

/// Front-codes sorted keys: per key, the length shared with the previous key and
/// the remaining suffix.
pub fn front_code(keys: &[Vec<u8>]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(keys.iter().map(|k| k.len() + 2).sum());
    let mut prev: &[u8] = &[];
    for key in keys {
        let shared = prev.iter().zip(key).take_while(|(a, b)| a == b).count();
        varint::write(shared as u64, &mut raw);
        varint::write((key.len() - shared) as u64, &mut raw);
        raw.extend_from_slice(&key[shared..]);
        prev = key;
    }
    raw
}

/// Builds the shared dictionary from sorted keys: front-coded runs of keys taken
/// at evenly spaced places *by bytes*, so it holds what the bulk of the blocks
/// look like (long literals, not the short IRIs that dominate by count).
/// Small vocabularies get no dictionary: it would cost more than it saves.
pub fn dictionary<K: AsRef<[u8]>>(sorted_keys: &[K]) -> Vec<u8> {
    let total: usize = sorted_keys.iter().map(|k| k.as_ref().len()).sum();
    if total < 8 * DICTIONARY_SAMPLES * SAMPLE_BYTES {
        return Vec::new();
    }
    let spacing = total / DICTIONARY_SAMPLES;
    let mut dictionary = Vec::with_capacity(DICTIONARY_SAMPLES * SAMPLE_BYTES);
    // Byte position in the vocabulary where the next sample starts.
    let mut next_sample = 0;
    let mut seen = 0;
    let mut group: Vec<Vec<u8>> = Vec::new();
    let mut group_bytes = 0;
    for key in sorted_keys {
        let key = key.as_ref();
        if !group.is_empty() || seen >= next_sample {
            group.push(key.to_vec());
            group_bytes += key.len();
            if group_bytes >= SAMPLE_BYTES {
                let raw = front_code(&group);
                dictionary.extend_from_slice(&raw[..raw.len().min(SAMPLE_BYTES)]);
                group.clear();
                group_bytes = 0;
                next_sample += spacing;
            }
        }
        seen += key.len();
    }
    dictionary
}

pub struct BlockEncoder {
    dictionary: Vec<u8>,
}

impl BlockEncoder {
    pub fn new(dictionary: &[u8]) -> BlockEncoder {
        BlockEncoder {
            dictionary: dictionary.to_vec(),
        }
    }

    /// Encodes many blocks with one compression context, which digests the
    /// dictionary once. Each block's bytes: raw length (u32 LE), then the zstd frame.
    pub fn encode_all(&self, blocks: &[Vec<Vec<u8>>]) -> Vec<Vec<u8>> {
        let mut compressor = Compressor::with_dictionary(ZSTD_LEVEL, &self.dictionary)
            .expect("zstd context for an in-memory buffer");
        blocks
            .iter()
            .map(|keys| {
                let raw = front_code(keys);
                let frame = compressor
                    .compress(&raw)
                    .expect("zstd compression of an in-memory buffer");
                [(raw.len() as u32).to_le_bytes().as_slice(), &frame].concat()
            })
            .collect()
    }
}

pub struct BlockDecoder {
    dictionary: DecoderDictionary<'static>,
}

impl BlockDecoder {
    pub fn new(dictionary: &[u8]) -> BlockDecoder {
        BlockDecoder {
            dictionary: DecoderDictionary::copy(dictionary),
        }
    }

    pub fn decode(&self, block: &[u8], entries: usize) -> Option<DecodedBlock> {
        let raw_len = u32::from_le_bytes(block.get(..4)?.try_into().ok()?) as usize;
        let mut decompressor = Decompressor::with_prepared_dictionary(&self.dictionary).ok()?;
        let raw = decompressor.decompress(&block[4..], raw_len).ok()?;
        DecodedBlock::from_front_coded(&raw, entries)
    }
}

/// A block with its keys expanded, for lookups.
pub struct DecodedBlock {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl DecodedBlock {
    fn from_front_coded(raw: &[u8], entries: usize) -> Option<DecodedBlock> {
        let mut data: Vec<u8> = Vec::with_capacity(raw.len() * 2);
        let mut ends = Vec::with_capacity(entries);
        let mut pos = 0;
        let mut prev_start = 0;
        for _ in 0..entries {
            let shared = varint::read(raw, &mut pos)? as usize;
            let suffix = varint::read(raw, &mut pos)? as usize;
            let start = data.len();
            if shared > start - prev_start {
                return None;
            }
            data.extend_from_within(prev_start..prev_start + shared);
            data.extend_from_slice(raw.get(pos..pos + suffix)?);
            pos += suffix;
            prev_start = start;
            ends.push(data.len() as u32);
        }
        Some(DecodedBlock { data, ends })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.data[start..self.ends[i] as usize]
    }

    /// Index of the first key >= `key`.
    pub fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}
