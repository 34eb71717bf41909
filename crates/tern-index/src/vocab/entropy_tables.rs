//! A section's raw-content dictionary turned into a zstd dictionary with
//! entropy tables (literal Huffman and sequence FSE tables learnt from
//! sample blocks), so that blocks can reuse the dictionary's tables instead
//! of carrying and building their own.
//!
//! A main block is small (2 KiB of front-coded keys, some 280 bytes
//! compressed), so its own tables are a large share of its bytes and
//! building them a large share of decoding it: on BSBM 100M, where an
//! export decodes a block for nearly every term it writes, reading table
//! descriptions and building decoding tables was 14% of the server's time.

use zstd::zstd_safe::zstd_sys;

/// `content` with a zstd dictionary header and entropy tables learnt from
/// `samples` (front-coded blocks like those to compress, at `level`); `None`
/// where zstd cannot learn them (too few samples, or samples it cannot
/// compress), and the caller keeps the raw content.
pub fn with_entropy_tables(content: &[u8], samples: &[Vec<u8>], level: i32) -> Option<Vec<u8>> {
    if content.is_empty() || samples.is_empty() {
        return None;
    }
    let flat: Vec<u8> = samples.concat();
    let sizes: Vec<usize> = samples.iter().map(Vec::len).collect();
    // Header and tables take a few KB; the content is kept whole.
    let capacity = content.len() + (64 << 10);
    let mut out = vec![0u8; capacity];
    let parameters = zstd_sys::ZDICT_params_t {
        compressionLevel: level,
        notificationLevel: 0,
        dictID: 0,
    };
    // SAFETY: every pointer is to a live buffer of the length passed with
    // it (`out` of `capacity` bytes, written by zstd; `content`; the
    // samples' bytes back to back with their sizes, as many as `sizes`
    // holds), and none is kept after the call.
    let written = unsafe {
        zstd_sys::ZDICT_finalizeDictionary(
            out.as_mut_ptr().cast(),
            capacity,
            content.as_ptr().cast(),
            content.len(),
            flat.as_ptr().cast(),
            sizes.as_ptr(),
            u32::try_from(sizes.len()).ok()?,
            parameters,
        )
    };
    // SAFETY: a plain function of the returned code.
    if unsafe { zstd_sys::ZDICT_isError(written) } != 0 || written > capacity {
        return None;
    }
    out.truncate(written);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::decoding_slot::DICTIONARY_MAGIC;
    use super::*;

    #[test]
    fn tables_are_added_in_front_of_the_content_or_not_at_all() {
        let block = |i: u32| -> Vec<u8> {
            (0..200)
                .flat_map(|k| {
                    format!("http://example.org/item/{}/{k} ", i * 7 + k % 13).into_bytes()
                })
                .collect()
        };
        let samples: Vec<Vec<u8>> = (0..64).map(block).collect();
        let content = block(1000);
        let dictionary = with_entropy_tables(&content, &samples, 9).unwrap();
        assert!(dictionary.starts_with(&DICTIONARY_MAGIC));
        assert!(dictionary.ends_with(&content));
        assert!(with_entropy_tables(&content, &[], 9).is_none());
        assert!(with_entropy_tables(&[], &samples, 9).is_none());
    }
}
