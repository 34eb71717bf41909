//! Differential tests: random datasets and random SPARQL queries, run by Tern
//! and by Oxigraph's reference evaluator (`spareval`, over an in-memory
//! `oxrdf::Dataset`); the results must agree.
//!
//! Two scales: many small datasets (every feature, readable failures) and a
//! few datasets of thousands of statements (results over several batches).
//! Queries: basic graph patterns (some made from the data's own triples so
//! that they match), OPTIONAL, UNION, MINUS, FILTER (comparisons, BOUND, type
//! tests, string and numeric functions, EXISTS), BIND, VALUES, GRAPH,
//! subqueries, property paths, GROUP BY with aggregates and HAVING, DISTINCT,
//! ORDER BY, LIMIT/OFFSET, ASK, CONSTRUCT, FROM / FROM NAMED.
//!
//! Every case is reproducible from its seeds. On a mismatch the test prints the
//! seeds, the data (N-Quads, for small datasets), the query and both results.
//! Environment:
//!
//! - `TERN_DIFF_DATASETS=N` runs N datasets per scale (see [`SMALL`] and
//!   [`LARGE`] for the defaults).
//! - `TERN_DIFF_SEED=D` or `TERN_DIFF_SEED=D:Q` runs only dataset seed D (and
//!   only its query seed Q); pick the scale with the test name.
//! - `TERN_DIFF_VERBOSE=1` prints each case's seeds and query before it runs
//!   (with `-- --nocapture`), and the whole data set of a mismatch.
//!
//! What is compared:
//!
//! - SELECT results as multisets of solutions, equal up to a renaming of blank
//!   nodes, and the same projected variables.
//! - ORDER BY: the multiset as above, and Tern's sequence must be sorted on the
//!   keys that are projected variables, in the SPARQL order where SPARQL
//!   defines one (unbound < blank nodes < IRIs < literals; numbers by value,
//!   plain strings by code point). When the reference's full order is strict on
//!   those keys, the sequences must be identical, LIMIT/OFFSET included.
//! - LIMIT/OFFSET with ties or without ORDER BY: the right number of rows, all
//!   drawn from the full result.
//! - Nondeterministic aggregates: SAMPLE only as bound/unbound, GROUP_CONCAT
//!   as the multiset of its pieces.
//! - ASK: the boolean. CONSTRUCT: the set of triples, up to blank nodes.
//!
//! Where the reference departs from SPARQL 1.1 the generator keeps away; see
//! [`KNOWN_BUGS`] for the list of those places.

