//! Walks the index along a resolved path from bound ends: breadth-first for
//! closures, each node visited once, so cycles terminate; a closure with
//! both ends bound by a bidirectional search. Single steps from a node are
//! index lookups through one reader per permutation, each holding on to
//! the block it read last; only the whole-relation reads (the starts of a
//! path with no bound end) set up scans.

use super::id_path::IdPath;
use crate::context::{MemoryCharge, QueryContext};
use crate::exec::pattern_rows::PatternRows;
use crate::exec::scan::{GraphScope, PatternTerm, Scan};
use crate::exec::shortest_path::search::{self, Edge, Graph, Limits};
use crate::exec::Operator;
use crate::EngineError;
use oxrdf::Variable;
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::sync::Arc;
use tern_index::{Id, MergedLookup};

/// Walks one graph scope (a single graph for `GRAPH ?g`).
pub struct Walker<'a> {
    ctx: &'a Arc<QueryContext>,
    graph: GraphScope,
    memory: &'a MemoryCharge,
    readers: RefCell<[Option<MergedLookup>; tern_index::Permutation::COUNT]>,
}

impl<'a> Walker<'a> {
    pub fn new(ctx: &'a Arc<QueryContext>, graph: GraphScope, memory: &'a MemoryCharge) -> Self {
        Walker {
            ctx,
            graph,
            memory,
            readers: RefCell::default(),
        }
    }

    /// The values of the pattern's variable columns (one or two) for each
    /// row matching a pattern with at least one constant.
    fn lookup(
        &self,
        terms: [PatternTerm; 3],
        width: usize,
        each: impl FnMut(&[Id]),
    ) -> Result<(), EngineError> {
        PatternRows::lookup_values(
            self.ctx,
            &mut self.readers.borrow_mut(),
            terms,
            self.graph,
            width,
            each,
        )
    }

    /// Triples matching a pattern of constants and wildcards, by a scan.
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
    pub fn step(&self, path: &IdPath, from: Id, forward: bool) -> Result<Vec<Id>, EngineError> {
        use PatternTerm::{Constant as C, Variable as V};
        Ok(match path {
            IdPath::Predicate(None) => Vec::new(),
            IdPath::Predicate(Some(p)) => {
                let terms = if forward {
                    [C(from), C(*p), V(0)]
                } else {
                    [V(0), C(*p), C(from)]
                };
                let mut out = Vec::new();
                self.lookup(terms, 1, |r| out.push(r[0]))?;
                out
            }
            IdPath::Reverse(inner) => self.step(inner, from, !forward)?,
            IdPath::Sequence(a, b) => {
                let (first, second) = if forward { (a, b) } else { (b, a) };
                let mut out = Vec::new();
                for middle in self.step(first, from, forward)? {
                    out.extend(self.step(second, middle, forward)?);
                }
                out
            }
            IdPath::Alternative(a, b) => {
                let mut out = self.step(a, from, forward)?;
                out.extend(self.step(b, from, forward)?);
                out
            }
            IdPath::ZeroOrOne(inner) => {
                let mut out = vec![from];
                out.extend(
                    self.step(inner, from, forward)?
                        .into_iter()
                        .filter(|&n| n != from),
                );
                dedup(out)
            }
            IdPath::ZeroOrMore(inner) => self.closure(inner, from, forward, true)?,
            IdPath::OneOrMore(inner) => self.closure(inner, from, forward, false)?,
            IdPath::Synonyms(table) => match table.class_of(from) {
                Some(class) => class.to_vec(),
                None => vec![from],
            },
            IdPath::Negated(excluded) => {
                // Column 0 is the predicate, column 1 the node at the other end.
                let mut out = Vec::new();
                let terms = if forward {
                    [C(from), V(0), V(1)]
                } else {
                    [V(1), V(0), C(from)]
                };
                self.lookup(terms, 2, |r| {
                    if !excluded.contains(&r[0]) {
                        out.push(r[1]);
                    }
                })?;
                out
            }
        })
    }

    fn closure(
        &self,
        path: &IdPath,
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
    fn starts(&self, path: &IdPath, forward: bool) -> Result<Option<Vec<Id>>, EngineError> {
        Ok(match path {
            IdPath::Predicate(None) => Some(Vec::new()),
            IdPath::Predicate(Some(p)) => {
                let column = if forward { 0 } else { 2 };
                let mut nodes: Vec<Id> = self
                    .triples(None, Some(*p), None)?
                    .into_iter()
                    .map(|t| t[column])
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                Some(nodes)
            }
            IdPath::Reverse(inner) => self.starts(inner, !forward)?,
            IdPath::OneOrMore(inner) => self.starts(inner, forward)?,
            IdPath::Sequence(a, b) => {
                let first = if forward { a } else { b };
                if first.may_be_empty() {
                    None
                } else {
                    self.starts(first, forward)?
                }
            }
            IdPath::Alternative(a, b) => {
                match (self.starts(a, forward)?, self.starts(b, forward)?) {
                    (Some(mut x), Some(y)) => {
                        x.extend(y);
                        x.sort_unstable();
                        x.dedup();
                        Some(x)
                    }
                    _ => None,
                }
            }
            IdPath::ZeroOrMore(_)
            | IdPath::ZeroOrOne(_)
            | IdPath::Negated(_)
            | IdPath::Synonyms(_) => None,
        })
    }

    /// The (subject, object) pairs the path connects, with the bound ends.
    pub fn pairs(
        &self,
        path: &IdPath,
        subject: Option<Id>,
        object: Option<Id>,
    ) -> Result<Vec<(Id, Id)>, EngineError> {
        Ok(match (subject, object) {
            // Both ends bound: whether a path exists, by a bidirectional
            // search (a cycle back to the start is left to the closure).
            (Some(s), Some(o)) if s != o && path.closure_step().is_some() => {
                let inner = path.closure_step().expect("checked");
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
                match path {
                    IdPath::Predicate(None) => return Ok(Vec::new()),
                    IdPath::Predicate(Some(p)) => {
                        return Ok(self
                            .triples(None, Some(*p), None)?
                            .into_iter()
                            .map(|t| (t[0], t[2]))
                            .collect())
                    }
                    _ => {}
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

/// A closure's step as the edges of a graph, for the path searches.
struct StepGraph<'a, 'b> {
    walker: &'a Walker<'b>,
    step: &'a IdPath,
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

fn dedup(mut nodes: Vec<Id>) -> Vec<Id> {
    let mut seen = FxHashSet::default();
    nodes.retain(|n| seen.insert(*n));
    nodes
}
