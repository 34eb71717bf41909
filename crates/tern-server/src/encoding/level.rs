//! When to compress harder: the compression stage sits between the query's
//! producer and the client's connection, and which of the two it waits on
//! says which is the bottleneck.
//!
//! - The output queue is full when a chunk is ready: the client (its
//!   bandwidth) is slower than what is produced. Bytes on the wire are what
//!   limits the payload rate then, so a higher level sends the same rows in
//!   fewer bytes, faster.
//! - The output queue has room: the client keeps up, and the time spent
//!   compressing is time the producer (on the same cores) does not get.
//!   The level goes back down towards the fast one.
//!
//! Decisions are taken over windows of chunks, with a gap between the
//! thresholds (full every time to go up, at most once to go down) so the
//! level does not flap; a level that made compression itself the
//! bottleneck empties the output queue, and comes down again.

/// Chunks per decision: with the producer's chunks of 1 MiB, a level can
/// change every 4 MiB of results.
const WINDOW: u32 = 4;

pub struct LevelControl {
    /// The levels tried, fastest first, on the coding's own scale.
    ladder: &'static [i32],
    at: usize,
    seen: u32,
    full: u32,
}

impl LevelControl {
    /// `ladder`: the levels to move between, fastest (the fixed level of a
    /// non-adaptive stream) first.
    pub fn new(ladder: &'static [i32]) -> LevelControl {
        LevelControl {
            ladder,
            at: 0,
            seen: 0,
            full: 0,
        }
    }

    pub fn level(&self) -> i32 {
        self.ladder[self.at]
    }

    /// Records whether the output queue was full when a chunk was ready;
    /// returns the level to switch to at the end of a window that calls
    /// for a change.
    pub fn observe(&mut self, output_full: bool) -> Option<i32> {
        self.seen += 1;
        self.full += u32::from(output_full);
        if self.seen < WINDOW {
            return None;
        }
        let full = std::mem::take(&mut self.full);
        self.seen = 0;
        let before = self.at;
        if full * 4 > WINDOW * 3 {
            self.at = (self.at + 1).min(self.ladder.len() - 1);
        } else if full * 4 <= WINDOW {
            self.at = self.at.saturating_sub(1);
        }
        (self.at != before).then(|| self.level())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LADDER: &[i32] = &[1, 3, 6];

    fn window(control: &mut LevelControl, full: u32) -> Option<i32> {
        (0..WINDOW).fold(None, |_, i| control.observe(i < full))
    }

    #[test]
    fn a_slow_client_raises_the_level_and_a_fast_one_lowers_it() {
        let mut control = LevelControl::new(LADDER);
        assert_eq!(control.level(), 1);
        assert_eq!(window(&mut control, WINDOW), Some(3));
        assert_eq!(window(&mut control, WINDOW), Some(6));
        assert_eq!(window(&mut control, WINDOW), None, "the top of the ladder");
        assert_eq!(window(&mut control, 0), Some(3));
        assert_eq!(window(&mut control, 1), Some(1));
        assert_eq!(window(&mut control, 0), None, "the bottom of the ladder");
    }

    #[test]
    fn between_the_thresholds_the_level_stays() {
        let mut control = LevelControl::new(LADDER);
        window(&mut control, WINDOW);
        for full in [WINDOW / 2, WINDOW * 3 / 4, WINDOW / 4 + 1] {
            assert_eq!(window(&mut control, full), None, "{full} of {WINDOW} full");
            assert_eq!(control.level(), 3);
        }
    }
}
