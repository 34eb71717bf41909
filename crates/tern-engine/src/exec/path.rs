//! Property paths: `p`, `^p`, `a/b`, `a|b`, `!(…)`, `p?`, `p*`, `p+`, evaluated
//! by walking the index from bound ends (breadth-first for closures, each node
//! visited once, so cycles terminate; a closure with both ends bound by a
//! bidirectional search). Materializes its pairs.

use super::profile::OperatorInfo;
use super::scan::{GraphScope, PatternTerm, Scan};
use super::shortest_path::search::{self, Edge, Graph, Limits};
use super::{Batch, Operator};
use crate::context::{row_vec_bytes, MemoryCharge, QueryContext};
use crate::suspend::{OperatorState, Stash};
use crate::EngineError;
use oxrdf::{NamedNode, Variable};
use rustc_hash::FxHashSet;
use spargebra::algebra::PropertyPathExpression as Path;
use std::sync::Arc;
use tern_index::Id;

pub struct PathScan {
    ctx: Arc<QueryContext>,
    variables: Vec<Variable>,
    subject: PatternTerm,
    object: PatternTerm,
    path: Option<Path>,
    graph: GraphScope,
    output: std::vec::IntoIter<Vec<Id>>,
    /// The pairs and rows it materializes, in the query's memory account.
    memory: MemoryCharge,
}

impl PathScan {
    pub fn new(
        ctx: Arc<QueryContext>,
        variables: Vec<Variable>,
        subject: PatternTerm,
        path: Path,
        object: PatternTerm,
        graph: GraphScope,
    ) -> PathScan {
        PathScan {
            memory: ctx.memory_charge(),
            ctx,
            variables,
            subject,
            object,
            path: Some(path),
            graph,
            output: Vec::new().into_iter(),
        }
    }
}

/// Walks one graph scope (a single graph for `GRAPH ?g`).
struct Walker<'a> {
    ctx: &'a Arc<QueryContext>,
    graph: GraphScope,
    memory: &'a MemoryCharge,
}

