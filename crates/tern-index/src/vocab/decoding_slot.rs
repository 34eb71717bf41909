//! A zstd decompression context with the buffer it decodes blocks into: a
//! copy of the section's dictionary followed by room for a block.
//!
//! zstd decodes a block right after the dictionary, so that it sees the
//! dictionary as the start of the same stream and copies matches from it
//! inline, instead of through one `memmove` call per match from a separate
//! dictionary. A dictionary with entropy tables (see `entropy_tables`) is
//! digested once per slot, referencing the copy in the buffer (which keeps
//! the two contiguous): passed as plain bytes, zstd would parse and build
//! its tables again for every block.

use zstd::zstd_safe::{DCtx, DDict};

/// The four bytes a zstd dictionary with a header (and tables) starts with;
/// any other dictionary is raw content.
pub(super) const DICTIONARY_MAGIC: [u8; 4] = 0xEC30_A437u32.to_le_bytes();

pub(super) struct DecodingSlot {
    context: DCtx<'static>,
    /// The dictionary digested, referencing the copy at the start of
    /// `buffer`. Declared before `buffer`, so that it is dropped first.
    digested: Option<DDict<'static>>,
    /// The dictionary, then room for a block. Never resized (its bytes
    /// must stay where `digested` points); written only past the
    /// dictionary.
    buffer: Vec<u8>,
    dictionary_len: usize,
}

impl DecodingSlot {
    /// A slot for blocks of up to `room` bytes decoded.
    pub(super) fn new(dictionary: &[u8], room: usize) -> DecodingSlot {
        let mut buffer = Vec::with_capacity(dictionary.len() + room);
        buffer.extend_from_slice(dictionary);
        buffer.resize(dictionary.len() + room, 0);
        let digested = if dictionary.starts_with(&DICTIONARY_MAGIC) {
            // SAFETY: the start of `buffer`'s heap allocation, which is
            // neither moved nor resized while the slot lives and is only
            // written past the dictionary (through `decompress`), and which
            // outlives `digested` (dropped first).
            let copy: &'static [u8] =
                unsafe { std::slice::from_raw_parts(buffer.as_ptr(), dictionary.len()) };
            DDict::try_create_by_reference(copy)
        } else {
            None
        };
        DecodingSlot {
            context: DCtx::create(),
            digested,
            buffer,
            dictionary_len: dictionary.len(),
        }
    }

    /// Bytes of a decoded block the slot has room for.
    pub(super) fn room(&self) -> usize {
        self.buffer.len() - self.dictionary_len
    }

    /// Decompresses `frame`, which must decode to `raw_len` bytes (at most
    /// [`room`](Self::room)), and calls `with` on them; `None` if it does
    /// not.
    pub(super) fn decompress<R>(
        &mut self,
        frame: &[u8],
        raw_len: usize,
        with: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        if raw_len > self.room() {
            return None;
        }
        let start = self.buffer.as_mut_ptr();
        // SAFETY: `raw_len` bytes past the dictionary lie within `buffer`,
        // and do not overlap the dictionary's, which zstd reads; slices are
        // made from the buffer's pointer, not from a reference to all of it.
        let out =
            unsafe { std::slice::from_raw_parts_mut(start.add(self.dictionary_len), raw_len) };
        let decoded = match &self.digested {
            Some(digested) => self.context.decompress_using_ddict(out, frame, digested),
            None => {
                // SAFETY: as above.
                let dictionary =
                    unsafe { std::slice::from_raw_parts(start.cast_const(), self.dictionary_len) };
                self.context.decompress_using_dict(out, frame, dictionary)
            }
        };
        match decoded {
            Ok(n) if n == raw_len => Some(with(out)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::entropy_tables::with_entropy_tables;
    use super::*;
    use zstd::bulk::Compressor;

    fn text(seed: u32) -> Vec<u8> {
        (0..150)
            .flat_map(|k| {
                format!("\x01http://example.org/p/{}/{k}", seed * 31 + k % 17).into_bytes()
            })
            .collect()
    }

    #[test]
    fn blocks_decode_with_digested_and_raw_dictionaries() {
        let content = text(999);
        let samples: Vec<Vec<u8>> = (0..64).map(text).collect();
        let formatted = with_entropy_tables(&content, &samples, 5).unwrap();
        for dictionary in [formatted, content] {
            let mut compressor = Compressor::with_dictionary(5, &dictionary).unwrap();
            let mut slot = DecodingSlot::new(&dictionary, 8 * 1024);
            assert_eq!(
                slot.digested.is_some(),
                dictionary.starts_with(&DICTIONARY_MAGIC)
            );
            for seed in [3, 70, 5000] {
                let raw = text(seed);
                let frame = compressor.compress(&raw).unwrap();
                assert_eq!(
                    slot.decompress(&frame, raw.len(), <[u8]>::to_vec),
                    Some(raw.clone())
                );
                // The wrong length, a frame cut short, a block with no room.
                assert!(slot.decompress(&frame, raw.len() - 1, |_| ()).is_none());
                assert!(slot
                    .decompress(&frame[..frame.len() - 3], raw.len(), |_| ())
                    .is_none());
                let mut small = DecodingSlot::new(&dictionary, 100);
                assert!(small.decompress(&frame, raw.len(), |_| ()).is_none());
            }
        }
    }

    #[test]
    fn a_corrupt_dictionary_header_decodes_nothing_and_does_not_panic() {
        let mut dictionary = DICTIONARY_MAGIC.to_vec();
        dictionary.extend_from_slice(&[0xFF; 40]);
        let mut slot = DecodingSlot::new(&dictionary, 1024);
        assert!(slot
            .decompress(&[0x28, 0xB5, 0x2F, 0xFD, 0, 0], 10, |_| ())
            .is_none());
    }
}
