//! Differential tests of query-time inference: random schemas and instance
//! data, whose closure a naive forward chainer (below) materializes. For
//! random queries, Tern's answers with inference over the original data must
//! equal its answers without inference over the closure, as sets.
//!
//! The chainer applies the rules the rewriter implements, no others. RDFS:
//! `rdfs:subClassOf`, `rdfs:subPropertyOf` (cycles included), `rdfs:domain`,
//! `rdfs:range` (not on literals). OWL RL adds equivalent classes and
//! properties, inverse, symmetric and transitive properties, intersections
//! (both ways), `someValuesFrom` (`owl:Thing`: any value) and `hasValue` (both
//! ways) restrictions, and `owl:sameAs` (symmetric, transitive, replacing the
//! subjects and objects of any triple, never predicates).
//!
//! The generator stays inside the rewriter's documented limits: all data in
//! the default graph; classes and properties are IRIs (restrictions and
//! intersections IRIs or blank nodes, with plain RDF lists); definitions refer
//! to earlier classes and properties only, and an axiom that would make one
//! depend on itself through a definition is left out ([`Data::axiom`]), while
//! hierarchy cycles, inverse, symmetric and self-inverse properties are made;
//! no `hasValue` restriction on a property feeding a transitive one; sameAs
//! between individuals only; literal objects only on properties nothing turns
//! around (no literal subjects). Under RDFS the OWL axioms are plain triples.
//! Two switches bound what is generated: [`HAS_VALUE_SYNONYMS`] and
//! [`INTERSECTIONS`].
//!
//! No schema term is an instance of anything (but for `owl:TransitiveProperty`
//! and `owl:SymmetricProperty` typing, stored on both sides), so schema triples
//! need no exclusion: `?x ?p ?y` filters out the schema predicates (`rdf:type`
//! too: `?x ?p <C>` covers it) and `?x a ?c` keeps IRI classes (Tern names no
//! blank-node class; the closure does). In canonical sameAs mode the expected
//! answers are the closure's whose values are all canonical (least in
//! N-Triples form) or in no sameAs class; `?x owl:sameAs ?y` is asked only in
//! the other mode.
//!
//! `TERN_INFER_SEED=D` (or `D:Q`) runs dataset seed D (and its query seed Q)
//! only; `TERN_INFER_DATASETS=N` runs N datasets; `TERN_INFER_VERBOSE=1`
//! prints each case before it runs. A mismatch prints the seeds, the data,
//! the query and the differences.

mod common;

use oxrdf::{BlankNode, Literal, NamedNode, Term};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;
use tern_engine::{Engine, EngineOptions, Inference, QueryOutcome, QueryRequest, SameAsAnswers};

const OWL: &str = "http://www.w3.org/2002/07/owl#";
const DATASETS: u64 = 100;
const QUERIES: u64 = 15;

/// Whether sameAs also links the values of `hasValue` restrictions (an
/// instance of the restriction then has each synonym of the value: cls-hv1,
/// then eq-rep-o). Off only to look for other faults apart.
const HAS_VALUE_SYNONYMS: bool = true;

/// Most intersections per dataset, and parts per intersection (nested
/// intersections and four parts once made the rewriting multiply rows into
/// minutes: each part re-expanded the intersection, and the joined unions
/// kept their duplicates).
const INTERSECTIONS: (usize, usize) = (2, 4);

type Triple = (Term, Term, Term);

/// A term from a prefixed name (`rdf:`, `rdfs:`, `owl:`, `ex:`).
fn t(name: &str) -> Term {
    let (prefix, local) = name.split_once(':').unwrap();
    let namespace = match prefix {
        "rdf" => "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        "rdfs" => "http://www.w3.org/2000/01/rdf-schema#",
        "owl" => OWL,
        "ex" => "http://example.org/",
        _ => panic!("unknown prefix {prefix}"),
    };
    NamedNode::new_unchecked(format!("{namespace}{local}")).into()
}

fn blank(label: &str) -> Term {
    BlankNode::new_unchecked(label).into()
}

/// The nodes reachable from `start` (itself included) over `edges`.
fn reachable<N: Clone + Eq + std::hash::Hash>(start: N, edges: &[(N, N)]) -> HashSet<N> {
    let mut seen = HashSet::from([start.clone()]);
    let mut stack = vec![start];
    while let Some(node) = stack.pop() {
        for (a, b) in edges {
            if *a == node && seen.insert(b.clone()) {
                stack.push(b.clone());
            }
        }
    }
    seen
}

fn pick<'a, T>(rng: &mut StdRng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// `other` with probability `p`, else one of `items`.
fn pick_or<'a, T>(rng: &mut StdRng, p: f64, other: &'a T, items: &'a [T]) -> &'a T {
    if rng.random_bool(p) {
        other
    } else {
        pick(rng, items)
    }
}

/// How one class's or property's facts come from another's: through the
/// hierarchies (closed ahead of time by the rewriter; an intersection is a
/// subclass of its parts), a definition (restriction, domain, range), or a
/// definition with its own way back, which the rewriter handles (an
/// intersection from its parts, a `hasValue` restriction from its property).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dep {
    Closure,
    Definition,
    Paired,
}

/// Generated data, and the terms queries are made of.
struct Data {
    triples: Vec<Triple>,
    /// `(from, to, how)`: `to`'s facts derived from `from`'s.
    deps: Vec<(Term, Term, Dep)>,
    /// IRI classes, properties, individuals, literals.
    classes: Vec<Term>,
    properties: Vec<Term>,
    individuals: Vec<Term>,
    literals: Vec<Term>,
}

impl Data {
    fn add(&mut self, s: &Term, p: &Term, o: &Term) {
        let triple = (s.clone(), p.clone(), o.clone());
        if !self.triples.contains(&triple) {
            self.triples.push(triple);
        }
    }

    /// Adds an axiom unless its dependencies make some class or property
    /// depend on itself through a definition.
    fn axiom(&mut self, triples: &[(&Term, &str, &Term)], deps: &[(&Term, &Term, Dep)]) {
        let kept = self.deps.len();
        let owned = deps
            .iter()
            .map(|(a, b, k)| ((*a).clone(), (*b).clone(), *k));
        self.deps.extend(owned);
        if self.self_dependent() {
            self.deps.truncate(kept);
        } else {
            triples.iter().for_each(|(s, p, o)| self.add(s, &t(p), o));
        }
    }

