//! Join ordering for basic graph patterns, by estimated cost.
//!
//! Every triple pattern comes with its exact row count (from the index's
//! prefix counts) and, per variable, an estimate of its distinct values
//! (from the predicate statistics). The size of a join is estimated as
//! `|L| · |R|` divided by the shared variables' distinct counts, the largest
//! whole and each further one less (see `join_rows`).
//! Where the planner measured a join of two patterns on a sample (see
//! `join_sample`), the measurement corrects the joins of the larger pattern
//! with any plan holding the smaller: the statistics assume the smaller
//! side's values all occur in the larger (BSBM's "producers in Austria":
//! 747 subjects with that country, 32 of them producers; estimated as 747
//! producers), and that the larger's rows spread evenly over its values.
//! Small patterns are ordered by dynamic programming over all subsets (bushy
//! trees, both hash joins and index nested-loop joins considered); large ones
//! greedily.
//!
//! Planning runs for every query, and for point queries it costs more than
//! executing them, so the search works on variables numbered as bits and
//! remembers for each subset only how it was split; trees are built once,
//! for the winner.

use crate::exec::LOOKUP_CACHE_ROWS;
use oxrdf::Variable;
use std::sync::LazyLock;
use tern_index::memo::Memo;

/// What the planner knows about one triple pattern.
#[derive(Debug, Clone)]
pub struct PatternEstimate {
    pub rows: f64,
    /// Each variable of the pattern with its estimated distinct values.
    pub variables: Vec<(Variable, f64)>,
    /// The variable the pattern's scan is sorted on, if any.
    pub sorted_on: Option<Variable>,
    /// What one lookup of it costs, in lookups of one triple pattern (a
    /// union of patterns looks each up).
    pub lookup_cost: f64,
}

/// The rows of the join of two patterns on one shared variable, measured on
/// a sample of the smaller one's values: `samples` values, `hits` of them
/// found in the larger pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledJoin {
    pub small: usize,
    pub large: usize,
    pub variable: Variable,
    pub rows: f64,
    pub hits: usize,
    pub samples: usize,
}

impl SampledJoin {
    /// The join's rows to plan with. A sample in which no value matched
    /// says only that matches are rare, not that there are none (BSBM 10M:
    /// 113 vendors among 6,080 subjects with one country, 2,046 offers
    /// each: 32 draws often find none, and the join has 231,198 rows). Then
    /// half a hit is assumed, with the larger pattern's mean rows per value.
    fn rows(&self, small: &Estimate, large: &Estimate, variable: usize) -> f64 {
        if self.hits > 0 {
            return self.rows;
        }
        let per_value = large.rows / large.distinct[variable].max(1.0);
        small.rows * 0.5 / self.samples.max(1) as f64 * per_value
    }
}

/// A join tree over pattern indexes.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinTree {
    Scan(usize),
    /// Hash join; the smaller side is built.
    Hash(Box<JoinTree>, Box<JoinTree>),
    /// For each row of the left side, look the pattern up in the index with
    /// the shared variables bound.
    Index(Box<JoinTree>, usize),
    /// Both sides sorted on the variable.
    Merge(Box<JoinTree>, Box<JoinTree>, Variable),
}

/// Relative cost of one index lookup against handling one row.
const LOOKUP_COST: f64 = 8.0;
/// Up to this many patterns are ordered by dynamic programming (3^n steps).
const DP_LIMIT: usize = 10;

/// A set of variables, by number.
type VarSet = u128;
/// A set of patterns, by number (corrections apply up to 128 patterns).
type LeafSet = u128;
/// Most variables a BGP may have to be ordered by cost; beyond, its
/// patterns are joined in the order written.
const MAX_VARIABLES: usize = VarSet::BITS as usize;

/// Estimates of a (sub)plan, its variables numbered.
#[derive(Debug, Clone)]
struct Estimate {
    rows: f64,
    cost: f64,
    vars: VarSet,
    /// Distinct values per variable number (meaningful for those in `vars`).
    distinct: Vec<f64>,
    /// The variable number the output is sorted on, if any.
    sorted: Option<usize>,
    /// What a lookup of it costs, in pattern lookups (leaves only).
    lookup_cost: f64,
}

/// How the best plan of a subset of patterns (bits) joins its halves.
#[derive(Debug, Clone, Copy)]
enum Split {
    Leaf(usize),
    Hash(usize, usize),
    Merge(usize, usize, usize),
    Index(usize, usize),
}

