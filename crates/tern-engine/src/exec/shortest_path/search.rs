//! Shortest-path searches over any [`Graph`]: bidirectional breadth-first
//! search for unweighted edges (all shortest paths on request),
//! bidirectional Dijkstra for weighted ones, Yen's algorithm for the k
//! shortest simple paths, and a one-sided breadth-first search for every
//! node reachable from a set of sources. Sources and targets are sets: a
//! search finds the shortest path from any source to any target.
//!
//! Each search checks `stop` (cancellation, deadline, memory) every
//! [`CHECK_EVERY`] expanded nodes, so a search over a large graph ends
//! within milliseconds of its query's deadline.

use crate::EngineError;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::BinaryHeap;
use tern_index::Id;

/// Expanded nodes between two checks of the deadline and memory.
pub const CHECK_EVERY: usize = 256;

/// One edge as a search sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    /// The node at the other end.
    pub node: Id,
    /// What the edge is (its predicate, or its edge node).
    pub via: Id,
    pub weight: f64,
}

/// Where edges come from.
pub trait Graph {
    /// The edges leaving `node` (`forward`), or arriving at it, appended to
    /// `out`.
    fn edges(&mut self, node: Id, forward: bool, out: &mut Vec<Edge>) -> Result<(), EngineError>;

    /// Called every [`CHECK_EVERY`] expanded nodes with the number of nodes
    /// the search holds: fails to stop it (deadline, cancellation, memory).
    fn check(&mut self, nodes_held: usize) -> Result<(), EngineError>;
}

/// A path: its nodes, the edge into each node after the first, and its
/// cost (hops, or the sum of weights).
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub nodes: Vec<Id>,
    pub vias: Vec<Id>,
    pub cost: f64,
}

impl Path {
    pub fn hops(&self) -> usize {
        self.nodes.len() - 1
    }
}

/// What a search may use: banned nodes and edges (for Yen's spur paths)
/// and a bound on hops.
#[derive(Default, Clone)]
pub struct Limits {
    pub max_hops: Option<usize>,
    pub max_cost: Option<f64>,
    pub banned_nodes: FxHashSet<Id>,
    /// (from, via, to) edges not to take.
    pub banned_edges: FxHashSet<(Id, Id, Id)>,
}

impl Limits {
    fn allows(&self, from: Id, edge: &Edge, forward: bool) -> bool {
        let (a, b) = if forward {
            (from, edge.node)
        } else {
            (edge.node, from)
        };
        !self.banned_nodes.contains(&edge.node) && !self.banned_edges.contains(&(a, edge.via, b))
    }
}

/// How one side of a breadth-first search first reached a node.
#[derive(Debug, Clone, Copy)]
struct Reached {
    depth: u32,
    /// The node before it on the way from a start, and the edge from there
    /// (none for a start).
    parent: Option<(Id, Id)>,
}

/// One side of a bidirectional breadth-first search.
struct Side {
    forward: bool,
    /// Every node reached, with its depth and the first way to it: one map
    /// entry per node and no allocation per node, since a search reaches
    /// hundreds of thousands of them.
    reached: FxHashMap<Id, Reached>,
    /// The further (parent, edge) pairs at the same depth, kept only when
    /// every shortest path is wanted.
    more_parents: Option<FxHashMap<Id, Vec<(Id, Id)>>>,
    frontier: Vec<Id>,
    level: u32,
}

impl Side {
    fn new(starts: &[Id], forward: bool, all_parents: bool) -> Side {
        let mut reached = FxHashMap::default();
        for &s in starts {
            reached.insert(
                s,
                Reached {
                    depth: 0,
                    parent: None,
                },
            );
        }
        let mut frontier: Vec<Id> = reached.keys().copied().collect();
        frontier.sort_unstable();
        Side {
            forward,
            reached,
            more_parents: all_parents.then(FxHashMap::default),
            frontier,
            level: 0,
        }
    }

    fn depth(&self, node: Id) -> usize {
        self.reached[&node].depth as usize
    }