use oxrdf::{BlankNode, Dataset, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use oxsdatatypes::{Decimal, Double, Float, Integer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use spareval::{CancellationToken, QueryEvaluator, QueryResults};
use spargebra::SparqlParser;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use tern_engine::{Engine, EngineOptions, OptionalJoins, QueryOutcome};
use tern_index::builder::{build, Input, LoadOptions};
use tern_index::Index;

/// Cases the reference takes longer for are skipped (cross products of the
/// large datasets).
const REFERENCE_TIMEOUT: Duration = Duration::from_secs(3);

/// How big the generated data is, and how many cases run.
#[derive(Clone, Copy)]
struct Scale {
    name: &'static str,
    /// Statements per dataset (before removing repeats).
    statements: (usize, usize),
    /// IRIs for subjects and link objects (the first four are ex:a to ex:d).
    resources: usize,
    /// At most this many blank nodes.
    blanks: usize,
    datasets: u64,
    queries_per_dataset: u64,
    /// Cases whose reference result is larger are skipped (slow to compare
    /// in a debug build, and not more telling).
    max_rows: usize,
}

/// Many small datasets: every feature, with results small enough to read.
const SMALL: Scale = Scale {
    name: "small",
    statements: (3, 40),
    resources: 4,
    blanks: 3,
    datasets: 100,
    queries_per_dataset: 12,
    max_rows: 3_000,
};

/// A few datasets of a few thousand statements: intermediate results span
/// several of the engine's batches (4,096 rows), which the small ones never do.
const LARGE: Scale = Scale {
    name: "large",
    statements: (1_500, 3_000),
    resources: 40,
    blanks: 12,
    datasets: 4,
    queries_per_dataset: 15,
    max_rows: 60_000,
};

/// Features the generator leaves out because Tern has a known bug with them.
/// Each entry names its bug; remove it once the bug is fixed.
///
/// This list is for Tern's bugs only. Where the *reference* departs from
/// SPARQL 1.1 (or SPARQL leaves the answer open), the generator steers clear
/// for good; those places are commented where they are avoided:
/// `QueryGen::multiset_paths_ok` (`|` paths), `QueryGen::triple` (zero-length
/// paths), `NUMERIC` (lexical forms), `QueryGen::test` (EBV of language
/// strings), `QueryGen::ordered_constant` (`<` on IRIs and language strings),
/// `GenQuery::term_vars` (MIN/MAX/SAMPLE), GROUP_CONCAT over strings only.
const KNOWN_BUGS: &[Feature] = &[];

/// What the generator can put in a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feature {
    Optional,
    Union,
    Minus,
    Filter,
    Exists,
    /// EXISTS over more than a basic graph pattern (FILTER, OPTIONAL, ...
    /// inside it); without it, EXISTS patterns are basic graph patterns.
    ExistsBeyondBasicPatterns,
    Bind,
    Values,
    Graph,
    Subquery,
    PropertyPath,
    Aggregate,
    OrderBy,
    LimitOffset,
    Distinct,
    Ask,
    Construct,
    DatasetClause,
}

fn enabled(feature: Feature) -> bool {
    !KNOWN_BUGS.contains(&feature)
}

const EX: &str = "http://example.org/";
const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
const PREFIXES: &str =
    "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n";

// ---------------------------------------------------------------------------
// Data

/// Subjects and link objects.
const RESOURCES: &[&str] = &["a", "b", "c", "d"];
/// Predicates whose objects are resources or blank nodes (rarely a literal).
const LINKS: &[&str] = &["p", "q", "r"];
/// `ex:n` has only numeric objects, all of different values (so MIN and MAX
/// have one right answer); `ex:s` strings; `ex:m` anything.
///
/// Doubles and floats are exact in binary, so that sums do not depend on the
/// order of addition.
///
/// Numbers are written in the reference's canonical form: it keeps values,
/// not lexical forms, so `STR("011"^^xsd:integer)` is "11" there (and "011",
/// rightly, in Tern). Non-canonical forms are therefore not covered here.
const NUMERIC: &[(&str, &str)] = &[
    ("-2", "integer"),
    ("0", "integer"),
    ("1", "integer"),
    ("3", "integer"),
    ("7", "integer"),
    ("100", "integer"),
    ("11", "integer"),
    // Beyond Tern's inline integers (60 bits), far enough from overflow that
    // SUM does not overflow in one order of addition and not in another.
    ("1152921504606846976", "integer"),
    ("1.5", "decimal"),
    ("2", "decimal"),
    ("-0.5", "decimal"),
    ("0.125", "decimal"),
    ("2.5", "double"),
    ("10", "double"),
    ("5", "int"),
    ("0.5", "float"),
];
const STRINGS: &[(&str, Option<&str>)] = &[
    ("a", None),
    ("b", None),
    ("B", None),
    ("\u{e9}t\u{e9}", None),
    ("a b", None),
    ("a", Some("en")),
    ("a", Some("fr")),
    ("chat", Some("en-gb")),
];
const OTHER_LITERALS: &[(&str, &str)] = &[
    ("true", "http://www.w3.org/2001/XMLSchema#boolean"),
    ("false", "http://www.w3.org/2001/XMLSchema#boolean"),
    ("2020-01-01", "http://www.w3.org/2001/XMLSchema#date"),
    (
        "2020-01-01T10:00:00Z",
        "http://www.w3.org/2001/XMLSchema#dateTime",
    ),
    (
        "2020-01-01T10:00:00",
        "http://www.w3.org/2001/XMLSchema#dateTime",
    ),
    ("x", "http://www.w3.org/2001/XMLSchema#string"),
];

fn ex(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{EX}{local}"))
}

/// `NUMERIC[i]`, in the reference's canonical form.
fn numeric_literal(i: usize) -> Literal {
    let (value, ty) = NUMERIC[i];
    let value = match ty {
        "decimal" => Decimal::from_str(value).unwrap().to_string(),
        "double" => Double::from_str(value).unwrap().to_string(),
        "float" => Float::from_str(value).unwrap().to_string(),
        _ => Integer::from_str(value).unwrap().to_string(),
    };
    Literal::new_typed_literal(value, NamedNode::new_unchecked(format!("{XSD}{ty}")))
}

fn string_literal(i: usize) -> Literal {
    match STRINGS[i] {
        (value, None) => Literal::new_simple_literal(value),
        (value, Some(lang)) => Literal::new_language_tagged_literal(value, lang).unwrap(),
    }
}

fn other_literal(i: usize) -> Literal {
    let (value, ty) = OTHER_LITERALS[i];
    Literal::new_typed_literal(value, NamedNode::new_unchecked(ty))
}

struct Data {
    quads: Vec<Quad>,
}

impl Data {
    fn generate(rng: &mut StdRng, scale: &Scale) -> Data {
        let blanks: Vec<BlankNode> = (0..rng.random_range(0..=scale.blanks))
            .map(|i| BlankNode::new_unchecked(format!("b{i}")))
            .collect();
        let resource = |rng: &mut StdRng| -> NamedOrBlankNode {
            if !blanks.is_empty() && rng.random_bool(0.2) {
                blanks[rng.random_range(0..blanks.len())].clone().into()
            } else {
                let i = rng.random_range(0..scale.resources);
                match RESOURCES.get(i) {
                    Some(r) => ex(r).into(),
                    None => ex(&format!("r{i}")).into(),
                }
            }
        };
        let mut quads = Vec::new();
        let mut seen = HashSet::new();
        let size = rng.random_range(scale.statements.0..=scale.statements.1);
        for _ in 0..size {
            let subject = resource(rng);
            let (predicate, object): (NamedNode, Term) = match rng.random_range(0..10) {
                0..=4 => {
                    let p = ex(["p", "p", "q", "q", "r"][rng.random_range(0..5)]);
                    let o: Term = if rng.random_bool(0.08) {
                        string_literal(rng.random_range(0..STRINGS.len())).into()
                    } else {
                        resource(rng).into()
                    };
                    (p, o)
                }
                5 | 6 => (
                    ex("n"),
                    numeric_literal(rng.random_range(0..NUMERIC.len())).into(),
                ),
                7 | 8 => (
                    ex("s"),
                    string_literal(rng.random_range(0..STRINGS.len())).into(),
                ),
                _ => (
                    ex("m"),
                    match rng.random_range(0..4) {
                        0 => numeric_literal(rng.random_range(0..NUMERIC.len())).into(),
                        1 => string_literal(rng.random_range(0..STRINGS.len())).into(),
                        2 => resource(rng).into(),
                        _ => other_literal(rng.random_range(0..OTHER_LITERALS.len())).into(),
                    },
                ),
            };
            let graph = match rng.random_range(0..12) {
                0 | 1 => GraphName::NamedNode(ex("g1")),
                2 => GraphName::NamedNode(ex("g2")),
                _ => GraphName::DefaultGraph,
            };
            let quad = Quad::new(subject, predicate, object, graph);
            if seen.insert(quad.clone()) {
                quads.push(quad);
            }
        }
        Data { quads }
    }

    fn nquads(&self) -> String {
        let mut out = String::new();
        for q in &self.quads {
            match &q.graph_name {
                GraphName::DefaultGraph => {
                    writeln!(out, "{} {} {} .", q.subject, q.predicate, q.object).unwrap()
                }
                g => writeln!(out, "{} {} {} {g} .", q.subject, q.predicate, q.object).unwrap(),
            }
        }
        out
    }

    fn dataset(&self) -> Dataset {
        self.quads.iter().cloned().collect()
    }

    /// Tern's engine over this data, with its index in `dir`.
    fn engine(&self, dir: &std::path::Path, optional_joins: OptionalJoins) -> Engine {
        let path = dir.join("data.nq");
        std::fs::write(&path, self.nquads()).unwrap();
        let target = dir.join("index");
        build(
            &target,
            &[Input::file(&path, None, None).unwrap()],
            &LoadOptions::default(),
        )
        .unwrap();
        let index = Index::open(&target).unwrap();
        Engine::of_index(
            Arc::new(index),
            EngineOptions {
                default_graph_is_union: false,
                timeout: Some(Duration::from_secs(30)),
                optional_joins,
                ..Default::default()
            },
        )
    }
}

// ---------------------------------------------------------------------------
// Queries

const VARS: &[&str] = &["x", "y", "z", "w", "v"];
/// Variables for nodes (subjects, objects of links) and for literal values:
/// keeping them mostly apart makes fewer joins that can never match.
const NODE_VARS: &[&str] = &["x", "y", "z"];
const VALUE_VARS: &[&str] = &["v", "w"];

/// A generated query and what the comparison needs to know about it.
#[derive(Debug, Clone)]
struct GenQuery {
    /// The query as run by Tern.
    text: String,
    /// The same without LIMIT/OFFSET, as run by the reference.
    full_text: String,
    /// ORDER BY keys: the variable when the key is a plain variable, and
    /// whether it is descending. Empty without ORDER BY.
    order: Vec<(Option<String>, bool)>,
    limit: Option<usize>,
    offset: usize,
    /// Output variables holding SAMPLE results.
    sample_vars: Vec<String>,
    /// Output variables holding GROUP_CONCAT results (separator `|`).
    concat_vars: Vec<String>,
    /// Output variables holding MIN, MAX or SAMPLE of a group key: the
    /// reference gives canonical forms of numbers ("11" for "011", xsd:integer
    /// for xsd:int), Tern the term itself, so numbers there are compared by
    /// value and primitive type.
    term_vars: Vec<String>,
    /// Output variables holding SUM or AVG results: doubles there are
    /// compared to 9 significant digits, since their rounding depends on the
    /// order of addition.
    approx_vars: Vec<String>,
    /// Compare as sets (see `QueryGen::multiset_paths_ok`).
    set_semantics: bool,
}

impl GenQuery {
    /// A query without ORDER BY, LIMIT or aggregates, run as is by both.
    fn whole(text: String, set_semantics: bool) -> GenQuery {
        GenQuery {
            full_text: text.clone(),
            text,
            order: Vec::new(),
            limit: None,
            offset: 0,
            sample_vars: Vec::new(),
            concat_vars: Vec::new(),
            term_vars: Vec::new(),
            approx_vars: Vec::new(),
            set_semantics,
        }
    }
}

/// The data's constants (IRIs and literals, as SPARQL), by role, so that
/// queries mention terms that occur.
#[derive(Default)]
struct DataTerms {
    /// (subject, predicate, object) of each quad, `None` for blank nodes, in
    /// the default graph and in named graphs.
    triples: Vec<[Option<String>; 3]>,
    named_triples: Vec<[Option<String>; 3]>,
    resources: Vec<String>,
    numbers: Vec<String>,
    strings: Vec<String>,
    others: Vec<String>,
}

impl DataTerms {
    fn of(data: &Data) -> DataTerms {
        let mut t = DataTerms::default();
        let add = |list: &mut Vec<String>, term: String| {
            if !list.contains(&term) {
                list.push(term);
            }
        };
        for q in &data.quads {
            let list = if q.graph_name.is_default_graph() {
                &mut t.triples
            } else {
                &mut t.named_triples
            };
            let default_graph = q.graph_name.is_default_graph();
            list.push([
                match &q.subject {
                    NamedOrBlankNode::NamedNode(n) => Some(n.to_string()),
                    NamedOrBlankNode::BlankNode(_) => None,
                },
                Some(q.predicate.to_string()),
                match &q.object {
                    Term::BlankNode(_) => None,
                    o => Some(o.to_string()),
                },
            ]);
            if !default_graph {
                // Constants come from the default graph, where most patterns
                // are matched.
                continue;
            }
            if let NamedOrBlankNode::NamedNode(n) = &q.subject {
                add(&mut t.resources, n.to_string());
            }
            match &q.object {
                Term::NamedNode(n) => add(&mut t.resources, n.to_string()),
                Term::Literal(l) if numeric_value(l).is_some() => {
                    add(&mut t.numbers, l.to_string())
                }
                Term::Literal(l)
                    if l.language().is_some()
                        || l.datatype().as_str() == format!("{XSD}string") =>
                {
                    add(&mut t.strings, l.to_string())
                }
                Term::Literal(l) => add(&mut t.others, l.to_string()),
                _ => {}
            }
        }
        t
    }
}

struct QueryGen<'r> {
    rng: &'r mut StdRng,
    terms: &'r DataTerms,
    /// Variables that appeared so far, for expressions and projections.
    mentioned: Vec<String>,
    /// Variables bound to `ex:n` objects by required top-level triple patterns.
    numeric: Vec<String>,
    fresh: usize,
    /// Whether paths may use `|` and negated sets of both directions. The
    /// reference evaluates those with set semantics where SPARQL says union,
    /// so `?x (ex:p|ex:p) ?y` has each solution twice in Tern and once in the
    /// reference; queries with them are compared as sets, and aggregates
    /// (which count duplicates) do without them.
    multiset_paths_ok: bool,
    multiset_paths_used: bool,
    /// Inside GRAPH: patterns from the data come from named graphs.
    in_named_graph: bool,
    /// The dataset clause (FROM, FROM NAMED), or empty.
    from: &'static str,
    /// See `GenQuery::approx_vars`.
    approx_vars: Vec<String>,
}

