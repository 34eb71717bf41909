//! The `owl:sameAs` classes of a snapshot as IDs, for queries under OWL RL
//! inference: each member of a class maps to all members, the canonical one
//! first. The inference schema compiles it; the synonym operator reads it.

use rustc_hash::FxHashMap;
use std::sync::Arc;
use tern_index::Id;

#[derive(Debug, Default)]
pub struct SynonymTable {
    members: FxHashMap<Id, Arc<[Id]>>,
    /// A bit per hash of every member (one-hash Bloom filter): most IDs a
    /// scan asks about have no synonym, and one bit answers that without
    /// a hash map probe.
    maybe_member: Vec<u64>,
}

/// Bits of the filter: 128 KiB, a few percent false positives at a million
/// members, none to speak of at the thousands a data set usually has.
const FILTER_BITS: u64 = 1 << 20;

fn filter_bit(id: Id) -> usize {
    (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44) as usize & (FILTER_BITS as usize - 1)
}

impl SynonymTable {
    /// From the classes, each with its canonical member first.
    pub fn new(classes: Vec<Vec<Id>>) -> SynonymTable {
        let mut members = FxHashMap::default();
        let mut maybe_member = vec![0u64; (FILTER_BITS / 64) as usize];
        for class in classes {
            let class: Arc<[Id]> = class.into();
            for &m in class.iter() {
                members.insert(m, class.clone());
                let bit = filter_bit(m);
                maybe_member[bit / 64] |= 1 << (bit % 64);
            }
        }
        SynonymTable {
            members,
            maybe_member,
        }
    }

    /// Members of all classes.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Every member with its class.
    pub fn classes(&self) -> impl Iterator<Item = (Id, &[Id])> {
        self.members.iter().map(|(m, c)| (*m, &c[..]))
    }

    /// The members of `id`'s class, canonical first; `None` when it has
    /// no synonym.
    pub fn class_of(&self, id: Id) -> Option<&[Id]> {
        let bit = filter_bit(id);
        if self.maybe_member.get(bit / 64)? & (1 << (bit % 64)) == 0 {
            return None;
        }
        self.members.get(&id).map(|c| &c[..])
    }
}
