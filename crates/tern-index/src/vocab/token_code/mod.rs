//! A static, canonical, length-limited Huffman code over word tokens, for the
//! blocks of long literals (descriptions, reviews, abstracts).
//!
//! zstd with a shared dictionary gets 2.3x on BSBM's long literals (random
//! English words): 4 KiB blocks are too small for it to find the repeats, which
//! are words across blocks. An order-0 code over word tokens gets 3.8x on
//! the same 4 KiB blocks (trained on 1/8 of the texts; 4.4x trained on all;
//! at the index level, BSBM 10M's `vocab.long` is 87 MB instead of 157),
//! because its statistics are learnt once per index. This module owns that
//! code: training ([`TokenCode::train`]), its serialized form stored in the
//! index, encoding, and the decoder used on every lookup of a long literal.
//!
//! The alphabet is the 256 single bytes (so that any byte string, such as
//! front-coded keys with their varints, can be coded) plus up to
//! [`MAX_TOKENS`] multi-byte tokens: a word (a maximal run of ASCII
//! alphanumerics and bytes ≥ 0x80, so UTF-8 words count), with or without the
//! one space that follows it. Codes are at most [`MAX_LEN`] bits, assigned
//! canonically (by length, then symbol), written most significant bit first.

use crate::varint;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;

/// Leading byte of the serialized form.
const FORMAT: u8 = 1;
/// Multi-byte tokens at most. Not the 65,000 first planned: BSBM's texts
/// draw on ~90,000 words, and trained on 1/8 of its long literals (84,558
/// tokens seen twice), the code gets 3.80x with every token and 3.13x with
/// 65,000 (decoding faster too: fewer words fall back to single bytes).
const MAX_TOKENS: usize = 131_072;
/// Longest code, in bits.
const MAX_LEN: u32 = 24;
/// Bits indexing the decoder's primary table (2^11 entries of 8 bytes: 16 KiB,
/// half of L1). 12 bits measured no faster, on BSBM's long literals or
/// generated text.
const PRIMARY_BITS: u32 = 11;
/// Bytes of a token at most (its length is one byte in the serialized form).
const MAX_TOKEN_BYTES: usize = 255;
/// Bytes the decoder copies at once (the arena ends with as many of slack).
const COPY: usize = 16;

/// Whether `b` is part of words.
#[inline]
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80
}

/// A symbol's decoding entry: its bytes' offset in the arena (bits 0..32), their
/// number (32..40) and its code length (40..48).
#[inline]
fn entry(offset: usize, bytes: usize, code_len: u8) -> u64 {
    offset as u64 | (bytes as u64) << 32 | u64::from(code_len) << 40
}

/// A trained token code, ready to encode and decode. See the module comment.
#[derive(Clone)]
pub struct TokenCode {
    /// Bytes of every symbol back to back: the 256 single bytes, then the tokens.
    arena: Vec<u8>,
    /// Per symbol, its [`entry`].
    symbols: Vec<u64>,
    /// Per symbol, its code `<< 8 | ` its length.
    codes: Vec<u32>,
    /// Token symbols for the encoder, see [`token_map`].
    tokens: FxHashMap<u64, u32>,
    /// Indexed by the next [`PRIMARY_BITS`] bits: the [`entry`] of the symbol
    /// whose code they start with if it is that short, else only a code length
    /// (bits 40..48) to start the canonical search from.
    primary: Vec<u64>,
    /// Boxed to keep the struct small (it goes in enums).
    canonical: Box<Canonical>,
    /// [`entry`] of every symbol, in canonical order (code length, symbol).
    sorted: Vec<u64>,
}

/// The canonical code, per code length `l` (index 0 unused).
#[derive(Clone)]
struct Canonical {
    /// The exclusive upper bound of codes of length at most `l`, left-aligned
    /// to [`MAX_LEN`] bits.
    limit: [u32; MAX_LEN as usize + 1],
    /// The first code of length `l`.
    first: [u32; MAX_LEN as usize + 1],
    /// The index in `sorted` of the first symbol with a code of length `l`.
    offset: [u32; MAX_LEN as usize + 1],
}

