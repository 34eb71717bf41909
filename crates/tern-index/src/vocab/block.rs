//! One vocabulary block: keys front-coded against their predecessor, then zstd.

use crate::varint;

/// Raw keys of a block are compressed together once they reach this size, so
/// zstd sees enough text to find repeats, while decoding one block stays cheap.
pub const TARGET_RAW_BYTES: usize = 24 * 1024;
pub const MAX_ENTRIES: usize = 512;
const ZSTD_LEVEL: i32 = 9;

/// Front-codes sorted keys: per key, the length shared with the previous key and
/// the remaining suffix.
pub fn encode(keys: &[Vec<u8>]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(keys.iter().map(|k| k.len() + 2).sum());
    let mut prev: &[u8] = &[];
    for key in keys {
        let shared = prev.iter().zip(key).take_while(|(a, b)| a == b).count();
        varint::write(shared as u64, &mut raw);
        varint::write((key.len() - shared) as u64, &mut raw);
        raw.extend_from_slice(&key[shared..]);
        prev = key;
    }
    zstd::bulk::compress(&raw, ZSTD_LEVEL).expect("zstd compression of an in-memory buffer")
}

/// A block with its keys expanded, for lookups.
pub struct DecodedBlock {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl DecodedBlock {
    pub fn decode(compressed: &[u8], entries: usize) -> Option<DecodedBlock> {
        let raw = zstd::stream::decode_all(compressed).ok()?;
        let mut data: Vec<u8> = Vec::with_capacity(raw.len() * 2);
        let mut ends = Vec::with_capacity(entries);
        let mut pos = 0;
        let mut prev_start = 0;
        for _ in 0..entries {
            let shared = varint::read(&raw, &mut pos)? as usize;
            let suffix = varint::read(&raw, &mut pos)? as usize;
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