    /// Expands one level; returns the nodes of the new level that the
    /// other side has reached. With `first_meeting`, stops at the first
    /// such node: every meeting of a level makes a path of the same length
    /// (see [`fewest_hops`]), so the rest of the level is only needed to
    /// find all of them.
    fn expand(
        &mut self,
        graph: &mut dyn Graph,
        other: &FxHashMap<Id, Reached>,
        limits: &Limits,
        expanded: &mut usize,
        first_meeting: bool,
    ) -> Result<Vec<Id>, EngineError> {
        let mut next = Vec::new();
        let mut meetings = Vec::new();
        let mut edges = Vec::new();
        let level = self.level + 1;
        // In ID order, consecutive lookups often read the same index block
        // (the lookup keeps the block it read last).
        let mut frontier = std::mem::take(&mut self.frontier);
        frontier.sort_unstable();
        'frontier: for &node in &frontier {
            *expanded += 1;
            if expanded.is_multiple_of(CHECK_EVERY) {
                graph.check(self.reached.len() + other.len())?;
            }
            edges.clear();
            graph.edges(node, self.forward, &mut edges)?;
            for edge in &edges {
                if !limits.allows(node, edge, self.forward) {
                    continue;
                }
                match self.reached.entry(edge.node) {
                    Entry::Vacant(slot) => {
                        slot.insert(Reached {
                            depth: level,
                            parent: Some((node, edge.via)),
                        });
                        next.push(edge.node);
                        if other.contains_key(&edge.node) {
                            meetings.push(edge.node);
                            if first_meeting {
                                break 'frontier;
                            }
                        }
                    }
                    // Only all shortest paths want the other ways in.
                    Entry::Occupied(known) => {
                        let Some(more) = &mut self.more_parents else {
                            continue;
                        };
                        let way = (node, edge.via);
                        let known = known.get();
                        if known.depth == level && known.parent != Some(way) {
                            let parents = more.entry(edge.node).or_default();
                            if !parents.contains(&way) {
                                parents.push(way);
                            }
                        }
                    }
                }
            }
        }
        self.frontier = next;
        self.level = level;
        Ok(meetings)
    }

    /// The (parent, edge) pairs `node` was reached from, first way first.
    fn parents_of(&self, node: Id) -> impl Iterator<Item = (Id, Id)> + '_ {
        let first = self.reached.get(&node).and_then(|r| r.parent);
        let more = self
            .more_parents
            .as_ref()
            .and_then(|m| m.get(&node))
            .into_iter()
            .flatten()
            .copied();
        first.into_iter().chain(more)
    }

    /// Every way from a start of this side to `node`, as (nodes, vias) from
    /// the start; at most `limit`.
    fn ways(&self, node: Id, limit: usize) -> Vec<(Vec<Id>, Vec<Id>)> {
        let mut out = Vec::new();
        let mut stack = vec![(node, vec![node], Vec::new())];
        while let Some((at, nodes, vias)) = stack.pop() {
            if out.len() >= limit {
                break;
            }
            let parents: Vec<(Id, Id)> = self.parents_of(at).collect();
            if parents.is_empty() {
                let mut nodes = nodes;
                let mut vias: Vec<Id> = vias;
                nodes.reverse();
                vias.reverse();
                out.push((nodes, vias));
                continue;
            }
            for &(parent, via) in parents.iter().rev() {
                let mut n = nodes.clone();
                n.push(parent);
                let mut v = vias.clone();
                v.push(via);
                stack.push((parent, n, v));
            }
        }
        out
    }
}