    /// Whether a definition's target leads back to its source (besides
    /// a paired definition's own way back).
    fn self_dependent(&self) -> bool {
        self.deps.iter().any(|(from, to, dep)| {
            let own_way_back = |a: &Term, b: &Term| *dep == Dep::Paired && a == to && b == from;
            let edges: Vec<(&Term, &Term)> = (self.deps.iter())
                .filter(|(a, b, _)| !own_way_back(a, b))
                .map(|(a, b, _)| (a, b))
                .collect();
            *dep != Dep::Closure && reachable(to, &edges).contains(from)
        })
    }

    fn ntriples(triples: impl IntoIterator<Item = Triple>) -> String {
        triples
            .into_iter()
            .map(|(s, p, o)| format!("{s} {p} {o} .\n"))
            .collect()
    }

    /// A random schema and instance data (see the module comment).
    fn generate(seed: u64) -> Data {
        let rng = &mut StdRng::seed_from_u64(seed);
        let terms = |prefix: &str, n| (0..n).map(|i| t(&format!("ex:{prefix}{i}"))).collect();
        let mut d = Data {
            triples: Vec::new(),
            deps: Vec::new(),
            classes: Vec::new(),
            properties: terms("p", rng.random_range(3..=6)),
            individuals: terms("i", rng.random_range(4..=7)),
            literals: ["v0", "v1"]
                .map(|v| Literal::new_simple_literal(v).into())
                .to_vec(),
        };
        // Property axioms; `feeds` links (property, backward) nodes whose
        // triples give the other's.
        let (props, ty) = (d.properties.clone(), t("rdf:type"));
        let n = props.len();
        let mut feeds: Vec<((usize, bool), (usize, bool))> = Vec::new();
        for _ in 0..rng.random_range(0..=n + 1) {
            let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
            let (pa, pb) = (&props[a], &props[b]);
            let (axiom, turned) = match rng.random_range(0..5) {
                0..=2 => ("rdfs:subPropertyOf", None),
                3 => ("owl:equivalentProperty", Some(false)),
                _ => ("owl:inverseOf", Some(true)),
            };
            d.add(pa, &t(axiom), pb);
            for back in [false, true] {
                feeds.push(((a, back), (b, back != turned.unwrap_or(false))));
                if let Some(turned) = turned {
                    feeds.push(((b, back), (a, back != turned)));
                }
            }
            let back = turned.map(|_| (pb.clone(), pa.clone(), Dep::Closure));
            d.deps.extend(
                [(pa.clone(), pb.clone(), Dep::Closure)]
                    .into_iter()
                    .chain(back),
            );
        }
        let mut transitive = vec![false; n];
        for (i, p) in props.iter().enumerate() {
            if rng.random_bool(0.15) {
                d.add(p, &ty, &t("owl:SymmetricProperty"));
                feeds.extend([((i, false), (i, true)), ((i, true), (i, false))]);
            }
            if rng.random_bool(0.2) {
                d.add(p, &ty, &t("owl:TransitiveProperty"));
                transitive[i] = true;
            }
        }
        let reach = |start: usize| reachable((start, false), &feeds);
        let forward_only: Vec<bool> = (0..n).map(|i| reach(i).iter().all(|x| !x.1)).collect();
        let feeds_transitive: Vec<bool> = (0..n)
            .map(|i| reach(i).iter().any(|x| transitive[x.0]))
            .collect();

        // Classes: named ones, then definitions over earlier ones.
        let mut classes: Vec<Term> = terms("C", rng.random_range(3..=6));
        let named = classes.len();
        let (mut values, mut intersections) = (Vec::new(), 0);
        let thing = t("owl:Thing");
        for k in 0..rng.random_range(0..=4) {
            let node = if rng.random_bool(0.5) {
                t(&format!("ex:R{k}"))
            } else {
                blank(&format!("r{k}"))
            };
            match rng.random_range(0..3) {
                0 => {
                    let p = pick(rng, &props);
                    let filler = pick_or(rng, 0.3, &thing, &classes);
                    let on = [
                        (&node, "owl:onProperty", p),
                        (&node, "owl:someValuesFrom", filler),
                    ];
                    let from = [p, filler].map(|x| (x, &node, Dep::Definition));
                    d.axiom(&on, &from);
                }
                1 => {
                    let candidates: Vec<usize> = (0..n).filter(|&i| !feeds_transitive[i]).collect();
                    if candidates.is_empty() {
                        continue;
                    }
                    let i = *pick(rng, &candidates);
                    let p = &props[i];
                    let literal = pick(rng, &d.literals).clone();
                    let p_literal = if forward_only[i] { 0.3 } else { 0.0 };
                    let value = pick_or(rng, p_literal, &literal, &d.individuals).clone();
                    values.push(value.clone());
                    let on = [
                        (&node, "owl:onProperty", p),
                        (&node, "owl:hasValue", &value),
                    ];
                    d.axiom(&on, &[(p, &node, Dep::Paired), (&node, p, Dep::Paired)]);
                }
                _ if intersections < INTERSECTIONS.0 => {
                    intersections += 1;
                    let mut parts: Vec<&Term> = Vec::new();
                    for _ in 0..rng.random_range(2..=INTERSECTIONS.1) {
                        let part = pick(rng, &classes);
                        if !parts.contains(&part) {
                            parts.push(part);
                        }
                    }
                    if parts.len() < 2 {
                        continue;
                    }
                    let mut cells: Vec<Term> = (0..parts.len())
                        .map(|j| blank(&format!("l{k}_{j}")))
                        .collect();
                    cells.push(t("rdf:nil"));
                    let mut triples = vec![(&node, "owl:intersectionOf", &cells[0])];
                    let mut deps = Vec::new();
                    for (j, part) in parts.iter().enumerate() {
                        triples.extend([
                            (&cells[j], "rdf:first", *part),
                            (&cells[j], "rdf:rest", &cells[j + 1]),
                        ]);
                        deps.extend([(*part, &node, Dep::Paired), (&node, *part, Dep::Closure)]);
                    }
                    d.axiom(&triples, &deps);
                }
                _ => continue,
            }
            classes.push(node);
        }
        // Hierarchy edges, domains and ranges (unless they close a cycle).
        for _ in 0..rng.random_range(0..=classes.len() + 4) {
            let (a, b) = (pick(rng, &classes), pick(rng, &classes));
            let p = pick(rng, &props);
            match rng.random_range(0..8) {
                0..=3 => d.axiom(&[(a, "rdfs:subClassOf", b)], &[(a, b, Dep::Closure)]),
                4 => d.axiom(
                    &[(a, "owl:equivalentClass", b)],
                    &[(a, b, Dep::Closure), (b, a, Dep::Closure)],
                ),
                5 => d.axiom(&[(p, "rdfs:domain", a)], &[(p, a, Dep::Definition)]),
                _ => d.axiom(&[(p, "rdfs:range", a)], &[(p, a, Dep::Definition)]),
            }
        }

        // Instance data.
        let iri_classes: Vec<Term> = classes.into_iter().filter(Term::is_named_node).collect();
        for _ in 0..rng.random_range(6..=25) {
            let x = pick(rng, &d.individuals).clone();
            match rng.random_range(0..20) {
                // Mostly named classes; some restrictions and intersections.
                k @ 0..=7 => {
                    let among = if k < 7 { named } else { iri_classes.len() };
                    let c = pick(rng, &iri_classes[..among]);
                    d.add(&x, &ty, c);
                }
                8 | 9 => {
                    let y = pick(rng, &d.individuals).clone();
                    let valued = values.contains(&x) || values.contains(&y);
                    if x != y && (HAS_VALUE_SYNONYMS || !valued) {
                        d.add(&x, &t("owl:sameAs"), &y);
                    }
                }
                _ => {
                    let (p, literal) = (rng.random_range(0..n), pick(rng, &d.literals).clone());
                    let p_literal = if forward_only[p] { 0.2 } else { 0.0 };
                    let y = pick_or(rng, p_literal, &literal, &d.individuals).clone();
                    d.add(&x, &props[p], &y);
                }
            }
        }
        d.classes = iri_classes;
        d
    }
}

