//! The engine's front door: [`Engine`] parses, plans and starts queries,
//! and resumes suspended ones.

use super::parsed::ParsedQueries;
use super::solution_stream::{ParkedStream, SolutionStream};
use super::triple_stream::TripleStream;
use super::QueryOutcome;
use crate::context::{CancelFlag, DerivedExtents, GraphSet, Limits, QueryContext, SharedMemory};
use crate::exec::{Construct, Describe, Measured, Profile};
use crate::infer::{
    rewrite, take_markers, Inference, InferenceMode, NodeFacts, SameAsAnswers, SchemaCache,
    MARKER_NAMESPACE,
};
use crate::plan::{GraphContext, OptionalJoins, Planner};
use crate::suspend::{SavedQuery, Stash};
use crate::EngineError;
use oxrdf::NamedNode;
use spargebra::algebra::{GraphPattern, QueryDataset};
use spargebra::Query;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tern_index::memo::Memo;
use tern_index::{Id, Index, Snapshot, Store};

#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// When true (the default), the default graph of a query without FROM is the
    /// union of all graphs; when false it is only the index's default graph (as
    /// the W3C tests expect).
    pub default_graph_is_union: bool,
    /// Stop the query with [`EngineError::Timeout`] after this long.
    pub timeout: Option<Duration>,
    /// Stop the query with [`EngineError::MemoryBudget`] beyond this many bytes
    /// of materialized state.
    pub memory_budget: Option<u64>,
    /// Stop a query with [`EngineError::ServerMemory`] when the
    /// materialized state of all running queries together would pass this
    /// many bytes.
    pub server_memory_budget: Option<u64>,
    /// How OPTIONAL is evaluated.
    pub optional_joins: OptionalJoins,
    /// Prefixes queries and updates may use without declaring them
    /// (`rdf:`, `xsd:`, …, as the server was told); a query's own `PREFIX`
    /// wins.
    pub prefixes: Vec<(String, String)>,
    /// The entailment queries are answered under unless they ask for
    /// another, and how sameAs answers are reported.
    pub inference: InferenceMode,
    /// Read the schema for inference from this graph only (default: every
    /// graph).
    pub schema_graph: Option<NamedNode>,
    /// Where queries write sorts, groups and joins larger than their memory
    /// budget (default: the system's temporary directory).
    pub spill_dir: Option<std::path::PathBuf>,
    /// Most cores one query uses at once (default: all of the query pool:
    /// one per core).
    pub cores_per_query: Option<usize>,
    /// Rows a pipeline is expected to pass before it runs as copies on
    /// several cores (default: the planner's, 50,000). Tests set 0 to see
    /// every plan that can be copied copied.
    pub parallel_from_rows: Option<u64>,
    /// Bytes of derived rows kept between queries under inference: the
    /// deduplicated rows of large unions read whole, per snapshot (see
    /// `context::DerivedExtents`). 0 keeps nothing inference derived, not
    /// even the rewritten query patterns.
    pub derived_extents: u64,
}

/// A parsed query's address, a snapshot's name and an inference mode.
type RewriteKey = (usize, String, InferenceMode);

/// A rewritten query pattern, with the parsed query that pins its key's
/// address.
type Rewritten = (Arc<Query>, Arc<GraphPattern>);

/// Rewritten queries kept at most.
const REWRITES_KEPT: usize = 64;

/// The default of [`EngineOptions::derived_extents`]: the instances of a
/// class are 8 bytes each, so 256 MiB keeps eight classes of 4 M.
pub const DEFAULT_DERIVED_EXTENTS: u64 = 256 << 20;

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            default_graph_is_union: true,
            timeout: None,
            memory_budget: None,
            server_memory_budget: None,
            optional_joins: OptionalJoins::ByCost,
            prefixes: Vec::new(),
            inference: InferenceMode::default(),
            schema_graph: None,
            spill_dir: None,
            cores_per_query: None,
            parallel_from_rows: None,
            derived_extents: DEFAULT_DERIVED_EXTENTS,
        }
    }
}

