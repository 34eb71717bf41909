//! Which allocator serves which allocation.
//!
//! Small objects (the planner's vectors and strings, a request's headers,
//! the schema's tables) go to mimalloc, whose per-thread free lists serve
//! them without a lock and without searching. Large buffers (decoded
//! vocabulary and permutation blocks, result chunks, sort runs, hash
//! tables) go to the C allocator, whose single arena `malloc.rs` keeps and
//! trims to a bound.
//!
//! Why both: with glibc alone, the one arena that keeps an export's memory
//! within its bound is left fragmented by inference queries (thousands of
//! freed tables), and every small allocation then searches its bins: a
//! query that plans 48 rewritten patterns spent 0.40 ms planning through
//! the server against 0.17 ms with mimalloc. With mimalloc alone, a full
//! export of BSBM 10M held 160-190 MB over idle against glibc's 90 (freed
//! large pages are kept for a second before they go back), over the
//! 100 MB bound of an export.

use std::alloc::{GlobalAlloc, Layout, System};

/// Largest allocation mimalloc serves; larger ones go to the C allocator.
/// mimalloc's own small size classes end at 1 KiB; vocabulary blocks and
/// result chunks are 4 KiB and more.
const SMALL_OBJECT_MAX: usize = 1024;

/// Alignment mimalloc's small classes give without padding.
const SMALL_OBJECT_ALIGN: usize = 16;

/// The process's allocator: mimalloc for small objects, the C allocator for
/// the rest.
pub struct SplitBySize;

/// Whether mimalloc serves an allocation of this layout. The same layout
/// comes back on `dealloc`, so both sides agree on who owns a block.
fn is_small(layout: &Layout) -> bool {
    layout.size() <= SMALL_OBJECT_MAX && layout.align() <= SMALL_OBJECT_ALIGN
}

/// The allocator that serves (and so frees and resizes) blocks of this
/// layout.
fn side(layout: &Layout) -> &'static dyn GlobalAlloc {
    if is_small(layout) {
        &mimalloc::MiMalloc
    } else {
        &System
    }
}

// SAFETY: every block is freed (and resized) by the allocator that made it:
// `side` decides from the layout, which callers must pass unchanged; a
// resize that crosses the bound moves the block to the other allocator.
unsafe impl GlobalAlloc for SplitBySize {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract of GlobalAlloc::alloc, passed on.
        unsafe { side(&layout).alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for alloc.
        unsafe { side(&layout).alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout, so from the
        // allocator `side` picks again.
        unsafe { side(&layout).dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `new_layout` is valid: the caller guarantees `new_size`,
        // rounded up to the alignment, does not overflow.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `ptr` was made by the allocator `side(&layout)` picks; a
        // block that stays on one side is resized there, one that crosses
        // is copied into a new block of the other side and freed.
        unsafe {
            if is_small(&layout) == is_small(&new_layout) {
                return side(&layout).realloc(ptr, layout, new_size);
            }
            let moved = self.alloc(new_layout);
            if !moved.is_null() {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            moved
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_bytes_when_they_cross_the_bound() {
        let alloc = SplitBySize;
        let small = Layout::from_size_align(600, 8).unwrap();
        // SAFETY: each block is used within its layout and freed once with it.
        unsafe {
            let p = alloc.alloc(small);
            assert!(!p.is_null());
            for i in 0..600 {
                *p.add(i) = (i % 251) as u8;
            }
            // Grows past the bound: now the C allocator's.
            let p = alloc.realloc(p, small, 5000);
            let large = Layout::from_size_align(5000, 8).unwrap();
            for i in 0..600 {
                assert_eq!(*p.add(i), (i % 251) as u8);
            }
            // Shrinks back: mimalloc's again.
            let p = alloc.realloc(p, large, 100);
            for i in 0..100 {
                assert_eq!(*p.add(i), (i % 251) as u8);
            }
            alloc.dealloc(p, Layout::from_size_align(100, 8).unwrap());
        }
    }

    #[test]
    fn over_aligned_small_blocks_go_to_the_c_allocator() {
        assert!(is_small(&Layout::from_size_align(64, 16).unwrap()));
        assert!(!is_small(&Layout::from_size_align(64, 64).unwrap()));
        assert!(!is_small(&Layout::from_size_align(2048, 8).unwrap()));
        let alloc = SplitBySize;
        let layout = Layout::from_size_align(64, 64).unwrap();
        // SAFETY: allocated and freed with the same layout.
        unsafe {
            let p = alloc.alloc_zeroed(layout);
            assert_eq!(p as usize % 64, 0);
            assert!(std::slice::from_raw_parts(p, 64).iter().all(|&b| b == 0));
            alloc.dealloc(p, layout);
        }
    }
}