/// The closure of `data` under the regime's rules: a naive fixpoint.
/// Triples with a literal subject are not RDF, so none is derived (the
/// generator gives no rule a chance to make one).
fn materialize(data: &[Triple], owl: bool) -> HashSet<Triple> {
    let mut graph: HashSet<Triple> = data.iter().cloned().collect();
    loop {
        let before = graph.len();
        let derived = derive(&graph, owl);
        graph.extend(derived.into_iter().filter(|x| !x.0.is_literal()));
        if graph.len() == before {
            return graph;
        }
    }
}

/// The (subject, object) pairs of `predicate`.
fn pairs(graph: &HashSet<Triple>, predicate: &str) -> Vec<(Term, Term)> {
    let p = t(predicate);
    let found = graph.iter().filter(|x| x.1 == p);
    found.map(|x| (x.0.clone(), x.2.clone())).collect()
}

/// The members of the RDF list at `head` (lists here are short).
fn list(graph: &HashSet<Triple>, head: &Term) -> Vec<Term> {
    let next = |node: &Term, p: &str| {
        let p = t(p);
        let found = graph.iter().find(|x| x.0 == *node && x.1 == p);
        found.map(|x| x.2.clone())
    };
    let (mut members, mut node) = (Vec::new(), Some(head.clone()));
    while let Some(cell) = node.filter(|_| members.len() < 10) {
        members.extend(next(&cell, "rdf:first"));
        node = next(&cell, "rdf:rest");
    }
    members
}

/// One round of every rule over `graph`.
fn derive(graph: &HashSet<Triple>, owl: bool) -> Vec<Triple> {
    let ty = t("rdf:type");
    let mut types: HashMap<&Term, HashSet<&Term>> = HashMap::new();
    for (s, _, o) in graph.iter().filter(|x| x.1 == ty) {
        types.entry(s).or_default().insert(o);
    }
    let typed = |class: &str| {
        let class = t(class);
        pairs(graph, "rdf:type")
            .into_iter()
            .filter(move |x| x.1 == class)
    };
    let both = |p: &str| {
        let pairs = pairs(graph, p).into_iter();
        pairs.flat_map(|(a, b)| [(a.clone(), b.clone()), (b, a)])
    };
    // (P, Q, turned): a triple of P gives one of Q (turned around).
    let mut properties: Vec<(Term, Term, bool)> = pairs(graph, "rdfs:subPropertyOf")
        .into_iter()
        .map(|(a, b)| (a, b, false))
        .collect();
    let mut sub_class = pairs(graph, "rdfs:subClassOf");
    let mut out: Vec<Triple> = Vec::new();
    if owl {
        sub_class.extend(both("owl:equivalentClass"));
        properties.extend(both("owl:equivalentProperty").map(|(a, b)| (a, b, false)));
        properties.extend(both("owl:inverseOf").map(|(a, b)| (a, b, true)));
        properties.extend(typed("owl:SymmetricProperty").map(|(p, _)| (p.clone(), p, true)));
        for (class, head) in pairs(graph, "owl:intersectionOf") {
            let parts = list(graph, &head);
            for (x, classes) in &types {
                if parts.iter().all(|p| classes.contains(p)) {
                    out.push(((*x).clone(), ty.clone(), class.clone()));
                }
            }
            sub_class.extend(parts.into_iter().map(|p| (class.clone(), p)));
        }
        let on_property: HashMap<Term, Term> = pairs(graph, "owl:onProperty").into_iter().collect();
        for (r, filler) in pairs(graph, "owl:someValuesFrom") {
            for (x, p, y) in graph {
                let typed =
                    filler == t("owl:Thing") || types.get(y).is_some_and(|c| c.contains(&filler));
                if on_property.get(&r) == Some(p) && typed {
                    out.push((x.clone(), ty.clone(), r.clone()));
                }
            }
        }
        for (r, value) in pairs(graph, "owl:hasValue") {
            let Some(p) = on_property.get(&r) else {
                continue;
            };
            for (x, _, _) in graph.iter().filter(|x| x.1 == *p && x.2 == value) {
                out.push((x.clone(), ty.clone(), r.clone()));
            }
            for (x, _) in types.iter().filter(|(_, classes)| classes.contains(&r)) {
                out.push(((*x).clone(), p.clone(), value.clone()));
            }
        }
        for (p, _) in typed("owl:TransitiveProperty") {
            let edges: Vec<&Triple> = graph.iter().filter(|x| x.1 == p).collect();
            for (x, _, y) in &edges {
                for (_, _, z) in edges.iter().filter(|e| e.0 == *y) {
                    out.push((x.clone(), p.clone(), z.clone()));
                }
            }
        }
        let mut synonyms: HashMap<Term, Vec<Term>> = HashMap::new();
        for (a, b) in pairs(graph, "owl:sameAs") {
            out.push((b.clone(), t("owl:sameAs"), a.clone()));
            synonyms.entry(a).or_default().push(b);
        }
        for (s, p, o) in graph {
            for b in synonyms.get(s).into_iter().flatten() {
                out.push((b.clone(), p.clone(), o.clone()));
            }
            for b in synonyms.get(o).into_iter().flatten() {
                out.push((s.clone(), p.clone(), b.clone()));
            }
        }
    }
    let (domains, ranges) = (pairs(graph, "rdfs:domain"), pairs(graph, "rdfs:range"));
    for (s, p, o) in graph {
        for (_, q, turned) in properties.iter().filter(|x| x.0 == *p) {
            let (a, b) = if *turned { (o, s) } else { (s, o) };
            out.push((a.clone(), q.clone(), b.clone()));
        }
        let supers = sub_class.iter().filter(|(c, _)| *p == ty && c == o);
        for (_, c) in supers.chain(domains.iter().filter(|(q, _)| q == p)) {
            out.push((s.clone(), ty.clone(), c.clone()));
        }
        for (_, c) in ranges.iter().filter(|(q, _)| q == p && !o.is_literal()) {
            out.push((o.clone(), ty.clone(), c.clone()));
        }
    }
    out
}

