//! Shortest paths through the query surface (`SERVICE <urn:tern:path>`)
//! on random graphs, against a breadth-first search and Dijkstra written
//! here: the lengths and costs must be the references', and every path
//! returned step by step must exist edge by edge. Property paths with both
//! ends bound (answered by the bidirectional search) must agree with
//! reachability. Bad settings are errors that say what is wrong.

use oxrdf::Term;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use tern_engine::{Engine, EngineError, EngineOptions, QueryOutcome, QueryRequest};

mod common;

const PREFIXES: &str = "PREFIX e: <http://e.org/> PREFIX path: <urn:tern:path:> ";

/// A random graph: `knows` and `likes` edges, and weighted `road` edge
/// nodes.
struct Data {
    nodes: usize,
    /// (from, predicate, to)
    edges: Vec<(usize, &'static str, usize)>,
    /// (from, to, weight)
    roads: Vec<(usize, usize, u32)>,
}

impl Data {
    fn random(seed: u64) -> Data {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes = rng.random_range(5..60);
        let mut edges: Vec<(usize, &'static str, usize)> = (0..rng.random_range(0..nodes * 3))
            .map(|_| {
                let p = if rng.random_bool(0.7) {
                    "knows"
                } else {
                    "likes"
                };
                (rng.random_range(0..nodes), p, rng.random_range(0..nodes))
            })
            .collect();
        edges.sort();
        edges.dedup();
        let roads = (0..rng.random_range(0..nodes * 3))
            .map(|_| {
                (
                    rng.random_range(0..nodes),
                    rng.random_range(0..nodes),
                    rng.random_range(0..20),
                )
            })
            .collect();
        Data {
            nodes,
            edges,
            roads,
        }
    }

    fn turtle(&self) -> String {
        let mut text = String::from("@prefix e: <http://e.org/> .\n");
        for (a, p, b) in &self.edges {
            text += &format!("e:n{a} e:{p} e:n{b} .\n");
        }
        for (i, (a, b, w)) in self.roads.iter().enumerate() {
            text += &format!("e:r{i} e:from e:n{a} ; e:to e:n{b} ; e:length {w} .\n");
        }
        text
    }

    /// Least hops (or weight) from `source` to every node, over the
    /// `predicates` edges (or the roads, when `weighted`), either way when
    /// `both`.
    fn distances(
        &self,
        source: usize,
        predicates: &[&str],
        both: bool,
        weighted: bool,
    ) -> HashMap<usize, u64> {
        let mut next: HashMap<usize, Vec<(usize, u64)>> = HashMap::new();
        let mut add = |a: usize, b: usize, w: u64| {
            next.entry(a).or_default().push((b, w));
            if both {
                next.entry(b).or_default().push((a, w));
            }
        };
        if weighted {
            for &(a, b, w) in &self.roads {
                add(a, b, w as u64);
            }
        } else {
            for &(a, p, b) in &self.edges {
                if predicates.contains(&p) {
                    add(a, b, 1);
                }
            }
        }
        let mut dist = HashMap::from([(source, 0)]);
        let mut heap = BinaryHeap::from([std::cmp::Reverse((0u64, source))]);
        while let Some(std::cmp::Reverse((d, n))) = heap.pop() {
            if dist[&n] < d {
                continue;
            }
            for &(m, w) in next.get(&n).into_iter().flatten() {
                if dist.get(&m).is_none_or(|&k| d + w < k) {
                    dist.insert(m, d + w);
                    heap.push(std::cmp::Reverse((d + w, m)));
                }
            }
        }
        dist
    }
}

fn solutions(engine: &Engine, query: &str) -> Result<Vec<BTreeMap<String, Term>>, EngineError> {
    let text = format!("{PREFIXES}{query}");
    let execution = engine.execute(&text, &QueryRequest::default())?;
    let QueryOutcome::Solutions { variables, rows } = execution.outcome else {
        panic!("a SELECT query")
    };
    let mut out = Vec::new();
    for row in rows {
        let row = row?;
        out.push(
            variables
                .iter()
                .zip(row.iter())
                .filter_map(|(v, t)| Some((v.as_str().to_owned(), t.clone()?)))
                .collect(),
        );
    }
    Ok(out)
}

fn number(t: &Term) -> u64 {
    let Term::Literal(l) = t else { panic!("{t}") };
    l.value().parse::<f64>().unwrap() as u64
}

fn node(t: &Term) -> usize {
    let Term::NamedNode(n) = t else { panic!("{t}") };
    n.as_str()
        .trim_start_matches("http://e.org/n")
        .parse()
        .unwrap()
}

#[test]
fn lengths_and_costs_are_the_references_and_paths_exist() {
    for seed in 0..60 {
        let data = Data::random(seed);
        let (_tmp, engine) = common::engine_over("g.ttl", &data.turtle(), EngineOptions::default());
        let mut rng = StdRng::seed_from_u64(seed + 1000);
        for _ in 0..6 {
            let (s, t) = (
                rng.random_range(0..data.nodes),
                rng.random_range(0..data.nodes),
            );
            let both = rng.random_bool(0.3);
            let direction = if both { "both" } else { "forward" };
            // Hops over knows.
            let expected = data.distances(s, &["knows"], both, false).get(&t).copied();
            let query = format!(
                "SELECT ?step ?node ?via ?length WHERE {{ SERVICE <urn:tern:path> {{ [] path:source e:n{s} ; \
                 path:target e:n{t} ; path:predicate e:knows ; path:direction \"{direction}\" ; \
                 path:length ?length ; path:step ?step ; path:node ?node ; path:via ?via }} }}"
            );
            let rows = solutions(&engine, &query).unwrap();
            let length = rows.first().map(|r| number(&r["length"]));
            let context = format!("seed {seed}: n{s} to n{t} ({direction})");
            if s == t {
                assert_eq!(length, Some(0), "{context}");
                continue;
            }
            assert_eq!(length, expected, "{context}");
            let mut steps: Vec<(u64, usize)> = rows
                .iter()
                .map(|r| (number(&r["step"]), node(&r["node"])))
                .collect();
            steps.sort();
            for pair in steps.windows(2) {
                let (a, b) = (pair[0].1, pair[1].1);
                let linked = data.edges.contains(&(a, "knows", b))
                    || (both && data.edges.contains(&(b, "knows", a)));
                assert!(linked, "{context}: no edge n{a} - n{b} in {steps:?}");
            }
            // Least weight over the roads.
            let expected = data.distances(s, &[], false, true).get(&t).copied();
            let query = format!(
                "SELECT ?cost WHERE {{ SERVICE <urn:tern:path> {{ [] path:source e:n{s} ; path:target e:n{t} ; \
                 path:edgeFrom e:from ; path:edgeTo e:to ; path:weight e:length ; path:cost ?cost }} }}"
            );
            let rows = solutions(&engine, &query).unwrap();
            assert_eq!(
                rows.first().map(|r| number(&r["cost"])),
                expected,
                "{context}: by weight"
            );
            // Reachability by a property path with both ends bound.
            let reachable = data
                .distances(s, &["knows", "likes"], false, false)
                .contains_key(&t);
            let ask = format!("{PREFIXES}ASK {{ e:n{s} (e:knows|e:likes)+ e:n{t} }}");
            let QueryOutcome::Boolean(answer) = engine.query(&ask, None).unwrap() else {
                panic!()
            };
            assert_eq!(answer, reachable, "{context}: ASK +");
        }
    }
}

#[test]
fn all_shortest_paths_reachability_and_bound_sources() {
    let data = "@prefix e: <http://e.org/> .\n\
        e:a e:knows e:b , e:c . e:b e:knows e:d . e:c e:knows e:d . e:d e:knows e:e .\n\
        e:x e:knows e:a .\n";
    let (_tmp, engine) = common::engine_over("g.ttl", data, EngineOptions::default());
    let all = solutions(&engine, "SELECT ?i ?node WHERE { SERVICE <urn:tern:path> { [] path:source e:a ; path:target e:e ; path:paths \"all\" ; path:pathIndex ?i ; path:node ?node } }").unwrap();
    let paths: HashSet<String> = (0..2)
        .map(|i| {
            all.iter()
                .filter(|r| number(&r["i"]) == i)
                .map(|r| r["node"].to_string().replace("http://e.org/", ""))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let expected: HashSet<String> = ["<a>,<b>,<d>,<e>", "<a>,<c>,<d>,<e>"]
        .map(String::from)
        .into();
    assert_eq!(paths, expected, "{all:?}");
    // Every node reachable from x within two hops, with its distance.
    let near = solutions(&engine, "SELECT ?end ?length WHERE { SERVICE <urn:tern:path> { [] path:source e:x ; path:maxLength 2 ; path:end ?end ; path:length ?length } }").unwrap();
    let mut near: Vec<(String, u64)> = near
        .iter()
        .map(|r| (r["end"].to_string(), number(&r["length"])))
        .collect();
    near.sort();
    assert_eq!(
        near,
        [
            ("<http://e.org/a>", 1),
            ("<http://e.org/b>", 2),
            ("<http://e.org/c>", 2),
            ("<http://e.org/x>", 0)
        ]
        .map(|(n, l)| (n.to_owned(), l))
    );
    // Sources bound by the patterns before the block: one search per row.
    let bound = solutions(&engine, "SELECT ?s ?length WHERE { ?s e:knows e:d . SERVICE <urn:tern:path> { [] path:source ?s ; path:target e:e ; path:length ?length } }").unwrap();
    let mut bound: Vec<(String, u64)> = bound
        .iter()
        .map(|r| (r["s"].to_string(), number(&r["length"])))
        .collect();
    bound.sort();
    assert_eq!(
        bound,
        [
            ("<http://e.org/b>".to_owned(), 2),
            ("<http://e.org/c>".to_owned(), 2)
        ]
    );
}

#[test]
fn bad_settings_say_what_is_wrong() {
    let (_tmp, engine) = common::engine_over(
        "g.ttl",
        "<http://e.org/a> <http://e.org/p> <http://e.org/b> .",
        EngineOptions::default(),
    );
    for (query, says) in [
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:source e:a ; path:colour ?c } }", "unknown setting"),
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:target e:a ; path:length ?l } }", "path:source is missing"),
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:source ?s ; path:length ?l } }", "is not bound"),
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:source e:a ; path:direction \"up\" } }", "path:direction"),
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:source e:a ; path:length e:b } }", "takes a variable"),
        ("SELECT * WHERE { SERVICE <urn:tern:path> { [] path:source e:a ; path:edgeFrom e:p } }", "all three"),
    ] {
        let error = solutions(&engine, query).unwrap_err().to_string();
        assert!(error.contains(says), "{query}: {error}");
    }
}

