//! The [`QueryContext`]: the index, the terms the query made up (local
//! vocabulary), the dataset, the clock of time-sliced turns and the limits
//! that stop a query.

use super::{CancelFlag, Limits, MemoryAccount, MemoryCharge};
use crate::suspend::{bad_state, OperatorState, Stash};
use crate::EngineError;
use oxrdf::Term;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tern_index::{Id, Snapshot, Tag};

/// Terms made during a query (BIND, CONCAT, VALUES with unknown terms…).
#[derive(Default)]
struct LocalVocab {
    terms: Vec<Term>,
    ids: FxHashMap<Term, Id>,
    /// Terms made up while the query was planned (constants of the query
    /// the index does not hold): planning them again makes them again, in
    /// the same order, so a suspended query need not keep them.
    planned: usize,
    /// What the index answered for terms looked up before: the rewriting
    /// of a query under inference asks for the same few IRIs hundreds of
    /// times, each a vocabulary search. At most [`REMEMBERED_TERMS`].
    indexed: FxHashMap<Term, Option<Id>>,
}

/// Most index answers a query remembers (terms made per row by an
/// expression are looked up too, and must not grow it without bound).
const REMEMBERED_TERMS: usize = 4096;

/// Which graphs the default graph and the named graphs of a query are.
#[derive(Debug, Clone)]
pub enum GraphSet {
    /// The index's default graph only.
    IndexDefault,
    /// Every graph, default and named, merged (duplicates removed).
    All,
    /// Every named graph of the index.
    AllNamed,
    /// These graphs (FROM / FROM NAMED), merged where they are a default graph.
    Only(Vec<Id>),
}

const NO_TURN: u64 = u64::MAX;
const NO_TIMEOUT: u64 = u64::MAX;

fn timeout_nanos(timeout: Option<Duration>) -> u64 {
    timeout.map_or(NO_TIMEOUT, |t| {
        t.as_nanos().min(u128::from(NO_TIMEOUT - 1)) as u64
    })
}

pub struct QueryContext {
    /// The data the query reads, for its whole life.
    pub index: Snapshot,
    local: Mutex<LocalVocab>,
    pub default_graph: GraphSet,
    pub named_graphs: GraphSet,
    started: Instant,
    memory: Arc<MemoryAccount>,
    spill_dir: std::path::PathBuf,
    /// Cores the query's operators may use at once.
    cores: usize,
    parallel_from_rows: Option<u64>,
    /// The flag of the request the query runs for now: a query kept running
    /// between pages (see [`rearm`](Self::rearm)) serves one request per page.
    cancel: Mutex<CancelFlag>,
    /// When the timeout started counting, in nanoseconds after `started`.
    timeout_from: AtomicU64,
    /// The timeout in nanoseconds (`NO_TIMEOUT`: none); changes with the
    /// request, like `cancel`.
    timeout: AtomicU64,
    /// End of the current turn of a time-sliced query, in nanoseconds after
    /// `started`; `NO_TURN` when the query runs without time slices.
    turn_ends: AtomicU64,
    /// `should_yield` said so this turn already.
    yielded: AtomicBool,
    /// How many more times `should_yield` may say so this turn: copies of
    /// a pipeline running side by side each need to hear the end of the
    /// turn (see [`share_turn_end`](Self::share_turn_end)).
    extra_yields: AtomicUsize,
    pub base_iri: Option<oxiri::Iri<String>>,
    /// NOW(), read from the clock at its first use: most queries never
    /// ask, and turning the clock into an xsd:dateTime costs a microsecond.
    pub now: std::sync::OnceLock<oxsdatatypes::DateTime>,
    /// The sameAs classes, when the query runs under OWL RL inference and
    /// the data has any (set once, before planning).
    pub synonyms: std::sync::OnceLock<Arc<super::SynonymTable>>,
    /// Where the rows of large unions that inference reads whole are kept
    /// between queries (set when the query runs under inference).
    pub extents: std::sync::OnceLock<Arc<super::DerivedExtents>>,
}