/// A random query over `d`'s terms (`same_as_pattern`: may ask for
/// `owl:sameAs` itself).
fn query(seed: u64, d: &Data, same_as_pattern: bool) -> String {
    let rng = &mut StdRng::seed_from_u64(seed);
    let c = pick(rng, &d.classes).clone();
    let c2 = pick(rng, &d.classes).clone();
    let p = pick(rng, &d.properties).clone();
    let a = pick(rng, &d.individuals).clone();
    let literal = pick(rng, &d.literals);
    let b = pick_or(rng, 0.2, literal, &d.individuals);
    let body = match rng.random_range(0..if same_as_pattern { 16 } else { 15 }) {
        0 => format!("SELECT ?x WHERE {{ ?x a {c} }}"),
        1 => format!("SELECT ?x ?y WHERE {{ ?x {p} ?y }}"),
        2 => format!("SELECT ?y WHERE {{ {a} {p} ?y }}"),
        3 => format!("SELECT ?x WHERE {{ ?x {p} {b} }}"),
        4 => "SELECT ?x ?c WHERE { ?x a ?c FILTER(isIRI(?c)) }".to_owned(),
        5 => format!("SELECT ?x ?y WHERE {{ ?x a {c} . ?x {p} ?y }}"),
        6 => format!("SELECT ?x ?y WHERE {{ ?x {p} ?y . ?y a {c2} }}"),
        7 => format!(
            "SELECT ?x ?p ?y WHERE {{ ?x ?p ?y FILTER(?p NOT IN (rdf:type, rdf:first, rdf:rest, \
             rdfs:subClassOf, rdfs:subPropertyOf, rdfs:domain, rdfs:range) \
             && !STRSTARTS(STR(?p), \"{OWL}\")) }}"
        ),
        8 => format!("SELECT ?x ?p WHERE {{ ?x ?p {c} FILTER(?p = rdf:type) }}"),
        // Selective joins: the extended patterns are looked up per row of
        // the constant one (union index joins).
        9 => format!("SELECT ?x WHERE {{ ?x {p} {b} . ?x a {c} }}"),
        // (Tern names no blank node class: `?z` is no blank node.)
        10 => format!(
            "SELECT ?y ?z WHERE {{ {a} {p} ?y . ?y a {c2} . ?y ?q ?z FILTER(!isBlank(?z)) }}"
        ),
        11 => format!("SELECT ?x ?y WHERE {{ ?x {p} ?y . ?x a {c} . ?y a {c2} }}"),
        // Everything about one node, and everything pointing at one: the
        // rewriting leaves out what the node's stored triples rule out.
        12 => format!(
            "SELECT ?p ?y WHERE {{ {a} ?p ?y FILTER(?p NOT IN (rdf:type, rdf:first, rdf:rest, \
             rdfs:subClassOf, rdfs:subPropertyOf, rdfs:domain, rdfs:range) \
             && !STRSTARTS(STR(?p), \"{OWL}\")) }}"
        ),
        13 => format!("SELECT ?c WHERE {{ {a} a ?c FILTER(isIRI(?c)) }}"),
        14 => format!(
            "SELECT ?x ?p WHERE {{ ?x ?p {b} FILTER(?p NOT IN (rdf:type, rdf:first, rdf:rest, \
             rdfs:subClassOf, rdfs:subPropertyOf, rdfs:domain, rdfs:range) \
             && !STRSTARTS(STR(?p), \"{OWL}\")) }}"
        ),
        _ => "SELECT ?x ?y WHERE { ?x owl:sameAs ?y }".to_owned(),
    };
    format!(
        "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\n\
         PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nPREFIX owl: <{OWL}>\n{body}"
    )
}

/// The solutions of `query` whose values all pass `keep`, each as text.
fn answers(
    engine: &Engine,
    query: &str,
    inference: Inference,
    same_as: SameAsAnswers,
    keep: &dyn Fn(&Term) -> bool,
) -> Result<BTreeSet<String>, String> {
    let request = QueryRequest {
        inference: Some(inference),
        same_as: Some(same_as),
        ..QueryRequest::default()
    };
    let execution = engine.execute(query, &request).map_err(|e| e.to_string())?;
    let QueryOutcome::Solutions { rows, .. } = execution.outcome else {
        return Err("not a SELECT result".to_owned());
    };
    let mut set = BTreeSet::new();
    for row in rows {
        let row = row.map_err(|e| e.to_string())?;
        if row.iter().flatten().all(keep) {
            let text = row
                .iter()
                .map(|v| v.as_ref().map_or("-".to_owned(), Term::to_string));
            set.insert(text.collect::<Vec<_>>().join(" "));
        }
    }
    Ok(set)
}