impl<'r> QueryGen<'r> {
    fn new(rng: &'r mut StdRng, terms: &'r DataTerms) -> Self {
        QueryGen {
            rng,
            terms,
            mentioned: Vec::new(),
            numeric: Vec::new(),
            fresh: 0,
            multiset_paths_ok: true,
            multiset_paths_used: false,
            in_named_graph: false,
            from: "",
            approx_vars: Vec::new(),
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }

    fn fresh_var(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    /// A variable for a pattern: the small pool makes joins likely.
    fn pattern_var(&mut self) -> String {
        self.var_from(VARS)
    }

    /// Usually one of `pool`, earlier ones likelier; sometimes any variable
    /// that appeared.
    fn var_from(&mut self, pool: &[&str]) -> String {
        let v = if self.mentioned.len() > 2 && self.chance(0.08) {
            self.some_mentioned()
        } else {
            let i = self.below(pool.len()).min(self.below(pool.len()));
            pool[i].to_owned()
        };
        self.mention(&v);
        v
    }

    /// One of the variables that appeared (there must be one).
    fn some_mentioned(&mut self) -> String {
        let i = self.below(self.mentioned.len());
        self.mentioned[i].clone()
    }

    fn mention(&mut self, v: &str) {
        if !self.mentioned.iter().any(|m| m == v) {
            self.mentioned.push(v.to_owned());
        }
    }

    /// A variable for an expression: usually one that appeared.
    fn expr_var(&mut self) -> String {
        if !self.mentioned.is_empty() && self.chance(0.9) {
            self.some_mentioned()
        } else {
            VARS[self.below(VARS.len())].to_owned()
        }
    }

    /// One of `list` (usually) or `otherwise`.
    fn data_or(&mut self, list: &[String], otherwise: impl FnOnce(&mut Self) -> String) -> String {
        if !list.is_empty() && self.chance(0.75) {
            list[self.below(list.len())].clone()
        } else {
            otherwise(self)
        }
    }

    fn resource(&mut self) -> String {
        let terms = self.terms;
        self.data_or(&terms.resources, Self::static_resource)
    }

    fn static_resource(&mut self) -> String {
        if self.chance(0.1) {
            "ex:zz".to_owned()
        } else {
            format!("ex:{}", self.pick(RESOURCES))
        }
    }

    fn numeric_constant(&mut self) -> String {
        let terms = self.terms;
        self.data_or(&terms.numbers, Self::static_numeric)
    }

    fn static_numeric(&mut self) -> String {
        if self.chance(0.5) {
            // Short syntax.
            self.pick(&["0", "1", "2", "3", "-2", "1.5", "0.5", "7", "100"])
                .to_owned()
        } else {
            numeric_literal(self.below(NUMERIC.len())).to_string()
        }
    }

    fn string_constant(&mut self) -> String {
        let terms = self.terms;
        self.data_or(&terms.strings, |g| {
            string_literal(g.below(STRINGS.len())).to_string()
        })
    }

    fn other_constant(&mut self) -> String {
        let terms = self.terms;
        self.data_or(&terms.others, |g| {
            other_literal(g.below(OTHER_LITERALS.len())).to_string()
        })
    }

    fn any_constant(&mut self) -> String {
        match self.below(5) {
            0 => self.resource(),
            1 => self.numeric_constant(),
            2 => self.string_constant(),
            3 => self.other_constant(),
            _ => self
                .pick(&["true", "false", "\"\"", "\"a\"^^xsd:string"])
                .to_owned(),
        }
    }

    /// A constant for `<`, `<=`, `>`, `>=`: never a language-tagged string, an
    /// IRI or an unknown datatype. SPARQL defines no order on those (an
    /// error); the reference orders language-tagged strings of one language
    /// and makes `<=` true on equal terms.
    fn ordered_constant(&mut self) -> String {
        match self.below(6) {
            0..=2 => self.numeric_constant(),
            3 => {
                let terms = self.terms;
                let plain: Vec<&String> =
                    terms.strings.iter().filter(|s| s.ends_with('"')).collect();
                if plain.is_empty() || self.chance(0.3) {
                    self.pick(&["\"a\"", "\"b\"", "\"\"", "\"z\""]).to_owned()
                } else {
                    plain[self.below(plain.len())].clone()
                }
            }
            4 => self.pick(&["true", "false"]).to_owned(),
            _ => self
                .pick(&[
                    "\"2020-01-01\"^^xsd:date",
                    "\"2019-06-01T00:00:00Z\"^^xsd:dateTime",
                    "\"2020-01-01T10:00:00Z\"^^xsd:dateTime",
                ])
                .to_owned(),
        }
    }

    // --- patterns

    fn group(&mut self, depth: usize, required: bool) -> String {
        let mut parts = vec![if self.chance(0.92) {
            self.bgp(required)
        } else {
            self.element(depth, required)
        }];
        for _ in 0..self.below(3).min(self.below(3)) {
            parts.push(self.element(depth, required));
        }
        format!("{{ {} }}", parts.join(" "))
    }

    fn element(&mut self, depth: usize, required: bool) -> String {
        let nested = depth > 0;
        loop {
            match self.below(19) {
                0..=2 => return self.bgp(required),
                3 | 4 if nested && enabled(Feature::Optional) => {
                    return format!("OPTIONAL {}", self.group(depth - 1, false));
                }
                5 | 6 if nested && enabled(Feature::Union) => {
                    let a = self.group(depth - 1, false);
                    let b = self.group(depth - 1, false);
                    return format!("{a} UNION {b}");
                }
                7 if nested && enabled(Feature::Minus) => {
                    return format!("MINUS {}", self.group(depth - 1, false));
                }
                8..=10 if enabled(Feature::Filter) => {
                    return format!("FILTER({})", self.condition());
                }
                11 if enabled(Feature::Bind) => {
                    let e = self.expr(2);
                    let v = self.fresh_var("b");
                    self.mention(&v);
                    return format!("BIND({e} AS ?{v})");
                }
                12 if enabled(Feature::Values) => return self.values(),
                13 if nested && enabled(Feature::Graph) => {
                    let g = match self.below(4) {
                        0 => "ex:g1".to_owned(),
                        1 => "ex:g2".to_owned(),
                        2 => "ex:zz".to_owned(),
                        _ => {
                            let g = if self.chance(0.5) {
                                "g".to_owned()
                            } else {
                                self.pattern_var()
                            };
                            self.mention(&g);
                            format!("?{g}")
                        }
                    };
                    let outer = std::mem::replace(&mut self.in_named_graph, true);
                    let body = self.group(depth - 1, required);
                    self.in_named_graph = outer;
                    return format!("GRAPH {g} {body}");
                }
                14 if nested && enabled(Feature::Subquery) => return self.subquery(depth - 1),
                15 | 16 if nested => {
                    // A nested group (joined as a whole).
                    return self.group(depth - 1, required);
                }
                17 if nested && enabled(Feature::Optional) && enabled(Feature::Filter) => {
                    // Negation written with OPTIONAL and !BOUND (planned as
                    // an anti join).
                    let s = self.pattern_var();
                    let w = self.fresh_var("n");
                    self.mention(&w);
                    let link = self.pick(LINKS);
                    let condition = if self.chance(0.5) {
                        format!(" FILTER({})", self.condition())
                    } else {
                        String::new()
                    };
                    return format!(
                        "OPTIONAL {{ ?{s} ex:{link} ?{w}{condition} }} FILTER(!BOUND(?{w}))"
                    );
                }
                18 if enabled(Feature::Filter) => {
                    // A variable predicate fixed by a filter (planned as
                    // constants in the pattern).
                    let (s, o) = (self.pattern_var(), self.pattern_var());
                    let p = self.fresh_var("p");
                    self.mention(&p);
                    let (a, b) = (self.pick(LINKS), self.pick(LINKS));
                    let test = match self.below(4) {
                        0 => format!("?{p} = ex:{a}"),
                        1 => format!("?{p} IN (ex:{a}, ex:{b}, ex:{a})"),
                        2 => format!("sameTerm(ex:{a}, ?{p}) || ?{p} = ex:{b}"),
                        _ => format!("?{p} = ex:{a} && ?{o} != ?{s}"),
                    };
                    return format!("?{s} ?{p} ?{o} FILTER({test})");
                }
                _ => {}
            }
        }
    }

    fn bgp(&mut self, required: bool) -> String {
        let n = 1 + self.below(3).min(self.below(3));
        (0..n)
            .map(|_| self.triple(required))
            .collect::<Vec<_>>()
            .join(" . ")
    }

    fn triple(&mut self, required: bool) -> String {
        let terms = self.terms;
        let from = if self.in_named_graph {
            &terms.named_triples
        } else {
            &terms.triples
        };
        if !from.is_empty() && self.chance(0.4) {
            return self.triple_from_data(from, required);
        }
        // Zero-length paths: SPARQL (and Tern) match a constant end whatever
        // the graph holds; the reference only if the constant occurs in the
        // queried graph. Such paths get variables at both ends.
        let mut zero_length = false;
        let (predicate, object_kind) = match self.below(20) {
            0..=2 => {
                // Predicate variables have their own names: joins of a
                // predicate with a subject or object rarely match.
                let v = if self.chance(0.7) { "p" } else { "p2" };
                self.mention(v);
                (format!("?{v}"), "any")
            }
            3..=6 if enabled(Feature::PropertyPath) => {
                let (p, z) = self.path(2);
                zero_length = z;
                (p, "any")
            }
            _ => {
                let p = self.pick(&["p", "q", "r", "p", "q", "n", "n", "s", "m"]);
                (
                    format!("ex:{p}"),
                    match p {
                        "n" => "n",
                        "s" => "s",
                        "m" => "any",
                        _ => "link",
                    },
                )
            }
        };
        let subject = match self.below(20) {
            14..=17 if !zero_length => self.resource(),
            18 | 19 => "[]".to_owned(),
            _ => format!("?{}", self.var_from(NODE_VARS)),
        };
        let constant_subject = !subject.starts_with('?') && subject != "[]";
        let object = match self.chance(if constant_subject { 0.9 } else { 0.7 }) || zero_length {
            false => match object_kind {
                "n" => self.numeric_constant(),
                "s" => self.string_constant(),
                "link" => self.resource(),
                _ => self.any_constant(),
            },
            true => {
                let mut v = String::new();
                for _ in 0..2 {
                    // A second draw makes `?x ex:p ?x` rarer.
                    v = match object_kind {
                        "link" => self.var_from(NODE_VARS),
                        "n" | "s" => self.var_from(VALUE_VARS),
                        _ => self.pattern_var(),
                    };
                    if subject != format!("?{v}") {
                        break;
                    }
                }
                if required && object_kind == "n" && !self.numeric.contains(&v) {
                    self.numeric.push(v.clone());
                }
                format!("?{v}")
            }
        };
        format!("{subject} {predicate} {object}")
    }

    /// A pattern made from a quad of the data, some of its terms replaced by
    /// variables, so that it matches at least in some graph.
    fn triple_from_data(&mut self, from: &[[Option<String>; 3]], required: bool) -> String {
        let [s, p, o] = &from[self.below(from.len())];
        let subject = match s {
            Some(s) if self.chance(0.3) => s.clone(),
            _ => format!("?{}", self.var_from(NODE_VARS)),
        };
        let p = p.as_deref().unwrap_or_default();
        let predicate = if self.chance(0.1) {
            let v = if self.chance(0.7) { "p" } else { "p2" };
            self.mention(v);
            format!("?{v}")
        } else {
            p.to_owned()
        };
        let object = match o {
            Some(o) if self.chance(0.3) => o.clone(),
            _ => {
                let mut v = String::new();
                for _ in 0..2 {
                    v = if p.ends_with("/n>") || p.ends_with("/s>") {
                        self.var_from(VALUE_VARS)
                    } else if p.ends_with("/m>") {
                        self.pattern_var()
                    } else {
                        self.var_from(NODE_VARS)
                    };
                    if subject != format!("?{v}") {
                        break;
                    }
                }
                if required && p.ends_with("/n>") && !self.numeric.contains(&v) {
                    self.numeric.push(v.clone());
                }
                format!("?{v}")
            }
        };
        format!("{subject} {predicate} {object}")
    }

    /// A property path and whether it matches zero-length paths.
    fn path(&mut self, depth: usize) -> (String, bool) {
        if depth == 0 || self.chance(0.3) {
            return (
                format!("ex:{}", self.pick(&["p", "q", "r", "p", "q", "m"])),
                false,
            );
        }
        let d = depth - 1;
        loop {
            return match self.below(9) {
                0 => {
                    let (p, z) = self.path(d);
                    (format!("^{p}"), z)
                }
                1 => {
                    let ((a, za), (b, zb)) = (self.path(d), self.path(d));
                    (format!("({a}/{b})"), za && zb)
                }
                2 if self.multiset_paths_ok => {
                    self.multiset_paths_used = true;
                    let ((a, za), (b, zb)) = (self.path(d), self.path(d));
                    (format!("({a}|{b})"), za || zb)
                }
                3 => (format!("({})*", self.path(d).0), true),
                4 => {
                    let (p, z) = self.path(d);
                    (format!("({p})+"), z)
                }
                5 => (format!("({})?", self.path(d).0), true),
                6 if self.multiset_paths_ok => {
                    self.multiset_paths_used = true;
                    let (a, b) = (self.pick(LINKS), self.pick(LINKS));
                    (format!("!(ex:{a}|^ex:{b})"), false)
                }
                6 => {
                    let (a, b) = (self.pick(LINKS), self.pick(LINKS));
                    (format!("!(ex:{a}|ex:{b})"), false)
                }
                7 => (format!("!ex:{}", self.pick(LINKS)), false),
                8 => (format!("!^ex:{}", self.pick(LINKS)), false),
                _ => continue,
            };
        }
    }

    fn values(&mut self) -> String {
        let vars: Vec<String> = (0..1 + self.below(2)).map(|_| self.pattern_var()).collect();
        let rows = 1 + self.below(3);
        let value = |g: &mut Self| -> String {
            match g.below(6) {
                0 => "UNDEF".to_owned(),
                1 | 2 => g.resource(),
                3 => g.numeric_constant(),
                4 => g.string_constant(),
                _ => g.any_constant(),
            }
        };
        if vars.len() == 1 {
            let vals: Vec<String> = (0..rows).map(|_| value(self)).collect();
            format!("VALUES ?{} {{ {} }}", vars[0], vals.join(" "))
        } else {
            let rows: Vec<String> = (0..rows)
                .map(|_| {
                    let vals: Vec<String> = vars.iter().map(|_| value(self)).collect();
                    format!("({})", vals.join(" "))
                })
                .collect();
            let names: Vec<String> = vars.iter().map(|v| format!("?{v}")).collect();
            format!("VALUES ({}) {{ {} }}", names.join(" "), rows.join(" "))
        }
    }

    fn subquery(&mut self, depth: usize) -> String {
        let aggregate = self.chance(0.4) && enabled(Feature::Aggregate);
        let before = self.mentioned.len();
        let outer_ok = self.multiset_paths_ok;
        self.multiset_paths_ok &= !aggregate;
        let body = self.group(depth, false);
        self.multiset_paths_ok = outer_ok;
        let inner: Vec<String> = self.mentioned[before..].to_vec();
        let pool = if !inner.is_empty() {
            inner
        } else if !self.mentioned.is_empty() {
            self.mentioned.clone()
        } else {
            vec!["x".to_owned()]
        };
        let mut projected: Vec<String> = Vec::new();
        for _ in 0..1 + self.below(2) {
            let v = pool[self.below(pool.len())].clone();
            if !projected.contains(&v) {
                projected.push(v);
            }
        }
        let vars: Vec<String> = projected.iter().map(|v| format!("?{v}")).collect();
        if aggregate {
            let c = self.fresh_var("c");
            self.mention(&c);
            // Not MIN, MAX or SAMPLE: the reference returns canonical forms of
            // their numbers ("11" for "011"), which would flow on unnoticed.
            let agg = self.pick(&["COUNT(*)", "COUNT(DISTINCT ?x)", "SUM(?y)", "AVG(?x)"]);
            if agg.starts_with('S') || agg.starts_with('A') {
                self.approx_vars.push(c.clone());
            }
            format!(
                "{{ SELECT {} ({agg} AS ?{c}) WHERE {body} GROUP BY {} }}",
                vars.join(" "),
                vars.join(" ")
            )
        } else {
            let distinct = if self.chance(0.3) && enabled(Feature::Distinct) {
                "DISTINCT "
            } else {
                ""
            };
            format!("{{ SELECT {distinct}{} WHERE {body} }}", vars.join(" "))
        }
    }

    // --- expressions

    /// A FILTER condition: mostly simple tests of one variable, that keep some
    /// solutions and drop others.
    fn condition(&mut self) -> String {
        let v = self.expr_var();
        match self.below(12) {
            10 | 11 if NODE_VARS.contains(&v.as_str()) => {
                // Nodes: tests that split them.
                match self.below(3) {
                    0 => {
                        let op = self.pick(&["=", "!="]);
                        format!("?{v} {op} {}", self.resource())
                    }
                    1 => {
                        let op = self.pick(&["<", ">"]);
                        let c =
                            self.pick(&["\"http://example.org/b\"", "\"http://example.org/c\""]);
                        format!("STR(?{v}) {op} {c}")
                    }
                    _ => format!("?{v} IN ({}, {})", self.resource(), self.resource()),
                }
            }
            10 | 11 => {
                // Values: comparisons with numbers and strings that occur.
                let op = self.pick(&["<", ">", "<=", ">=", "=", "!="]);
                let c = if self.chance(0.6) {
                    self.numeric_constant()
                } else {
                    self.ordered_constant()
                };
                format!("?{v} {op} {c}")
            }
            0..=2 => {
                let op = self.pick(&["=", "!=", "<", ">", "<=", ">="]);
                let c = if op.len() == 1 || op == "<=" || op == ">=" {
                    self.ordered_constant()
                } else {
                    match self.below(3) {
                        0 => self.numeric_constant(),
                        1 => self.string_constant(),
                        _ => self.any_constant(),
                    }
                };
                format!("?{v} {op} {c}")
            }
            3 => format!("{}BOUND(?{v})", if self.chance(0.5) { "!" } else { "" }),
            4 => {
                let f = self.pick(&["isIRI", "isBlank", "isLiteral", "isNumeric"]);
                format!("{}{f}(?{v})", if self.chance(0.3) { "!" } else { "" })
            }
            5 => {
                let w = self.expr_var();
                match self.pick(&["=", "!=", "<", ">"]) {
                    op @ ("<" | ">") => format!("STR(?{v}) {op} STR(?{w})"),
                    op => format!("?{v} {op} ?{w}"),
                }
            }
            _ => self.test(2),
        }
    }

    /// An expression whose effective boolean value is taken (FILTER, `!`,
    /// `&&`, `||`, IF): booleans, and numbers or simple strings, but never a
    /// language-tagged string, whose EBV SPARQL 1.1 defines (a "plain
    /// literal") and the reference makes an error.
    fn test(&mut self, depth: usize) -> String {
        if depth == 0 {
            return format!("BOUND(?{})", self.expr_var());
        }
        let d = depth - 1;
        match self.below(20) {
            0..=4 => {
                let op = self.pick(&["=", "!=", "<", ">", "<=", ">="]);
                let a = self.expr(d);
                if self.chance(0.5) {
                    format!("({a} {op} {})", self.ordered_constant())
                } else if op == "=" || op == "!=" {
                    format!("({a} {op} {})", self.expr(d))
                } else {
                    format!("(STR({a}) {op} STR({}))", self.expr(d))
                }
            }
            5 => {
                let op = self.pick(&["&&", "||"]);
                format!("({} {op} {})", self.test(d), self.test(d))
            }
            6 => format!("(!{})", self.test(d)),
            7 => format!("BOUND(?{})", self.expr_var()),
            8 => {
                let f = self.pick(&["isIRI", "isBlank", "isLiteral", "isNumeric"]);
                format!("{f}({})", self.expr(d))
            }
            9 => {
                let f = self.pick(&["CONTAINS", "STRSTARTS", "STRENDS"]);
                let s = self.pick(&["\"a\"", "\"\"", "\"b\"@en", "\"t\""]);
                format!("{f}({}, {s})", self.expr(d))
            }
            10 => format!("LANGMATCHES(LANG({}), \"en\")", self.expr(d)),
            11 => format!("sameTerm({}, {})", self.expr(d), self.expr(d)),
            12 => {
                let not = if self.chance(0.4) { "NOT " } else { "" };
                let a = self.expr(d);
                let xs: Vec<String> = (0..1 + self.below(3))
                    .map(|_| self.any_constant())
                    .collect();
                format!("({a} {not}IN ({}))", xs.join(", "))
            }
            13 => format!("REGEX(STR({}), \"^a\", \"i\")", self.expr(d)),
            14 => format!("xsd:boolean({})", self.expr(d)),
            15 => format!("({} + 0)", self.expr(d)),
            16 => format!("STR({})", self.expr(d)),
            17..=19 if depth >= 2 && enabled(Feature::Exists) => {
                let not = if self.chance(0.5) { "NOT " } else { "" };
                if enabled(Feature::ExistsBeyondBasicPatterns) {
                    format!("{not}EXISTS {}", self.group(1, false))
                } else {
                    format!("{not}EXISTS {{ {} }}", self.bgp(false))
                }
            }
            _ => format!("?{} = ?{}", self.expr_var(), self.expr_var()),
        }
    }

    /// An expression of any type.
    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 {
            return if self.chance(0.7) {
                format!("?{}", self.expr_var())
            } else {
                self.any_constant()
            };
        }
        let d = depth - 1;
        match self.below(26) {
            0..=2 => format!("?{}", self.expr_var()),
            3 => self.any_constant(),
            4..=6 => self.test(depth),
            7 | 8 => {
                let op = self.pick(&["+", "-", "*", "/"]);
                let a = self.expr(d);
                let b = if self.chance(0.6) {
                    self.numeric_constant()
                } else {
                    self.expr(d)
                };
                format!("({a} {op} {b})")
            }
            9 | 10 => {
                let f = self.pick(&[
                    "STR",
                    "LANG",
                    "DATATYPE",
                    "STRLEN",
                    "UCASE",
                    "LCASE",
                    "ABS",
                    "ROUND",
                    "CEIL",
                    "FLOOR",
                    "ENCODE_FOR_URI",
                    "MD5",
                ]);
                format!("{f}({})", self.expr(d))
            }
            11 => {
                let f = self.pick(&["STRBEFORE", "STRAFTER"]);
                let s = self.pick(&["\"a\"", "\"\"", "\"b\"@en", "\"t\""]);
                format!("{f}({}, {s})", self.expr(d))
            }
            12 => format!("CONCAT({}, {})", self.expr(d), self.expr(d)),
            13 => format!("SUBSTR(STR({}), 2)", self.expr(d)),
            14 => format!("IF({}, {}, {})", self.test(d), self.expr(d), self.expr(d)),
            15 => format!("COALESCE({}, {})", self.expr(d), self.expr(d)),
            16 => {
                let ty = self.pick(&["integer", "decimal", "double", "string", "boolean"]);
                format!("xsd:{ty}({})", self.expr(d))
            }
            17 => format!("STRDT(STR({}), xsd:integer)", self.expr(d)),
            18 => format!("STRLANG(STR({}), \"de\")", self.expr(d)),
            19 => {
                let f = self.pick(&[
                    "YEAR", "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ",
                    "SHA1", "SHA256", "STRLEN", "UCASE",
                ]);
                format!("{f}({})", self.expr(d))
            }
            20 => {
                let (a, b) = (
                    self.pick(&["\"a\"", "\"e\"", "\"^.\""]),
                    self.pick(&["\"X\"", "\"\""]),
                );
                format!("REPLACE({}, {a}, {b})", self.expr(d))
            }
            21 => format!("SUBSTR({}, 1, 2)", self.expr(d)),
            22 => format!(
                "IRI(CONCAT(\"http://example.org/\", STR({})))",
                self.expr(d)
            ),
            23 => format!("CONCAT({}, \"!\"@en)", self.expr(d)),
            _ => format!("(-{})", self.expr(d)),
        }
    }

    // --- queries

    fn query(mut self) -> GenQuery {
        if self.chance(0.12) && enabled(Feature::DatasetClause) {
            self.from = match self.below(5) {
                0 => " FROM ex:g1",
                // Not two FROM graphs: the reference keeps a triple of both
                // twice, where SPARQL (and Tern) merge them into one graph.
                1 => " FROM ex:g2",
                2 => " FROM NAMED ex:g2",
                3 => " FROM ex:g2 FROM NAMED ex:g1",
                _ => " FROM ex:zz FROM NAMED ex:g1 FROM NAMED ex:g2",
            };
        }
        loop {
            return match self.below(20) {
                0 | 1 if enabled(Feature::Ask) => self.ask_query(),
                2 if enabled(Feature::Construct) => self.construct_query(),
                3..=7 if enabled(Feature::Aggregate) => self.aggregate_query(),
                8.. => self.select_query(),
                _ => continue,
            };
        }
    }

    fn ask_query(&mut self) -> GenQuery {
        let body = self.group(2, true);
        let text = format!("ASK{} {body}", self.from);
        GenQuery::whole(text, false)
    }

    /// CONSTRUCT with a template of variables and constants (no blank
    /// nodes, no LIMIT).
    fn construct_query(&mut self) -> GenQuery {
        let body = self.group(2, true);
        let template: Vec<String> = (0..1 + self.below(2))
            .map(|_| {
                let term = |g: &mut Self, constant: fn(&mut Self) -> String| {
                    if !g.mentioned.is_empty() && g.chance(0.75) {
                        format!("?{}", g.some_mentioned())
                    } else {
                        constant(g)
                    }
                };
                let s = term(self, Self::resource);
                let p = if self.chance(0.8) {
                    format!("ex:{}", self.pick(&["p", "t", "n"]))
                } else {
                    term(self, Self::resource)
                };
                let o = term(self, Self::any_constant);
                format!("{s} {p} {o} .")
            })
            .collect();
        let text = format!(
            "CONSTRUCT {{ {} }}{} WHERE {body}",
            template.join(" "),
            self.from
        );
        GenQuery::whole(text, true)
    }

    fn select_query(&mut self) -> GenQuery {
        let body = self.group(2, true);
        let mut projected: Vec<String> = Vec::new();
        let mut projection: Vec<String> = Vec::new();
        let star = self.mentioned.is_empty() || self.chance(0.3);
        if !star {
            for _ in 0..1 + self.below(3) {
                let v = self.some_mentioned();
                if !projected.contains(&v) {
                    projection.push(format!("?{v}"));
                    projected.push(v);
                }
            }
            if self.chance(0.25) {
                let e = self.expr(2);
                let v = self.fresh_var("e");
                projection.push(format!("({e} AS ?{v})"));
                projected.push(v);
            }
        }
        let distinct = if self.chance(0.3) && enabled(Feature::Distinct) {
            "DISTINCT "
        } else {
            ""
        };
        let head = format!(
            "SELECT {distinct}{}",
            if star {
                "*".to_owned()
            } else {
                projection.join(" ")
            }
        );
        let order_pool = if star {
            self.mentioned.clone()
        } else {
            projected
        };
        self.finish(
            head,
            body,
            String::new(),
            order_pool,
            Vec::new(),
            Vec::new(),
            Vec::new(),
        )
    }

    fn aggregate_query(&mut self) -> GenQuery {
        self.multiset_paths_ok = false;
        let body = self.group(2, true);
        let mut keys: Vec<String> = Vec::new();
        let mut group_by: Vec<String> = Vec::new();
        if !self.mentioned.is_empty() {
            for _ in 0..self.below(3) {
                let v = self.some_mentioned();
                if !keys.contains(&v) {
                    group_by.push(format!("?{v}"));
                    keys.push(v);
                }
            }
            if self.chance(0.1) {
                let e = self.expr(1);
                let k = self.fresh_var("k");
                group_by.push(format!("({e} AS ?{k})"));
                keys.push(k);
            }
        }
        let mut projection: Vec<String> = keys.iter().map(|k| format!("?{k}")).collect();
        let mut outputs = keys.clone();
        let mut sample_vars = Vec::new();
        let mut concat_vars = Vec::new();
        let mut term_vars = Vec::new();
        for _ in 0..1 + self.below(3) {
            let a = self.fresh_var("agg");
            let v = format!("?{}", self.expr_var());
            let distinct = if self.chance(0.3) && enabled(Feature::Distinct) {
                "DISTINCT "
            } else {
                ""
            };
            let agg = match self.below(12) {
                0 => "COUNT(*)".to_owned(),
                1 | 2 => format!("COUNT({distinct}{v})"),
                3 => {
                    self.approx_vars.push(a.clone());
                    format!("SUM({distinct}{v})")
                }
                4 => {
                    self.approx_vars.push(a.clone());
                    format!("AVG({distinct}{v})")
                }
                5 => {
                    self.approx_vars.push(a.clone());
                    format!("SUM({})", self.expr(1))
                }
                6 | 7 if !self.numeric.is_empty() => {
                    term_vars.push(a.clone());
                    let n = {
                        let i = self.below(self.numeric.len());
                        self.numeric[i].clone()
                    };
                    let f = self.pick(&["MIN", "MAX"]);
                    format!("{f}(?{n})")
                }
                8 if !keys.is_empty() => {
                    term_vars.push(a.clone());
                    let k = keys[self.below(keys.len())].clone();
                    let f = self.pick(&["MIN", "MAX", "SAMPLE"]);
                    format!("{f}(?{k})")
                }
                9 => {
                    concat_vars.push(a.clone());
                    // Over strings only: the reference makes other values
                    // an error, SPARQL leaves it open.
                    format!("GROUP_CONCAT({distinct}STR({v}); SEPARATOR=\"|\")")
                }
                10 => {
                    sample_vars.push(a.clone());
                    format!("SAMPLE({v})")
                }
                _ => format!("(COUNT({distinct}{v}) * 2)"),
            };
            projection.push(format!("({agg} AS ?{a})"));
            outputs.push(a);
        }
        let mut tail = String::new();
        if !group_by.is_empty() {
            write!(tail, " GROUP BY {}", group_by.join(" ")).unwrap();
        }
        if self.chance(0.2) {
            let h = self.pick(&["COUNT(*) > 1", "COUNT(*) < 3", "SUM(?x) > 1", "MIN(?y) = 1"]);
            write!(tail, " HAVING ({h})").unwrap();
        }
        let head = format!("SELECT {}", projection.join(" "));
        let order_pool: Vec<String> = outputs
            .into_iter()
            .filter(|v| !sample_vars.contains(v) && !concat_vars.contains(v))
            .collect();
        self.finish(
            head,
            body,
            tail,
            order_pool,
            sample_vars,
            concat_vars,
            term_vars,
        )
    }

    /// Adds ORDER BY (over `order_pool`, sometimes over an expression) and
    /// LIMIT/OFFSET.
    #[allow(clippy::too_many_arguments)] // the parts of a query, each once
    fn finish(
        &mut self,
        head: String,
        body: String,
        mut tail: String,
        order_pool: Vec<String>,
        sample_vars: Vec<String>,
        concat_vars: Vec<String>,
        term_vars: Vec<String>,
    ) -> GenQuery {
        let mut order = Vec::new();
        if self.chance(0.4) && !order_pool.is_empty() && enabled(Feature::OrderBy) {
            let mut keys = Vec::new();
            for _ in 0..1 + self.below(2) {
                let desc = self.chance(0.4);
                if self.chance(0.85) {
                    let v = order_pool[self.below(order_pool.len())].clone();
                    keys.push(if desc {
                        format!("DESC(?{v})")
                    } else {
                        format!("?{v}")
                    });
                    order.push((Some(v), desc));
                } else {
                    let v = order_pool[self.below(order_pool.len())].clone();
                    keys.push(format!("{}(STR(?{v}))", if desc { "DESC" } else { "ASC" }));
                    order.push((None, desc));
                }
            }
            write!(tail, " ORDER BY {}", keys.join(" ")).unwrap();
        }
        let full_text = format!("{head}{} WHERE {body}{tail}", self.from);
        let mut text = full_text.clone();
        let sliceable = !self.multiset_paths_used && enabled(Feature::LimitOffset);
        let limit = (sliceable && self.chance(0.3)).then(|| self.below(6));
        let offset = if sliceable && self.chance(0.15) {
            1 + self.below(3)
        } else {
            0
        };
        if let Some(l) = limit {
            write!(text, " LIMIT {l}").unwrap();
        }
        if offset > 0 {
            write!(text, " OFFSET {offset}").unwrap();
        }
        GenQuery {
            text,
            full_text,
            order,
            limit,
            offset,
            sample_vars,
            concat_vars,
            term_vars,
            approx_vars: std::mem::take(&mut self.approx_vars),
            set_semantics: self.multiset_paths_used,
        }
    }
}

/// A random query that spargebra parses (generation can break scoping rules,
/// e.g. BIND of a variable already in scope; such queries are drawn again).
fn generate_query(seed: u64, terms: &DataTerms) -> GenQuery {
    let mut rng = StdRng::seed_from_u64(seed);
    loop {
        let mut q = QueryGen::new(&mut rng, terms).query();
        q.text = format!("{PREFIXES}{}", q.text);
        q.full_text = format!("{PREFIXES}{}", q.full_text);
        if SparqlParser::new().parse_query(&q.text).is_ok() {
            return q;
        }
    }
}

// ---------------------------------------------------------------------------
// Running and comparing

type Row = Vec<Option<Term>>;

enum Answer {
    /// CONSTRUCT: the triples as rows of three terms, without repeats.
    Graph(Vec<Row>),
    Solutions {
        variables: Vec<String>,
        rows: Vec<Row>,
    },
    Boolean(bool),
}

/// The reference's answer; `Ok(None)` when it is too large or too slow to
/// compare (over `max_rows` rows or [`REFERENCE_TIMEOUT`]).
fn reference(dataset: &Dataset, text: &str, max_rows: usize) -> Result<Option<Answer>, String> {
    let query = SparqlParser::new()
        .parse_query(text)
        .map_err(|e| e.to_string())?;
    let token = CancellationToken::new();
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = {
        let token = token.clone();
        thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(REFERENCE_TIMEOUT) {
                token.cancel();
            }
        })
    };
    let evaluator = QueryEvaluator::new().with_cancellation_token(token.clone());
    // The reference's ORDER BY can panic on mixed kinds of terms ("does not
    // correctly implement a total order"): no answer to compare with then.
    let answer = catch_unwind(AssertUnwindSafe(|| {
        evaluate(&evaluator, &query, dataset, max_rows)
    }));
    drop(done);
    watchdog.join().unwrap();
    match answer {
        Err(_) => Ok(None),
        Ok(Err(_)) if token.is_cancelled() => Ok(None),
        Ok(answer) => answer,
    }
}

