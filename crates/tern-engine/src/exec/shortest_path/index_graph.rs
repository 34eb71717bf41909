//! The graph a path search walks, read from the index one node at a time:
//! edges are triples of some predicates (or any predicate), or edge nodes
//! with a source, a target and a numeric weight (`e :from a; :to b;
//! :length 5`). Each lookup binds the node and reads the rows of one
//! prefix through a [`MergedLookup`] kept per permutation, which holds on
//! to the block it read last.

use super::search::{Edge, Graph};
use crate::context::{MemoryCharge, QueryContext};
use crate::exec::pattern_rows::PatternRows;
use crate::exec::scan::{GraphScope, PatternTerm};
use crate::expr::numeric_double;
use crate::EngineError;
use std::sync::Arc;
use tern_index::{inline, Id, MergedLookup, Tag};

/// Which way edges are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
    /// Either way (an undirected graph).
    Both,
}

/// What an edge is.
#[derive(Debug, Clone, PartialEq)]
pub enum EdgeKind {
    /// A triple with one of these predicates.
    Predicates(Arc<[Id]>),
    /// A triple with any predicate.
    AnyPredicate,
    /// A node with a `from`, a `to` and a numeric `weight`.
    Weighted { from: Id, to: Id, weight: Id },
}

pub struct IndexGraph {
    ctx: Arc<QueryContext>,
    scope: GraphScope,
    kind: EdgeKind,
    direction: Direction,
    readers: [Option<MergedLookup>; tern_index::Permutation::COUNT],
    memory: MemoryCharge,
    /// Index lookups made (for EXPLAIN).
    pub lookups: u64,
}

/// Bytes a search holds per node it has reached (maps of distances and
/// parents, the frontier).
const BYTES_PER_NODE: u64 = 64;

impl IndexGraph {
    pub fn new(
        ctx: Arc<QueryContext>,
        scope: GraphScope,
        kind: EdgeKind,
        direction: Direction,
    ) -> IndexGraph {
        IndexGraph {
            memory: ctx.memory_charge(),
            ctx,
            scope,
            kind,
            direction,
            readers: Default::default(),
            lookups: 0,
        }
    }

    /// The values of the pattern's variable columns for each matching row.
    fn rows(
        &mut self,
        terms: [PatternTerm; 3],
        width: usize,
        each: impl FnMut(&[Id]),
    ) -> Result<(), EngineError> {
        self.lookups += 1;
        PatternRows::lookup_values(&self.ctx, &mut self.readers, terms, self.scope, width, each)
    }

    /// Edges one way (`out`: leaving `node`).
    fn edges_one_way(
        &mut self,
        node: Id,
        out: bool,
        edges: &mut Vec<Edge>,
    ) -> Result<(), EngineError> {
        use PatternTerm::{Constant as C, Variable as V};
        match self.kind {
            EdgeKind::Predicates(ref predicates) => {
                // A shared list: cloning it for the lookups costs no copy.
                for &p in predicates.clone().iter() {
                    let terms = if out {
                        [C(node), C(p), V(0)]
                    } else {
                        [V(0), C(p), C(node)]
                    };
                    self.rows(terms, 1, |r| {
                        edges.push(Edge {
                            node: r[0],
                            via: p,
                            weight: 1.0,
                        })
                    })?;
                }
            }
            EdgeKind::AnyPredicate => {
                let terms = if out {
                    [C(node), V(0), V(1)]
                } else {
                    [V(1), V(0), C(node)]
                };
                self.rows(terms, 2, |r| {
                    edges.push(Edge {
                        node: r[1],
                        via: r[0],
                        weight: 1.0,
                    })
                })?;
            }
            EdgeKind::Weighted { from, to, weight } => {
                // The edge nodes at this end, then each one's other end and weight.
                let (here, there) = if out { (from, to) } else { (to, from) };
                let mut edge_nodes = Vec::new();
                self.rows([V(0), C(here), C(node)], 1, |r| edge_nodes.push(r[0]))?;
                for e in edge_nodes {
                    let mut ends = Vec::new();
                    self.rows([C(e), C(there), V(0)], 1, |r| ends.push(r[0]))?;
                    let mut weights = Vec::new();
                    self.rows([C(e), C(weight), V(0)], 1, |r| weights.push(r[0]))?;
                    // An edge without a numeric weight is not an edge.
                    let mut least: Option<f64> = None;
                    for w in weights {
                        if let Some(w) = self.number(w)? {
                            least = Some(least.map_or(w, |l| l.min(w)));
                        }
                    }
                    let Some(w) = least else {
                        continue;
                    };
                    edges.extend(ends.into_iter().map(|end| Edge {
                        node: end,
                        via: e,
                        weight: w,
                    }));
                }
            }
        }
        Ok(())
    }

    /// The numeric value of a literal ID, if it is a number (inline
    /// numbers without decoding them).
    fn number(&self, id: Id) -> Result<Option<f64>, EngineError> {
        Ok(match id.tag() {
            Tag::Integer => Some(inline::integer_value(id) as f64),
            Tag::Decimal => Some(inline::decimal_value(id)),
            Tag::Double => Some(inline::double_value(id)),
            _ => self.ctx.term(id)?.as_ref().and_then(numeric_double),
        })
    }
}

impl Graph for IndexGraph {
    fn edges(&mut self, node: Id, forward: bool, out: &mut Vec<Edge>) -> Result<(), EngineError> {
        match (self.direction, forward) {
            (Direction::Forward, f) => self.edges_one_way(node, f, out),
            (Direction::Backward, f) => self.edges_one_way(node, !f, out),
            (Direction::Both, _) => {
                self.edges_one_way(node, true, out)?;
                self.edges_one_way(node, false, out)
            }
        }
    }

    fn check(&mut self, nodes_held: usize) -> Result<(), EngineError> {
        self.ctx.check()?;
        self.memory.set(nodes_held as u64 * BYTES_PER_NODE)
    }
}