/// How much a measured join differs from its estimate: its rows are
/// multiplied by `factor` where one side is the `large` pattern alone and
/// the other holds the `small` one. Not where the large pattern was joined
/// with others first: what the sample saw of its rows (rdf:type's rows are
/// mostly of classes other than the sampled product types) need not hold
/// for the rows left after those joins (the types of products only).
#[derive(Debug, Clone, Copy)]
struct Correction {
    small: usize,
    large: usize,
    factor: f64,
}

/// What the search works on: the patterns' estimates and the corrections.
struct Leaves {
    leaves: Vec<Estimate>,
    corrections: Vec<Correction>,
}

impl Leaves {
    fn new(leaves: Vec<Estimate>, names: &[Variable], sampled: &[SampledJoin]) -> Leaves {
        let corrections = sampled
            .iter()
            .filter(|s| s.small.max(s.large) < LeafSet::BITS as usize)
            .filter_map(|s| {
                let variable = names.iter().position(|n| *n == s.variable)?;
                let (small, large) = (&leaves[s.small], &leaves[s.large]);
                let estimated = join_rows(small, large, 1.0);
                let measured = s.rows(small, large, variable).max(1.0);
                Some(Correction {
                    small: s.small,
                    large: s.large,
                    factor: measured / estimated.max(1.0),
                })
            })
            .collect();
        Leaves {
            leaves,
            corrections,
        }
    }

    /// The factor for a join of the plans of `a` and `b` (sets of
    /// patterns): the smallest of the corrections that apply (the most
    /// selective thing known), 1 when none does.
    fn factor(&self, a: LeafSet, b: LeafSet) -> f64 {
        let applies = |c: &&Correction| {
            let (small, large) = (1 << c.small, 1 << c.large);
            (b == large && a & small != 0) || (a == large && b & small != 0)
        };
        self.corrections
            .iter()
            .filter(applies)
            .map(|c| c.factor)
            .reduce(f64::min)
            .unwrap_or(1.0)
    }
}

/// The patterns with their variables numbered; `None` when there are too
/// many variables.
fn numbered(patterns: &[PatternEstimate]) -> Option<(Vec<Variable>, Vec<Estimate>)> {
    let mut names: Vec<Variable> = Vec::new();
    let mut number = |v: &Variable| match names.iter().position(|n| n == v) {
        Some(i) => i,
        None => {
            names.push(v.clone());
            names.len() - 1
        }
    };
    let numbered: Vec<Vec<(usize, f64)>> = patterns
        .iter()
        .map(|p| p.variables.iter().map(|(v, d)| (number(v), *d)).collect())
        .collect();
    let sorted: Vec<Option<usize>> = patterns
        .iter()
        .map(|p| p.sorted_on.as_ref().map(&mut number))
        .collect();
    if names.len() > MAX_VARIABLES {
        return None;
    }
    let leaves = patterns
        .iter()
        .zip(numbered)
        .zip(sorted)
        .map(|((p, vars), sorted)| {
            let mut distinct = vec![0.0; names.len()];
            let mut set: VarSet = 0;
            for (v, d) in vars {
                distinct[v] = d;
                set |= 1 << v;
            }
            Estimate {
                rows: p.rows,
                cost: p.rows,
                vars: set,
                distinct,
                sorted,
                lookup_cost: p.lookup_cost,
            }
        })
        .collect();
    Some((names, leaves))
}

fn bits(set: VarSet) -> impl Iterator<Item = usize> {
    let mut rest = set;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let v = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            v
        })
    })
}

/// Estimated rows of joining `a` and `b`.
///
/// Each shared variable divides the product by its larger distinct count.
/// Independent variables would multiply their divisors, but variables of
/// one pattern are often correlated, so each further divisor counts less:
/// the largest whole, the next by its square root, the third by its fourth
/// root (and further ones not at all). With only the largest, a join that
/// closes a cycle (a triangle's last edge, two bound variables) looked
/// thousands of times larger than it is, and the planner kept cycles for
/// last.
fn join_rows(a: &Estimate, b: &Estimate, factor: f64) -> f64 {
    // Planning runs this for every pair of subplans, and for point queries
    // planning costs more than running: no allocation and no powers.
    let shared = |v: usize| a.distinct[v].max(b.distinct[v]).max(1.0);
    let mut largest = [1.0f64; 3];
    for v in bits(a.vars & b.vars) {
        let d = shared(v);
        if d > largest[2] {
            largest[2] = d;
            largest.sort_unstable_by(|x, y| y.total_cmp(x));
        }
    }
    let divisor = largest[0] * largest[1].sqrt() * largest[2].sqrt().sqrt();
    let floor = if a.rows > 0.0 && b.rows > 0.0 {
        1.0
    } else {
        0.0
    };
    (a.rows * b.rows / divisor * factor).max(floor)
}

