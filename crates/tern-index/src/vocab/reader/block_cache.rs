//! Blocks kept between lookups within a memory budget, evicted by the
//! clock algorithm: a block used since the hand last passed it gets another
//! round.
//!
//! A main block is kept in the form its last user wanted: expanded for
//! searches and lookups of a few keys, which borrow keys from it, or
//! front-coded (zstd undone) for copying many keys, which walks to them.
//! Keys expanded take three times the memory of their front coding (BSBM
//! 10M: 226 MB against 76 MB for the main section), so an export, which
//! copies, keeps three times the blocks in the same budget; one budget for
//! both forms lets whichever use is at hand take all of it.

use super::DecodedBlock;
use std::sync::Arc;

/// A block as the cache holds it.
#[derive(Clone)]
pub(super) enum Cached {
    Expanded(Arc<DecodedBlock>),
    FrontCoded(Arc<[u8]>),
}

impl Cached {
    /// Bytes held, for the budget (a front coding's with its `Arc`'s counts).
    fn memory(&self) -> usize {
        match self {
            Cached::Expanded(block) => block.memory(),
            Cached::FrontCoded(bytes) => bytes.len() + 32,
        }
    }
}

/// Main blocks only: [`get`](BlockCache::get) finds no other block and
/// [`insert`](BlockCache::insert) keeps none.
pub(super) struct BlockCache {
    slots: Vec<Option<Cached>>,
    referenced: Vec<bool>,
    /// Ids of the blocks held, in the clock's order.
    resident: Vec<u32>,
    hand: usize,
    bytes: usize,
    /// Of `bytes`, those of expanded blocks.
    expanded_bytes: usize,
    budget: usize,
}

/// Share of the budget that hot front-coded blocks may take once expanded
/// (see [`BlockCache::may_expand`]).
const EXPANDED_SHARE: usize = 4;

impl BlockCache {
    pub(super) fn new(blocks: usize, budget: usize) -> BlockCache {
        BlockCache {
            slots: vec![None; blocks],
            referenced: vec![false; blocks],
            resident: Vec::new(),
            hand: 0,
            bytes: 0,
            expanded_bytes: 0,
            budget,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether a hot front-coded block may be expanded in place: while
    /// expanded blocks take less than a quarter of the budget. An export
    /// uses nearly every block again before the clock comes round; expanding
    /// each would fill the budget with a third of the blocks (BSBM 10M: the
    /// main section's blocks were read 9.5 times each, against 3.8 with
    /// front codings only), while the blocks a run of lookups keeps using
    /// fit in the quarter.
    pub(super) fn may_expand(&self) -> bool {
        self.expanded_bytes < self.budget / EXPANDED_SHARE
    }

    /// Sets the budget, evicting blocks over it.
    pub(super) fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
        self.make_room(0);
    }

    /// Drops every block.
    pub(super) fn clear(&mut self) {
        *self = BlockCache::new(self.slots.len(), self.budget);
    }

    /// Block `id`, and whether it was used since the clock's hand last
    /// passed it (besides this time).
    pub(super) fn get_again(&mut self, id: usize) -> Option<(Cached, bool)> {
        let block = self.slots.get(id)?.as_ref()?;
        let again = std::mem::replace(&mut self.referenced[id], true);
        Some((block.clone(), again))
    }

    pub(super) fn get(&mut self, id: usize) -> Option<Cached> {
        self.get_again(id).map(|(block, _)| block)
    }

    /// Keeps `block` as block `id`, unless the cache holds it already: an
    /// expanded block replaces its front coding, not the other way round.
    pub(super) fn insert(&mut self, id: usize, block: Cached) {
        let size = block.memory();
        if id >= self.slots.len() || size > self.budget {
            return;
        }
        match &self.slots[id] {
            None => {
                self.make_room(size);
                self.resident.push(id as u32);
            }
            Some(held @ Cached::FrontCoded(_)) if matches!(block, Cached::Expanded(_)) => {
                self.bytes = self.bytes - held.memory() + size;
                self.expanded_bytes += size;
                // Kept at its place on the clock's round, and for one round.
                self.referenced[id] = true;
                self.slots[id] = Some(block);
                self.make_room(0);
                return;
            }
            Some(_) => return,
        }
        if matches!(block, Cached::Expanded(_)) {
            self.expanded_bytes += size;
        }
        self.slots[id] = Some(block);
        self.referenced[id] = false;
        self.bytes += size;
    }

    /// Evicts blocks until `size` more bytes fit in the budget.
    fn make_room(&mut self, size: usize) {
        while self.bytes + size > self.budget && !self.resident.is_empty() {
            if self.hand >= self.resident.len() {
                self.hand = 0;
            }
            let id = self.resident[self.hand] as usize;
            if std::mem::take(&mut self.referenced[id]) {
                self.hand += 1;
            } else {
                let block = self.slots[id].take().expect("resident block");
                let size = block.memory();
                self.bytes -= size;
                if matches!(block, Cached::Expanded(_)) {
                    self.expanded_bytes -= size;
                }
                self.resident.swap_remove(self.hand);
            }
        }
    }
}
