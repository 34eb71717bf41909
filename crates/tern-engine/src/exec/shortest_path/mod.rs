//! Shortest paths as an operator: between constant sources and targets, or
//! for each row of an input that binds them (a bind join), over the edges
//! of an [`IndexGraph`]. The searches are in [`search`]; this file turns
//! their paths into rows: one per path (start, end, length, cost, index),
//! or one per node of each path (step, node, the edge into it) when the
//! query asks for the steps.
//!
//! The result is materialized on the first batch and suspended like other
//! materializing operators (its rows stashed); the searches check the
//! query's deadline, cancellation and memory budget as they go.

mod index_graph;
pub mod search;

pub use index_graph::{Direction, EdgeKind, IndexGraph};

use super::operator::{restore_materialized, save_materialized};
use super::profile::OperatorInfo;
use super::scan::GraphScope;
use super::{next_chunk, Batch, BoxedOperator, Operator};
use crate::context::{row_vec_bytes, MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashMap;
use search::{Limits, Path};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tern_index::{inline, Id};

/// Where a search's sources (or targets) come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    Constants(Vec<Id>),
    /// A column of the input rows.
    Column(usize),
}

/// How many paths a search returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PathCount {
    /// One shortest path.
    One,
    /// Every shortest path (fewest hops), at most this many.
    AllShortest(usize),
    /// The k shortest simple paths (Yen).
    Shortest(usize),
}

/// The output column of each value the query asked for.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub start: Option<usize>,
    pub end: Option<usize>,
    pub length: Option<usize>,
    pub cost: Option<usize>,
    pub path_index: Option<usize>,
    pub step: Option<usize>,
    pub node: Option<usize>,
    pub via: Option<usize>,
}

impl Outputs {
    fn per_step(&self) -> bool {
        self.step.is_some() || self.node.is_some() || self.via.is_some()
    }
}

/// What to search for.
#[derive(Debug, Clone)]
pub struct PathSpec {
    pub sources: Endpoint,
    /// `None`: every node reachable from the sources.
    pub targets: Option<Endpoint>,
    pub edges: EdgeKind,
    pub direction: Direction,
    pub max_hops: Option<usize>,
    pub max_cost: Option<f64>,
    pub paths: PathCount,
    pub outputs: Outputs,
    pub graph: GraphScope,
}

impl PathSpec {
    fn weighted(&self) -> bool {
        matches!(self.edges, EdgeKind::Weighted { .. })
    }
}

pub struct ShortestPath {
    ctx: Arc<QueryContext>,
    input: Option<BoxedOperator>,
    spec: PathSpec,
    variables: Vec<Variable>,
    done: bool,
    output: std::vec::IntoIter<Vec<Id>>,
    memory: MemoryCharge,
    /// Index lookups the searches made (EXPLAIN's `blocks`, as for index
    /// joins), shared with the plan's profile.
    lookups: Arc<AtomicU64>,
}

impl ShortestPath {
    /// `variables`: the input's, then the outputs' (the columns of
    /// `spec.outputs`).
    pub fn new(
        ctx: Arc<QueryContext>,
        input: Option<BoxedOperator>,
        spec: PathSpec,
        variables: Vec<Variable>,
    ) -> ShortestPath {
        ShortestPath {
            memory: ctx.memory_charge(),
            ctx,
            input,
            spec,
            variables,
            done: false,
            output: Vec::new().into_iter(),
            lookups: Arc::default(),
        }
    }

    fn compute(&mut self) -> Result<Vec<Vec<Id>>, EngineError> {
        let mut inputs = Vec::new();
        match &mut self.input {
            Some(input) => {
                while let Some(batch) = input.next_batch()? {
                    for i in 0..batch.len {
                        inputs.push(batch.row(i));
                    }
                    self.memory
                        .set(row_vec_bytes(inputs.len(), batch.columns.len()))?;
                }
            }
            None => inputs.push(Vec::new()),
        }
        let width = self.variables.len();
        let mut graph = IndexGraph::new(
            self.ctx.clone(),
            self.spec.graph,
            self.spec.edges.clone(),
            self.spec.direction,
        );
        let mut found: FxHashMap<Ends, Arc<Vec<Path>>> = FxHashMap::default();
        let mut rows = Vec::new();
        for input in inputs {
            // Each search checks as it goes; many small ones are checked here.
            self.ctx.check()?;
            let ends = |e: &Endpoint| match e {
                Endpoint::Constants(ids) => ids.clone(),
                Endpoint::Column(c) => vec![input[*c]],
            };
            let sources = ends(&self.spec.sources);
            let targets = self.spec.targets.as_ref().map(ends);
            if sources.contains(&Id::UNDEFINED)
                || targets.as_ref().is_some_and(|t| t.contains(&Id::UNDEFINED))
            {
                continue;
            }
            let key = (sources, targets);
            let paths = match found.get(&key) {
                Some(paths) => paths.clone(),
                None => {
                    let paths = Arc::new(self.search(&mut graph, &key.0, key.1.as_deref())?);
                    found.insert(key, paths.clone());
                    paths
                }
            };
            for (index, path) in paths.iter().enumerate() {
                self.rows_of(path, index, &input, width, &mut rows);
            }
            self.memory.set(row_vec_bytes(rows.len(), width))?;
        }
        self.lookups.store(graph.lookups, Ordering::Relaxed);
        Ok(rows)
    }

