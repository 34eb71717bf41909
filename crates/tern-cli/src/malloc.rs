//! How the server asks the C allocator to hold memory.
//!
//! glibc gives each thread that allocates its own arena. Exporting a large
//! result moves buffers between threads all the time: vocabulary blocks
//! decoded on one core are evicted by another, and chunks made by the
//! producer are freed by the network thread. Every arena then keeps freed
//! memory of its own, and the server grew 10-15 MB more during a full export
//! of BSBM 10M than with one arena (JSON + gzip: +99 MB against +88 MB over
//! idle), for about 2% of the export's speed.

/// One malloc arena for the whole process; call before threads start.
pub fn single_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; it is called
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