fn evaluate(
    evaluator: &QueryEvaluator,
    query: &spargebra::Query,
    dataset: &Dataset,
    max_rows: usize,
) -> Result<Option<Answer>, String> {
    match evaluator
        .prepare(query)
        .execute(dataset)
        .map_err(|e| e.to_string())?
    {
        QueryResults::Solutions(solutions) => {
            let variables: Vec<String> = solutions
                .variables()
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect();
            let mut rows = Vec::new();
            for s in solutions {
                let s = s.map_err(|e| e.to_string())?;
                rows.push(s.values().to_vec());
                if rows.len() > max_rows {
                    return Ok(None);
                }
            }
            Ok(Some(Answer::Solutions { variables, rows }))
        }
        QueryResults::Boolean(b) => Ok(Some(Answer::Boolean(b))),
        QueryResults::Graph(triples) => {
            let mut rows = Vec::new();
            for t in triples {
                let t = t.map_err(|e| e.to_string())?;
                rows.push(vec![
                    Some(Term::from(t.subject)),
                    Some(t.predicate.into()),
                    Some(t.object),
                ]);
                if rows.len() > max_rows {
                    return Ok(None);
                }
            }
            dedup(&mut rows);
            Ok(Some(Answer::Graph(rows)))
        }
    }
}