/// The estimates of a join of `a` and `b` with `rows` rows; a measured
/// `factor` below 1 leaves that share of the shared variables' values.
fn joined(
    a: &Estimate,
    b: &Estimate,
    (rows, factor): (f64, f64),
    cost: f64,
    sorted: Option<usize>,
) -> Estimate {
    let vars = a.vars | b.vars;
    let mut distinct = vec![0.0; a.distinct.len()];
    for v in bits(vars) {
        let d = match (a.vars >> v & 1 == 1, b.vars >> v & 1 == 1) {
            (true, true) => a.distinct[v].min(b.distinct[v]) * factor.min(1.0),
            (true, false) => a.distinct[v],
            _ => b.distinct[v],
        };
        distinct[v] = d.min(rows.max(1.0));
    }
    Estimate {
        rows,
        cost,
        vars,
        distinct,
        sorted,
        lookup_cost: 1.0,
    }
}

/// The cheapest way to join `a` and `b` that share a variable: hash, merge
/// (both sorted on the same variable) or index (`b` one pattern, `b_leaf`).
/// Returns the split kind as a closure of the halves, its cost, its rows and
/// its sort variable; nothing is allocated.
fn best_join(
    a: &Estimate,
    b: &Estimate,
    b_leaf: Option<usize>,
    factor: f64,
) -> Option<(JoinKind, f64, f64, Option<usize>)> {
    if a.vars & b.vars == 0 {
        return None;
    }
    let rows = join_rows(a, b, factor);
    // Building the table costs about as much again as reading its side.
    let hash_cost = a.cost + b.cost + a.rows + b.rows + a.rows.min(b.rows) + rows;
    // The larger side is probed, and its order kept.
    let probe_sorted = if a.rows >= b.rows { a.sorted } else { b.sorted };
    let mut best = (JoinKind::Hash, hash_cost, rows, probe_sorted);
    if let (Some(x), Some(y)) = (a.sorted, b.sorted) {
        let merge_cost = a.cost + b.cost + a.rows + b.rows + rows;
        if x == y && merge_cost < best.1 {
            best = (JoinKind::Merge(x), merge_cost, rows, Some(x));
        }
    }
    if let Some(i) = b_leaf {
        // The join's lookup cache answers repeated keys (19,575 articles
        // in 65 journals look up 65 titles): each distinct key is looked
        // up, each row probes the cache. The cache holds a bounded number
        // of pattern rows, though: when the keys' rows do not fit, it starts
        // over and keys come back (citation triangles: 200K citations).
        let (mut keys, mut keys_in_b) = (1.0f64, 1.0f64);
        for v in bits(a.vars & b.vars) {
            keys *= a.distinct[v].max(1.0);
            keys_in_b *= b.distinct[v].max(1.0);
        }
        let keys = keys.min(a.rows);
        let rows_per_key = b.rows / keys_in_b.min(b.rows).max(1.0);
        let lookups = match keys * rows_per_key <= LOOKUP_CACHE_ROWS as f64 {
            true => keys,
            false => a.rows,
        };
        let index_cost = a.cost + a.rows + lookups * LOOKUP_COST * b.lookup_cost + rows;
        if index_cost < best.1 {
            best = (JoinKind::Index(i), index_cost, rows, a.sorted);
        }
    }
    Some(best)
}

#[derive(Debug, Clone, Copy)]
enum JoinKind {
    Hash,
    Merge(usize),
    Index(usize),
}

/// A cross product (or a join the search did not choose): a hash join.
fn cross(a: &Estimate, b: &Estimate, factor: f64) -> Estimate {
    let rows = join_rows(a, b, factor);
    joined(
        a,
        b,
        (rows, factor),
        a.cost + b.cost + a.rows + b.rows + rows,
        None,
    )
}

/// Estimated rows of the join trees over one set of patterns: numbers the
/// variables once for all the nodes of a plan.
pub struct Estimator {
    leaves: Result<Leaves, f64>,
}

