//! The searches against references on random graphs: breadth-first and
//! Dijkstra from each source for lengths and costs, path counting for all
//! shortest paths, and every simple path enumerated for the k shortest.
//! Every returned path must exist in the graph edge by edge.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A random directed multigraph with weights; `via` is the edge's number.
struct TestGraph {
    out: FxHashMap<Id, Vec<Edge>>,
    into: FxHashMap<Id, Vec<Edge>>,
    checks: usize,
}

impl TestGraph {
    fn random(rng: &mut StdRng, nodes: u64, edges: usize, weighted: bool) -> TestGraph {
        let mut g = TestGraph {
            out: FxHashMap::default(),
            into: FxHashMap::default(),
            checks: 0,
        };
        let mut seen = FxHashSet::default();
        for e in 0..edges {
            let (a, b) = (
                Id(rng.random_range(0..nodes)),
                Id(rng.random_range(0..nodes)),
            );
            // Two kinds of edge between the same nodes, now and then; no
            // triple twice (RDF graphs are sets).
            let via = Id(1_000 + (e as u64 % 3));
            if !seen.insert((a, via, b)) {
                continue;
            }
            let weight = if weighted {
                rng.random_range(0..10) as f64
            } else {
                1.0
            };
            g.out.entry(a).or_default().push(Edge {
                node: b,
                via,
                weight,
            });
            g.into.entry(b).or_default().push(Edge {
                node: a,
                via,
                weight,
            });
        }
        g
    }

    fn has_edge(&self, a: Id, via: Id, b: Id) -> Option<f64> {
        self.out
            .get(&a)?
            .iter()
            .filter(|e| e.node == b && e.via == via)
            .map(|e| e.weight)
            .reduce(f64::min)
    }

    /// Checks that `path` runs from a source to a target over real edges,
    /// and that its cost is its edges' (least) weights.
    fn check_path(&self, path: &Path, sources: &[Id], targets: &[Id], weighted: bool) {
        assert!(sources.contains(&path.nodes[0]), "{path:?}");
        assert!(targets.contains(path.nodes.last().unwrap()), "{path:?}");
        assert_eq!(path.vias.len(), path.hops());
        let mut cost = 0.0;
        for i in 0..path.hops() {
            let w = self
                .has_edge(path.nodes[i], path.vias[i], path.nodes[i + 1])
                .unwrap_or_else(|| panic!("no edge {i} of {path:?}"));
            cost += if weighted { w } else { 1.0 };
        }
        assert_eq!(cost, path.cost, "{path:?}");
    }

    /// Distances from `sources` (hops, or weights), by Dijkstra.
    fn distances(&self, sources: &[Id], weighted: bool) -> FxHashMap<Id, f64> {
        let mut dist: FxHashMap<Id, f64> = sources.iter().map(|s| (*s, 0.0)).collect();
        let mut heap: BinaryHeap<Queued> = sources.iter().map(|s| Queued(0.0, *s)).collect();
        while let Some(Queued(d, n)) = heap.pop() {
            if dist[&n] < d {
                continue;
            }
            for e in self.out.get(&n).into_iter().flatten() {
                let c = d + if weighted { e.weight } else { 1.0 };
                if dist.get(&e.node).is_none_or(|&k| c < k) {
                    dist.insert(e.node, c);
                    heap.push(Queued(c, e.node));
                }
            }
        }
        dist
    }

    /// The number of distinct shortest paths (node and edge sequences)
    /// from `source` to `target`.
    fn count_shortest(&self, source: Id, target: Id) -> usize {
        let dist = self.distances(&[source], false);
        let Some(&goal) = dist.get(&target) else {
            return 0;
        };
        let mut ways: FxHashMap<Id, usize> = FxHashMap::default();
        ways.insert(source, 1);
        let mut by_distance: Vec<(f64, Id)> = dist.iter().map(|(n, d)| (*d, *n)).collect();
        by_distance.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (d, n) in by_distance {
            if d >= goal {
                continue;
            }
            let here = ways.get(&n).copied().unwrap_or(0);
            for e in self.out.get(&n).into_iter().flatten() {
                if dist.get(&e.node) == Some(&(d + 1.0)) {
                    *ways.entry(e.node).or_default() += here;
                }
            }
        }
        ways.get(&target).copied().unwrap_or(0)
    }

    /// Every simple path's cost from `source` to `target`, sorted.
    fn all_simple_costs(&self, source: Id, target: Id, weighted: bool) -> Vec<f64> {
        let mut costs = Vec::new();
        let mut stack = vec![(source, vec![source], 0.0)];
        while let Some((n, seen, c)) = stack.pop() {
            if n == target {
                costs.push(c);
                continue;
            }
            for e in self.out.get(&n).into_iter().flatten() {
                if !seen.contains(&e.node) {
                    let mut s = seen.clone();
                    s.push(e.node);
                    stack.push((e.node, s, c + if weighted { e.weight } else { 1.0 }));
                }
            }
        }
        costs.sort_by(f64::total_cmp);
        costs
    }
}

impl Graph for TestGraph {
    fn edges(&mut self, node: Id, forward: bool, out: &mut Vec<Edge>) -> Result<(), EngineError> {
        let side = if forward { &self.out } else { &self.into };
        out.extend(side.get(&node).into_iter().flatten().copied());
        Ok(())
    }

    fn check(&mut self, _nodes_held: usize) -> Result<(), EngineError> {
        self.checks += 1;
        Ok(())
    }
}

fn pick(rng: &mut StdRng, nodes: u64, n: usize) -> Vec<Id> {
    (0..n).map(|_| Id(rng.random_range(0..nodes))).collect()
}