/// Shortest paths (fewest edges) from any of `sources` to any of
/// `targets`: one, or all of that length up to `limit` when `all`.
pub fn fewest_hops(
    graph: &mut dyn Graph,
    sources: &[Id],
    targets: &[Id],
    limits: &Limits,
    all: bool,
    limit: usize,
) -> Result<Vec<Path>, EngineError> {
    let target_set: FxHashSet<Id> = targets.iter().copied().collect();
    let mut starts: Vec<Id> = sources
        .iter()
        .copied()
        .filter(|s| target_set.contains(s) && !limits.banned_nodes.contains(s))
        .collect();
    if !starts.is_empty() {
        starts.sort_unstable();
        starts.dedup();
        starts.truncate(if all { limit } else { 1 });
        return Ok(starts
            .into_iter()
            .map(|s| Path {
                nodes: vec![s],
                vias: Vec::new(),
                cost: 0.0,
            })
            .collect());
    }
    let mut forward = Side::new(sources, true, all);
    let mut backward = Side::new(targets, false, all);
    let mut expanded = 0;
    loop {
        if forward.frontier.is_empty() || backward.frontier.is_empty() {
            return Ok(Vec::new());
        }
        if limits
            .max_hops
            .is_some_and(|max| (forward.level + backward.level) as usize >= max)
        {
            return Ok(Vec::new());
        }
        // The smaller frontier costs less to expand. A meeting found while
        // expanding level d of one side is a node the other side reached at
        // its last level e, never earlier: had the other side reached it at
        // e' < e, it would have expanded it, reached its neighbour on this
        // side's level d - 1, and the two sides would have met there on an
        // earlier turn. So every meeting of this turn has length d + e, and
        // one shortest path needs only the first.
        let forward_turn = forward.frontier.len() <= backward.frontier.len();
        let meetings = if forward_turn {
            forward.expand(graph, &backward.reached, limits, &mut expanded, !all)?
        } else {
            backward.expand(graph, &forward.reached, limits, &mut expanded, !all)?
        };
        if meetings.is_empty() {
            continue;
        }
        let total = |m: &Id| forward.depth(*m) + backward.depth(*m);
        let best = meetings.iter().map(total).min().expect("not empty");
        let mut meetings: Vec<Id> = meetings.into_iter().filter(|m| total(m) == best).collect();
        meetings.sort_unstable();
        let wanted = if all { limit } else { 1 };
        let mut paths = Vec::new();
        for m in meetings {
            let room = wanted - paths.len();
            for from_source in forward.ways(m, room) {
                for from_target in backward.ways(m, room) {
                    let (nodes, vias) = joined(&from_source, &from_target);
                    paths.push(Path {
                        cost: (nodes.len() - 1) as f64,
                        nodes,
                        vias,
                    });
                    if paths.len() >= wanted {
                        return Ok(paths);
                    }
                }
            }
        }
        return Ok(paths);
    }
}

/// A path through a meeting node: the way from a source to it (nodes,
/// edges), then the way from a target to it read backwards, without the
/// meeting node twice.
fn joined(
    from_source: &(Vec<Id>, Vec<Id>),
    from_target: &(Vec<Id>, Vec<Id>),
) -> (Vec<Id>, Vec<Id>) {
    let (mut nodes, mut vias) = from_source.clone();
    let (target_nodes, target_vias) = from_target;
    // The target's way ends at the meeting node, which `nodes` ends with.
    if let Some((_meeting, way)) = target_nodes.split_last() {
        nodes.extend(way.iter().rev());
    }
    vias.extend(target_vias.iter().rev());
    (nodes, vias)
}

/// A heap entry: a node and its distance, least distance first.
#[derive(PartialEq)]
struct Queued(f64, Id);

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One side of a bidirectional Dijkstra search.
struct DijkstraSide {
    forward: bool,
    distance: FxHashMap<Id, f64>,
    parent: FxHashMap<Id, (Id, Id)>,
    settled: FxHashSet<Id>,
    heap: BinaryHeap<Queued>,
}

impl DijkstraSide {
    fn new(starts: &[Id], forward: bool) -> DijkstraSide {
        let mut side = DijkstraSide {
            forward,
            distance: FxHashMap::default(),
            parent: FxHashMap::default(),
            settled: FxHashSet::default(),
            heap: BinaryHeap::new(),
        };
        for &s in starts {
            side.distance.insert(s, 0.0);
            side.heap.push(Queued(0.0, s));
        }
        side
    }

    fn top(&mut self) -> Option<f64> {
        while let Some(Queued(d, node)) = self.heap.peek() {
            if self.settled.contains(node) || self.distance.get(node) != Some(d) {
                self.heap.pop();
            } else {
                return Some(*d);
            }
        }
        None
    }