impl Estimator {
    pub fn new(patterns: &[PatternEstimate], sampled: &[SampledJoin]) -> Estimator {
        Estimator {
            leaves: numbered(patterns)
                .map(|(names, leaves)| Leaves::new(leaves, &names, sampled))
                .ok_or_else(|| patterns.iter().map(|p| p.rows).fold(0.0, f64::max)),
        }
    }

    pub fn rows(&self, tree: &JoinTree) -> f64 {
        match &self.leaves {
            Ok(leaves) => estimate_of(tree, leaves).0.rows,
            Err(largest) => *largest,
        }
    }
}

/// A tree's estimate and the patterns it holds.
fn estimate_of(tree: &JoinTree, leaves: &Leaves) -> (Estimate, LeafSet) {
    let bit = |i: usize| if i < 128 { 1 << i } else { 0 };
    let join = |(a, a_set): (Estimate, LeafSet), (b, b_set): (Estimate, LeafSet)| {
        (cross(&a, &b, leaves.factor(a_set, b_set)), a_set | b_set)
    };
    match tree {
        JoinTree::Scan(i) => (leaves.leaves[*i].clone(), bit(*i)),
        JoinTree::Hash(a, b) | JoinTree::Merge(a, b, _) => {
            join(estimate_of(a, leaves), estimate_of(b, leaves))
        }
        JoinTree::Index(a, i) => join(estimate_of(a, leaves), (leaves.leaves[*i].clone(), bit(*i))),
    }
}

/// Join trees ordered lately, by their input: the search is a function of
/// the estimates alone, and the same query planned again (a suspended query
/// resumed page after page, a dashboard's query) finds the same estimates.
/// For a star of nine patterns the search is half of the query's planning.
static MEMO: LazyLock<Memo<Vec<u8>, JoinTree>> = LazyLock::new(|| Memo::new(MEMO_ENTRIES));

/// Trees remembered at most.
const MEMO_ENTRIES: usize = 4096;

/// The memo's key: every input of the search, exactly (float bits).
fn memo_key(patterns: &[PatternEstimate], sampled: &[SampledJoin]) -> Vec<u8> {
    let mut key = Vec::with_capacity(patterns.len() * 64);
    for p in patterns {
        key.extend_from_slice(&p.rows.to_bits().to_le_bytes());
        for (v, d) in &p.variables {
            key.extend_from_slice(v.as_str().as_bytes());
            key.push(0);
            key.extend_from_slice(&d.to_bits().to_le_bytes());
        }
        key.push(1);
        if let Some(v) = &p.sorted_on {
            key.extend_from_slice(v.as_str().as_bytes());
        }
        key.push(2);
        key.extend_from_slice(&p.lookup_cost.to_bits().to_le_bytes());
    }
    for s in sampled {
        key.extend_from_slice(&(s.small as u32).to_le_bytes());
        key.extend_from_slice(&(s.large as u32).to_le_bytes());
        key.extend_from_slice(s.variable.as_str().as_bytes());
        key.push(0);
        key.extend_from_slice(&s.rows.to_bits().to_le_bytes());
        key.extend_from_slice(&(s.hits as u32).to_le_bytes());
        key.extend_from_slice(&(s.samples as u32).to_le_bytes());
    }
    key
}

/// The cheapest join tree found for the patterns (at least one).
pub fn order(patterns: &[PatternEstimate], sampled: &[SampledJoin]) -> JoinTree {
    let key = memo_key(patterns, sampled);
    if let Some(tree) = MEMO.get(&key) {
        return tree;
    }
    let tree = search(patterns, sampled);
    MEMO.insert(key, tree.clone());
    tree
}

fn search(patterns: &[PatternEstimate], sampled: &[SampledJoin]) -> JoinTree {
    assert!(!patterns.is_empty(), "a BGP to order has patterns");
    let Some((names, leaves)) = numbered(patterns) else {
        return as_written(patterns.len());
    };
    let leaves = Leaves::new(leaves, &names, sampled);
    if patterns.len() <= DP_LIMIT {
        dynamic(&leaves, &names).0
    } else {
        greedy(&leaves, &names).0
    }
}

