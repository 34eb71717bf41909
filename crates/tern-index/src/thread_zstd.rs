//! zstd decompression with one context per thread: making a context costs
//! about as much as decompressing a block, and index joins decompress blocks
//! by the hundred.

use std::cell::RefCell;

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// The bytes of a zstd frame of at most `capacity` bytes; `None` if it does
/// not decompress within that.
pub fn decompress(frame: &[u8], capacity: usize) -> Option<Vec<u8>> {
    DECOMPRESSOR.with_borrow_mut(|slot| {
        let decompressor = match slot {
            Some(d) => d,
            None => slot.insert(zstd::bulk::Decompressor::new().ok()?),
        };
        decompressor.decompress(frame, capacity).ok()
    })
}
