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

/// Hands freed memory back to the system when the arena holds more than
/// [`MAX_HELD_FREE`] of it, at most once per [`MIN_TRIM_INTERVAL`]. glibc
/// keeps what a peak freed in its arena (a 200-client load left the idle
/// server at 5.5 GB), so the server calls this whenever its last running
/// query ends. A trim walks the arena under its lock and gives back every
/// free page, which the next queries fault in again; free memory that is
/// fragmented stays counted as free after a trim. With one client the
/// server is idle after every query, and trimming each time made a 0.85 ms
/// query take 1.9 ms once a compaction had left a large, fragmented heap
/// behind: hence the threshold and the interval.
pub fn trim_if_holding() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};
    static LAST_TRIM_MS: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let last = LAST_TRIM_MS.load(Ordering::Relaxed);
    if now.saturating_sub(last) < MIN_TRIM_INTERVAL.as_millis() as u64
        || LAST_TRIM_MS
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallinfo2 only reads the allocator's statistics, under the
    // arena's lock.
    if unsafe { libc::mallinfo2() }.fordblks > MAX_HELD_FREE {
        trim();
    }
}

/// Trims are at least this far apart.
const MIN_TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Hands all freed memory back to the system (walks the arena under its
/// lock: a few milliseconds for a large heap).
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the arena's lock itself.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Free memory the arena may hold before a busy server gives it back.
const MAX_HELD_FREE: usize = 64 << 20;
/// How often a busy server looks at what its arena holds.
const HELD_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Gives freed memory back while the server is busy too: a server under
/// constant load is never idle, and the soak test's 200 clients (queries
/// hitting their memory budget, full scans, DISTINCT sets) left the arena
/// holding over a gigabyte of freed, fragmented memory. Every
/// [`HELD_CHECK_EVERY`], a thread trims when more than [`MAX_HELD_FREE`]
/// is free in the arena (a trim holds the arena's lock for a few ms).
pub fn trim_while_busy() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let _ = std::thread::Builder::new()
        .name("tern-trim".into())
        .spawn(|| loop {
            std::thread::sleep(HELD_CHECK_EVERY);
            trim_if_holding();
        });
}
