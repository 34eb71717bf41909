//! How the server asks the C allocator to hold memory.
//!
//! glibc gives each thread that allocates its own arena, up to eight per
//! core. Exporting a large result moves buffers between threads all the
//! time: vocabulary blocks decoded on one core are evicted by another, and
//! chunks made by the producer are freed by the network thread. Every arena
//! then keeps freed memory of its own, and the server grew 10-15 MB more
//! during a full export of BSBM 10M than with a few arenas. With one arena,
//! though, the cores that write an export in parallel (one lane each) take
//! turns on its lock for every decoded block: 8% of a Turtle export's
//! samples were threads waiting for it or waking each other, and a TSV
//! export of BSBM 10M ran at 468-512 MB/s against 600-612 with two arenas
//! on two cores (+5 MB of RSS). So the server has one arena per core and a
//! load, whose sorting threads each kept their own, has one. Only
//! allocations over 1 KiB come here; small objects are mimalloc's
//! (`allocator.rs`).

/// At most `arenas` malloc arenas for the whole process; call before
/// threads start.
pub fn limit_arenas(arenas: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; it is called
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas.clamp(1, 64) as libc::c_int);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = arenas;
}

/// Hands freed memory back to the system when the process holds
/// [`MAX_HELD_FREE`] more resident memory than it did after the last trim.
/// glibc keeps what a peak freed in its arena (a 200-client load left the
/// idle server at 5.5 GB), so the server calls this whenever its last
/// running query ends. A trim walks the arena under its lock and gives back
/// every free page, which the next queries fault in again; free memory too
/// fragmented to give back stays resident after a trim. With one client the
/// server is idle after every query, and trimming each time made a 0.85 ms
/// query take 1.9 ms once a compaction had left a large, fragmented heap
/// behind: hence comparing with what the last trim left.
///
/// The measure is the resident set (`/proc/self/statm`, a few microseconds),
/// not the arena's own statistics: `mallinfo2` walks every free chunk under
/// the arena's lock, and on the heap an inference workload leaves (many
/// small freed tables) each look took tens of milliseconds, during which
/// every query's allocations waited: 11% of a single client's samples, and
/// a 0.4 ms plan took 0.5-0.7 ms through the server.
fn trim_if_holding() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if !due_for_a_look() {
            return;
        }
        let floor = RESIDENT_AFTER_LAST_TRIM.load(std::sync::atomic::Ordering::Relaxed);
        if resident_bytes() > floor.saturating_add(MAX_HELD_FREE) {
            trim();
        }
    }
}

/// The server's hook for when its last running query has ended.
pub fn server_idle() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    QUERIES_ENDED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    trim_if_holding();
}

/// Whether the process may be looked at again: one look per
/// [`IDLE_CHECK_EVERY`] bounds what looking costs a single client whose
/// every query leaves the server idle; the busy thread looks anyway.
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

/// Fewest time between two looks at the process after queries end.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const IDLE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Resident bytes right after the last trim (what the caches hold, and what
/// was too fragmented to give back).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static RESIDENT_AFTER_LAST_TRIM: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Times the idle hook ran: a query ended since the busy thread last looked.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static QUERIES_ENDED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Hands all freed memory back to the system (walks the arena under its
/// lock: a few milliseconds for a large heap) and notes what stays.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim takes the arena's lock itself.
    unsafe {
        libc::malloc_trim(0);
    }
    RESIDENT_AFTER_LAST_TRIM.store(resident_bytes(), std::sync::atomic::Ordering::Relaxed);
}

/// The process's resident set in bytes, from `/proc/self/statm` (0 when it
/// cannot be read, which makes every look a no-op).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn resident_bytes() -> usize {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as usize;
    pages * page
}

/// Resident memory the process may gain before a busy server gives freed
/// memory back.
const MAX_HELD_FREE: usize = 64 << 20;
/// How often a busy server looks at what it holds.
const HELD_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Gives freed memory back while the server is busy too: a server under
/// constant load is never idle, and the soak test's 200 clients (queries
/// hitting their memory budget, full scans, DISTINCT sets) left the arena
/// holding over a gigabyte of freed, fragmented memory. Every
/// [`HELD_CHECK_EVERY`], a thread trims when the process holds
/// [`MAX_HELD_FREE`] more than after the last trim (a trim holds the
/// arena's lock for a few ms).
///
/// Below that bound, memory freed after the last query ended (response
/// buffers the network thread drops late, for one) would stay held for
/// good: the idle hook has already run. So a server on which no query ended
/// and the resident set did not move over a whole check period, where a
/// trim costs no one anything, is trimmed once, whatever it holds.
pub fn trim_while_busy() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let _ = std::thread::Builder::new()
        .name("tern-trim".into())
        .spawn(|| {
            let mut last_seen = activity();
            let mut trimmed_since_change = false;
            loop {
                std::thread::sleep(HELD_CHECK_EVERY);
                let now = activity();
                if now != last_seen {
                    trimmed_since_change = false;
                    trim_if_holding();
                } else if !trimmed_since_change {
                    trim();
                    trimmed_since_change = true;
                }
                last_seen = activity();
            }
        });
}

/// Queries ended and pages resident: equal on two looks means a quiet
/// server (close enough: what was freed without a query ending, the trim
/// that follows gives back).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn activity() -> (u64, usize) {
    (
        QUERIES_ENDED.load(std::sync::atomic::Ordering::Relaxed),
        resident_bytes(),
    )
}
