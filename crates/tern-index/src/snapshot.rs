//! [`Snapshot`]: the data as of one committed update, the base index and
//! the delta's changes together. Queries read a snapshot for their whole
//! life; it has the read API of [`Index`] and merges the delta into every
//! scan, count, term lookup and statistic.

use crate::delta::{MergedLookup, MergedScan, Runs, VocabView};
use crate::error::{IndexError, Result};
use crate::index::{Index, ScanRange};
use crate::meta::IndexMeta;
use crate::permutation::{Permutation, Row};
use crate::stats::{PredicateStats, Statistics};
use crate::term_key::{self, Classified};
use crate::term_refs::TermRefs;
use crate::{Id, Tag};
use oxrdf::{Term, TermRef};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// One consistent state of the data. Cheap to clone.
#[derive(Clone)]
pub struct Snapshot {
    base: Arc<Index>,
    delta: Arc<DeltaState>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({})", self.name())
    }
}

/// What a snapshot adds to its base.
pub(crate) struct DeltaState {
    /// The number of the last update applied (0: none since the base).
    pub version: u64,
    pub runs: Runs,
    pub vocab: VocabView,
    /// Blank nodes numbered below this exist (the base's and the updates').
    pub blank_nodes: u64,
    stats: OnceLock<Arc<Statistics>>,
    named_graphs: OnceLock<Arc<[Id]>>,
    /// Set on the state an update reads between its operations: its
    /// changes are not committed, and it has the version of the snapshot
    /// it started from. A number no other staged state has, so that what
    /// is kept by snapshot name (compiled schemas, derived extents) is
    /// never mistaken for another's.
    staged: Option<u64>,
}