/// A plan that gives its first rows at once, for a consumer that reads only
/// a few (ASK, a small LIMIT): from the smallest pattern, each next pattern
/// the one with the fewest rows among those sharing a variable with the
/// plan so far, looked up per row (index joins only: no hash table or merge
/// reads a large input whole before the first row). A pattern sharing no
/// variable comes last, by a cross product. If the consumer ends up reading
/// everything after all, the lookups cost up to `LOOKUP_COST` times a
/// row's handling each.
pub fn pipelined(patterns: &[PatternEstimate]) -> JoinTree {
    let mut left: Vec<usize> = (0..patterns.len()).collect();
    left.sort_by(|&a, &b| patterns[a].rows.total_cmp(&patterns[b].rows));
    let first = left.remove(0);
    let mut bound: Vec<&Variable> = patterns[first].variables.iter().map(|(v, _)| v).collect();
    let mut tree = JoinTree::Scan(first);
    while !left.is_empty() {
        let shares = |i: usize| {
            patterns[i]
                .variables
                .iter()
                .any(|(v, _)| bound.contains(&v))
        };
        let (at, joined) = match left.iter().position(|&i| shares(i)) {
            Some(at) => (at, true),
            None => (0, false),
        };
        let i = left.remove(at);
        tree = if joined {
            JoinTree::Index(Box::new(tree), i)
        } else {
            JoinTree::Hash(Box::new(tree), Box::new(JoinTree::Scan(i)))
        };
        bound.extend(patterns[i].variables.iter().map(|(v, _)| v));
    }
    tree
}

/// Patterns joined left to right.
fn as_written(patterns: usize) -> JoinTree {
    let mut tree = JoinTree::Scan(0);
    for i in 1..patterns {
        tree = JoinTree::Hash(Box::new(tree), Box::new(JoinTree::Scan(i)));
    }
    tree
}

fn dynamic(all: &Leaves, names: &[Variable]) -> (JoinTree, Estimate) {
    let leaves = &all.leaves;
    let n = leaves.len();
    let full = (1usize << n) - 1;
    let mut best: Vec<Option<(Estimate, Split)>> = vec![None; full + 1];
    for (i, leaf) in leaves.iter().enumerate() {
        best[1 << i] = Some((leaf.clone(), Split::Leaf(i)));
    }
    for set in 1..=full {
        if set.count_ones() < 2 {
            continue;
        }
        let mut chosen: Option<(usize, usize, JoinKind, f64, f64, Option<usize>)> = None;
        // Every split into two non-empty halves, each tried as the left side.
        let mut sub = (set - 1) & set;
        while sub > 0 {
            let rest = set & !sub;
            if let (Some((a, _)), Some((b, b_split))) = (&best[sub], &best[rest]) {
                let b_leaf = match b_split {
                    Split::Leaf(i) => Some(*i),
                    _ => None,
                };
                let factor = all.factor(sub as LeafSet, rest as LeafSet);
                if let Some((kind, cost, rows, sorted)) = best_join(a, b, b_leaf, factor) {
                    if chosen.as_ref().is_none_or(|c| cost < c.3) {
                        chosen = Some((sub, rest, kind, cost, rows, sorted));
                    }
                }
            }
            sub = (sub - 1) & set;
        }
        best[set] = chosen.map(|(a, b, kind, cost, rows, sorted)| {
            let (ea, eb) = (
                &best[a].as_ref().expect("planned").0,
                &best[b].as_ref().expect("planned").0,
            );
            let factor = all.factor(a as LeafSet, b as LeafSet);
            let estimate = joined(ea, eb, (rows, factor), cost, sorted);
            let split = match kind {
                JoinKind::Hash => Split::Hash(a, b),
                JoinKind::Merge(v) => Split::Merge(a, b, v),
                JoinKind::Index(i) => Split::Index(a, i),
            };
            (estimate, split)
        });
    }
    let tree_of = |set: usize| build(set, &best, names);
    if let Some((estimate, _)) = &best[full] {
        return (tree_of(full), estimate.clone());
    }
    // Not connected: join the connected components by cross products,
    // smallest first; those of at most one row go in front of the next
    // component's chain (see `seeded`).
    let mut components: Vec<usize> = Vec::new();
    let mut left = full;
    while left != 0 {
        let component = (1..=left)
            .rev()
            .filter(|s| s & left == *s && best[*s].is_some())
            .max_by_key(|s| s.count_ones())
            .expect("single patterns are always planned");
        components.push(component);
        left &= !component;
    }
    let rows = |s: &usize| best[*s].as_ref().expect("planned").0.rows;
    components.sort_by(|a, b| rows(a).total_cmp(&rows(b)));
    let mut tree = tree_of(components[0]);
    let mut estimate = best[components[0]].as_ref().expect("planned").0.clone();
    for &c in &components[1..] {
        tree = if estimate.rows <= 1.0 {
            seeded(tree_of(c), &tree)
        } else {
            JoinTree::Hash(Box::new(tree), Box::new(tree_of(c)))
        };
        estimate = cross(&estimate, &best[c].as_ref().expect("planned").0, 1.0);
    }
    (tree, estimate)
}