/// EXPLAIN shows the search and, once it ran, the index lookups it made
/// (one per expanded node and predicate: a chain of four edges searched
/// from both ends expands the two ends and the middle).
#[test]
fn explain_counts_the_searchs_lookups() {
    let (_tmp, engine) = common::engine_over(
        "g.ttl",
        "@prefix e: <http://e.org/> . e:a e:p e:b . e:b e:p e:c . e:c e:p e:d . e:d e:p e:e .",
        EngineOptions::default(),
    );
    let query = format!(
        "{PREFIXES}SELECT ?l WHERE {{ SERVICE <urn:tern:path> {{ [] path:source e:a ; \
         path:target e:e ; path:predicate e:p ; path:length ?l }} }}"
    );
    let request = QueryRequest {
        profile: true,
        ..QueryRequest::default()
    };
    let execution = engine.execute(&query, &request).unwrap();
    let QueryOutcome::Solutions { rows, .. } = execution.outcome else {
        panic!("a SELECT query")
    };
    assert_eq!(rows.count(), 1);
    let plan = execution.profile.snapshot().to_text();
    let line = plan
        .lines()
        .find(|l| l.contains("ShortestPath"))
        .unwrap_or_else(|| panic!("{plan}"));
    let blocks: u64 = line
        .split("blocks ")
        .nth(1)
        .and_then(|rest| rest.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((3..=4).contains(&blocks), "{line}");
}
