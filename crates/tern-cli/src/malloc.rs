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

/// Hands freed memory back to the system when the arena holds
/// [`MAX_HELD_FREE`] more free memory than it did after the last trim.
/// glibc keeps what a peak freed in its arena (a 200-client load left the
/// idle server at 5.5 GB), so the server calls this whenever its last
/// running query ends. A trim walks the arena under its lock and gives back
/// every free page, which the next queries fault in again; free memory too
/// fragmented to give back stays counted as free after a trim. With one
/// client the server is idle after every query, and trimming each time made
/// a 0.85 ms query take 1.9 ms once a compaction had left a large,
/// fragmented heap behind: hence comparing with what the last trim left.
pub fn trim_if_holding() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if !due_for_a_look() {
            return;
        }
        // SAFETY: mallinfo2 only reads the allocator's statistics, under
        // the arena's lock.
        let free = unsafe { libc::mallinfo2() }.fordblks;
        let floor = FREE_AFTER_LAST_TRIM.load(std::sync::atomic::Ordering::Relaxed);
        if free > floor.saturating_add(MAX_HELD_FREE) {
            trim();
        }
    }
}

/// Whether the arena may be looked at again: mallinfo2 walks every free
/// chunk under the arena's lock, and on a fragmented heap (a server that
/// answered inference queries, whose unions allocate and free their
/// bitmaps and schema tables) that took 4-5 ms, after every query of a
/// single client: 0.5 ms queries took 5. One look per
/// [`IDLE_CHECK_EVERY`] bounds it; the busy thread looks anyway.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn due_for_a_look() -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    static LAST_LOOK_MS: AtomicU64 = AtomicU64::new(0);
    let now = START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
        + 1;
    let last = LAST_LOOK_MS.load(Ordering::Relaxed);
    let every = IDLE_CHECK_EVERY.as_millis() as u64;
    if last != 0 && now.saturating_sub(last) < every {
        return false;
    }
    LAST_LOOK_MS
        .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// Fewest time between two looks at the arena after queries end.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const IDLE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Free memory the arena still held after the last trim (what was too
/// fragmented to give back).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static FREE_AFTER_LAST_TRIM: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Hands all freed memory back to the system (walks the arena under its
/// lock: a few milliseconds for a large heap) and notes what it could not.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes the arena's lock itself; mallinfo2 only
    // reads the allocator's statistics.
    let left = unsafe {
        libc::malloc_trim(0);
        libc::mallinfo2().fordblks
    };
    FREE_AFTER_LAST_TRIM.store(left, std::sync::atomic::Ordering::Relaxed);
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
///
/// Below that bound, memory freed after the last query ended (response
/// buffers the network thread drops late, for one) would stay held for
/// good: the idle hook has already run. So a heap that did not change over a
/// whole check period, where nobody is allocating and a trim costs no one
/// anything, is trimmed once, whatever it holds.
pub fn trim_while_busy() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let _ = std::thread::Builder::new()
        .name("tern-trim".into())
        .spawn(|| {
            let mut last_seen = heap_shape();
            let mut trimmed_since_change = false;
            loop {
                std::thread::sleep(HELD_CHECK_EVERY);
                let now = heap_shape();
                if now != last_seen {
                    trimmed_since_change = false;
                    trim_if_holding();
                } else if !trimmed_since_change {
                    trim();
                    trimmed_since_change = true;
                }
                last_seen = heap_shape();
            }
        });
}

/// Bytes in use and bytes free in the arena: equal on two looks means no
/// one allocated or freed in between (close enough to tell a quiet heap).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_shape() -> (usize, usize) {
    // SAFETY: mallinfo2 only reads the allocator's statistics, under the
    // arena's lock.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks, info.fordblks)
}
