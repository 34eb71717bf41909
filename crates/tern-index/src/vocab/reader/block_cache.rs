//! Blocks kept between lookups within a memory budget, evicted by the
//! clock algorithm: a block used since the hand last passed it gets another
//! round.

use super::DecodedBlock;
use std::sync::Arc;

/// What a cached block weighs against the budget.
pub(super) trait Weighed {
    fn memory(&self) -> usize;
}

impl Weighed for DecodedBlock {
    fn memory(&self) -> usize {
        DecodedBlock::memory(self)
    }
}

/// Front-coded bytes of a block, and the `Arc`'s counts and the slot.
impl Weighed for [u8] {
    fn memory(&self) -> usize {
        self.len() + 32
    }
}

pub(super) struct BlockCache<T: ?Sized> {
    slots: Vec<Option<Arc<T>>>,
    referenced: Vec<bool>,
    /// Ids of the blocks held, in the clock's order.
    resident: Vec<u32>,
    hand: usize,
    bytes: usize,
    budget: usize,
}

impl<T: Weighed + ?Sized> BlockCache<T> {
    pub(super) fn new(blocks: usize, budget: usize) -> BlockCache<T> {
        BlockCache {
            slots: vec![None; blocks],
            referenced: vec![false; blocks],
            resident: Vec::new(),
            hand: 0,
            bytes: 0,
            budget,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        self.bytes
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

    pub(super) fn get(&mut self, id: usize) -> Option<Arc<T>> {
        let block = self.slots[id].as_ref()?;
        self.referenced[id] = true;
        Some(block.clone())
    }

    pub(super) fn insert(&mut self, id: usize, block: &Arc<T>) {
        let size = block.memory();
        if self.slots[id].is_some() || size > self.budget {
            return;
        }
        self.make_room(size);
        self.slots[id] = Some(block.clone());
        self.referenced[id] = false;
        self.resident.push(id as u32);
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
                self.bytes -= block.memory();
                self.resident.swap_remove(self.hand);
            }
        }
    }
}