    fn way(&self, mut node: Id) -> (Vec<Id>, Vec<Id>) {
        let (mut nodes, mut vias) = (vec![node], Vec::new());
        while let Some(&(parent, via)) = self.parent.get(&node) {
            nodes.push(parent);
            vias.push(via);
            node = parent;
        }
        nodes.reverse();
        vias.reverse();
        (nodes, vias)
    }
}

/// The path of least total weight from any source to any target
/// (bidirectional Dijkstra; weights must not be negative).
pub fn least_cost(
    graph: &mut dyn Graph,
    sources: &[Id],
    targets: &[Id],
    limits: &Limits,
) -> Result<Option<Path>, EngineError> {
    let mut forward = DijkstraSide::new(sources, true);
    let mut backward = DijkstraSide::new(targets, false);
    let mut best: Option<(f64, Id)> = None;
    for s in sources {
        if backward.distance.contains_key(s) && !limits.banned_nodes.contains(s) {
            best = Some((0.0, *s));
        }
    }
    let mut edges = Vec::new();
    let mut expanded = 0;
    while let (Some(top_f), Some(top_b)) = (forward.top(), backward.top()) {
        if best.is_some_and(|(b, _)| top_f + top_b >= b) {
            break;
        }
        if limits.max_cost.is_some_and(|max| top_f + top_b > max) {
            break;
        }
        let forward_turn = forward.heap.len() <= backward.heap.len();
        let (side, other) = if forward_turn {
            (&mut forward, &backward)
        } else {
            (&mut backward, &forward)
        };
        let Queued(d, node) = side.heap.pop().expect("top was some");
        side.settled.insert(node);
        expanded += 1;
        if expanded % CHECK_EVERY == 0 {
            graph.check(side.distance.len() + other.distance.len())?;
        }
        edges.clear();
        graph.edges(node, side.forward, &mut edges)?;
        for edge in &edges {
            if !limits.allows(node, edge, side.forward) {
                continue;
            }
            if edge.weight < 0.0 || edge.weight.is_nan() {
                return Err(EngineError::Parse(format!(
                    "a shortest path by weight needs weights of 0 or more; an edge weighs {}",
                    edge.weight
                )));
            }
            let candidate = d + edge.weight;
            if side
                .distance
                .get(&edge.node)
                .is_none_or(|&known| candidate < known)
            {
                side.distance.insert(edge.node, candidate);
                side.parent.insert(edge.node, (node, edge.via));
                side.heap.push(Queued(candidate, edge.node));
            }
            if let Some(&rest) = other.distance.get(&edge.node) {
                let total = candidate + rest;
                if best.is_none_or(|(b, _)| total < b) {
                    best = Some((total, edge.node));
                }
            }
        }
    }
    let Some((cost, meeting)) = best else {
        return Ok(None);
    };
    if limits.max_cost.is_some_and(|max| cost > max) {
        return Ok(None);
    }
    let (nodes, vias) = joined(&forward.way(meeting), &backward.way(meeting));
    if limits.max_hops.is_some_and(|max| nodes.len() - 1 > max) {
        return Ok(None);
    }
    Ok(Some(Path { nodes, vias, cost }))
}