/// Each member of a sameAs class of the closure, and its canonical member
/// (the least in N-Triples form).
fn canonical_members(closure: &HashSet<Triple>) -> HashMap<Term, Term> {
    let mut canonical: HashMap<Term, Term> = HashMap::new();
    for (a, b) in pairs(closure, "owl:sameAs") {
        let least = canonical.entry(a).or_insert_with(|| b.clone());
        if b.to_string() < least.to_string() {
            *least = b;
        }
    }
    canonical
}

/// The case seeds to run: (dataset seed, query seeds).
fn plan() -> Vec<(u64, Vec<u64>)> {
    let queries = |d: u64| (0..QUERIES).map(|i| d * 1000 + i).collect::<Vec<_>>();
    if let Ok(seed) = std::env::var("TERN_INFER_SEED") {
        let mut parts = seed.split(':');
        let d: u64 = parts.next().unwrap().trim().parse().expect("dataset seed");
        return match parts.next() {
            Some(q) => vec![(d, vec![q.trim().parse().expect("query seed")])],
            None => vec![(d, queries(d))],
        };
    }
    let n = std::env::var("TERN_INFER_DATASETS")
        .ok()
        .and_then(|s| s.parse().ok());
    (1..=n.unwrap_or(DATASETS))
        .map(|d| (d, queries(d)))
        .collect()
}

/// Runs every case under `regime` and `same_as`; panics with the
/// differences found.
fn run(regime: Inference, same_as: SameAsAnswers) {
    let owl = regime == Inference::OwlRl;
    let verbose = std::env::var_os("TERN_INFER_VERBOSE").is_some();
    let started = Instant::now();
    // Cases, those with answers, those whose answers need inference.
    let (mut cases, mut answered, mut inferred) = (0, 0, 0);
    let mut failures: Vec<String> = Vec::new();
    for (data_seed, query_seeds) in plan() {
        let d = Data::generate(data_seed);
        let closure = materialize(&d.triples, owl);
        let canonical = match same_as {
            SameAsAnswers::Canonical => canonical_members(&closure),
            SameAsAnswers::AllSynonyms => HashMap::new(),
        };
        let keep = |v: &Term| canonical.get(v).is_none_or(|c| c == v);
        let data = Data::ntriples(d.triples.clone());
        let options = EngineOptions::default;
        let (_dir, inferring) = common::engine_over("data.nt", &data, options());
        let closure = Data::ntriples(closure);
        let (_dir2, materialized) = common::engine_over("closure.nt", &closure, options());
        for query_seed in query_seeds {
            let text = query(query_seed, &d, same_as == SameAsAnswers::AllSynonyms);
            if verbose {
                eprintln!("TERN_INFER_SEED={data_seed}:{query_seed}\n{data}{text}");
            }
            cases += 1;
            let none = (Inference::None, SameAsAnswers::AllSynonyms);
            let got = answers(&inferring, &text, regime, same_as, &|_| true);
            let expected = answers(&materialized, &text, none.0, none.1, &keep);
            let why = match (expected, got) {
                (Ok(e), Ok(g)) if e == g => {
                    answered += usize::from(!e.is_empty());
                    let stored = answers(&inferring, &text, none.0, none.1, &keep);
                    inferred += usize::from(stored.as_ref() != Ok(&e));
                    continue;
                }
                (Ok(e), Ok(g)) => format!(
                    "missing: {:?}\nunexpected: {:?}",
                    e.difference(&g).collect::<Vec<_>>(),
                    g.difference(&e).collect::<Vec<_>>()
                ),
                (e, g) => format!("expected: {e:?}\ngot: {g:?}"),
            };
            failures.push(format!(
                "=== TERN_INFER_SEED={data_seed}:{query_seed} ({regime}, sameAs {}): {}\n\
                 --- data:\n{data}--- query:\n{text}\n--- {why}\n",
                same_as.name(),
                text.lines().last().unwrap_or_default()
            ));
        }
    }
    for (i, f) in failures.iter().enumerate() {
        // The first ones in full, then seeds and query.
        eprintln!(
            "{}",
            if i < 5 {
                f
            } else {
                f.lines().next().unwrap_or_default()
            }
        );
    }
    eprintln!(
        "inference ({regime}, sameAs {}): {cases} queries, {answered} with answers, {inferred} \
         needing inference, {} differed; {:.1?}",
        same_as.name(),
        failures.len(),
        started.elapsed()
    );
    assert!(failures.is_empty(), "{} cases differ", failures.len());
    assert!(
        inferred * 5 >= cases || cases < 100,
        "too few answers needed inference: {inferred} of {cases}"
    );
}

#[test]
fn rdfs_agrees_with_materialized_closure() {
    run(Inference::Rdfs, SameAsAnswers::AllSynonyms);
}

#[test]
fn owl_rl_agrees_with_materialized_closure() {
    run(Inference::OwlRl, SameAsAnswers::AllSynonyms);
}

#[test]
fn owl_rl_canonical_same_as_agrees_with_materialized_closure() {
    run(Inference::OwlRl, SameAsAnswers::Canonical);
}