#[test]
fn fewest_hops_match_breadth_first_search_and_paths_exist() {
    for seed in 0..300 {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes = rng.random_range(2..60);
        let edges = rng.random_range(0..150);
        let mut g = TestGraph::random(&mut rng, nodes, edges, false);
        let (ns, nt) = (rng.random_range(1..4), rng.random_range(1..4));
        let (sources, targets) = (pick(&mut rng, nodes, ns), pick(&mut rng, nodes, nt));
        let expected = targets
            .iter()
            .filter_map(|t| g.distances(&sources, false).get(t).copied())
            .reduce(f64::min);
        let found = fewest_hops(&mut g, &sources, &targets, &Limits::default(), false, 1).unwrap();
        assert_eq!(found.first().map(|p| p.cost), expected, "seed {seed}");
        for p in &found {
            g.check_path(p, &sources, &targets, false);
        }
    }
}

#[test]
fn all_shortest_paths_are_every_shortest_path_once() {
    for seed in 0..300 {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes = rng.random_range(2..30);
        let edges = rng.random_range(0..90);
        let mut g = TestGraph::random(&mut rng, nodes, edges, false);
        let (s, t) = (
            Id(rng.random_range(0..nodes)),
            Id(rng.random_range(0..nodes)),
        );
        let found = fewest_hops(&mut g, &[s], &[t], &Limits::default(), true, 100_000).unwrap();
        let expected = if s == t { 1 } else { g.count_shortest(s, t) };
        assert_eq!(found.len(), expected, "seed {seed}");
        for p in &found {
            g.check_path(p, &[s], &[t], false);
            assert_eq!(p.cost, found[0].cost);
        }
        let mut keys: Vec<_> = found
            .iter()
            .map(|p| (p.nodes.clone(), p.vias.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), found.len(), "seed {seed}: a path twice");
    }
}

#[test]
fn least_cost_matches_dijkstra_and_paths_exist() {
    for seed in 0..300 {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes = rng.random_range(2..60);
        let edges = rng.random_range(0..200);
        let mut g = TestGraph::random(&mut rng, nodes, edges, true);
        let (ns, nt) = (rng.random_range(1..3), rng.random_range(1..3));
        let (sources, targets) = (pick(&mut rng, nodes, ns), pick(&mut rng, nodes, nt));
        let dist = g.distances(&sources, true);
        let expected = targets
            .iter()
            .filter_map(|t| dist.get(t).copied())
            .reduce(f64::min);
        let found = least_cost(&mut g, &sources, &targets, &Limits::default()).unwrap();
        assert_eq!(found.as_ref().map(|p| p.cost), expected, "seed {seed}");
        if let Some(p) = &found {
            g.check_path(p, &sources, &targets, true);
        }
    }
}

#[test]
fn k_shortest_are_the_k_cheapest_simple_paths() {
    for seed in 0..200 {
        let mut rng = StdRng::seed_from_u64(seed);
        let weighted = seed % 2 == 0;
        let nodes = rng.random_range(2..9);
        let edges = rng.random_range(0..20);
        let mut g = TestGraph::random(&mut rng, nodes, edges, weighted);
        let (s, t) = (
            Id(rng.random_range(0..nodes)),
            Id(rng.random_range(0..nodes)),
        );
        let k = rng.random_range(1..6);
        let found = k_shortest(&mut g, s, t, &Limits::default(), k, weighted).unwrap();
        let mut expected = g.all_simple_costs(s, t, weighted);
        expected.truncate(k);
        let costs: Vec<f64> = found.iter().map(|p| p.cost).collect();
        assert_eq!(costs, expected, "seed {seed} (weighted: {weighted})");
        for p in &found {
            g.check_path(p, &[s], &[t], weighted);
            let mut nodes = p.nodes.clone();
            nodes.sort();
            nodes.dedup();
            assert_eq!(nodes.len(), p.nodes.len(), "seed {seed}: not simple {p:?}");
        }
    }
}

#[test]
fn hop_limits_and_reachability() {
    for seed in 0..200 {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes = rng.random_range(2..50);
        let edges = rng.random_range(0..120);
        let mut g = TestGraph::random(&mut rng, nodes, edges, false);
        let sources = pick(&mut rng, nodes, 2);
        let max = rng.random_range(0..5);
        let limits = Limits {
            max_hops: Some(max),
            ..Limits::default()
        };
        let dist = g.distances(&sources, false);
        let mut expected: Vec<(Id, f64)> =
            dist.into_iter().filter(|(_, d)| *d <= max as f64).collect();
        expected.sort_by_key(|(n, _)| *n);
        let mut found: Vec<(Id, f64)> = reachable(&mut g, &sources, &limits, seed % 2 == 0)
            .unwrap()
            .into_iter()
            .map(|p| (*p.nodes.last().unwrap(), p.cost))
            .collect();
        found.sort_by_key(|(n, _)| *n);
        assert_eq!(found, expected, "seed {seed}");
        let target = Id(rng.random_range(0..nodes));
        let bounded = fewest_hops(&mut g, &sources, &[target], &limits, false, 1).unwrap();
        let within = expected.iter().find(|(n, _)| *n == target).map(|(_, d)| *d);
        assert_eq!(bounded.first().map(|p| p.cost), within, "seed {seed}");
    }
}

#[test]
fn long_searches_check_the_deadline() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut g = TestGraph::random(&mut rng, 5_000, 20_000, false);
    reachable(&mut g, &[Id(0)], &Limits::default(), false).unwrap();
    assert!(g.checks > 0);
}
