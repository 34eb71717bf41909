//! Keys read straight from a block's front coding (see
//! [`FrontCoder`](super::block::FrontCoder)), forward, without expanding the
//! block: a lookup of a few keys in a block costs a walk to them, where
//! expanding it costs a pass to size it, a buffer, and every key copied.

use crate::varint;

/// A walk through one block's front-coded keys, in entry order; by default
/// over an empty block.
#[derive(Default)]
pub struct FrontCodedWalk<'a> {
    raw: &'a [u8],
    pos: usize,
    /// Entries of the block, from the directory.
    entries: usize,
    /// The next entry to read.
    next: usize,
    /// Long entries read so far.
    longs: u32,
    key: Vec<u8>,
}

/// An entry met on a walk.
pub struct WalkedEntry<'w> {
    /// The key as stored: the key, or the stub of a long key.
    pub key: &'w [u8],
    /// For a long key, its rank among the block's long keys.
    pub long_rank: Option<u32>,
}

impl<'a> FrontCodedWalk<'a> {
    /// Starts over on a block of `entries` front-coded keys, keeping the
    /// key's buffer.
    pub fn restart(&mut self, raw: &'a [u8], entries: usize) {
        self.raw = raw;
        self.pos = 0;
        self.entries = entries;
        self.next = 0;
        self.longs = 0;
        self.key.clear();
    }

    /// Entry `entry`, which must come after every entry asked for before;
    /// `None` past the block's entries or where the bytes are not a front
    /// coding.
    pub fn entry(&mut self, entry: usize) -> Option<WalkedEntry<'_>> {
        if entry >= self.entries || entry < self.next {
            return None;
        }
        let mut long = false;
        while self.next <= entry {
            let shared = varint::read(self.raw, &mut self.pos)? as usize;
            let suffix = varint::read(self.raw, &mut self.pos)?;
            let len = (suffix >> 1) as usize;
            if shared > self.key.len() {
                return None;
            }
            let bytes = self.raw.get(self.pos..self.pos.checked_add(len)?)?;
            self.key.truncate(shared);
            self.key.extend_from_slice(bytes);
            self.pos += len;
            long = suffix & 1 == 1;
            self.longs += u32::from(long);
            self.next += 1;
        }
        Some(WalkedEntry {
            key: &self.key,
            long_rank: long.then(|| self.longs - 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::FrontCoder;
    use super::*;

    #[test]
    fn walks_to_the_entries_asked_for_with_long_ranks() {
        let keys: [(&[u8], bool); 5] = [
            (b"\x01http://a/", false),
            (b"\x01http://a/b", false),
            (b"\x02abcdefgh", true),
            (b"\x02abcz", true),
            (b"\x02b", false),
        ];
        let mut coder = FrontCoder::default();
        for (key, long) in keys {
            coder.push(key, long);
        }
        let raw = coder.take();
        let mut walk = FrontCodedWalk::default();
        walk.restart(&raw, keys.len());
        let e = walk.entry(1).unwrap();
        assert_eq!((e.key, e.long_rank), (keys[1].0, None));
        let e = walk.entry(3).unwrap();
        assert_eq!((e.key, e.long_rank), (keys[3].0, Some(1)));
        assert!(walk.entry(3).is_none(), "backwards");
        let e = walk.entry(4).unwrap();
        assert_eq!((e.key, e.long_rank), (keys[4].0, None));
        assert!(walk.entry(5).is_none(), "past the block");
        walk.restart(&raw, keys.len());
        let e = walk.entry(2).unwrap();
        assert_eq!((e.key, e.long_rank), (keys[2].0, Some(0)));
    }

    /// Keys walked to equal the keys front-coded, whichever entries are
    /// asked for: keys that share more, less or all of the one before,
    /// and gaps of every length.
    #[test]
    fn keys_walked_to_equal_the_keys_coded() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut key = b"\x01http://example.org/".to_vec();
        for _ in 0..600 {
            key.truncate(next(key.len() as u64 + 1) as usize);
            for _ in 0..next(12) {
                key.push(b'a' + next(26) as u8);
            }
            keys.push(key.clone());
        }
        let mut coder = FrontCoder::default();
        for key in &keys {
            coder.push(key, false);
        }
        let raw = coder.take();
        let mut walk = FrontCodedWalk::default();
        for round in 0..50 {
            walk.restart(&raw, keys.len());
            let mut entry = next(4) as usize;
            while entry < keys.len() {
                let walked = walk.entry(entry).unwrap();
                assert_eq!(walked.key, &keys[entry][..], "round {round}, entry {entry}");
                entry += 1 + next([1, 3, 40][round % 3]) as usize;
            }
        }
    }

    #[test]
    fn rejects_bytes_that_are_not_a_front_coding() {
        // Shares 5 bytes with a key of none; then a suffix past the end.
        for raw in [vec![5, 2, b'a'], vec![0, 20, b'a']] {
            let mut walk = FrontCodedWalk::default();
            walk.restart(&raw, 1);
            assert!(walk.entry(0).is_none());
        }
    }
}
