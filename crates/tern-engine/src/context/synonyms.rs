//! The `owl:sameAs` classes of a snapshot as IDs, for queries under OWL RL
//! inference: each member of a class maps to all members, the canonical one
//! first. The inference schema compiles it; the synonym operator reads it.

use rustc_hash::FxHashMap;
use std::sync::Arc;
use tern_index::Id;

#[derive(Debug, Default)]
pub struct SynonymTable {
    members: FxHashMap<Id, Arc<[Id]>>,
}

impl SynonymTable {
    /// From the classes, each with its canonical member first.
    pub fn new(classes: Vec<Vec<Id>>) -> SynonymTable {
        let mut members = FxHashMap::default();
        for class in classes {
            let class: Arc<[Id]> = class.into();
            for &m in class.iter() {
                members.insert(m, class.clone());
            }
        }
        SynonymTable { members }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members of `id`'s class, canonical first; `None` when it has
    /// no synonym.
    pub fn class_of(&self, id: Id) -> Option<&[Id]> {
        self.members.get(&id).map(|c| &c[..])
    }
}