/// The end of the word that starts at `i` in `raw`.
#[inline]
fn word_end(raw: &[u8], i: usize) -> usize {
    raw[i..]
        .iter()
        .position(|&b| !is_word(b))
        .map_or(raw.len(), |n| i + n)
}

/// Calls `f` with every word of `raw`, with the space that follows it if any.
fn each_word<'a>(raw: &'a [u8], mut f: impl FnMut(&'a [u8])) {
    let mut i = 0;
    while i < raw.len() {
        if is_word(raw[i]) {
            let end = word_end(raw, i);
            let end = end + usize::from(raw.get(end) == Some(&b' '));
            f(&raw[i..end]);
            i = end;
        } else {
            i += 1;
        }
    }
}

/// Calls `emit` with the symbols `raw` is coded as, given the symbol of a token.
#[inline]
fn tokenize(find: impl Fn(&[u8]) -> Option<u32>, raw: &[u8], mut emit: impl FnMut(u32)) {
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if !is_word(b) {
            emit(u32::from(b));
            i += 1;
            continue;
        }
        let end = word_end(raw, i);
        let len = end - i;
        let mut found = None;
        if len < MAX_TOKEN_BYTES && raw.get(end) == Some(&b' ') {
            found = find(&raw[i..=end]).map(|s| (s, end + 1));
        }
        if found.is_none() && (2..=MAX_TOKEN_BYTES).contains(&len) {
            found = find(&raw[i..end]).map(|s| (s, end));
        }
        let Some((symbol, next)) = found else {
            raw[i..end].iter().for_each(|&b| emit(u32::from(b)));
            i = end;
            continue;
        };
        emit(symbol);
        i = next;
    }
}

/// Token symbols by the [`hash`] of their bytes (a hit must be checked against
/// the token's bytes: a collision leaves the later token unused, never wrong).
/// Keys of 8 bytes rather than boxed token bytes: no allocation per token.
fn token_map(tokens: &[&[u8]]) -> FxHashMap<u64, u32> {
    let mut map = FxHashMap::default();
    map.reserve(tokens.len());
    for (i, &t) in tokens.iter().enumerate() {
        map.entry(hash(t)).or_insert((256 + i) as u32);
    }
    map
}

fn hash(bytes: &[u8]) -> u64 {
    FxBuildHasher.hash_one(bytes)
}

/// Huffman code lengths for `freqs` (each ≥ 1, at least two), depth not capped.
fn huffman(freqs: &[u64]) -> Vec<u8> {
    let n = freqs.len();
    let mut heap: BinaryHeap<_> = freqs
        .iter()
        .enumerate()
        .map(|(i, &w)| Reverse((w, i)))
        .collect();
    // Internal nodes are numbered n.. in creation order, so a parent's number
    // is above its children's and the root's is the last.
    let mut parent = vec![0; 2 * n - 1];
    let mut next = n;
    while let (Some(Reverse((wa, a))), Some(Reverse((wb, b)))) = (heap.pop(), heap.pop()) {
        parent[a] = next;
        parent[b] = next;
        heap.push(Reverse((wa.saturating_add(wb), next)));
        next += 1;
    }
    let mut depth = vec![0u8; 2 * n - 1];
    for node in (0..2 * n - 2).rev() {
        depth[node] = depth[parent[node]].saturating_add(1);
    }
    depth.truncate(n);
    depth
}

