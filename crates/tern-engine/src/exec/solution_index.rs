//! The solutions of an EXISTS pattern, indexed on the variables it shares
//! with the filtered rows (see `semi_join`).
//!
//! Built without an allocation per solution: each solution's shared values
//! find its group's number in one hash map (keyed on one ID when one
//! variable is shared, the common case), the solutions are then placed
//! group after group in one flat vector (counted, then scattered), and a
//! group is a stretch of it. At 100M triples `NOT EXISTS { ?d dc:creator
//! ?e ; dcterms:issued ?y FILTER(?y > ?py) }` has 17.7 M solutions; a key
//! vector and a row vector allocated per solution spent most of the
//! query's 21 s in `malloc`.

use crate::context::{MemoryCharge, QueryContext};
use crate::EngineError;
use rustc_hash::FxHashMap;
use std::ops::Range;
use tern_index::Id;

/// What to keep of the solutions that share their shared values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Keep {
    /// One per group: only whether a group exists matters (no residual
    /// condition, or no columns).
    OnePerGroup,
    /// One per distinct row: the residual condition's value depends only
    /// on the columns kept.
    DistinctRows,
    /// All of them (a residual condition that may differ between equal
    /// rows: RAND(), BNODE(), an EXISTS).
    All,
}

/// Group numbers by shared values.
enum GroupNumbers {
    One(FxHashMap<Id, u32>),
    Many(FxHashMap<Vec<Id>, u32>),
}

impl GroupNumbers {
    fn new(shared: usize) -> GroupNumbers {
        match shared {
            1 => GroupNumbers::One(FxHashMap::default()),
            _ => GroupNumbers::Many(FxHashMap::default()),
        }
    }

    fn get(&self, key: &[Id]) -> Option<u32> {
        match self {
            GroupNumbers::One(map) => map.get(&key[0]).copied(),
            GroupNumbers::Many(map) => map.get(key).copied(),
        }
    }

    /// The group of `key`, numbered `next` if it is new.
    fn get_or_number(&mut self, key: &[Id], next: u32) -> u32 {
        match self {
            GroupNumbers::One(map) => *map.entry(key[0]).or_insert(next),
            GroupNumbers::Many(map) => match map.get(key) {
                Some(&g) => g,
                None => {
                    map.insert(key.to_vec(), next);
                    next
                }
            },
        }
    }

    fn len(&self) -> usize {
        match self {
            GroupNumbers::One(map) => map.len(),
            GroupNumbers::Many(map) => map.len(),
        }
    }
}

pub struct SolutionIndex {
    /// Columns per solution: the shared ones first, then the extra ones.
    stride: usize,
    shared: usize,
    /// Solutions kept.
    count: usize,
    /// The solutions, group after group.
    rows: Vec<Id>,
    numbers: GroupNumbers,
    /// Each group's solutions (row numbers), by group number.
    groups: Vec<Range<u32>>,
    /// For probes that leave some shared variables unbound: by mask of the
    /// shared columns used, key values → row numbers, built on first need.
    by_mask: FxHashMap<u32, FxHashMap<Vec<Id>, Vec<u32>>>,
    /// What the indexes built on first need cost.
    memory: Option<MemoryCharge>,
}

/// The row numbers of the solutions a probe may match.
pub enum Candidates<'a> {
    Run(Range<u32>),
    Listed(&'a [u32]),
}

impl Candidates<'_> {
    pub fn is_empty(&self) -> bool {
        match self {
            Candidates::Run(run) => run.is_empty(),
            Candidates::Listed(list) => list.is_empty(),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (run, list) = match self {
            Candidates::Run(run) => (run.clone(), &[][..]),
            Candidates::Listed(list) => (0..0, *list),
        };
        run.chain(list.iter().copied())
    }
}

/// Solution rows collected in arrival order, each with its group.
struct Collected {
    rows: Vec<Id>,
    group_of: Vec<u32>,
    sizes: Vec<u32>,
    numbers: GroupNumbers,
}