fn tern(engine: &Engine, text: &str, max_rows: usize) -> Result<Answer, String> {
    let run = || -> Result<Answer, String> {
        match engine.query(text, None).map_err(|e| e.to_string())? {
            QueryOutcome::Solutions { variables, rows } => {
                let variables = variables.iter().map(|v| v.as_str().to_owned()).collect();
                let mut out = Vec::new();
                for row in rows {
                    out.push(row.map_err(|e| e.to_string())?);
                    if out.len() > 10 * max_rows {
                        return Err("far more rows than the reference".to_owned());
                    }
                }
                Ok(Answer::Solutions {
                    variables,
                    rows: out,
                })
            }
            QueryOutcome::Boolean(b) => Ok(Answer::Boolean(b)),
            QueryOutcome::Graph(triples) => {
                let mut rows = Vec::new();
                for t in triples {
                    let t = t.map_err(|e| e.to_string())?;
                    rows.push(vec![
                        Some(Term::from(t.subject)),
                        Some(t.predicate.into()),
                        Some(t.object),
                    ]);
                }
                Ok(Answer::Graph(rows))
            }
        }
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(panic) => Err(format!(
            "panic: {}",
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default()
        )),
    }
}

/// Drops repeated rows (keeping the first).
fn dedup(rows: &mut Vec<Row>) {
    let mut seen = HashSet::new();
    rows.retain(|r| seen.insert(r.clone()));
}

