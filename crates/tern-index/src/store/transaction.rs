//! A [`Transaction`]: the changes of one update request, applied one quad
//! at a time on top of the store's latest state, visible to the request
//! itself as it goes (a later operation of a multi-operation update sees
//! the earlier ones) and to nobody else until it commits.

use super::record::RecordWriter;
use super::{Head, Store};
use crate::delta::{Change, Run, VocabView};
use crate::error::Result;
use crate::index::ScanRange;
use crate::permutation::Permutation;
use crate::snapshot::{DeltaState, Snapshot};
use crate::term_key::{self, Classified};
use crate::{Id, IndexError};
use oxrdf::{BlankNode, GraphNameRef, QuadRef, TermRef};
use rustc_hash::FxHashMap;
use std::sync::{Arc, MutexGuard};

/// Changes staged on top of a head state; shared by live transactions and
/// the log's replay, so both give terms the same IDs.
pub(crate) struct Staged {
    pub base: Snapshot,
    pub vocab_len_before: u64,
    pub changes: Vec<Change>,
    pub record: RecordWriter,
    /// Keep the changes as terms for the log (not when replaying it).
    logging: bool,
    /// Terms (and blank nodes) this transaction made so far.
    created: u64,
    /// The visibility this transaction gave quads it changed.
    visible: FxHashMap<[u64; 4], bool>,
    /// Some quad was changed more than once (its changes need netting).
    changed_twice: bool,
    /// Blank nodes numbered below this exist.
    pub blank_nodes: u64,
    /// Blank node labels not of the index's form, numbered for this update.
    fresh_labels: FxHashMap<String, u64>,
    /// Graphs by whether the state this transaction started from has no
    /// quad in them (a write into a new graph then looks nothing up).
    empty_graphs: FxHashMap<u64, bool>,
    key: Vec<u8>,
}

impl Staged {
    pub fn new(base: Snapshot) -> Staged {
        Staged {
            vocab_len_before: base.delta().vocab.shared().len(),
            blank_nodes: base.delta().blank_nodes,
            base,
            changes: Vec::new(),
            record: RecordWriter::default(),
            logging: true,
            created: 0,
            visible: FxHashMap::default(),
            changed_twice: false,
            fresh_labels: FxHashMap::default(),
            empty_graphs: FxHashMap::default(),
            key: Vec::new(),
        }
    }

    /// Changes staged to replay the log: they are logged already.
    pub fn replaying(base: Snapshot) -> Staged {
        Staged {
            logging: false,
            ..Staged::new(base)
        }
    }