impl SolutionIndex {
    /// Reads the pattern's solutions, which `next_rows` appends as rows of
    /// `stride` columns, the `shared` ones first, and counts (`None` at
    /// the end), keeping what `keep` says; `charge` is told the bytes held
    /// as they grow.
    pub fn build(
        stride: usize,
        shared: usize,
        keep: Keep,
        mut next_rows: impl FnMut(&mut Vec<Id>) -> Result<Option<usize>, EngineError>,
        mut charge: impl FnMut(u64) -> Result<(), EngineError>,
    ) -> Result<SolutionIndex, EngineError> {
        let mut collected = Collected {
            rows: Vec::new(),
            group_of: Vec::new(),
            sizes: Vec::new(),
            numbers: GroupNumbers::new(shared),
        };
        let mut batch = Vec::new();
        while let Some(count) = next_rows(&mut batch)? {
            for r in 0..count {
                let row = &batch[r * stride..(r + 1) * stride];
                let next = collected.sizes.len() as u32;
                let g = collected.numbers.get_or_number(&row[..shared], next);
                if g == next {
                    collected.sizes.push(0);
                }
                if keep == Keep::OnePerGroup && collected.sizes[g as usize] > 0 {
                    continue;
                }
                collected.sizes[g as usize] += 1;
                collected.group_of.push(g);
                collected.rows.extend_from_slice(row);
            }
            batch.clear();
            charge(Self::collected_bytes(&collected, shared))?;
            if stride == 0 && !collected.group_of.is_empty() {
                break;
            }
        }
        // Placing the rows group after group holds a second copy of them
        // for a moment.
        charge(Self::collected_bytes(&collected, shared) + collected.rows.len() as u64 * 8)?;
        let index = Self::grouped(collected, stride, shared, keep);
        charge(index.bytes())?;
        Ok(index)
    }

    fn collected_bytes(collected: &Collected, shared: usize) -> u64 {
        (collected.rows.len() * 8
            + collected.group_of.len() * 4
            + collected.numbers.len() * (shared * 8 + 16)) as u64
    }

    /// Places the rows group after group (and drops repeated rows of a
    /// group when `keep` says so).
    fn grouped(collected: Collected, stride: usize, shared: usize, keep: Keep) -> SolutionIndex {
        let Collected {
            rows,
            group_of,
            sizes,
            numbers,
        } = collected;
        let mut starts = Vec::with_capacity(sizes.len());
        let mut total = 0u32;
        for &size in &sizes {
            starts.push(total);
            total += size;
        }
        let mut placed = vec![Id::UNDEFINED; rows.len()];
        let mut filled = starts.clone();
        for (r, &g) in group_of.iter().enumerate() {
            let at = filled[g as usize] as usize * stride;
            placed[at..at + stride].copy_from_slice(&rows[r * stride..(r + 1) * stride]);
            filled[g as usize] += 1;
        }
        drop(rows);
        let mut groups: Vec<Range<u32>> = starts
            .iter()
            .zip(&sizes)
            .map(|(&start, &size)| start..start + size)
            .collect();
        if keep == Keep::DistinctRows {
            placed = Self::distinct_in_groups(placed, stride, &mut groups);
        }
        SolutionIndex {
            stride,
            shared,
            // Without columns, the solutions counted (one at most).
            count: placed.len().checked_div(stride).unwrap_or(group_of.len()),
            rows: placed,
            numbers,
            groups,
            by_mask: FxHashMap::default(),
            memory: None,
        }
    }

    /// Keeps one of each repeated row of a group, in place: each group's
    /// rows are copied aside, sorted, and written back without repeats
    /// where the groups before it ended (never past its own start), so
    /// that no third copy of all the rows is made.
    fn distinct_in_groups(
        mut placed: Vec<Id>,
        stride: usize,
        groups: &mut [Range<u32>],
    ) -> Vec<Id> {
        let mut written = 0;
        let mut group_rows: Vec<Id> = Vec::new();
        let mut order: Vec<usize> = Vec::new();
        for group in groups.iter_mut() {
            let (start, end) = (group.start as usize * stride, group.end as usize * stride);
            group_rows.clear();
            group_rows.extend_from_slice(&placed[start..end]);
            let row = |r: usize| &group_rows[r * stride..(r + 1) * stride];
            order.clear();
            order.extend(0..group.len());
            order.sort_unstable_by(|&a, &b| row(a).cmp(row(b)));
            order.dedup_by(|a, b| row(*a) == row(*b));
            let first = written / stride.max(1);
            for &r in &order {
                placed[written..written + stride].copy_from_slice(row(r));
                written += stride;
            }
            *group = first as u32..(first + order.len()) as u32;
        }
        placed.truncate(written);
        placed
    }

    /// How many solutions are kept.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Solution `i`: its shared columns, then the others.
    pub fn row(&self, i: u32) -> &[Id] {
        let start = i as usize * self.stride;
        &self.rows[start..start + self.stride]
    }

    pub fn bytes(&self) -> u64 {
        (self.rows.len() * 8 + self.groups.len() * (self.shared * 8 + 24)) as u64
    }

