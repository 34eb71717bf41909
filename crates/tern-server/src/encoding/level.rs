//! When to compress harder: the compression stage sits between the query's
//! producer and the client's connection, and how it spends its time says
//! which of them is the bottleneck.
//!
//! - It waits on the client (its output queue is full) longer than it
//!   compresses: the client's bandwidth limits the payload rate, and the
//!   stage has time to spare. A higher level sends the same rows in fewer
//!   bytes, so faster.
//! - It compresses for much longer than it waits on the client: the client
//!   keeps up, and compression is (or is close to) the bottleneck, or takes
//!   cores the producer needs. The level goes back towards the fast one,
//!   and on below the level the stream started at when the ladder has a
//!   faster one (zstd's negative levels): on a client that keeps up with
//!   anything, the query then gets the cores compression gave back.
//!
//! The balance it finds is the level at which compressing a chunk takes
//! about as long as the client takes to read it. Decisions are taken over
//! windows of chunks, with a gap between the thresholds (waiting more than
//! compressing to go up, less than a quarter of it to go down), so the
//! level does not flap.

use std::time::Duration;

/// Chunks per decision (about 40 MB of results). The connection takes
/// chunks in bursts (hyper's buffers, the socket's, and a producer that is
/// parked while its queue is full and then catches up), so over a few
/// chunks the stage sees either all waiting or none; a long window sees the
/// client's pace. Measured on BSBM 10M with `curl --limit-rate 20M`:
/// windows of 16 chunks flapped between levels 1 and 3.
const WINDOW: u32 = 64;

pub struct LevelControl {
    /// The levels tried, fastest first, on the coding's own scale.
    ladder: &'static [i32],
    at: usize,
    seen: u32,
    busy: Duration,
    blocked: Duration,
    /// A level that proved too slow (the stage came down from it) is not
    /// tried again for this many windows, doubled each time it fails: each
    /// change starts a new zstd frame, which costs ratio.
    wait_before: Vec<u32>,
    backoff: Vec<u32>,
}

impl LevelControl {
    /// `ladder`: the levels to move between, fastest first; the stream
    /// starts at `ladder[start]`.
    pub fn new(ladder: &'static [i32], start: usize) -> LevelControl {
        LevelControl {
            ladder,
            at: start.min(ladder.len() - 1),
            seen: 0,
            busy: Duration::ZERO,
            blocked: Duration::ZERO,
            wait_before: vec![0; ladder.len()],
            backoff: vec![1; ladder.len()],
        }
    }

    pub fn level(&self) -> i32 {
        self.ladder[self.at]
    }

    /// Records a chunk: `busy` compressing it, `blocked` waiting for room
    /// in the output queue to hand it on. Returns the level to switch to at
    /// the end of a window that calls for a change.
    pub fn observe(&mut self, busy: Duration, blocked: Duration) -> Option<i32> {
        self.seen += 1;
        self.busy += busy;
        self.blocked += blocked;
        if self.seen < WINDOW {
            return None;
        }
        let (busy, blocked) = (
            std::mem::take(&mut self.busy),
            std::mem::take(&mut self.blocked),
        );
        self.seen = 0;
        for wait in &mut self.wait_before {
            *wait = wait.saturating_sub(1);
        }
        let before = self.at;
        let up = (self.at + 1).min(self.ladder.len() - 1);
        if blocked > busy && self.wait_before[up] == 0 {
            self.at = up;
        } else if blocked * 4 < busy && self.at > 0 {
            // This level cannot keep up: back down, and leave it alone for
            // a while (longer each time).
            self.wait_before[self.at] = self.backoff[self.at];
            self.backoff[self.at] = (self.backoff[self.at] * 2).min(64);
            self.at -= 1;
        }
        (self.at != before).then(|| self.level())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LADDER: &[i32] = &[1, 3, 6];

    const MS: Duration = Duration::from_millis(1);

    /// A window of chunks that each took `busy` to compress and waited
    /// `blocked` for the client.
    fn window(control: &mut LevelControl, busy: u32, blocked: u32) -> Option<i32> {
        (0..WINDOW).fold(None, |_, _| control.observe(MS * busy, MS * blocked))
    }

    #[test]
    fn a_slow_client_raises_the_level_and_a_fast_one_lowers_it() {
        let mut control = LevelControl::new(LADDER, 0);
        assert_eq!(control.level(), 1);
        assert_eq!(window(&mut control, 3, 6), Some(3));
        assert_eq!(window(&mut control, 5, 6), Some(6));
        assert_eq!(window(&mut control, 5, 9), None, "the top of the ladder");
        assert_eq!(window(&mut control, 10, 0), Some(3));
        assert_eq!(window(&mut control, 4, 0), Some(1));
        assert_eq!(window(&mut control, 4, 0), None, "the bottom of the ladder");
    }

    #[test]
    fn a_stream_that_holds_the_query_back_falls_below_its_start() {
        const WITH_FAST: &[i32] = &[-3, 1, 3];
        let mut control = LevelControl::new(WITH_FAST, 1);
        assert_eq!(control.level(), 1);
        // A fast client: compressing is all the stage does.
        assert_eq!(window(&mut control, 4, 0), Some(-3));
        assert_eq!(window(&mut control, 4, 0), None, "the bottom of the ladder");
        // The client slows down: back up, past the start.
        assert_eq!(window(&mut control, 1, 2), Some(1));
        assert_eq!(window(&mut control, 1, 2), Some(3));
    }

    #[test]
    fn a_level_that_could_not_keep_up_waits_longer_each_time() {
        let mut control = LevelControl::new(LADDER, 0);
        assert_eq!(window(&mut control, 1, 2), Some(3));
        let mut waited = Vec::new();
        for _ in 0..4 {
            assert_eq!(window(&mut control, 8, 1), Some(1), "3 is too slow");
            let mut windows = 0;
            while window(&mut control, 1, 2).is_none() {
                windows += 1;
            }
            waited.push(windows);
            assert_eq!(control.level(), 3);
        }
        assert_eq!(
            waited,
            [0, 1, 3, 7],
            "windows spent at 1 before trying 3 again"
        );
    }
}