    /// Applies one change; true if it changed anything (an insert of a
    /// quad already there, or a delete of one that is not, changes nothing).
    pub fn apply(&mut self, quad: QuadRef<'_>, insert: bool) -> Result<bool> {
        let graph: Option<TermRef<'_>> = match quad.graph_name {
            GraphNameRef::DefaultGraph => None,
            GraphNameRef::NamedNode(n) => Some(n.into()),
            GraphNameRef::BlankNode(b) => Some(b.into()),
        };
        let terms = [
            Some(TermRef::from(quad.subject)),
            Some(quad.predicate.into()),
            Some(quad.object),
            graph,
        ];
        let mut ids = [0u64; 4];
        let terms_before = self.created;
        for (slot, term) in ids.iter_mut().zip(terms) {
            *slot = match term {
                None => Id::DEFAULT_GRAPH.0,
                Some(term) => match self.id(term, insert)? {
                    Some(id) => id.0,
                    // A delete of a quad with a term the store lacks.
                    None => return Ok(false),
                },
            };
        }
        let now_visible = match self.visible.get(&ids).copied() {
            Some(v) => v,
            // A quad with a term made just now cannot be there yet.
            None if self.created > terms_before => false,
            None if self.started_empty(ids[3])? => false,
            None => {
                let prefix = ids.map(Id);
                self.base.count(Permutation::Spo, &prefix, ScanRange::ALL)? > 0
            }
        };
        if now_visible == insert {
            return Ok(false);
        }
        self.changed_twice |= self.visible.insert(ids, insert).is_some();
        self.changes.push(Change { quad: ids, insert });
        if self.logging {
            self.record.push(quad, insert);
        }
        Ok(true)
    }

    /// Whether graph `g` held no quad in the state this transaction
    /// started from (the default graph counts as never empty).
    fn started_empty(&mut self, g: u64) -> Result<bool> {
        if g == Id::DEFAULT_GRAPH.0 {
            return Ok(false);
        }
        if let Some(&empty) = self.empty_graphs.get(&g) {
            return Ok(empty);
        }
        let empty = self.base.named_graphs()?.binary_search(&Id(g)).is_err();
        self.empty_graphs.insert(g, empty);
        Ok(empty)
    }

    /// The ID of a term; a new one if `create` and the store lacks it.
    fn id(&mut self, term: TermRef<'_>, create: bool) -> Result<Option<Id>> {
        match term_key::classify(term, &mut self.key) {
            Classified::Inline(id) => Ok(Some(id)),
            Classified::Blank(label) => {
                if let Some(n) =
                    term_key::blank_node_number(oxrdf::BlankNodeRef::new_unchecked(label))
                {
                    if n < self.blank_nodes {
                        return Ok(Some(Id::blank_node(n)));
                    }
                    if create {
                        // A node numbered by the update that logged it.
                        self.blank_nodes = n + 1;
                        self.created += 1;
                        return Ok(Some(Id::blank_node(n)));
                    }
                    return Ok(None);
                }
                if let Some(&n) = self.fresh_labels.get(label) {
                    return Ok(Some(Id::blank_node(n)));
                }
                if !create {
                    return Ok(None);
                }
                let n = self.blank_nodes;
                self.blank_nodes += 1;
                self.created += 1;
                self.fresh_labels.insert(label.to_owned(), n);
                Ok(Some(Id::blank_node(n)))
            }
            Classified::Vocab => {
                if let Some(id) = self.base.base().vocab_id(&self.key)? {
                    return Ok(Some(id));
                }
                let key = std::str::from_utf8(&self.key).map_err(|_| IndexError::Corrupt {
                    path: self.base.dir().to_owned(),
                    reason: "a term's key is not UTF-8".into(),
                })?;
                let vocab = self.base.delta().vocab.shared().clone();
                let view = VocabView::latest(vocab.clone());
                if let Some(position) = view.find(key) {
                    return Ok(Some(Id::delta_vocab(position)));
                }
                if !create {
                    return Ok(None);
                }
                let position = view.len();
                vocab.append([Arc::<str>::from(key)]);
                self.created += 1;
                Ok(Some(Id::delta_vocab(position)))
            }
        }
    }

    /// A blank node no quad uses yet.
    pub fn new_blank_node(&mut self) -> BlankNode {
        let n = self.blank_nodes;
        self.blank_nodes += 1;
        BlankNode::new_unchecked(term_key::blank_node_label(n))
    }

    /// The state with the staged changes: what the update's next operation
    /// reads.
    pub fn snapshot(&self) -> Snapshot {
        let delta = self.base.delta();
        let runs = delta.runs.with_top(self.run());
        Snapshot::new(
            self.base.base().clone(),
            DeltaState::new(
                delta.version,
                runs,
                VocabView::latest(delta.vocab.shared().clone()),
                self.blank_nodes,
            )
            .staged(),
        )
    }

    /// The staged changes as a run.
    fn run(&self) -> Run {
        if self.changed_twice {
            Run::of(&self.changes)
        } else {
            Run::of_distinct(&self.changes)
        }
    }

    /// The state after committing as update `version`.
    pub fn committed(&self, version: u64) -> Snapshot {
        let delta = self.base.delta();
        Snapshot::new(
            self.base.base().clone(),
            DeltaState::new(
                version,
                delta.runs.push(self.run()),
                VocabView::latest(delta.vocab.shared().clone()),
                self.blank_nodes,
            ),
        )
    }

    /// Takes back the terms this update added to the delta vocabulary.
    pub fn abort(&self) {
        self.base
            .delta()
            .vocab
            .shared()
            .truncate(self.vocab_len_before);
    }
}

/// One update in progress. It holds the store's write lock: updates are
/// serialized, queries go on. Dropped without [`commit`](Self::commit), it
/// changes nothing.
pub struct Transaction<'s> {
    pub(super) store: &'s Store,
    pub(super) head: Option<MutexGuard<'s, Head>>,
    pub(super) staged: Staged,
    pub(super) committed: bool,
}

/// What a commit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// The update's number: the version of the snapshot it made (unchanged
    /// when nothing changed).
    pub version: u64,
    pub inserted: usize,
    pub deleted: usize,
}

impl Transaction<'_> {
    /// Inserts a quad; false if it was there already.
    pub fn insert(&mut self, quad: QuadRef<'_>) -> Result<bool> {
        self.staged.apply(quad, true)
    }

    /// Deletes a quad; false if it was not there.
    pub fn delete(&mut self, quad: QuadRef<'_>) -> Result<bool> {
        self.staged.apply(quad, false)
    }

    /// A blank node no quad uses yet (for blank nodes of INSERT DATA and
    /// templates: fresh per request, or per solution).
    pub fn new_blank_node(&mut self) -> BlankNode {
        self.staged.new_blank_node()
    }

    /// The data with this transaction's changes so far.
    pub fn snapshot(&self) -> Snapshot {
        self.staged.snapshot()
    }

    /// Changes applied so far.
    pub fn changes(&self) -> usize {
        self.staged.changes.len()
    }

    /// Makes the changes durable (logged and synced) and visible to new
    /// queries, then returns. On error nothing is visible, and nothing was
    /// acknowledged.
    pub fn commit(mut self) -> Result<Committed> {
        let head = self.head.take().expect("a live transaction holds the lock");
        let (advanced, result) = self.store.commit(head, &self.staged);
        // Once the head moved on, its snapshot uses the terms this update
        // added: they stay even if the log could not be synced.
        self.committed = advanced || result.is_ok();
        result
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.committed {
            self.staged.abort();
        }
    }
}