    fn search(
        &self,
        graph: &mut IndexGraph,
        sources: &[Id],
        targets: Option<&[Id]>,
    ) -> Result<Vec<Path>, EngineError> {
        let limits = Limits {
            max_hops: self.spec.max_hops,
            max_cost: self.spec.max_cost,
            ..Limits::default()
        };
        let Some(targets) = targets else {
            return search::reachable(graph, sources, &limits, self.spec.outputs.per_step());
        };
        let weighted = self.spec.weighted();
        match self.spec.paths {
            PathCount::One if weighted => Ok(search::least_cost(graph, sources, targets, &limits)?
                .into_iter()
                .collect()),
            PathCount::One => search::fewest_hops(graph, sources, targets, &limits, false, 1),
            PathCount::AllShortest(limit) => {
                search::fewest_hops(graph, sources, targets, &limits, true, limit)
            }
            PathCount::Shortest(k) => {
                let mut paths = Vec::new();
                for &s in sources {
                    for &t in targets {
                        paths.extend(search::k_shortest(graph, s, t, &limits, k, weighted)?);
                    }
                }
                paths.sort_by(|a, b| a.cost.total_cmp(&b.cost));
                Ok(paths)
            }
        }
    }

    fn rows_of(
        &self,
        path: &Path,
        index: usize,
        input: &[Id],
        width: usize,
        rows: &mut Vec<Vec<Id>>,
    ) {
        let out = &self.spec.outputs;
        let mut row = vec![Id::UNDEFINED; width];
        row[..input.len()].copy_from_slice(input);
        let mut set = |column: Option<usize>, value: Id| {
            if let Some(c) = column {
                row[c] = value;
            }
        };
        set(out.start, path.nodes[0]);
        set(out.end, *path.nodes.last().expect("a path has a node"));
        // Unweighted, the cost is the length (and a reachability answer
        // without its steps holds its start and end only).
        let length = if self.spec.weighted() {
            path.hops()
        } else {
            path.cost as usize
        };
        set(out.length, integer(length as i64));
        set(
            out.cost,
            if self.spec.weighted() {
                inline::double_id(path.cost).unwrap_or(Id::UNDEFINED)
            } else {
                integer(length as i64)
            },
        );
        set(out.path_index, integer(index as i64));
        if !out.per_step() {
            rows.push(row);
            return;
        }
        for (step, &node) in path.nodes.iter().enumerate() {
            let mut r = row.clone();
            let mut put = |column: Option<usize>, value: Id| {
                if let Some(c) = column {
                    r[c] = value;
                }
            };
            put(out.step, integer(step as i64));
            put(out.node, node);
            put(
                out.via,
                step.checked_sub(1).map_or(Id::UNDEFINED, |i| path.vias[i]),
            );
            rows.push(r);
        }
    }
}

/// The sources and targets of one search.
type Ends = (Vec<Id>, Option<Vec<Id>>);

fn integer(value: i64) -> Id {
    inline::integer_id(value).unwrap_or(Id::UNDEFINED)
}

impl Operator for ShortestPath {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        let spec = &self.spec;
        let edges = match &spec.edges {
            EdgeKind::Predicates(p) => format!("{} predicate(s)", p.len()),
            EdgeKind::AnyPredicate => "any predicate".to_owned(),
            EdgeKind::Weighted { .. } => "weighted edge nodes".to_owned(),
        };
        let search = match (&spec.targets, spec.paths, spec.weighted()) {
            (None, _, _) => "breadth-first from the sources".to_owned(),
            (Some(_), PathCount::One, false) => "bidirectional breadth-first".to_owned(),
            (Some(_), PathCount::One, true) => "bidirectional Dijkstra".to_owned(),
            (Some(_), PathCount::AllShortest(n), _) => format!("all shortest (at most {n})"),
            (Some(_), PathCount::Shortest(k), _) => format!("{k} shortest (Yen)"),
        };
        let mut detail = format!("{search}, {edges}, {:?}", spec.direction);
        if let Some(h) = spec.max_hops {
            detail.push_str(&format!(", at most {h} hops"));
        }
        OperatorInfo {
            blocks_read: Some(self.lookups.clone()),
            ..OperatorInfo::new("ShortestPath", detail)
        }
    }

    fn children(&self) -> Vec<&dyn Operator> {
        self.input
            .iter()
            .map(|i| i.as_ref() as &dyn Operator)
            .collect()
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        save_materialized(self.done, &mut self.output, self.input.as_mut(), stash)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if restore_materialized(state, &mut self.output, self.input.as_mut(), stash)? {
            self.done = true;
            self.input = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if !self.done {
            let rows = self.compute()?;
            self.output = rows.into_iter();
            self.done = true;
            self.input = None;
        }
        self.ctx.check()?;
        Ok(next_chunk(&mut self.output, self.variables.len()))
    }
}