impl QueryContext {
    pub fn new(
        index: Snapshot,
        default_graph: GraphSet,
        named_graphs: GraphSet,
        limits: Limits,
        base_iri: Option<oxiri::Iri<String>>,
        now: Option<oxsdatatypes::DateTime>,
    ) -> QueryContext {
        let Limits {
            timeout,
            memory_budget,
            cancel,
            shared_memory,
            spill_dir,
            cores,
            parallel_from_rows,
        } = limits;
        QueryContext {
            index,
            local: Mutex::default(),
            default_graph,
            named_graphs,
            started: Instant::now(),
            memory: Arc::new(MemoryAccount::new(memory_budget, shared_memory)),
            spill_dir: spill_dir.unwrap_or_else(std::env::temp_dir),
            cores: cores.unwrap_or_else(rayon::current_num_threads).max(1),
            parallel_from_rows,
            cancel: Mutex::new(cancel),
            timeout_from: AtomicU64::new(0),
            timeout: AtomicU64::new(timeout_nanos(timeout)),
            turn_ends: AtomicU64::new(NO_TURN),
            yielded: AtomicBool::new(false),
            extra_yields: AtomicUsize::new(0),
            base_iri,
            now: now.map_or_else(std::sync::OnceLock::new, std::sync::OnceLock::from),
            synonyms: std::sync::OnceLock::new(),
            extents: std::sync::OnceLock::new(),
        }
    }

    /// The query's NOW(): the same instant for the whole query.
    pub fn now(&self) -> oxsdatatypes::DateTime {
        *self.now.get_or_init(oxsdatatypes::DateTime::now)
    }

    /// Called by operators once per batch: stops the query when it was
    /// cancelled or ran out of time.
    pub fn check(&self) -> Result<(), EngineError> {
        if self.cancel.lock().unwrap().is_cancelled() {
            return Err(EngineError::Cancelled);
        }
        let limit = self.timeout.load(Ordering::Relaxed);
        if limit != NO_TIMEOUT {
            let from = Duration::from_nanos(self.timeout_from.load(Ordering::Relaxed));
            let limit = Duration::from_nanos(limit);
            if self.started.elapsed().saturating_sub(from) > limit {
                return Err(EngineError::Timeout(limit.as_secs_f64()));
            }
        }
        Ok(())
    }

    /// Serves another request from here on, as a query resumed from its
    /// token would: its cancellation flag, and its timeout counted from now.
    pub fn rearm(&self, cancel: CancelFlag, timeout: Option<Duration>) {
        *self.cancel.lock().unwrap() = cancel;
        let now = self.started.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        self.timeout_from.store(now, Ordering::Relaxed);
        self.timeout
            .store(timeout_nanos(timeout), Ordering::Relaxed);
    }

    /// Starts a turn of a time-sliced query that should end at `until`
    /// (`None`: run until there are rows to hand out).
    pub fn set_turn_end(&self, until: Option<Instant>) {
        let nanos = until.map_or(NO_TURN, |u| {
            u.saturating_duration_since(self.started)
                .as_nanos()
                .min(u128::from(NO_TURN - 1)) as u64
        });
        self.turn_ends.store(nanos, Ordering::Relaxed);
        self.yielded.store(false, Ordering::Relaxed);
    }

    /// Whether the current turn is over; true once per turn at most.
    ///
    /// The operator that hears it, if it has no rows to give yet, returns an
    /// empty batch ("nothing yet") instead of working on, in a state from
    /// which its next call goes on where it stopped. An operator that gets an
    /// empty batch from an input stops too and passes the pause on (see
    /// [`input_paused`](Self::input_paused)), so the whole query pauses. One
    /// that asked again instead would swallow the signal: nobody else hears
    /// it this turn, and the turn runs on until the query ends.
    pub fn should_yield(&self) -> bool {
        self.turn_over()
            && (!self.yielded.swap(true, Ordering::Relaxed)
                || self
                    .extra_yields
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                    .is_ok())
    }

