//! Hash partitioning: rows spread over files by a hash of some of their
//! columns, so that each part of a group or join too large for memory can
//! be done alone (rows with equal keys land in the same part).

use super::{RowFile, Segment};
use crate::context::QueryContext;
use crate::suspend::StashSize;
use crate::EngineError;
use tern_index::Id;

/// Parts a spilled input is split into at each level. A part still too
/// large for memory is split again, with another seed.
pub const PARTS: usize = 16;

/// Which of `parts` parts a key goes to, with `seed` (one per level of
/// partitioning, so that a part split again spreads its rows).
pub fn partition_of(key: impl Iterator<Item = Id>, seed: u64, parts: usize) -> usize {
    let mut h = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD6E8_FEB8_6659_FD93;
    for id in key {
        h = (h ^ id.0).wrapping_mul(0xA076_1D64_78BD_642F);
        h ^= h >> 29;
    }
    h = h.wrapping_mul(0xE703_7ED1_A0B4_28DB);
    ((h >> 32) as usize * parts) >> 32
}

/// Rows being written to [`PARTS`] files by the hash of their key columns.
pub struct Partitions {
    files: Vec<RowFile>,
    key_columns: Vec<usize>,
    seed: u64,
}

impl Partitions {
    pub fn new(
        ctx: &QueryContext,
        width: usize,
        key_columns: Vec<usize>,
        seed: u64,
    ) -> Result<Partitions, EngineError> {
        Ok(Partitions {
            files: (0..PARTS)
                .map(|_| RowFile::for_query(ctx, width))
                .collect::<Result<_, _>>()?,
            key_columns,
            seed,
        })
    }

    /// Writes `row` to the part of its key.
    pub fn push(&mut self, row: &[Id]) -> Result<(), EngineError> {
        let part = partition_of(self.key_columns.iter().map(|&c| row[c]), self.seed, PARTS);
        self.files[part].push(row)
    }

    /// The parts, each a file with one segment.
    pub fn finish(self) -> Result<Vec<(RowFile, Segment)>, EngineError> {
        self.files
            .into_iter()
            .map(|mut file| {
                let segment = file.finish_segment()?;
                Ok((file, segment))
            })
            .collect()
    }
}

impl StashSize for Partitions {
    fn stash_bytes(&self) -> usize {
        self.files.iter().map(StashSize::stash_bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_spread_over_every_part_and_seeds_differ() {
        let mut counts = [0usize; PARTS];
        let mut moved = 0;
        for i in 0..100_000u64 {
            let key = [Id(i), Id(i / 3)];
            let part = partition_of(key.iter().copied(), 0, PARTS);
            counts[part] += 1;
            moved += usize::from(part != partition_of(key.iter().copied(), 1, PARTS));
        }
        for c in counts {
            assert!((5_000..7_500).contains(&c), "{counts:?}");
        }
        assert!(moved > 80_000, "{moved}");
    }
}