fn bnode(t: &Option<Term>) -> Option<&BlankNode> {
    match t {
        Some(Term::BlankNode(b)) => Some(b),
        _ => None,
    }
}

fn counts(rows: &[Row]) -> HashMap<&Row, usize> {
    let mut map = HashMap::new();
    for r in rows {
        *map.entry(r).or_insert(0) += 1;
    }
    map
}

/// All blank nodes replaced by one placeholder.
fn without_bnodes(rows: &[Row]) -> Vec<Row> {
    let placeholder = Term::BlankNode(BlankNode::new_unchecked("_"));
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::BlankNode(_)) => Some(placeholder.clone()),
                    t => t.clone(),
                })
                .collect()
        })
        .collect()
}

fn distinct_bnodes(rows: &[Row]) -> Vec<BlankNode> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for r in rows {
        for t in r {
            if let Some(b) = bnode(t) {
                if seen.insert(b.clone()) {
                    out.push(b.clone());
                }
            }
        }
    }
    out
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Equal multisets of rows up to a bijection between blank nodes (exact for up
/// to six blank nodes, beyond that blank nodes are compared as one).
fn same_multiset(expected: &[Row], actual: &[Row]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let e_blanks = distinct_bnodes(expected);
    let a_blanks = distinct_bnodes(actual);
    if e_blanks.len() != a_blanks.len() {
        return false;
    }
    if e_blanks.is_empty() {
        return counts(expected) == counts(actual);
    }
    if e_blanks.len() > 6 {
        return counts(&without_bnodes(expected)) == counts(&without_bnodes(actual));
    }
    let want = counts(expected);
    permutations(a_blanks.len()).into_iter().any(|perm| {
        let map: HashMap<&BlankNode, &BlankNode> = a_blanks
            .iter()
            .enumerate()
            .map(|(i, b)| (b, &e_blanks[perm[i]]))
            .collect();
        let mapped: Vec<Row> = actual
            .iter()
            .map(|r| {
                r.iter()
                    .map(|t| match bnode(t) {
                        Some(b) => Some(Term::BlankNode(map[b].clone())),
                        None => t.clone(),
                    })
                    .collect()
            })
            .collect();
        counts(&mapped) == want
    })
}

/// Every row of `part` is in `whole` (as multisets, blank nodes as one).
fn sub_multiset(part: &[Row], whole: &[Row]) -> bool {
    let whole = without_bnodes(whole);
    let mut available = counts(&whole);
    for r in without_bnodes(part) {
        match available.get_mut(&r) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return false,
        }
    }
    true
}