/// The numbers of staged states ([`DeltaState::staged`]).
static STAGED_STATES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl DeltaState {
    pub fn new(version: u64, runs: Runs, vocab: VocabView, blank_nodes: u64) -> DeltaState {
        DeltaState {
            version,
            runs,
            vocab,
            blank_nodes,
            stats: OnceLock::new(),
            named_graphs: OnceLock::new(),
            staged: None,
        }
    }

    /// The state marked as staged (uncommitted), with a number of its own.
    pub fn staged(mut self) -> DeltaState {
        self.staged = Some(STAGED_STATES.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        self
    }

    /// A state with the same content, keeping its staged mark.
    fn same_content(&self, runs: Runs, blank_nodes: u64) -> DeltaState {
        DeltaState {
            staged: self.staged,
            ..DeltaState::new(self.version, runs, self.vocab.clone(), blank_nodes)
        }
    }
}

impl Snapshot {
    /// The base index alone, as built.
    pub fn of_index(base: Arc<Index>) -> Snapshot {
        let blank_nodes = base.meta().blank_nodes;
        Snapshot {
            base,
            delta: Arc::new(DeltaState::new(
                0,
                Runs::default(),
                VocabView::default(),
                blank_nodes,
            )),
        }
    }

    pub(crate) fn new(base: Arc<Index>, delta: DeltaState) -> Snapshot {
        Snapshot {
            base,
            delta: Arc::new(delta),
        }
    }

    /// The same data with blank nodes numbered below `n` taken (at least
    /// those it had).
    pub(crate) fn with_blank_nodes(self, n: u64) -> Snapshot {
        let d = &self.delta;
        let delta = d.same_content(d.runs.clone(), d.blank_nodes.max(n));
        Snapshot::new(self.base, delta)
    }

    /// The same data with its delta held in `runs` (the same changes,
    /// merged differently).
    pub(crate) fn with_runs(&self, runs: Runs) -> Snapshot {
        let d = &self.delta;
        let delta = d.same_content(runs, d.blank_nodes);
        Snapshot::new(self.base.clone(), delta)
    }

    pub fn base(&self) -> &Arc<Index> {
        &self.base
    }

    pub(crate) fn delta(&self) -> &DeltaState {
        &self.delta
    }

    /// The number of the last update this snapshot includes.
    pub fn version(&self) -> u64 {
        self.delta.version
    }

    /// The snapshot's name: the base's build and the update number. Two
    /// servers that replayed the same log from the same base give the same
    /// snapshot the same name (and its terms the same IDs). The state an
    /// update reads between its operations has a name of its own.
    pub fn name(&self) -> String {
        let (id, version) = (&self.base.meta().index_id, self.delta.version);
        match self.delta.staged {
            None => format!("{id}@{version}"),
            Some(n) => format!("{id}@{version}+staged{n}"),
        }
    }

    /// Quads the delta inserts or deletes (pending compaction).
    pub fn delta_changes(&self) -> usize {
        self.delta.runs.changes()
    }

    /// Runs of changes over the base (merged as they pile up).
    pub fn delta_runs(&self) -> usize {
        self.delta.runs.iter().count()
    }

    pub fn delta_terms(&self) -> u64 {
        self.delta.vocab.len()
    }

    pub fn dir(&self) -> &Path {
        self.base.dir()
    }

    pub fn meta(&self) -> &IndexMeta {
        self.base.meta()
    }

    pub fn first_literal(&self) -> Result<Id> {
        self.base.first_literal()
    }

    /// The kind of a base vocabulary term (see [`Index::term_kind`]); none
    /// for the delta's terms, which are not in key order.
    pub fn term_kind(&self, id: Id) -> Option<crate::vocab::TermKind> {
        self.base.term_kind(id)
    }

    /// The IDs `[low, high)` of the literals whose lexical form starts with
    /// `prefix` (see [`Index::literal_prefix_ids`]); `None` once the delta
    /// has terms of its own, which are not in key order.
    pub fn literal_prefix_ids(&self, prefix: &str) -> Result<Option<(Id, Id)>> {
        if self.delta_terms() > 0 {
            return Ok(None);
        }
        self.base.literal_prefix_ids(prefix).map(Some)
    }

    /// The statistics of the base, corrected by the delta: quads per
    /// predicate exact, distinct counts estimated (the base's, plus at most
    /// one per inserted quad, at most the quads).
    pub fn stats(&self) -> Arc<Statistics> {
        self.delta
            .stats
            .get_or_init(|| Arc::new(corrected_stats(self.base.stats(), &self.delta.runs)))
            .clone()
    }

    /// Whether an ID stands for a literal (see [`Index::is_literal`]).
    pub fn is_literal(&self, id: Id) -> Result<bool> {
        if id.tag() == Tag::DeltaVocab {
            return Ok(self
                .delta
                .vocab
                .key(id.payload())
                .is_some_and(|k| k.as_bytes().first() == Some(&term_key::LITERAL)));
        }
        self.base.is_literal(id)
    }

    /// IDs of up to `max` IRIs that start with `prefix`: the first of the
    /// base's in IRI order, then those updates added.
    pub fn iris_with_prefix(&self, prefix: &str, max: usize) -> Result<Vec<Id>> {
        let (low, high) = self.base.iri_prefix_ids(prefix)?;
        let mut ids: Vec<Id> = (low.0..high.0).take(max).map(Id).collect();
        if !self.delta.vocab.is_empty() && ids.len() < max {
            let mut key = Vec::with_capacity(prefix.len() + 1);
            term_key::iri_key(prefix, &mut key);
            // An IRI key is a tag byte and the IRI's text, so UTF-8.
            let key = std::str::from_utf8(&key).map_err(|_| self.corrupt("key is not UTF-8"))?;
            ids.extend(
                self.delta
                    .vocab
                    .positions_with_prefix(key, max - ids.len())
                    .into_iter()
                    .map(Id::delta_vocab),
            );
        }
        Ok(ids)
    }

    /// The ID of a term, `None` when this snapshot does not contain it.
    pub fn id_of(&self, term: TermRef<'_>) -> Result<Option<Id>> {
        if let TermRef::BlankNode(b) = term {
            return Ok(term_key::blank_node_number(b)
                .filter(|&n| n < self.delta.blank_nodes)
                .map(Id::blank_node));
        }
        if let Some(id) = self.base.id_of(term)? {
            return Ok(Some(id));
        }
        if self.delta.vocab.is_empty() {
            return Ok(None);
        }
        let mut key = Vec::new();
        if let Classified::Vocab = term_key::classify(term, &mut key) {
            let key = std::str::from_utf8(&key).map_err(|_| self.corrupt("key is not UTF-8"))?;
            return Ok(self.delta.vocab.find(key).map(Id::delta_vocab));
        }
        Ok(None)
    }

    pub fn term_of(&self, id: Id) -> Result<Option<Term>> {
        Ok(self.terms_of(&[id])?.pop().flatten())
    }

    /// Terms of many IDs (see [`Index::terms_of`]).
    pub fn terms_of(&self, ids: &[Id]) -> Result<Vec<Option<Term>>> {
        let mut terms = self.base.terms_of(ids)?;
        for (slot, id) in terms.iter_mut().zip(ids) {
            if id.tag() == Tag::DeltaVocab {
                *slot = match self.delta.vocab.key(id.payload()) {
                    Some(key) => Some(
                        term_key::key_to_term(key.as_bytes())
                            .map_err(|_| self.corrupt("bad delta key"))?,
                    ),
                    None => None,
                };
            }
        }
        Ok(terms)
    }

    /// Terms of many IDs side by side in one buffer (see [`Index::term_refs`]).
    pub fn term_refs(&self, ids: &[Id]) -> Result<TermRefs> {
        let mut refs = self.base.term_refs(ids)?;
        if self.delta.vocab.is_empty() {
            return Ok(refs);
        }
        let delta: Vec<usize> = (0..ids.len())
            .filter(|&i| ids[i].tag() == Tag::DeltaVocab)
            .collect();
        let keys = self
            .delta
            .vocab
            .keys(delta.iter().map(|&i| ids[i].payload()));
        for (i, key) in delta.into_iter().zip(keys) {
            if let Some(key) = key {
                refs.set_key(i, &key)
                    .map_err(|_| self.corrupt("bad delta key"))?;
            }
        }
        Ok(refs)
    }

    /// Scans `perm` (see [`Index::scan`]), the delta merged in.
    pub fn scan(&self, perm: Permutation, prefix: &[Id], range: ScanRange) -> MergedScan {
        let base = self.base.scan(perm, prefix, range);
        let (lo, hi) = Index::bounds(prefix, range).unwrap_or(([u64::MAX; 4], [0; 4]));
        MergedScan::new(base, &self.delta.runs, perm, &lo, &hi)
    }

    /// The rows `r` with `lo <= r <= hi` of `perm`, changes merged in: one
    /// morsel of a scan cut by [`split_scan`](Self::split_scan).
    pub fn scan_between(&self, perm: Permutation, lo: Row, hi: Row) -> MergedScan {
        let base = self.base.permutation(perm).scan_rows(lo, hi);
        MergedScan::new(base, &self.delta.runs, perm, &lo, &hi)
    }

    /// Rows that cut a [`scan`](Self::scan) into `parts` of about equal
    /// rows of the base index, at changes of the value after the prefix
    /// (changes do not move the cuts: any cuts partition the scan).
    pub fn split_scan(
        &self,
        perm: Permutation,
        prefix: &[Id],
        range: ScanRange,
        parts: usize,
    ) -> Result<Vec<Row>> {
        self.base.split_scan(perm, prefix, range, parts)
    }

    /// The first and the last row of a [`scan`](Self::scan), when the
    /// snapshot has no changes (`None` then if it has no rows; with
    /// changes, always `None`: inserted rows may lie beyond the base's).
    pub fn scan_ends(
        &self,
        perm: Permutation,
        prefix: &[Id],
        range: ScanRange,
    ) -> Result<Option<(Row, Row)>> {
        if !self.delta.runs.is_empty() {
            return Ok(None);
        }
        match Index::bounds(prefix, range) {
            None => Ok(None),
            Some((lo, hi)) => self.base.permutation(perm).ends(&lo, &hi),
        }
    }

    /// The first row `r` with `lo <= r <= hi` of `perm`, changes merged
    /// in: a seek, for walking the distinct values of a column.
    pub fn first_row(&self, perm: Permutation, lo: Row, hi: Row) -> Result<Option<Row>> {
        if self.delta.runs.is_empty() {
            return self.base.permutation(perm).first(&lo, &hi);
        }
        match self.scan_between(perm, lo, hi).next().transpose()? {
            Some(batch) => Ok(Some(batch.row(0))),
            None => Ok(None),
        }
    }

    /// Repeated small scans of `perm` (see [`Index::lookup`]).
    pub fn lookup(&self, perm: Permutation) -> MergedLookup {
        MergedLookup::new(self.base.lookup(perm), self.delta.runs.clone(), perm)
    }

    /// Exact number of rows a [`scan`](Self::scan) with the same arguments returns.
    pub fn count(&self, perm: Permutation, prefix: &[Id], range: ScanRange) -> Result<u64> {
        let base = self.base.count(perm, prefix, range)?;
        if self.delta.runs.is_empty() {
            return Ok(base);
        }
        let Some((lo, hi)) = Index::bounds(prefix, range) else {
            return Ok(0);
        };
        let k = (prefix.len() + usize::from(!range.is_all())).min(4);
        let net = self.delta.runs.count(perm, &lo, &hi, k);
        Ok(base.saturating_add_signed(net))
    }

    /// The graphs other than the default graph that hold a quad, sorted.
    pub fn named_graphs(&self) -> Result<Arc<[Id]>> {
        if self.delta.runs.is_empty() {
            return self.base.named_graphs();
        }
        if let Some(graphs) = self.delta.named_graphs.get() {
            return Ok(graphs.clone());
        }
        let mut quads: rustc_hash::FxHashMap<u64, i64> = self
            .base
            .graph_quads()?
            .iter()
            .map(|&(g, n)| (g.0, n as i64))
            .collect();
        for (g, n) in self.delta.runs.graph_net() {
            *quads.entry(g).or_default() += n;
        }
        let mut graphs: Vec<Id> = quads
            .into_iter()
            .filter(|&(g, n)| g != Id::DEFAULT_GRAPH.0 && n > 0)
            .map(|(g, _)| Id(g))
            .collect();
        graphs.sort_unstable();
        Ok(self
            .delta
            .named_graphs
            .get_or_init(|| graphs.into())
            .clone())
    }

    fn corrupt(&self, reason: &str) -> IndexError {
        IndexError::Corrupt {
            path: self.base.dir().to_owned(),
            reason: reason.to_owned(),
        }
    }
}

fn corrected_stats(base: &Statistics, runs: &Runs) -> Statistics {
    let mut stats = base.clone();
    if runs.is_empty() {
        return stats;
    }
    let net = runs.predicate_net();
    let total: i64 = net.iter().map(|e| e.1).sum();
    stats.triples = stats.triples.saturating_add_signed(total);
    for (predicate, change) in net {
        let grown = change.max(0) as u64;
        match stats
            .predicates
            .binary_search_by_key(&predicate, |p| p.predicate)
        {
            Ok(i) => {
                let p = &mut stats.predicates[i];
                p.triples = p.triples.saturating_add_signed(change);
                p.distinct_subjects = (p.distinct_subjects + grown).min(p.triples);
                p.distinct_objects = (p.distinct_objects + grown).min(p.triples);
            }
            Err(i) if change > 0 => {
                stats.predicates.insert(
                    i,
                    PredicateStats {
                        predicate,
                        triples: grown,
                        distinct_subjects: grown,
                        distinct_objects: grown,
                    },
                );
                stats.distinct_predicates += 1;
            }
            Err(_) => {}
        }
    }
    stats
}