    /// Makes ready the index that probes with the shared columns in
    /// `mask` (a bit per shared column) use: built on first need for a
    /// probe that leaves some unbound.
    pub fn prepare(&mut self, mask: u32, ctx: &QueryContext) -> Result<(), EngineError> {
        match self.all_shared(mask) {
            true => Ok(()),
            false => self.ensure_index(mask, ctx),
        }
    }

    /// Whether `mask` has every shared column: the groups answer those
    /// probes, the indexes built on first need the others.
    fn all_shared(&self, mask: u32) -> bool {
        mask.count_ones() as usize == self.shared
    }

    /// The solutions whose shared values in `mask` are `key`, in that
    /// order (after [`prepare`](Self::prepare) for that mask).
    pub fn candidates(&self, mask: u32, key: &[Id]) -> Candidates<'_> {
        if self.all_shared(mask) {
            return match self.numbers.get(key) {
                Some(g) => Candidates::Run(self.groups[g as usize].clone()),
                None => Candidates::Run(0..0),
            };
        }
        match self.by_mask.get(&mask).and_then(|index| index.get(key)) {
            Some(list) => Candidates::Listed(list),
            None => Candidates::Run(0..0),
        }
    }

    /// Builds the index on the shared columns in `mask` if it is missing.
    fn ensure_index(&mut self, mask: u32, ctx: &QueryContext) -> Result<(), EngineError> {
        if !self.by_mask.contains_key(&mask) {
            let columns: Vec<usize> = (0..self.shared).filter(|c| mask >> c & 1 == 1).collect();
            let mut map: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
            for i in 0..self.count as u32 {
                let row = self.row(i);
                map.entry(columns.iter().map(|&c| row[c]).collect())
                    .or_default()
                    .push(i);
            }
            let bytes = self.bytes() * (self.by_mask.len() as u64 + 1);
            self.memory
                .get_or_insert_with(|| ctx.memory_charge())
                .set(bytes)?;
            self.by_mask.insert(mask, map);
        }
        Ok(())
    }
}

impl crate::suspend::StashSize for SolutionIndex {
    fn stash_bytes(&self) -> usize {
        self.bytes() as usize * (self.by_mask.len() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(rows: &[[u64; 3]], shared: usize, keep: Keep) -> SolutionIndex {
        let mut batches = vec![rows.iter().flatten().map(|&v| Id(v)).collect::<Vec<_>>()];
        SolutionIndex::build(
            3,
            shared,
            keep,
            |out| {
                Ok(batches.pop().map(|batch| {
                    *out = batch;
                    out.len() / 3
                }))
            },
            |_| Ok(()),
        )
        .unwrap()
    }

    fn group(index: &SolutionIndex, key: &[u64]) -> Vec<Vec<u64>> {
        let key: Vec<Id> = key.iter().map(|&v| Id(v)).collect();
        let Some(g) = index.numbers.get(&key) else {
            return Vec::new();
        };
        index.groups[g as usize]
            .clone()
            .map(|i| index.row(i).iter().map(|id| id.0).collect())
            .collect()
    }

    const ROWS: [[u64; 3]; 7] = [
        [1, 10, 100],
        [2, 20, 200],
        [1, 10, 100],
        [1, 11, 100],
        [2, 20, 200],
        [3, 30, 300],
        [1, 10, 101],
    ];

    #[test]
    fn groups_keep_what_they_are_told() {
        let all = index_of(&ROWS, 1, Keep::All);
        assert_eq!(all.count(), 7);
        assert_eq!(
            group(&all, &[1]),
            [[1, 10, 100], [1, 10, 100], [1, 11, 100], [1, 10, 101]]
        );
        let distinct = index_of(&ROWS, 1, Keep::DistinctRows);
        assert_eq!(distinct.count(), 5);
        assert_eq!(
            group(&distinct, &[1]),
            [[1, 10, 100], [1, 10, 101], [1, 11, 100]]
        );
        assert_eq!(group(&distinct, &[2]), [[2, 20, 200]]);
        assert_eq!(group(&distinct, &[4]), Vec::<Vec<u64>>::new());
        let one = index_of(&ROWS, 1, Keep::OnePerGroup);
        assert_eq!(one.count(), 3);
        assert_eq!(group(&one, &[1]), [[1, 10, 100]]);
        // Two shared columns.
        let two = index_of(&ROWS, 2, Keep::DistinctRows);
        assert_eq!(group(&two, &[1, 10]), [[1, 10, 100], [1, 10, 101]]);
        assert_eq!(group(&two, &[1, 11]), [[1, 11, 100]]);
        assert_eq!(two.count(), 5);
    }
}