/// A selective join with an extended class is planned as a lookup of the
/// class's patterns per row of the selective side (a union index join),
/// not as a scan of every instance, and answers with the synonyms of the
/// looked-up values; the same again when the query is suspended at every
/// turn.
#[test]
fn extended_patterns_are_looked_up_from_selective_rows() {
    let mut data = String::from(
        "<http://example.org/Full> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://example.org/Professor> .\n\
         <http://example.org/headOf> <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> <http://example.org/worksFor> .\n\
         <http://example.org/advises> <http://www.w3.org/2000/01/rdf-schema#domain> <http://example.org/Professor> .\n\
         <http://example.org/p1> <http://www.w3.org/2002/07/owl#sameAs> <http://example.org/registry1> .\n",
    );
    for i in 0..2000 {
        data.push_str(&format!(
            "<http://example.org/p{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Full> .\n\
             <http://example.org/s{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Student> .\n"
        ));
    }
    // Three members of d0: p1 (a Full professor, also known as registry1),
    // a1 (a professor only by advising someone) and s1 (a student), the
    // head by headOf ⊑ worksFor.
    data.push_str(
        "<http://example.org/p1> <http://example.org/worksFor> <http://example.org/d0> .\n\
         <http://example.org/a1> <http://example.org/advises> <http://example.org/s2> .\n\
         <http://example.org/a1> <http://example.org/headOf> <http://example.org/d0> .\n\
         <http://example.org/s1> <http://example.org/worksFor> <http://example.org/d0> .\n",
    );
    let (_dir, engine) = common::engine_over("data.nt", &data, EngineOptions::default());
    let query = "SELECT ?x WHERE { ?x a <http://example.org/Professor> ; \
                 <http://example.org/worksFor> <http://example.org/d0> }";
    let request = QueryRequest {
        inference: Some(Inference::OwlRl),
        profile: true,
        ..QueryRequest::default()
    };
    let execution = engine.execute(query, &request).unwrap();
    let plan = execution.profile.snapshot().to_text();
    let keep_all = |_: &Term| true;
    let got = answers(
        &engine,
        query,
        Inference::OwlRl,
        SameAsAnswers::AllSynonyms,
        &keep_all,
    )
    .unwrap();
    let expected: BTreeSet<String> = ["a1", "p1", "registry1"]
        .iter()
        .map(|n| format!("<http://example.org/{n}>"))
        .collect();
    assert_eq!(got, expected, "{plan}");
    assert!(plan.contains("UnionIndexJoin"), "{plan}");
    let full_scan =
        "Scan POS ?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Full>";
    assert!(!plan.contains(full_scan), "no class read whole:\n{plan}");
}

/// `Chair ≡ Person ⊓ ∃headOf.Department` where `headOf ⊑ worksFor` and
/// `worksFor` has domain `Employee ⊑ Person`: every head of a department
/// is a Person by the domain, so the definition joins no Person check (no
/// read of Person's instances), and the answers are those of the closure.
#[test]
fn intersection_parts_implied_by_a_restriction_are_not_joined() {
    let data = "\
        @prefix ex: <http://example.org/> .\n\
        @prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
        ex:Chair owl:intersectionOf ( ex:Person ex:HeadOfDepartment ) .\n\
        ex:HeadOfDepartment owl:onProperty ex:headOf ; owl:someValuesFrom ex:Department .\n\
        ex:headOf rdfs:subPropertyOf ex:worksFor .\n\
        ex:worksFor rdfs:domain ex:Employee .\n\
        ex:Employee rdfs:subClassOf ex:Person .\n\
        ex:Visitor owl:intersectionOf ( ex:Person ex:Guest ) .\n\
        ex:Guest owl:onProperty ex:visits ; owl:someValuesFrom ex:Department .\n\
        ex:d0 a ex:Department .\n\
        ex:h0 ex:headOf ex:d0 .\n\
        ex:h1 ex:headOf ex:nothing .\n\
        ex:v0 ex:visits ex:d0 ; a ex:Person .\n\
        ex:v1 ex:visits ex:d0 .\n\
        ex:p0 a ex:Person .\n";
    let (_dir, engine) = common::engine_over("data.ttl", data, EngineOptions::default());
    let chairs = "SELECT ?x WHERE { ?x a <http://example.org/Chair> }";
    let got = owl_rl_answers(&engine, chairs);
    assert_eq!(got, example_iris(&["h0"]));
    let plan = owl_rl_plan(&engine, chairs);
    assert!(!plan.contains("#Person"), "no Person check:\n{plan}");
    // visits has no domain: a Visitor must be a Person as well.
    let visitors = "SELECT ?x WHERE { ?x a <http://example.org/Visitor> }";
    let got = owl_rl_answers(&engine, visitors);
    assert_eq!(got, example_iris(&["v0"]));
}

/// `Chair ≡ ∃headOf.Department` asked of one head (a constant subject):
/// the head's departments are looked up as departments (with their
/// synonyms), not every department read into a hash join; the answers
/// are the closure's, through a department known by another name.
#[test]
fn a_restriction_on_a_constant_subject_looks_its_fillers_up() {
    let mut data = String::from(
        "@prefix ex: <http://example.org/> .\n\
         @prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         ex:Chair owl:onProperty ex:headOf ; owl:someValuesFrom ex:Department .\n\
         ex:h0 ex:headOf ex:d0alias .\n\
         ex:d0alias owl:sameAs ex:d0 .\n\
         ex:h1 ex:headOf ex:nothing .\n",
    );
    for i in 0..500 {
        data.push_str(&format!("ex:d{i} a ex:Department .\n"));
    }
    let (_dir, engine) = common::engine_over("data.ttl", &data, EngineOptions::default());
    let is_chair = |head: &str| format!("SELECT ?c WHERE {{ <http://example.org/{head}> a ?c }}");
    assert_eq!(
        owl_rl_answers(&engine, &is_chair("h0")),
        example_iris(&["Chair"])
    );
    assert_eq!(owl_rl_answers(&engine, &is_chair("h1")), example_iris(&[]));
    let plan = owl_rl_plan(&engine, &is_chair("h0"));
    assert!(plan.contains("UnionIndexJoin"), "{plan}");
    assert!(
        !plan.contains("HashJoin"),
        "no department read whole:\n{plan}"
    );
    // A variable subject still finds every chair.
    let chairs = "SELECT ?x WHERE { ?x a <http://example.org/Chair> }";
    assert_eq!(owl_rl_answers(&engine, chairs), example_iris(&["h0"]));
}

/// `Tenured ≡ tenureStatus hasValue ex:yes`: `?x ex:tenureStatus ?s` gets
/// the stored statuses and `ex:yes` for every stored `Tenured`; the
/// alternative `?x ex:tenureStatus ex:yes` (with `?s` = `ex:yes`) that the
/// rules also produce adds no row, so it is not looked up.
#[test]
fn a_branch_another_branch_answers_is_not_looked_up() {
    let mut data = String::from(
        "@prefix ex: <http://example.org/> .\n\
         @prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
         ex:Tenured owl:onProperty ex:tenureStatus ; owl:hasValue ex:yes .\n\
         ex:t0 ex:tenureStatus ex:yes ; ex:memberOf ex:d0 .\n\
         ex:t1 a ex:Tenured ; ex:memberOf ex:d0 .\n\
         ex:n0 ex:tenureStatus ex:no ; ex:memberOf ex:d0 .\n",
    );
    for i in 0..300 {
        data.push_str(&format!("ex:m{i} ex:tenureStatus ex:no ; a ex:Tenured .\n"));
    }
    let (_dir, engine) = common::engine_over("data.ttl", &data, EngineOptions::default());
    let query = "SELECT ?x ?s WHERE { ?x <http://example.org/memberOf> <http://example.org/d0> ; \
                 <http://example.org/tenureStatus> ?s }";
    let got = owl_rl_answers(&engine, query);
    let expected: BTreeSet<String> = [("t0", "yes"), ("t1", "yes"), ("n0", "no")]
        .iter()
        .map(|(x, s)| format!("<http://example.org/{x}> <http://example.org/{s}>"))
        .collect();
    assert_eq!(got, expected);
    let plan = owl_rl_plan(&engine, query);
    assert!(plan.contains("a union of 2 patterns"), "{plan}");
}