impl Walker<'_> {
    fn id_of(&self, node: &NamedNode) -> Result<Option<Id>, EngineError> {
        self.ctx.lookup(&node.clone().into())
    }

    /// Triples matching a pattern of constants and wildcards.
    fn triples(
        &self,
        s: Option<Id>,
        p: Option<Id>,
        o: Option<Id>,
    ) -> Result<Vec<[Id; 3]>, EngineError> {
        let term = |c: Option<Id>, column: usize| {
            c.map_or(PatternTerm::Variable(column), PatternTerm::Constant)
        };
        let variables = vec![
            Variable::new_unchecked("s"),
            Variable::new_unchecked("p"),
            Variable::new_unchecked("o"),
        ];
        let mut scan = Scan::new(
            self.ctx.clone(),
            variables,
            [term(s, 0), term(p, 1), term(o, 2)],
            self.graph,
        );
        let mut out = Vec::new();
        while let Some(batch) = scan.next_batch()? {
            for i in 0..batch.len {
                let get = |c: usize, fixed: Option<Id>| fixed.unwrap_or(batch.columns[c][i]);
                out.push([get(0, s), get(1, p), get(2, o)]);
            }
        }
        Ok(out)
    }

    /// Nodes reached from `from` by one application of `path` (backwards if
    /// `!forward`).
    fn step(&self, path: &Path, from: Id, forward: bool) -> Result<Vec<Id>, EngineError> {
        Ok(match path {
            Path::NamedNode(p) => match self.id_of(p)? {
                None => Vec::new(),
                Some(p) if forward => self
                    .triples(Some(from), Some(p), None)?
                    .into_iter()
                    .map(|t| t[2])
                    .collect(),
                Some(p) => self
                    .triples(None, Some(p), Some(from))?
                    .into_iter()
                    .map(|t| t[0])
                    .collect(),
            },
            Path::Reverse(inner) => self.step(inner, from, !forward)?,
            Path::Sequence(a, b) => {
                let (first, second) = if forward { (a, b) } else { (b, a) };
                let mut out = Vec::new();
                for middle in self.step(first, from, forward)? {
                    out.extend(self.step(second, middle, forward)?);
                }
                out
            }
            Path::Alternative(a, b) => {
                let mut out = self.step(a, from, forward)?;
                out.extend(self.step(b, from, forward)?);
                out
            }
            Path::ZeroOrOne(inner) => {
                let mut out = vec![from];
                out.extend(
                    self.step(inner, from, forward)?
                        .into_iter()
                        .filter(|&n| n != from),
                );
                dedup(out)
            }
            Path::ZeroOrMore(inner) => self.closure(inner, from, forward, true)?,
            Path::OneOrMore(inner) => self.closure(inner, from, forward, false)?,
            Path::NegatedPropertySet(excluded) => {
                let excluded: Vec<Id> = excluded
                    .iter()
                    .filter_map(|p| self.id_of(p).ok().flatten())
                    .collect();
                let triples = if forward {
                    self.triples(Some(from), None, None)?
                } else {
                    self.triples(None, None, Some(from))?
                };
                triples
                    .into_iter()
                    .filter(|t| !excluded.contains(&t[1]))
                    .map(|t| if forward { t[2] } else { t[0] })
                    .collect()
            }
        })
    }

    fn closure(
        &self,
        path: &Path,
        from: Id,
        forward: bool,
        include_start: bool,
    ) -> Result<Vec<Id>, EngineError> {
        let mut seen: FxHashSet<Id> = FxHashSet::default();
        let mut out = Vec::new();
        if include_start {
            seen.insert(from);
            out.push(from);
        }
        let mut frontier = vec![from];
        while let Some(node) = frontier.pop() {
            self.ctx.check()?;
            for next in self.step(path, node, forward)? {
                if seen.insert(next) {
                    out.push(next);
                    frontier.push(next);
                }
            }
            if seen.len().is_multiple_of(4096) {
                // The set, the nodes found and the frontier.
                self.memory.set((seen.len() * 40) as u64)?;
            }
        }
        Ok(out)
    }

    /// Every subject and object in scope: the start points when both ends of a
    /// path are variables.
    fn all_nodes(&self) -> Result<Vec<Id>, EngineError> {
        let mut nodes = FxHashSet::default();
        for t in self.triples(None, None, None)? {
            nodes.insert(t[0]);
            nodes.insert(t[2]);
        }
        Ok(nodes.into_iter().collect())
    }

    /// The nodes where a non-empty match of `path` can start (end, when
    /// `!forward`): the subjects of its first step's predicate, instead of
    /// every node of the store (a closure over ten subClassOf triples of a
    /// million-triple store looked at every node). `None` where the path
    /// may match the empty path, or its first step is a negated set.
    fn starts(&self, path: &Path, forward: bool) -> Result<Option<Vec<Id>>, EngineError> {
        Ok(match path {
            Path::NamedNode(p) => Some(match self.id_of(p)? {
                None => Vec::new(),
                Some(p) => {
                    let column = if forward { 0 } else { 2 };
                    let mut nodes: Vec<Id> = self
                        .triples(None, Some(p), None)?
                        .into_iter()
                        .map(|t| t[column])
                        .collect();
                    nodes.sort_unstable();
                    nodes.dedup();
                    nodes
                }
            }),
            Path::Reverse(inner) => self.starts(inner, !forward)?,
            Path::OneOrMore(inner) => self.starts(inner, forward)?,
            Path::Sequence(a, b) => {
                let first = if forward { a } else { b };
                if may_be_empty(first) {
                    None
                } else {
                    self.starts(first, forward)?
                }
            }
            Path::Alternative(a, b) => match (self.starts(a, forward)?, self.starts(b, forward)?) {
                (Some(mut x), Some(y)) => {
                    x.extend(y);
                    x.sort_unstable();
                    x.dedup();
                    Some(x)
                }
                _ => None,
            },
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) | Path::NegatedPropertySet(_) => None,
        })
    }

    fn pairs(
        &self,
        path: &Path,
        subject: Option<Id>,
        object: Option<Id>,
    ) -> Result<Vec<(Id, Id)>, EngineError> {
        Ok(match (subject, object) {
            // Both ends bound: whether a path exists, by a bidirectional
            // search (a cycle back to the start is left to the closure).
            (Some(s), Some(o)) if s != o && closure_step(path).is_some() => {
                let inner = closure_step(path).expect("checked");
                let mut graph = StepGraph {
                    walker: self,
                    step: inner,
                };
                let found =
                    search::fewest_hops(&mut graph, &[s], &[o], &Limits::default(), false, 1)?;
                if found.is_empty() {
                    Vec::new()
                } else {
                    vec![(s, o)]
                }
            }
            (Some(s), _) => self
                .step(path, s, true)?
                .into_iter()
                .filter(|o| object.is_none_or(|x| x == *o))
                .map(|o| (s, o))
                .collect(),
            (None, Some(o)) => self
                .step(path, o, false)?
                .into_iter()
                .map(|s| (s, o))
                .collect(),
            (None, None) => {
                if let Path::NamedNode(p) = path {
                    return Ok(match self.id_of(p)? {
                        None => Vec::new(),
                        Some(p) => self
                            .triples(None, Some(p), None)?
                            .into_iter()
                            .map(|t| (t[0], t[2]))
                            .collect(),
                    });
                }
                let starts = match self.starts(path, true)? {
                    Some(starts) => starts,
                    None => self.all_nodes()?,
                };
                let mut out = Vec::new();
                for s in starts {
                    out.extend(self.step(path, s, true)?.into_iter().map(|o| (s, o)));
                    self.memory.set((out.len() * 16) as u64)?;
                }
                out
            }
        })
    }
}