/// Everything about one query besides its text.
#[derive(Debug, Clone, Default)]
pub struct QueryRequest {
    /// Resolves relative IRIs of the query.
    pub base_iri: Option<String>,
    /// The SPARQL Protocol's `default-graph-uri`: when given, it replaces the
    /// query's FROM clauses (and FROM NAMED, unless `named_graphs` is given).
    pub default_graphs: Option<Vec<NamedNode>>,
    /// The SPARQL Protocol's `named-graph-uri`, replacing FROM NAMED.
    pub named_graphs: Option<Vec<NamedNode>>,
    /// Lowers the engine's timeout for this query.
    pub timeout: Option<Duration>,
    /// Lowers the engine's memory budget for this query.
    pub memory_budget: Option<u64>,
    pub cancel: CancelFlag,
    /// Keep the per-operator runtime information (`explain`). Describing
    /// every operator decodes the plan's constants: a third of the time to
    /// plan a small query, which a resumed page pays again.
    pub profile: bool,
    /// The data to read (a continuation token's snapshot, or an update's
    /// state so far); `None`: the store's latest.
    pub snapshot: Option<Snapshot>,
    /// The default graph is the store's default graph alone, whatever the
    /// engine's default (the Graph Store Protocol's `?default`).
    pub default_graph_only: bool,
    /// The entailment regime for this query (the protocol's `inference`
    /// parameter); `None`: the query text's marker, else the engine's.
    pub inference: Option<Inference>,
    /// How sameAs answers are reported for this query (`sameas`).
    pub same_as: Option<SameAsAnswers>,
    /// Lowers the engine's cores per query for this query. A query read in
    /// pages takes one: copies of a pipeline on several cores hand out
    /// their rows in an order a resumed query cannot reproduce, so their
    /// position does not fit in a token (see `ParallelPipelines`), and a
    /// page's token must let any server resume it.
    pub cores: Option<usize>,
}

/// How long the steps before execution took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub parse: Duration,
    pub plan: Duration,
}

/// A started query: its (lazy) results, the time spent getting there, and
/// the live runtime information of its operators.
pub struct Execution {
    pub outcome: QueryOutcome,
    pub timings: Timings,
    pub profile: Profile,
    /// What the query's operators held at most (for EXPLAIN).
    pub memory: QueryMemory,
}

/// A started query's memory account, read after it ran.
#[derive(Clone, Default)]
pub struct QueryMemory(Option<Arc<QueryContext>>);

impl QueryMemory {
    /// The most the query's operators (hash tables, sorts, groups, output
    /// batches) held at once, in bytes; 0 when not kept (a resumed query).
    pub fn peak_bytes(&self) -> u64 {
        self.0.as_ref().map_or(0, |ctx| ctx.largest_state())
    }
}

/// Runs SPARQL queries and updates against one store. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    /// Shared by the clones; replaced by [`replace_store`](Self::replace_store).
    store: Arc<std::sync::RwLock<Arc<Store>>>,
    options: EngineOptions,
    parsed: Arc<ParsedQueries>,
    memory: Arc<SharedMemory>,
    /// Compiled schemas of recent snapshots, for inference.
    schemas: Arc<SchemaCache>,
    /// Rows inference derived for recent snapshots, kept for the next
    /// queries.
    extents: Arc<DerivedExtents>,
    /// Query patterns as inference rewrote them, per snapshot: a query
    /// asked again on the same data is rewritten the same way (for
    /// `<x> ?p ?o`, asking the data which of 366 alternatives can match
    /// was a third of its time). Found by the parsed query's address (the
    /// parse cache hands out one `Arc` per text; the entry holds it, so the
    /// address is never another query's), the snapshot and the mode.
    rewritten: Arc<Memo<RewriteKey, Rewritten>>,
}

impl Engine {
    pub fn new(store: Arc<Store>, options: EngineOptions) -> Engine {
        Engine {
            store: Arc::new(std::sync::RwLock::new(store)),
            memory: Arc::new(SharedMemory::new(options.server_memory_budget)),
            parsed: Arc::new(ParsedQueries::new(options.prefixes.clone())),
            schemas: Arc::default(),
            extents: Arc::new(DerivedExtents::new(options.derived_extents)),
            rewritten: Arc::new(Memo::new(REWRITES_KEPT)),
            options,
        }
    }