/// Huffman code lengths for `freqs` limited to [`MAX_LEN`]: while the plain
/// code is too deep, halve the frequencies (keeping them ≥ 1) and rebuild.
/// Halving flattens the skew that makes a code deep; at worst every frequency
/// is 1 and the code is balanced, 18 bits deep for the largest alphabet.
fn code_lengths(freqs: &[u64]) -> Vec<u8> {
    let mut freqs: Vec<u64> = freqs.iter().map(|&f| f.max(1)).collect();
    loop {
        let lengths = huffman(&freqs);
        if lengths.iter().all(|&l| u32::from(l) <= MAX_LEN) {
            return lengths;
        }
        freqs.iter_mut().for_each(|f| *f = (*f / 2).max(1));
    }
}

impl TokenCode {
    /// Trains a code on sample texts (the raw bytes that will later be encoded,
    /// or text like them). Tokens are the words (with their following space, if
    /// any, as they occur) of at least 2 bytes seen at least twice, the
    /// `MAX_TOKENS` (131,072) that save the most bytes (`count * (len - 1)`); the
    /// code is built from the symbol frequencies of the samples tokenized with
    /// them, every single byte counted once more so that each has a code.
    pub fn train<'a>(samples: impl IntoIterator<Item = &'a [u8]>) -> TokenCode {
        let samples: Vec<&[u8]> = samples.into_iter().collect();
        let mut counts: FxHashMap<&[u8], u64> = FxHashMap::default();
        for sample in &samples {
            each_word(sample, |t| *counts.entry(t).or_insert(0) += 1);
        }
        let mut chosen: Vec<(&[u8], u64)> = counts
            .into_iter()
            .filter(|&(t, c)| c >= 2 && (2..=MAX_TOKEN_BYTES).contains(&t.len()))
            .collect();
        let saved = |&(t, c): &(&[u8], u64)| c * (t.len() as u64 - 1);
        chosen.sort_unstable_by(|a, b| saved(b).cmp(&saved(a)).then_with(|| a.0.cmp(b.0)));
        chosen.truncate(MAX_TOKENS);
        let tokens: Vec<&[u8]> = chosen.into_iter().map(|(t, _)| t).collect();
        let map = token_map(&tokens);
        let find = |t: &[u8]| {
            map.get(&hash(t))
                .copied()
                .filter(|&s| tokens[s as usize - 256] == t)
        };
        let mut freqs: Vec<u64> = (0..256 + tokens.len())
            .map(|s| u64::from(s < 256))
            .collect();
        for sample in &samples {
            tokenize(find, sample, |s| freqs[s as usize] += 1);
        }
        Self::from_parts(&tokens, &code_lengths(&freqs)).expect("a Huffman code is complete")
    }

    /// The code with these tokens (symbols 256..) and code lengths per symbol;
    /// None unless the tokens are 2 to 255 bytes and the lengths 1 to
    /// [`MAX_LEN`] with a Kraft sum of exactly 1 (a complete code, so that
    /// every bit string decodes).
    fn from_parts(tokens: &[&[u8]], lengths: &[u8]) -> Option<TokenCode> {
        let n = 256 + tokens.len();
        if tokens.len() > MAX_TOKENS || lengths.len() != n {
            return None;
        }
        let mut count = [0u32; MAX_LEN as usize + 1];
        let mut kraft = 0u64;
        for &l in lengths {
            if l == 0 || u32::from(l) > MAX_LEN {
                return None;
            }
            count[l as usize] += 1;
            kraft += 1 << (MAX_LEN - u32::from(l));
        }
        if kraft != 1 << MAX_LEN {
            return None;
        }
        let mut arena: Vec<u8> = (0..=255).collect();
        let mut symbols: Vec<u64> = (0..256).map(|b| entry(b, 1, lengths[b])).collect();
        for (&t, &l) in tokens.iter().zip(&lengths[256..]) {
            if !(2..=MAX_TOKEN_BYTES).contains(&t.len()) {
                return None;
            }
            symbols.push(entry(arena.len(), t.len(), l));
            arena.extend_from_slice(t);
        }
        arena.resize(arena.len() + COPY, 0);
        let (mut first, mut offset, mut limit) = ([0u32; 25], [0u32; 25], [0u32; 25]);
        let (mut code, mut start) = (0u32, 0u32);
        for l in 1..=MAX_LEN as usize {
            code = (code + count[l - 1]) << 1;
            first[l] = code;
            offset[l] = start;
            start += count[l];
            limit[l] = (code + count[l]) << (MAX_LEN as usize - l);
        }
        let mut next = offset;
        let mut sorted = vec![0u64; n];
        let mut codes = vec![0u32; n];
        for (s, &l) in lengths.iter().enumerate() {
            let l = l as usize;
            let index = next[l];
            next[l] += 1;
            sorted[index as usize] = symbols[s];
            codes[s] = (first[l] + index - offset[l]) << 8 | l as u32;
        }
        let primary = (0..1u32 << PRIMARY_BITS)
            .map(|p| {
                let window = p << (MAX_LEN - PRIMARY_BITS);
                // The shortest code with this prefix is the one of its first window.
                let l = (1..=MAX_LEN)
                    .find(|&l| window < limit[l as usize])
                    .unwrap_or(MAX_LEN);
                if l <= PRIMARY_BITS {
                    let l = l as usize;
                    sorted[(offset[l] + (window >> (MAX_LEN as usize - l)) - first[l]) as usize]
                } else {
                    u64::from(l) << 40
                }
            })
            .collect();
        Some(TokenCode {
            arena,
            symbols,
            codes,
            tokens: token_map(tokens),
            primary,
            canonical: Box::new(Canonical {
                limit,
                first,
                offset,
            }),
            sorted,
        })
    }

    /// Number of multi-byte tokens in the alphabet.
    fn token_count(&self) -> usize {
        self.symbols.len() - 256
    }

    /// Serialized form, stored in the index: the format byte, the number of
    /// tokens (varint), each token as a length byte and its bytes, then the code
    /// length of every symbol, one byte each. [`from_bytes`](Self::from_bytes)
    /// reads it back.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![FORMAT];
        varint::write(self.token_count() as u64, &mut out);
        for &e in &self.symbols[256..] {
            let (offset, len) = (e as u32 as usize, (e >> 32) as u8 as usize);
            out.push(len as u8);
            out.extend_from_slice(&self.arena[offset..offset + len]);
        }
        out.extend(self.symbols.iter().map(|&e| (e >> 40) as u8));
        out
    }

    /// Reads a code written by [`to_bytes`](Self::to_bytes). None on anything
    /// malformed (unknown format, truncation, trailing bytes, bad token or code
    /// lengths, incomplete code); never panics, and allocates in proportion to
    /// `bytes` only.
    pub fn from_bytes(bytes: &[u8]) -> Option<TokenCode> {
        if bytes.first() != Some(&FORMAT) {
            return None;
        }
        let mut pos = 1;
        let count = varint::read(bytes, &mut pos)?;
        // Each token takes at least 4 bytes: length, 2 bytes, code length.
        let rest = (bytes.len() - pos) as u64;
        if count > MAX_TOKENS as u64 || count * 4 + 256 > rest {
            return None;
        }
        let mut tokens = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let len = *bytes.get(pos)? as usize;
            tokens.push(bytes.get(pos + 1..pos + 1 + len)?);
            pos += 1 + len;
        }
        Self::from_parts(&tokens, &bytes[pos..])
    }

    /// Appends the coded form of `raw` to `out`: the codes of its symbols, most
    /// significant bit first, the last byte padded with zeros. Not
    /// self-delimiting: the caller keeps `raw.len()` for [`decode`](Self::decode).
    pub fn encode(&self, raw: &[u8], out: &mut Vec<u8>) {
        // `bits` (< 32 between symbols) pending bits at the bottom of `acc`.
        let (mut acc, mut bits) = (0u64, 0u32);
        let find = |t: &[u8]| {
            let s = *self.tokens.get(&hash(t))?;
            let e = self.symbols[s as usize];
            let offset = e as u32 as usize;
            (self.arena.get(offset..offset + t.len()) == Some(t)).then_some(s)
        };
        tokenize(find, raw, |s| {
            let code = self.codes[s as usize];
            acc = acc << (code & 0xFF) | u64::from(code >> 8);
            bits += code & 0xFF;
            if bits >= 32 {
                bits -= 32;
                out.extend_from_slice(&((acc >> bits) as u32).to_be_bytes());
            }
        });
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
        if bits > 0 {
            out.push((acc << (8 - bits)) as u8);
        }
    }

    /// Decodes exactly `raw_len` bytes from `coded` into `out` (appending).
    /// None if `coded` is truncated or corrupt (it ends before `raw_len` bytes,
    /// or a token would go past them); `out` may then hold garbage. Never
    /// panics, and runs in time linear in `raw_len`, which is rejected
    /// beforehand if more than `coded` could hold.
    pub fn decode(&self, coded: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Option<()> {
        if raw_len > coded.len().saturating_mul(8 * MAX_TOKEN_BYTES) {
            return None;
        }
        // Tokens are copied COPY bytes at a time (then the excess overwritten),
        // a fixed-size copy the compiler inlines, so `out` gets COPY bytes of
        // slack, cut off at the end.
        let start = out.len();
        out.resize(start + raw_len + COPY, 0);
        let dst = &mut out[start..];
        let mut o = 0;
        // The next `bits` bits are the top of `buf`; the bits below may hold
        // the bits that follow them (the same ones a refill would put there)
        // or zeros. `pos` is the next byte of `coded` to load; past its end
        // the input reads as zeros.
        let (mut buf, mut bits, mut pos) = (0u64, 0u32, 0usize);
        while o < raw_len {
            if bits < MAX_LEN {
                if let Some(word) = coded
                    .get(pos..pos + 8)
                    .and_then(|w| <[u8; 8]>::try_from(w).ok())
                {
                    // Load whole bytes up to 56..63 bits (see F. Giesen,
                    // "Reading bits in far too many ways", variant 4).
                    buf |= u64::from_be_bytes(word) >> bits;
                    pos += (63 - bits as usize) >> 3;
                    bits |= 56;
                } else {
                    while bits <= 56 {
                        buf |= u64::from(coded.get(pos).copied().unwrap_or(0)) << (56 - bits);
                        bits += 8;
                        pos += 1;
                    }
                    // Bits consumed beyond the input: it is truncated.
                    if pos * 8 - bits as usize > coded.len() * 8 {
                        return None;
                    }
                }
            }
            let window = (buf >> (64 - MAX_LEN)) as u32;
            let mut e = self.primary[(window >> (MAX_LEN - PRIMARY_BITS)) as usize];
            let mut l = (e >> 40) as u32 & 0xFF;
            if l > PRIMARY_BITS {
                let c = &*self.canonical;
                // The complete code makes limit[MAX_LEN] exceed every window.
                while l < MAX_LEN && window >= c.limit[l as usize] {
                    l += 1;
                }
                let l = l as usize;
                let index =
                    (c.offset[l] + (window >> (MAX_LEN as usize - l))).wrapping_sub(c.first[l]);
                e = *self.sorted.get(index as usize)?;
            }
            buf <<= l;
            bits -= l;
            let (offset, len) = (e as u32 as usize, (e >> 32) as u8 as usize);
            if o + len > raw_len {
                return None;
            }
            dst[o..o + COPY].copy_from_slice(&self.arena[offset..offset + COPY]);
            if len > COPY {
                dst[o..o + len].copy_from_slice(&self.arena[offset..offset + len]);
            }
            o += len;
        }
        out.truncate(start + raw_len);
        (pos * 8 - bits as usize <= coded.len() * 8).then_some(())
    }
}

#[cfg(test)]
mod tests;