/// The `k` shortest simple paths from `source` to `target` (Yen's
/// algorithm), by hops or by weight.
pub fn k_shortest(
    graph: &mut dyn Graph,
    source: Id,
    target: Id,
    limits: &Limits,
    k: usize,
    weighted: bool,
) -> Result<Vec<Path>, EngineError> {
    let shortest = |graph: &mut dyn Graph, from: Id, limits: &Limits| {
        if weighted {
            least_cost(graph, &[from], &[target], limits)
        } else {
            Ok(fewest_hops(graph, &[from], &[target], limits, false, 1)?
                .into_iter()
                .next())
        }
    };
    let Some(first) = shortest(graph, source, limits)? else {
        return Ok(Vec::new());
    };
    let mut found = vec![first];
    let mut candidates: Vec<Path> = Vec::new();
    while found.len() < k {
        let last = found.last().expect("one at least").clone();
        for spur_at in 0..last.hops() {
            let spur = last.nodes[spur_at];
            let root_nodes = &last.nodes[..=spur_at];
            let mut spur_limits = limits.clone();
            for p in &found {
                if p.nodes.len() > spur_at && p.nodes[..=spur_at] == *root_nodes {
                    spur_limits.banned_edges.insert((
                        p.nodes[spur_at],
                        p.vias[spur_at],
                        p.nodes[spur_at + 1],
                    ));
                }
            }
            spur_limits
                .banned_nodes
                .extend(root_nodes[..spur_at].iter().copied());
            if let Some(max) = limits.max_hops {
                if spur_at >= max {
                    continue;
                }
                spur_limits.max_hops = Some(max - spur_at);
            }
            let Some(spur_path) = shortest(graph, spur, &spur_limits)? else {
                continue;
            };
            let root_cost = if weighted {
                cost_of(graph, &last, spur_at)?
            } else {
                spur_at as f64
            };
            let mut nodes = root_nodes.to_vec();
            nodes.extend(spur_path.nodes.iter().skip(1));
            let mut vias = last.vias[..spur_at].to_vec();
            vias.extend(spur_path.vias.iter());
            let total = Path {
                cost: root_cost + spur_path.cost,
                nodes,
                vias,
            };
            if !candidates.contains(&total) && !found.contains(&total) {
                candidates.push(total);
            }
        }
        if candidates.is_empty() {
            break;
        }
        let (i, _) = candidates
            .iter()
            .enumerate()
            .min_by(|a, b| {
                a.1.cost
                    .total_cmp(&b.1.cost)
                    .then(a.1.nodes.len().cmp(&b.1.nodes.len()))
            })
            .expect("not empty");
        found.push(candidates.swap_remove(i));
    }
    Ok(found)
}

/// The weight of the first `steps` edges of `path`.
fn cost_of(graph: &mut dyn Graph, path: &Path, steps: usize) -> Result<f64, EngineError> {
    let mut cost = 0.0;
    let mut edges = Vec::new();
    for i in 0..steps {
        edges.clear();
        graph.edges(path.nodes[i], true, &mut edges)?;
        cost += edges
            .iter()
            .filter(|e| e.node == path.nodes[i + 1] && e.via == path.vias[i])
            .map(|e| e.weight)
            .fold(f64::INFINITY, f64::min);
    }
    Ok(cost)
}

/// Every node reachable from `sources` within `limits.max_hops`, with its
/// distance in hops: as a whole shortest path to it when `with_paths`,
/// else as its start and itself (a path of `cost` hops).
pub fn reachable(
    graph: &mut dyn Graph,
    sources: &[Id],
    limits: &Limits,
    with_paths: bool,
) -> Result<Vec<Path>, EngineError> {
    let mut side = Side::new(sources, true, false);
    let mut expanded = 0;
    let nothing = FxHashMap::default();
    while !side.frontier.is_empty()
        && limits
            .max_hops
            .is_none_or(|max| (side.level as usize) < max)
    {
        side.expand(graph, &nothing, limits, &mut expanded, false)?;
    }
    let mut nodes: Vec<(u32, Id)> = side.reached.iter().map(|(n, r)| (r.depth, *n)).collect();
    nodes.sort_unstable();
    // Each node's start, from its first parent's (parents come first).
    let mut origin: FxHashMap<Id, Id> = FxHashMap::default();
    let mut paths = Vec::with_capacity(nodes.len());
    for (i, (depth, node)) in nodes.into_iter().enumerate() {
        if i % CHECK_EVERY == 0 {
            graph.check(side.reached.len())?;
        }
        if with_paths {
            let (nodes, vias) = side.ways(node, 1).pop().expect("a way to each node");
            paths.push(Path {
                cost: depth as f64,
                nodes,
                vias,
            });
            continue;
        }
        let start = match side.parents_of(node).next() {
            Some((parent, _)) => origin[&parent],
            None => node,
        };
        origin.insert(node, start);
        let nodes = if depth == 0 {
            vec![node]
        } else {
            vec![start, node]
        };
        paths.push(Path {
            cost: depth as f64,
            nodes,
            vias: Vec::new(),
        });
    }
    Ok(paths)
}

#[cfg(test)]
mod tests;