fn numeric_value(l: &Literal) -> Option<f64> {
    let ty = l.datatype().as_str().strip_prefix(XSD)?;
    match ty {
        "integer" | "decimal" | "double" | "float" | "int" | "long" | "short" | "byte"
        | "nonNegativeInteger" | "positiveInteger" | "negativeInteger" | "nonPositiveInteger"
        | "unsignedLong" | "unsignedInt" | "unsignedShort" | "unsignedByte" => {
            let v = l.value();
            match v {
                "INF" => Some(f64::INFINITY),
                "-INF" => Some(f64::NEG_INFINITY),
                _ => v.parse::<f64>().ok().filter(|x| !x.is_nan()),
            }
        }
        _ => None,
    }
}

/// The SPARQL ORDER BY order where SPARQL defines it; `None` where it leaves
/// the order to the implementation.
fn order_cmp(a: &Option<Term>, b: &Option<Term>) -> Option<Ordering> {
    fn class(t: &Option<Term>) -> u8 {
        match t {
            None => 0,
            Some(Term::BlankNode(_)) => 1,
            Some(Term::NamedNode(_)) => 2,
            Some(_) => 3,
        }
    }
    let (ca, cb) = (class(a), class(b));
    if ca != cb {
        return Some(ca.cmp(&cb));
    }
    match (a, b) {
        (None, None) => Some(Ordering::Equal),
        (Some(Term::NamedNode(x)), Some(Term::NamedNode(y))) => Some(x.as_str().cmp(y.as_str())),
        (Some(Term::Literal(x)), Some(Term::Literal(y))) => {
            if let (Some(p), Some(q)) = (numeric_value(x), numeric_value(y)) {
                return p.partial_cmp(&q);
            }
            let plain = |l: &Literal| l.datatype().as_str() == format!("{XSD}string");
            if plain(x) && plain(y) {
                return Some(x.value().cmp(y.value()));
            }
            if x == y {
                return Some(Ordering::Equal);
            }
            None
        }
        _ => None,
    }
}

/// How row `a` compares with row `b` on the checkable keys (column, desc):
/// `None` if undefined before a difference shows.
fn rows_cmp(a: &Row, b: &Row, keys: &[(usize, bool)]) -> Option<Ordering> {
    for &(col, desc) in keys {
        let c = order_cmp(&a[col], &b[col])?;
        let c = if desc { c.reverse() } else { c };
        if c != Ordering::Equal {
            return Some(c);
        }
    }
    Some(Ordering::Equal)
}

/// A number in canonical form, with derived integer types as xsd:integer.
fn canonical_number(l: &Literal) -> Option<Literal> {
    let ty = l.datatype().as_str().strip_prefix(XSD)?;
    let (value, ty) = match ty {
        "decimal" => (Decimal::from_str(l.value()).ok()?.to_string(), "decimal"),
        "double" => (Double::from_str(l.value()).ok()?.to_string(), "double"),
        "float" => (Float::from_str(l.value()).ok()?.to_string(), "float"),
        _ if numeric_value(l).is_some() => {
            (Integer::from_str(l.value()).ok()?.to_string(), "integer")
        }
        _ => return None,
    };
    Some(Literal::new_typed_literal(
        value,
        NamedNode::new_unchecked(format!("{XSD}{ty}")),
    ))
}

/// GROUP_CONCAT values as their sorted pieces, SAMPLE values as bound/unbound,
/// numbers from MIN/MAX in canonical form.
fn normalize(rows: &mut [Row], variables: &[String], q: &GenQuery) {
    for (col, var) in variables.iter().enumerate() {
        let sample = q.sample_vars.contains(var);
        let concat = q.concat_vars.contains(var);
        let term = q.term_vars.contains(var);
        let approx = q.approx_vars.contains(var);
        for row in rows.iter_mut() {
            let Some(value) = &row[col] else { continue };
            let normalized: Term = match value {
                _ if sample => Literal::new_simple_literal("(sampled)").into(),
                Term::Literal(l) if concat => {
                    let mut pieces: Vec<&str> = l.value().split('|').collect();
                    pieces.sort_unstable();
                    let value = pieces.join("|");
                    match l.language() {
                        Some(lang) => Literal::new_language_tagged_literal_unchecked(value, lang),
                        None => Literal::new_typed_literal(value, l.datatype().into_owned()),
                    }
                    .into()
                }
                Term::Literal(l) if term => match canonical_number(l) {
                    Some(c) => c.into(),
                    None => continue,
                },
                Term::Literal(l)
                    if approx
                        && matches!(
                            l.datatype().as_str().strip_prefix(XSD),
                            Some("double" | "float")
                        ) =>
                {
                    match l.value().parse::<f64>() {
                        Ok(x) => Literal::new_typed_literal(
                            format!("{x:.8e}"),
                            l.datatype().into_owned(),
                        )
                        .into(),
                        Err(_) => continue,
                    }
                }
                _ => continue,
            };
            row[col] = Some(normalized);
        }
    }
}

fn show_rows(variables: &[String], rows: &[Row]) -> String {
    let mut out = format!("  {}\n", variables.join("\t"));
    for r in rows.iter().take(40) {
        let cells: Vec<String> = r
            .iter()
            .map(|t| t.as_ref().map_or("-".to_owned(), ToString::to_string))
            .collect();
        writeln!(out, "  {}", cells.join("\t")).unwrap();
    }
    if rows.len() > 40 {
        writeln!(out, "  ... {} rows", rows.len()).unwrap();
    }
    out
}

/// The rows only one side has (blank nodes as one), for long results.
fn show_difference(variables: &[String], expected: &[Row], actual: &[Row]) -> String {
    if expected.len() <= 40 && actual.len() <= 40 {
        return String::new();
    }
    let (expected, actual) = (without_bnodes(expected), without_bnodes(actual));
    let mut e = counts(&expected);
    let mut only_actual = Vec::new();
    for r in &actual {
        match e.get_mut(r) {
            Some(n) if *n > 0 => *n -= 1,
            _ => only_actual.push(r.clone()),
        }
    }
    let only_expected: Vec<Row> = e
        .into_iter()
        .flat_map(|(r, n)| std::iter::repeat_n(r.clone(), n))
        .collect();
    format!(
        "only expected ({}):\n{}only Tern's ({}):\n{}",
        only_expected.len(),
        show_rows(variables, &only_expected),
        only_actual.len(),
        show_rows(variables, &only_actual)
    )
}

enum Verdict {
    Agree,
    /// The reference could not give a comparable answer (too many rows).
    Skipped,
    Differ(String),
}