    /// While `copies` copies of a pipeline make a batch each side by side
    /// (`ParallelPipelines`), each may hear the end of the turn: one that
    /// did not would work on alone (a hash join's build side to its end).
    /// The copies' pauses then go up as one. `0` when the round is over.
    pub fn share_turn_end(&self, copies: usize) {
        self.extra_yields
            .store(copies.saturating_sub(1), Ordering::Relaxed);
    }

    /// For an operator whose input paused (returned an empty batch) and
    /// which stops in turn: with rows in hand it returns them instead of an
    /// empty batch, and then gives the signal back, which its input took,
    /// so that the operators above (a sort or group collecting these rows)
    /// still hear it.
    pub fn input_paused(&self, rows_in_hand: usize) {
        if rows_in_hand > 0 {
            self.yielded.store(false, Ordering::Relaxed);
        }
    }

    /// Whether an operator in the middle of its work should stop for the end
    /// of the turn: with rows in hand, it hands them up and leaves the signal
    /// to the operators above (a sort or group there must hear it); without,
    /// it takes the signal and returns an empty batch.
    pub fn stop_turn(&self, rows_in_hand: usize) -> bool {
        if rows_in_hand > 0 {
            self.turn_over()
        } else {
            self.should_yield()
        }
    }

    /// Whether the current turn is over, without taking the signal: for an
    /// operator that stops early to hand up the rows it has, so that a
    /// materializing operator above still hears [`should_yield`](Self::should_yield).
    pub fn turn_over(&self) -> bool {
        let ends = self.turn_ends.load(Ordering::Relaxed);
        ends != NO_TURN && self.started.elapsed().as_nanos() >= u128::from(ends)
    }

    /// The query's memory budget, if it has one.
    pub fn memory_budget(&self) -> Option<u64> {
        self.memory.budget()
    }

    /// A charge for an operator's materialized state, counted against the
    /// query's and the server's memory budgets (see `context::memory`).
    pub fn memory_charge(&self) -> MemoryCharge {
        MemoryCharge::new(self.memory.clone())
    }

    /// Where the query writes what does not fit in memory.
    /// Cores the query's operators may use at once: copies of a pipeline
    /// (`ParallelPipelines`) and an index join's lookups of a batch.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Rows a pipeline is expected to pass before it is copied to several
    /// cores, if the engine was told.
    pub fn parallel_from_rows(&self) -> Option<u64> {
        self.parallel_from_rows
    }

    pub fn spill_dir(&self) -> &std::path::Path {
        &self.spill_dir
    }

    /// The engine's memory, where spill files are counted too.
    pub fn engine_memory(&self) -> Option<Arc<super::SharedMemory>> {
        self.memory.shared().cloned()
    }

    /// The most the query's operators held at once, in bytes (an estimate
    /// of what a parked query holds).
    pub fn largest_state(&self) -> u64 {
        self.memory.peak()
    }

    /// The ID of a term if the index or this query knows it.
    pub fn lookup(&self, term: &Term) -> Result<Option<Id>, EngineError> {
        if let Some(id) = self.index_id(term)? {
            return Ok(Some(id));
        }
        Ok(self.local.lock().unwrap().ids.get(term).copied())
    }

    /// The index's ID of a term, remembered.
    fn index_id(&self, term: &Term) -> Result<Option<Id>, EngineError> {
        if let Some(known) = self.local.lock().unwrap().indexed.get(term) {
            return Ok(*known);
        }
        let id = self.index.id_of(term.as_ref())?;
        let mut local = self.local.lock().unwrap();
        if local.indexed.len() < REMEMBERED_TERMS {
            local.indexed.insert(term.clone(), id);
        }
        Ok(id)
    }

    /// The ID of a term, adding it to the local vocabulary if it is new. The same
    /// term always gets the same ID, so joins and DISTINCT can compare IDs.
    pub fn intern(&self, term: &Term) -> Result<Id, EngineError> {
        if let Some(id) = self.index_id(term)? {
            return Ok(id);
        }
        let mut local = self.local.lock().unwrap();
        if let Some(&id) = local.ids.get(term) {
            return Ok(id);
        }
        let id = Id::new(Tag::LocalVocab, local.terms.len() as u64);
        local.terms.push(term.clone());
        local.ids.insert(term.clone(), id);
        Ok(id)
    }