/// A transitive property's chain may pass from a node to its synonyms
/// between steps: the closure takes them from the synonym table (no index
/// walk over sameAs), in either direction of the sameAs triple, and a
/// path written with sameAs by the query reads the same table.
#[test]
fn transitive_chains_pass_through_synonyms() {
    let data = "\
        @prefix ex: <http://example.org/> .\n\
        @prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
        ex:partOf a owl:TransitiveProperty .\n\
        ex:a ex:partOf ex:b .\n\
        ex:b owl:sameAs ex:b2 .\n\
        ex:b2 ex:partOf ex:c .\n\
        ex:c3 owl:sameAs ex:c .\n\
        ex:c3 ex:partOf ex:d .\n\
        ex:x ex:partOf ex:y .\n";
    let (_dir, engine) = common::engine_over("data.ttl", data, EngineOptions::default());
    let wholes = "SELECT ?w WHERE { <http://example.org/a> <http://example.org/partOf> ?w }";
    let got = owl_rl_answers(&engine, wholes);
    assert_eq!(got, example_iris(&["b", "b2", "c", "c3", "d"]));
    let plan = owl_rl_plan(&engine, wholes);
    assert!(plan.contains("PathScan"), "{plan}");
    let parts = "SELECT ?p WHERE { ?p <http://example.org/partOf> <http://example.org/d> }";
    let got = owl_rl_answers(&engine, parts);
    assert_eq!(got, example_iris(&["a", "b", "b2", "c", "c3"]));
    let synonyms = "SELECT ?s WHERE { <http://example.org/c> \
        (<http://www.w3.org/2002/07/owl#sameAs>|^<http://www.w3.org/2002/07/owl#sameAs>)* ?s }";
    assert_eq!(
        owl_rl_answers(&engine, synonyms),
        example_iris(&["c", "c3"])
    );
    let none = "SELECT ?s WHERE { <http://example.org/y> \
        (<http://www.w3.org/2002/07/owl#sameAs>|^<http://www.w3.org/2002/07/owl#sameAs>)* ?s }";
    assert_eq!(owl_rl_answers(&engine, none), example_iris(&["y"]));
}

/// A class of 120,002 instances under OWL RL: `A` and `B` are subclasses
/// of `Top`, `likes` has domain `Top`; x0..x59999 are A, x30000..x89999 are
/// B, every third of x0..x119999 likes something (x90000.. only through the
/// domain), plus two sameAs aliases.
fn large_class_data() -> String {
    let mut data = String::from(
        "<http://example.org/A> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://example.org/Top> .\n\
         <http://example.org/B> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://example.org/Top> .\n\
         <http://example.org/likes> <http://www.w3.org/2000/01/rdf-schema#domain> <http://example.org/Top> .\n\
         <http://example.org/x0> <http://www.w3.org/2002/07/owl#sameAs> <http://example.org/alias0> .\n\
         <http://example.org/x1> <http://www.w3.org/2002/07/owl#sameAs> <http://example.org/alias1> .\n",
    );
    for i in 0..120_000 {
        if i < 60_000 {
            data.push_str(&format!(
                "<http://example.org/x{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/A> .\n"
            ));
        }
        if (30_000..90_000).contains(&i) {
            data.push_str(&format!(
                "<http://example.org/x{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/B> .\n"
            ));
        }
        if i % 3 == 0 || i >= 90_000 {
            data.push_str(&format!(
                "<http://example.org/x{i}> <http://example.org/likes> <http://example.org/x{}> .\n\
                 <http://example.org/x{i}> <http://example.org/likes> \"{i}\" .\n",
                (i + 1) % 120_000
            ));
        }
    }
    data
}

const LARGE_CLASS_COUNT: &str = "SELECT (COUNT(*) AS ?n) WHERE { ?x a <http://example.org/Top> }";

fn count_literal(n: u64) -> String {
    format!("\"{n}\"^^<http://www.w3.org/2001/XMLSchema#integer>")
}

/// A class read whole from many patterns, large enough to be read on all
/// cores (each thread its own distinct set, merged): the count is exact,
/// with instances shared between patterns and sameAs synonyms added once.
#[test]
fn a_large_class_read_on_all_cores_counts_each_instance_once() {
    // Rows kept from the first query would leave the others nothing to read.
    let options = EngineOptions {
        derived_extents: 0,
        ..EngineOptions::default()
    };
    let (_dir, engine) = common::engine_over("data.nt", &large_class_data(), options);
    let query = LARGE_CLASS_COUNT;
    let plan = owl_rl_plan(&engine, query);
    assert!(plan.contains("UnionScan"), "{plan}");
    let got = owl_rl_answers(&engine, query);
    let expected = count_literal(120_002);
    assert_eq!(got, BTreeSet::from([expected.clone()]), "{plan}");

    // In turns over before they start, suspended at every other pause and
    // resumed from the stash: the threads stop after a batch each and
    // each pattern goes on from its row.
    let request = QueryRequest {
        inference: Some(Inference::OwlRl),
        ..QueryRequest::default()
    };
    let stash = tern_engine::Stash::default();
    let mut execution = engine.execute(query, &request).unwrap();
    let mut pauses = 0;
    let count = 'run: loop {
        let QueryOutcome::Solutions { mut rows, .. } = execution.outcome else {
            panic!("a SELECT query");
        };
        let saved = loop {
            match rows.next_in_turn(Some(Instant::now())) {
                tern_engine::Polled::Ready(row) => break 'run row.unwrap()[0].clone(),
                tern_engine::Polled::End => panic!("a count has a row"),
                tern_engine::Polled::Pending => {
                    pauses += 1;
                    if pauses % 2 == 0 {
                        let (decoded, saved) = rows.suspend(&stash).unwrap();
                        assert!(decoded.is_empty(), "no row before the count");
                        break saved;
                    }
                }
            }
        };
        execution = engine.resume(query, &request, &saved, &stash).unwrap();
    };
    assert_eq!(count.map(|t| t.to_string()), Some(expected));
    assert!(pauses >= 5, "the union paused {pauses} times");
    assert!(stash.is_empty(), "state left behind");
}