/// The repeated step of a `+` or `*` path.
fn closure_step(path: &Path) -> Option<&Path> {
    match path {
        Path::OneOrMore(inner) | Path::ZeroOrMore(inner) => Some(inner),
        _ => None,
    }
}

/// A closure's step as the edges of a graph, for the path searches.
struct StepGraph<'a, 'b> {
    walker: &'a Walker<'b>,
    step: &'a Path,
}

impl Graph for StepGraph<'_, '_> {
    fn edges(&mut self, node: Id, forward: bool, out: &mut Vec<Edge>) -> Result<(), EngineError> {
        for next in self.walker.step(self.step, node, forward)? {
            out.push(Edge {
                node: next,
                via: Id::UNDEFINED,
                weight: 1.0,
            });
        }
        Ok(())
    }

    fn check(&mut self, nodes_held: usize) -> Result<(), EngineError> {
        self.walker.ctx.check()?;
        self.walker.memory.set(nodes_held as u64 * 40)
    }
}

/// Whether `path` matches the empty path (a node with itself).
fn may_be_empty(path: &Path) -> bool {
    match path {
        Path::ZeroOrMore(_) | Path::ZeroOrOne(_) => true,
        Path::NamedNode(_) | Path::NegatedPropertySet(_) => false,
        Path::Reverse(inner) | Path::OneOrMore(inner) => may_be_empty(inner),
        Path::Sequence(a, b) => may_be_empty(a) && may_be_empty(b),
        Path::Alternative(a, b) => may_be_empty(a) || may_be_empty(b),
    }
}

fn dedup(mut nodes: Vec<Id>) -> Vec<Id> {
    let mut seen = FxHashSet::default();
    nodes.retain(|n| seen.insert(*n));
    nodes
}

impl PathScan {
    fn describe_path(&self) -> String {
        let end = |t: PatternTerm| match t {
            PatternTerm::Constant(id) => format!("{id:?}"),
            PatternTerm::Variable(c) => self.variables[c].to_string(),
        };
        let path = self
            .path
            .as_ref()
            .map_or_else(|| "(evaluated)".to_owned(), |p| p.to_string());
        format!("{} {path} {}", end(self.subject), end(self.object))
    }
}

impl Operator for PathScan {
    fn variables(&self) -> &[Variable] {
        &self.variables
    }

    fn describe(&self) -> OperatorInfo {
        OperatorInfo::new("PathScan", self.describe_path())
    }

    fn save(&mut self, stash: &Stash) -> Result<OperatorState, EngineError> {
        super::save_materialized(self.path.is_none(), &mut self.output, None, stash)
    }

    fn restore(&mut self, state: OperatorState, stash: &Stash) -> Result<(), EngineError> {
        if super::restore_materialized(state, &mut self.output, None, stash)? {
            self.path = None;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, EngineError> {
        if let Some(path) = self.path.take() {
            let width = self.variables.len();
            let constant = |t: PatternTerm| match t {
                PatternTerm::Constant(id) => Some(id),
                PatternTerm::Variable(_) => None,
            };
            let graphs: Vec<(GraphScope, Option<(usize, Id)>)> = match self.graph {
                GraphScope::NamedVariable(column) => self
                    .ctx
                    .named_graph_ids()?
                    .into_iter()
                    .map(|g| (GraphScope::Named(g), Some((column, g))))
                    .collect(),
                scope => vec![(scope, None)],
            };
            let mut rows = Vec::new();
            for (graph, graph_binding) in graphs {
                let walker = Walker {
                    ctx: &self.ctx,
                    graph,
                    memory: &self.memory,
                };
                for (s, o) in walker.pairs(&path, constant(self.subject), constant(self.object))? {
                    let mut row = vec![Id::UNDEFINED; width];
                    let mut ok = true;
                    for (term, value) in [(self.subject, s), (self.object, o)] {
                        if let PatternTerm::Variable(c) = term {
                            if row[c] != Id::UNDEFINED && row[c] != value {
                                ok = false;
                            }
                            row[c] = value;
                        }
                    }
                    if let Some((c, g)) = graph_binding {
                        if row[c] != Id::UNDEFINED && row[c] != g {
                            ok = false;
                        }
                        row[c] = g;
                    }
                    if ok {
                        rows.push(row);
                    }
                }
                self.memory.set(row_vec_bytes(rows.len(), width))?;
            }
            self.output = rows.into_iter();
        }
        Ok(super::next_chunk(&mut self.output, self.variables.len()))
    }
}