/// `tree` with `seed` (a plan of about one row) joined in as low as it
/// can go on its leftmost path: as the input of the index join of its first
/// pattern, or, above a merge join (whose inputs must stay sorted), by a
/// hash join. The seed's values are then bound while the rest of the chain
/// runs, so a filter comparing them with the chain's values applies as soon
/// as both are there, not after the last lookup (BSBM Q5 compares the
/// properties of the products sharing a feature with those of one product:
/// 10,563 rows looked up three times each, then filtered down to 97). The
/// cross product is the same wherever it is taken; the index join looks its
/// pattern up once per seed row.
fn seeded(tree: JoinTree, seed: &JoinTree) -> JoinTree {
    match tree {
        JoinTree::Scan(i) => JoinTree::Index(Box::new(seed.clone()), i),
        JoinTree::Index(left, i) => JoinTree::Index(Box::new(seeded(*left, seed)), i),
        JoinTree::Hash(left, right) => JoinTree::Hash(Box::new(seeded(*left, seed)), right),
        merge @ JoinTree::Merge(..) => JoinTree::Hash(Box::new(merge), Box::new(seed.clone())),
    }
}

/// The tree of the best plan of `set`.
fn build(set: usize, best: &[Option<(Estimate, Split)>], names: &[Variable]) -> JoinTree {
    let split = best[set].as_ref().expect("planned").1;
    let sub = |s: usize| Box::new(build(s, best, names));
    match split {
        Split::Leaf(i) => JoinTree::Scan(i),
        Split::Hash(a, b) => JoinTree::Hash(sub(a), sub(b)),
        Split::Merge(a, b, v) => JoinTree::Merge(sub(a), sub(b), names[v].clone()),
        Split::Index(a, i) => JoinTree::Index(sub(a), i),
    }
}

fn greedy(all: &Leaves, names: &[Variable]) -> (JoinTree, Estimate) {
    let leaves = &all.leaves;
    let bit = |i: usize| if i < 128 { 1 << i } else { 0 };
    let mut remaining: Vec<usize> = (0..leaves.len()).collect();
    remaining.sort_by(|&a, &b| leaves[a].rows.total_cmp(&leaves[b].rows));
    let first = remaining.remove(0);
    let mut tree = JoinTree::Scan(first);
    let mut plan = leaves[first].clone();
    let mut in_plan: LeafSet = bit(first);
    while !remaining.is_empty() {
        let mut pick: Option<(usize, JoinKind, f64, f64, Option<usize>)> = None;
        for (k, &i) in remaining.iter().enumerate() {
            let factor = all.factor(in_plan, bit(i));
            if let Some((kind, cost, rows, sorted)) = best_join(&plan, &leaves[i], Some(i), factor)
            {
                if pick.as_ref().is_none_or(|p| cost < p.2) {
                    pick = Some((k, kind, cost, rows, sorted));
                }
            }
        }
        let (k, next_tree, next) = match pick {
            Some((k, kind, cost, rows, sorted)) => {
                let i = remaining[k];
                let right = || Box::new(JoinTree::Scan(i));
                let joined_tree = match kind {
                    JoinKind::Hash => JoinTree::Hash(Box::new(tree), right()),
                    JoinKind::Merge(v) => {
                        JoinTree::Merge(Box::new(tree), right(), names[v].clone())
                    }
                    JoinKind::Index(i) => JoinTree::Index(Box::new(tree), i),
                };
                let factor = all.factor(in_plan, bit(i));
                (
                    k,
                    joined_tree,
                    joined(&plan, &leaves[i], (rows, factor), cost, sorted),
                )
            }
            None => {
                let i = remaining[0];
                let joined_tree = JoinTree::Hash(Box::new(tree), Box::new(JoinTree::Scan(i)));
                (0, joined_tree, cross(&plan, &leaves[i], 1.0))
            }
        };
        in_plan |= bit(remaining[k]);
        remaining.remove(k);
        tree = next_tree;
        plan = next;
    }
    (tree, plan)
}

#[cfg(test)]
mod tests;