/// A large class's instances, derived by the first query on a snapshot, are
/// kept: the next query reads none of its patterns and gives the same
/// answers, also in turns and resumed. A write makes a new snapshot that
/// derives them again, and an update's later operation reads its earlier
/// operations' changes, not the rows kept for the snapshot it started from.
#[test]
fn a_large_class_is_derived_once_per_snapshot() {
    let options = EngineOptions {
        inference: tern_engine::InferenceMode {
            regime: Inference::OwlRl,
            same_as: SameAsAnswers::AllSynonyms,
        },
        ..EngineOptions::default()
    };
    let (_dir, engine) = common::engine_over("data.nt", &large_class_data(), options);
    let query = LARGE_CLASS_COUNT;
    let kept = "its rows kept from an earlier query on this snapshot";
    let first = owl_rl_plan(&engine, query);
    assert!(
        first.contains("UnionScan") && !first.contains(kept),
        "{first}"
    );
    assert_eq!(
        engine.derived_extents(),
        (0, 0),
        "a plan alone derives nothing"
    );
    let count = BTreeSet::from([count_literal(120_002)]);
    assert_eq!(owl_rl_answers(&engine, query), count);
    let (bytes, extents) = engine.derived_extents();
    assert_eq!(extents, 1);
    assert!(bytes >= 120_002 * 8, "{bytes} bytes kept");
    let second = owl_rl_plan(&engine, query);
    assert!(second.contains(kept), "{second}");
    assert_eq!(owl_rl_answers(&engine, query), count);
    // The instances themselves, suspended every 20,000 rows: the kept rows
    // are handed out from where they stopped, and never copied into the
    // stash (the count handed out is the state).
    let instances = "SELECT ?x WHERE { ?x a <http://example.org/Top> }";
    let all = owl_rl_answers(&engine, instances);
    assert_eq!(all.len(), 120_002);
    let request = QueryRequest {
        inference: Some(Inference::OwlRl),
        ..QueryRequest::default()
    };
    let stash = tern_engine::Stash::default();
    let mut seen = BTreeSet::new();
    let mut execution = engine.execute(instances, &request).unwrap();
    let mut suspensions = 0;
    'run: loop {
        let QueryOutcome::Solutions { mut rows, .. } = execution.outcome else {
            panic!("a SELECT query");
        };
        let mut read = 0;
        let saved = loop {
            match rows.next_in_turn(None) {
                tern_engine::Polled::Ready(row) if read < 20_000 => {
                    seen.insert(row.unwrap()[0].as_ref().unwrap().to_string());
                    read += 1;
                }
                tern_engine::Polled::End => break 'run,
                tern_engine::Polled::Pending => panic!("no pause without a turn"),
                tern_engine::Polled::Ready(row) => {
                    seen.insert(row.unwrap()[0].as_ref().unwrap().to_string());
                    suspensions += 1;
                    let (decoded, saved) = rows.suspend(&stash).unwrap();
                    seen.extend(
                        decoded
                            .into_iter()
                            .map(|r| r[0].as_ref().unwrap().to_string()),
                    );
                    let stashed = stash.usage().bytes;
                    assert!(stashed < 120_002 * 8, "{stashed} bytes stashed");
                    break saved;
                }
            }
        };
        execution = engine.resume(instances, &request, &saved, &stash).unwrap();
    }
    assert_eq!(seen, all);
    assert!(suspensions >= 5, "suspended {suspensions} times");
    assert!(stash.is_empty(), "state left behind");

    // One update of three operations: the last counts with the first two's
    // changes (x5 is no longer an instance; x60000, a B, is also an A), though
    // its snapshot has the version the update started from and the same
    // number of A's.
    let update = "DELETE DATA { <http://example.org/x5> a <http://example.org/A> } ;
        INSERT DATA { <http://example.org/x60000> a <http://example.org/A> } ;
        INSERT { <http://example.org/counted> <http://example.org/n> ?n }
        WHERE { SELECT (COUNT(*) AS ?n) WHERE { ?x a <http://example.org/Top> } }";
    engine
        .update(update, &tern_engine::UpdateRequest::default())
        .unwrap();
    let counted = "SELECT ?n WHERE { <http://example.org/counted> <http://example.org/n> ?n }";
    assert_eq!(
        owl_rl_answers(&engine, counted),
        BTreeSet::from([count_literal(120_001)])
    );
    // The update's snapshot derives them again, and keeps them in turn.
    let after = owl_rl_plan(&engine, query);
    assert!(!after.contains(kept), "{after}");
    assert_eq!(
        owl_rl_answers(&engine, query),
        BTreeSet::from([count_literal(120_001)])
    );
    assert!(owl_rl_plan(&engine, query).contains(kept));
}

/// `<http://example.org/NAME>` for each name, as answers print them.
fn example_iris(names: &[&str]) -> BTreeSet<String> {
    names
        .iter()
        .map(|n| format!("<http://example.org/{n}>"))
        .collect()
}

/// Every answer under OWL RL, each synonym reported.
fn owl_rl_answers(engine: &Engine, query: &str) -> BTreeSet<String> {
    let keep_all = |_: &Term| true;
    answers(
        engine,
        query,
        Inference::OwlRl,
        SameAsAnswers::AllSynonyms,
        &keep_all,
    )
    .unwrap()
}

/// The plan of a query under OWL RL, as EXPLAIN shows it.
fn owl_rl_plan(engine: &Engine, query: &str) -> String {
    let request = QueryRequest {
        inference: Some(Inference::OwlRl),
        profile: true,
        ..QueryRequest::default()
    };
    engine
        .execute(query, &request)
        .unwrap()
        .profile
        .snapshot()
        .to_text()
}