    /// Bytes of materialized state (hash tables, sorted rows, groups…) that
    /// this engine's running queries hold now.
    pub fn memory_in_use(&self) -> u64 {
        self.memory.used()
    }

    /// Spill files made by this engine's queries and bytes written to them
    /// (sorts, groups and joins larger than their memory budget), since it
    /// started.
    pub fn spilled(&self) -> (u64, u64) {
        let c = &self.memory.spilled;
        (
            c.files.load(std::sync::atomic::Ordering::Relaxed),
            c.bytes.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Bytes and count of the rows inference derived that are kept for
    /// later queries (see [`EngineOptions::derived_extents`]).
    pub fn derived_extents(&self) -> (u64, usize) {
        self.extents.usage()
    }

    /// An engine over an index alone: its updates live in memory.
    pub fn of_index(index: Arc<Index>, options: EngineOptions) -> Engine {
        Engine::new(Store::in_memory(index), options)
    }

    pub(crate) fn parsed_queries(&self) -> &ParsedQueries {
        &self.parsed
    }

    /// The prefixes queries and updates may use without declaring them.
    pub fn prefixes(&self) -> &[(String, String)] {
        self.parsed.prefixes()
    }

    /// The store queries and updates go to now.
    pub fn store(&self) -> Arc<Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Makes new queries (of this engine and its clones) read `store`, for
    /// a server that reopens its index after it was rebuilt; queries
    /// running on the old store finish there.
    pub fn replace_store(&self, store: Arc<Store>) {
        *self.store.write().unwrap_or_else(|e| e.into_inner()) = store;
    }

    /// The data new queries read now.
    pub fn snapshot(&self) -> Snapshot {
        self.store().snapshot()
    }

    /// Parses, plans and starts a query. `base_iri` resolves relative IRIs.
    pub fn query(&self, query: &str, base_iri: Option<&str>) -> Result<QueryOutcome, EngineError> {
        let request = QueryRequest {
            base_iri: base_iri.map(str::to_owned),
            ..QueryRequest::default()
        };
        Ok(self.execute(query, &request)?.outcome)
    }

    /// Parses, plans and starts a query with the request's dataset, limits and
    /// cancellation flag.
    pub fn execute(&self, query: &str, request: &QueryRequest) -> Result<Execution, EngineError> {
        self.start(query, request, None)
    }

    /// Starts a query again where [`SolutionStream::suspend`] or
    /// [`TripleStream::suspend`] left it. `query` and `request` must be those
    /// of the suspended run; materialized state is taken from `stash`.
    pub fn resume(
        &self,
        query: &str,
        request: &QueryRequest,
        saved: &SavedQuery,
        stash: &Stash,
    ) -> Result<Execution, EngineError> {
        self.start(query, request, Some((saved, stash)))
    }

    /// Continues the query that [`SolutionStream::suspend_keeping`] parked
    /// in `stash` as `handle` with `saved`, for `request` (whose
    /// cancellation flag and timeout it now obeys). `None` when the parked
    /// query is gone (expired, evicted or taken) but `saved` can rebuild it
    /// with [`resume`](Self::resume); [`EngineError::StateGone`] when
    /// nothing else could continue it.
    pub fn continue_parked(
        &self,
        handle: u64,
        saved: &SavedQuery,
        request: &QueryRequest,
        stash: &Stash,
    ) -> Result<Option<Execution>, EngineError> {
        let parked = match stash.take::<ParkedStream>(handle) {
            Ok(parked) => parked,
            Err(EngineError::StateGone) if !saved.is_parked(handle) => return Ok(None),
            Err(e) => return Err(e),
        };
        // The saved state will not be needed: let go of what it holds.
        for handle in saved.stash_handles() {
            stash.discard(handle);
        }
        let rows = parked.resume(request.cancel.clone(), self.timeout_for(request));
        let outcome = if rows.is_triples() {
            QueryOutcome::Graph(TripleStream(rows))
        } else {
            QueryOutcome::Solutions {
                variables: rows.variables(),
                rows,
            }
        };
        Ok(Some(Execution {
            outcome,
            timings: Timings::default(),
            profile: Profile::not_kept(),
            memory: QueryMemory::default(),
        }))
    }

    fn start(
        &self,
        query: &str,
        request: &QueryRequest,
        resume: Option<(&SavedQuery, &Stash)>,
    ) -> Result<Execution, EngineError> {
        let started = Instant::now();
        let query = self.parsed.parse(query, request.base_iri.as_deref())?;
        self.start_parsed(query, started, request, resume)
    }

    /// Plans and starts a parsed query; `started` is when parsing began.
    pub(crate) fn start_parsed(
        &self,
        query: Arc<Query>,
        started: Instant,
        request: &QueryRequest,
        resume: Option<(&SavedQuery, &Stash)>,
    ) -> Result<Execution, EngineError> {
        let parsed = Instant::now();
        let marked_dataset;
        let (dataset, base_iri, pattern) = match &*query {
            Query::Select {
                dataset,
                pattern,
                base_iri,
            }
            | Query::Ask {
                dataset,
                pattern,
                base_iri,
            }
            | Query::Construct {
                dataset,
                pattern,
                base_iri,
                ..
            }
            | Query::Describe {
                dataset,
                pattern,
                base_iri,
            } => (dataset.as_ref(), base_iri.clone(), pattern),
        };
        let now = match resume {
            Some((saved, _)) if !saved.context.numbers.is_empty() => {
                Some(QueryContext::saved_now(&saved.context)?)
            }
            _ => None,
        };
        // Tern's markers in FROM choose the inference mode; they name no graph.
        let mut marked = None;
        let dataset = match dataset {
            Some(d) if has_markers(d) => {
                let mut d = d.clone();
                let markers = take_markers(&mut d.default).map_err(EngineError::Parse)?;
                let only_markers =
                    d.default.is_empty() && d.named.as_ref().is_none_or(|n| n.is_empty());
                marked = Some(markers);
                marked_dataset = d;
                (!only_markers).then_some(&marked_dataset)
            }
            other => other,
        };
        let mode = self.inference_mode(request, marked);
        let ctx = self.context(dataset, base_iri, request, now)?;
        let planner = Planner::new(ctx.clone(), self.options.optional_joins);
        if let Query::Ask { .. } = &*query {
            planner.first_rows_only(1);
        }
        let rewritten;
        let pattern = if mode.regime == Inference::None {
            pattern
        } else {
            let schema =
                self.schemas
                    .get(&ctx.index, mode.regime, self.options.schema_graph.as_ref())?;
            if mode.regime == Inference::OwlRl && !schema.synonym_ids.is_empty() {
                let _ = ctx.synonyms.set(schema.synonym_ids.clone());
            }
            // What inference derives is kept per snapshot unless turned off.
            let keep = self.options.derived_extents > 0;
            if keep {
                let _ = ctx.extents.set(self.extents.clone());
            }
            let key = (Arc::as_ptr(&query) as usize, ctx.index.name(), mode);
            rewritten = match keep.then(|| self.rewritten.get(&key)).flatten() {
                Some((_, pattern)) => pattern,
                None => {
                    let facts = NodeFacts::new(&ctx)?;
                    let pattern = Arc::new(rewrite(pattern, &schema, &facts, mode)?);
                    if keep {
                        self.rewritten.insert(key, (query.clone(), pattern.clone()));
                    }
                    pattern
                }
            };
            &*rewritten
        };
        let mut root = planner.plan(pattern, &GraphContext::Default)?;
        match &*query {
            // ASK reads one solution.
            Query::Ask { .. } => root.first_rows_only(1),
            // The triples are made on IDs by the plan's last operator.
            Query::Construct { template, .. } => {
                let copies = crate::exec::copies_its_pattern(template, pattern);
                let construct = Construct::new(ctx.clone(), root, template, copies)?;
                root = Box::new(Measured::new(Box::new(construct), None));
            }
            Query::Describe { .. } => {
                let describe = Describe::new(ctx.clone(), root);
                root = Box::new(Measured::new(Box::new(describe), None));
            }
            Query::Select { .. } => {}
        }
        ctx.planned();
        let profile = if request.profile {
            Profile::of(root.as_ref())
        } else {
            Profile::not_kept()
        };
        let mut solutions = SolutionStream::new(ctx.clone(), root);
        if let Some((saved, stash)) = resume {
            solutions.restore(saved, stash)?;
        }
        let timings = Timings {
            parse: parsed - started,
            plan: parsed.elapsed(),
        };
        let outcome = match &*query {
            Query::Select { .. } => QueryOutcome::Solutions {
                variables: solutions.variables(),
                rows: solutions,
            },
            Query::Ask { .. } => QueryOutcome::Boolean(solutions.next().transpose()?.is_some()),
            Query::Construct { .. } | Query::Describe { .. } => {
                QueryOutcome::Graph(TripleStream(solutions.for_triples()))
            }
        };
        Ok(Execution {
            outcome,
            timings,
            profile,
            memory: QueryMemory(Some(ctx)),
        })
    }

    /// The inference mode of one query: the request's, else the query
    /// text's markers, else the engine's default.
    fn inference_mode(
        &self,
        request: &QueryRequest,
        marked: Option<(Option<Inference>, Option<SameAsAnswers>)>,
    ) -> InferenceMode {
        let (marked_regime, marked_same_as) = marked.unwrap_or_default();
        InferenceMode {
            regime: request
                .inference
                .or(marked_regime)
                .unwrap_or(self.options.inference.regime),
            same_as: request
                .same_as
                .or(marked_same_as)
                .unwrap_or(self.options.inference.same_as),
        }
    }

    /// The engine's timeout, lowered by the request's.
    fn timeout_for(&self, request: &QueryRequest) -> Option<Duration> {
        lower(self.options.timeout, request.timeout)
    }

    fn context(
        &self,
        dataset: Option<&QueryDataset>,
        base_iri: Option<oxiri::Iri<String>>,
        request: &QueryRequest,
        now: Option<oxsdatatypes::DateTime>,
    ) -> Result<Arc<QueryContext>, EngineError> {
        let snapshot = request.snapshot.clone().unwrap_or_else(|| self.snapshot());
        let ids = |graphs: &[NamedNode]| -> Result<Vec<Id>, EngineError> {
            let mut ids = Vec::new();
            for g in graphs {
                if let Some(id) = snapshot.id_of(g.as_ref().into())? {
                    ids.push(id);
                }
            }
            Ok(ids)
        };
        let (default_graph, named_graphs) = match (&request.default_graphs, &request.named_graphs) {
            _ if request.default_graph_only => (GraphSet::IndexDefault, GraphSet::AllNamed),
            (None, None) => match dataset {
                None => (
                    if self.options.default_graph_is_union {
                        GraphSet::All
                    } else {
                        GraphSet::IndexDefault
                    },
                    GraphSet::AllNamed,
                ),
                Some(dataset) => (
                    GraphSet::Only(ids(&dataset.default)?),
                    GraphSet::Only(ids(dataset.named.as_deref().unwrap_or_default())?),
                ),
            },
            // The protocol's dataset replaces the query's.
            (default, named) => (
                GraphSet::Only(ids(default.as_deref().unwrap_or_default())?),
                GraphSet::Only(ids(named.as_deref().unwrap_or_default())?),
            ),
        };
        Ok(Arc::new(QueryContext::new(
            snapshot,
            default_graph,
            named_graphs,
            Limits {
                timeout: self.timeout_for(request),
                memory_budget: lower(self.options.memory_budget, request.memory_budget),
                cancel: request.cancel.clone(),
                shared_memory: Some(self.memory.clone()),
                spill_dir: self.options.spill_dir.clone(),
                cores: lower(self.options.cores_per_query, request.cores),
                parallel_from_rows: self.options.parallel_from_rows,
            },
            base_iri,
            now,
        )))
    }
}

/// Whether a query's FROM list holds Tern's markers.
fn has_markers(dataset: &QueryDataset) -> bool {
    dataset
        .default
        .iter()
        .any(|g| g.as_str().starts_with(MARKER_NAMESPACE))
}

/// The engine's limit, lowered by the request's: the smaller of the two
/// that are set.
fn lower<T: Ord>(engine: Option<T>, request: Option<T>) -> Option<T> {
    match (engine, request) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