    /// Whether an ID stands for a literal.
    pub fn is_literal(&self, id: Id) -> Result<bool, EngineError> {
        if id.tag() == Tag::LocalVocab {
            let local = self.local.lock().unwrap();
            return Ok(local
                .terms
                .get(id.payload() as usize)
                .is_some_and(Term::is_literal));
        }
        Ok(self.index.is_literal(id)?)
    }

    pub fn term(&self, id: Id) -> Result<Option<Term>, EngineError> {
        Ok(self.terms(&[id])?.pop().flatten())
    }

    /// Terms of many IDs at once (vocabulary blocks are decoded once).
    pub fn terms(&self, ids: &[Id]) -> Result<Vec<Option<Term>>, EngineError> {
        let mut out = self.index.terms_of(ids)?;
        if ids.iter().any(|id| id.tag() == Tag::LocalVocab) {
            let local = self.local.lock().unwrap();
            for (slot, id) in out.iter_mut().zip(ids) {
                if id.tag() == Tag::LocalVocab {
                    *slot = local.terms.get(id.payload() as usize).cloned();
                }
            }
        }
        Ok(out)
    }
}

impl QueryContext {
    /// Saves what a resumed query needs besides its plan: the query's
    /// `NOW()` and the terms it made up (stashed; they are only needed by
    /// materialized state, which is stashed too).
    pub fn save(&self, stash: &Stash) -> OperatorState {
        let bytes = self.now().to_be_bytes();
        let mut padded = [0u8; 24];
        padded[..18].copy_from_slice(&bytes);
        let numbers = padded
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let mut state = OperatorState::new(numbers, Vec::new());
        let local = self.local.lock().unwrap();
        if local.terms.len() > local.planned {
            state.stashed = Some(stash.put(local.terms.clone()));
        }
        state
    }

    /// Planning is over: the terms made up so far are the plan's (see
    /// [`LocalVocab::planned`]).
    pub fn planned(&self) {
        let mut local = self.local.lock().unwrap();
        local.planned = local.terms.len();
    }

    /// The `NOW()` saved by [`save`](Self::save).
    pub fn saved_now(state: &OperatorState) -> Result<oxsdatatypes::DateTime, EngineError> {
        if state.numbers.len() != 3 {
            return Err(bad_state("query context"));
        }
        let mut bytes = [0u8; 18];
        let all: Vec<u8> = state.numbers.iter().flat_map(|n| n.to_be_bytes()).collect();
        bytes.copy_from_slice(&all[..18]);
        Ok(oxsdatatypes::DateTime::from_be_bytes(bytes))
    }

    /// Takes back the local vocabulary saved by [`save`](Self::save). The
    /// re-planned query has made up the same terms in the same order so far.
    pub fn restore(&self, state: &OperatorState, stash: &Stash) -> Result<(), EngineError> {
        let Some(handle) = state.stashed else {
            return Ok(());
        };
        let saved: Vec<Term> = stash.take(handle)?;
        let mut local = self.local.lock().unwrap();
        if !saved.starts_with(&local.terms) {
            return Err(bad_state("local vocabulary does not match the plan"));
        }
        local.ids = saved
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), Id::new(Tag::LocalVocab, i as u64)))
            .collect();
        local.terms = saved;
        local.planned = local.planned.min(local.terms.len());
        Ok(())
    }
}

impl QueryContext {
    /// The named graphs a `GRAPH ?g` may range over.
    pub fn named_graph_ids(&self) -> Result<Vec<Id>, EngineError> {
        if let GraphSet::Only(list) = &self.named_graphs {
            return Ok(list.clone());
        }
        Ok(self.index.named_graphs()?.to_vec())
    }

    /// How many graphs [`named_graph_ids`](Self::named_graph_ids) gives, without
    /// finding them.
    pub fn named_graph_count(&self) -> u64 {
        match &self.named_graphs {
            GraphSet::Only(list) => list.len() as u64,
            _ => self.index.stats().named_graphs,
        }
    }
}