fn compare(dataset: &Dataset, engine: &Engine, q: &GenQuery, max_rows: usize) -> Verdict {
    let expected = match reference(dataset, &q.full_text, max_rows) {
        Ok(Some(a)) => a,
        Ok(None) => return Verdict::Skipped,
        Err(e) => {
            // The reference rejects the query; Tern should reject it too.
            return match tern(engine, &q.text, max_rows) {
                Err(_) => Verdict::Agree,
                Ok(_) => Verdict::Differ(format!("reference error {e}, Tern answered")),
            };
        }
    };
    let actual = match tern(engine, &q.text, max_rows) {
        Ok(a) => a,
        Err(e) => return Verdict::Differ(format!("Tern error: {e}")),
    };
    match (expected, actual) {
        (Answer::Graph(e), Answer::Graph(a)) => {
            if same_multiset(&e, &a) {
                Verdict::Agree
            } else {
                let vars = ["s".to_owned(), "p".to_owned(), "o".to_owned()];
                Verdict::Differ(format!(
                    "different graphs\nexpected ({} triples):\n{}Tern ({} triples):\n{}",
                    e.len(),
                    show_rows(&vars, &e),
                    a.len(),
                    show_rows(&vars, &a)
                ))
            }
        }
        (Answer::Boolean(e), Answer::Boolean(a)) => {
            if e == a {
                Verdict::Agree
            } else {
                Verdict::Differ(format!("expected {e}, Tern says {a}"))
            }
        }
        (
            Answer::Solutions {
                variables: e_vars,
                rows: mut e_rows,
            },
            Answer::Solutions {
                variables: a_vars,
                rows: a_rows,
            },
        ) => {
            let e_set: HashSet<&String> = e_vars.iter().collect();
            let a_set: HashSet<&String> = a_vars.iter().collect();
            if e_set != a_set || a_vars.len() != e_vars.len() {
                return Verdict::Differ(format!(
                    "variables differ: expected {e_vars:?}, Tern {a_vars:?}"
                ));
            }
            // Tern's columns in the reference's order.
            let perm: Vec<usize> = e_vars
                .iter()
                .map(|v| a_vars.iter().position(|a| a == v).unwrap())
                .collect();
            let mut a_rows: Vec<Row> = a_rows
                .into_iter()
                .map(|r| perm.iter().map(|&i| r[i].clone()).collect())
                .collect();
            normalize(&mut e_rows, &e_vars, q);
            normalize(&mut a_rows, &e_vars, q);
            if q.set_semantics {
                dedup(&mut e_rows);
                dedup(&mut a_rows);
            }
            let differ = |what: &str| {
                Verdict::Differ(format!(
                    "{what}\nexpected (without LIMIT/OFFSET, {} rows):\n{}Tern ({} rows):\n{}{}",
                    e_rows.len(),
                    show_rows(&e_vars, &e_rows),
                    a_rows.len(),
                    show_rows(&e_vars, &a_rows),
                    show_difference(&e_vars, &e_rows, &a_rows)
                ))
            };
            // Keys checkable from the output: a prefix of plain projected variables.
            let mut keys: Vec<(usize, bool)> = Vec::new();
            for (var, desc) in &q.order {
                match var
                    .as_ref()
                    .and_then(|v| e_vars.iter().position(|e| e == v))
                {
                    Some(col) => keys.push((col, *desc)),
                    None => break,
                }
            }
            if !keys.is_empty() {
                for w in a_rows.windows(2) {
                    if rows_cmp(&w[0], &w[1], &keys) == Some(Ordering::Greater) {
                        return differ("Tern's rows are not in ORDER BY order");
                    }
                }
            }
            let sliced = q.limit.is_some() || q.offset > 0;
            if !sliced {
                return if same_multiset(&e_rows, &a_rows) {
                    Verdict::Agree
                } else {
                    differ("different solutions")
                };
            }
            let start = q.offset.min(e_rows.len());
            let end = q
                .limit
                .map_or(e_rows.len(), |l| (start + l).min(e_rows.len()));
            let strict = !q.order.is_empty()
                && keys.len() == q.order.len()
                && e_rows
                    .windows(2)
                    .all(|w| rows_cmp(&w[0], &w[1], &keys) == Some(Ordering::Less));
            if strict {
                let window = &e_rows[start..end];
                let same = window.len() == a_rows.len()
                    && same_multiset(window, &a_rows)
                    && window.iter().zip(&a_rows).all(|(e, a)| {
                        without_bnodes(std::slice::from_ref(e))
                            == without_bnodes(std::slice::from_ref(a))
                    });
                return if same {
                    Verdict::Agree
                } else {
                    differ("different rows in a fully ordered LIMIT/OFFSET window")
                };
            }
            if a_rows.len() != end - start {
                return differ(&format!(
                    "expected {} rows after LIMIT/OFFSET, Tern gave {}",
                    end - start,
                    a_rows.len()
                ));
            }
            if !sub_multiset(&a_rows, &e_rows) {
                return differ("Tern's LIMIT/OFFSET rows are not all in the full result");
            }
            Verdict::Agree
        }
        _ => Verdict::Differ("different result kinds".to_owned()),
    }
}

/// The case seeds to run: (dataset seed, query seeds).
fn plan(scale: &Scale) -> Vec<(u64, Vec<u64>)> {
    let queries = |d: u64| -> Vec<u64> {
        (0..scale.queries_per_dataset)
            .map(|i| d * 1000 + i)
            .collect::<Vec<_>>()
    };
    if let Ok(seed) = std::env::var("TERN_DIFF_SEED") {
        let mut parts = seed.split(':');
        let d: u64 = parts.next().unwrap().trim().parse().expect("dataset seed");
        return match parts.next() {
            Some(q) => vec![(d, vec![q.trim().parse().expect("query seed")])],
            None => vec![(d, queries(d))],
        };
    }
    let n = std::env::var("TERN_DIFF_DATASETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(scale.datasets);
    (1..=n).map(|d| (d, queries(d))).collect()
}

/// Runs the cases of `scale`; panics with the differences found.
fn run(scale: &Scale) {
    let mut agreed = 0;
    let mut skipped = 0;
    let mut failures: Vec<String> = Vec::new();
    for (data_seed, query_seeds) in plan(scale) {
        let data = Data::generate(&mut StdRng::seed_from_u64(data_seed), scale);
        let dataset = data.dataset();
        let terms = DataTerms::of(&data);
        let tmp = tempfile::tempdir().unwrap();
        // Small data rarely makes OPTIONAL per left row the cheaper plan:
        // every other dataset has it wherever it is exact.
        let optional_joins = if data_seed % 2 == 1 {
            OptionalJoins::PerRow
        } else {
            OptionalJoins::ByCost
        };
        let engine = data.engine(tmp.path(), optional_joins);
        for query_seed in query_seeds {
            let q = generate_query(query_seed, &terms);
            if std::env::var_os("TERN_DIFF_VERBOSE").is_some() {
                eprintln!("TERN_DIFF_SEED={data_seed}:{query_seed}\n{}", q.text);
            }
            match compare(&dataset, &engine, &q, scale.max_rows) {
                Verdict::Agree => agreed += 1,
                Verdict::Skipped => skipped += 1,
                Verdict::Differ(why) => {
                    let data = if data.quads.len() <= 100
                        || std::env::var_os("TERN_DIFF_VERBOSE").is_some()
                    {
                        data.nquads()
                    } else {
                        format!(
                            "({} quads: the {} scale's dataset {data_seed})\n",
                            data.quads.len(),
                            scale.name
                        )
                    };
                    failures.push(format!(
                        "=== TERN_DIFF_SEED={data_seed}:{query_seed} ({} scale, OPTIONAL {optional_joins:?})\n--- data:\n{data}--- query:\n{}\n--- {why}\n",
                        scale.name, q.text
                    ))
                }
            }
        }
    }
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    eprintln!(
        "differential ({}): {agreed} agreed, {skipped} skipped (reference result over {} rows), {} differed",
        scale.name,
        scale.max_rows,
        failures.len()
    );
    assert!(
        agreed >= 4 * skipped,
        "too many skipped cases: {skipped} skipped, {agreed} agreed"
    );
    assert!(failures.is_empty(), "{} cases differ", failures.len());
}

#[test]
fn small_datasets_agree_with_reference_evaluator() {
    run(&SMALL);
}

#[test]
fn multi_batch_results_agree_with_reference_evaluator() {
    run(&LARGE);
}

/// The comparison itself catches differences: a wrong answer is rejected.
#[test]
fn comparison_rejects_wrong_answers() {
    let b = |s: &str| Some(Term::BlankNode(BlankNode::new_unchecked(s)));
    let i = |s: &str| Some(Term::NamedNode(ex(s)));
    let e = vec![
        vec![b("b0"), i("a")],
        vec![b("b1"), i("a")],
        vec![b("b0"), i("c")],
    ];
    let renamed = vec![
        vec![b("x1"), i("a")],
        vec![b("x0"), i("c")],
        vec![b("x0"), i("a")],
    ];
    let swapped = vec![
        vec![b("x1"), i("a")],
        vec![b("x1"), i("c")],
        vec![b("x0"), i("a")],
    ];
    assert!(same_multiset(&e, &renamed));
    assert!(same_multiset(&e, &swapped), "b0/b1 swap is a renaming");
    let wrong = vec![
        vec![b("x1"), i("c")],
        vec![b("x0"), i("c")],
        vec![b("x0"), i("a")],
    ];
    assert!(!same_multiset(&e, &wrong));
    assert!(!same_multiset(&e, &e[..2]));
    assert!(sub_multiset(&e[..2], &e));
    assert!(!sub_multiset(&[vec![None, i("a")]], &e));
    let n = |v: &str, ty: &str| {
        Some(Term::Literal(Literal::new_typed_literal(
            v,
            NamedNode::new_unchecked(format!("{XSD}{ty}")),
        )))
    };
    assert_eq!(
        order_cmp(&n("2", "integer"), &n("10", "integer")),
        Some(Ordering::Less)
    );
    assert_eq!(
        order_cmp(&n("1.5", "decimal"), &n("1", "integer")),
        Some(Ordering::Greater)
    );
    assert_eq!(order_cmp(&None, &i("a")), Some(Ordering::Less));
    assert_eq!(order_cmp(&n("1", "integer"), &n("a", "string")), None);
}
