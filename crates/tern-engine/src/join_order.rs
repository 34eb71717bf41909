//! Join ordering for basic graph patterns, by estimated cost.
//!
//! Every triple pattern comes with its exact row count (from the index's
//! prefix counts) and, per variable, an estimate of its distinct values
//! (from the predicate statistics). The size of a join is estimated as
//! `|L| · |R| / max(distinct(v))` over its most selective shared variable.
//! Small patterns are ordered by dynamic programming over all subsets (bushy
//! trees, both hash joins and index nested-loop joins considered); large ones
//! greedily.

use oxrdf::Variable;

/// What the planner knows about one triple pattern.
#[derive(Debug, Clone)]
pub struct PatternEstimate {
    pub rows: f64,
    /// Each variable of the pattern with its estimated distinct values.
    pub variables: Vec<(Variable, f64)>,
    /// The variable the pattern's scan is sorted on, if any.
    pub sorted_on: Option<Variable>,
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

/// A planned (sub)tree with its estimates.
#[derive(Debug, Clone)]
pub struct Planned {
    pub tree: JoinTree,
    pub rows: f64,
    pub cost: f64,
    variables: Vec<(Variable, f64)>,
    /// The variable the output is sorted on, if any.
    sorted: Option<Variable>,
}

/// Relative cost of one index lookup against handling one row.
const LOOKUP_COST: f64 = 8.0;
/// Up to this many patterns are ordered by dynamic programming (3^n steps).
const DP_LIMIT: usize = 10;

fn leaf(i: usize, p: &PatternEstimate) -> Planned {
    Planned {
        tree: JoinTree::Scan(i),
        rows: p.rows,
        cost: p.rows,
        variables: p.variables.clone(),
        sorted: p.sorted_on.clone(),
    }
}

/// Estimated rows of joining `a` and `b`, and the variables of the result.
fn join_size(
    a: &Planned,
    b_rows: f64,
    b_vars: &[(Variable, f64)],
) -> (f64, Vec<(Variable, f64)>, bool) {
    let mut divisor: f64 = 1.0;
    let mut shared = false;
    let mut variables = a.variables.clone();
    for (v, d) in b_vars {
        match variables.iter_mut().find(|(x, _)| x == v) {
            Some((_, da)) => {
                shared = true;
                divisor = divisor.max(da.max(*d));
                *da = da.min(*d);
            }
            None => variables.push((v.clone(), *d)),
        }
    }
    let rows = (a.rows * b_rows / divisor.max(1.0)).max(if a.rows > 0.0 && b_rows > 0.0 {
        1.0
    } else {
        0.0
    });
    for (_, d) in &mut variables {
        *d = d.min(rows.max(1.0));
    }
    (rows, variables, shared)
}

/// The cheapest of a hash join, a merge join (both sides sorted on a shared
/// variable) and an index join (`b` one pattern).
fn best_join(a: &Planned, b: &Planned) -> Option<Planned> {
    let (rows, variables, shared) = join_size(a, b.rows, &b.variables);
    if !shared {
        return None;
    }
    // Building the table costs about as much again as reading its side.
    let hash_cost = a.cost + b.cost + a.rows + b.rows + a.rows.min(b.rows) + rows;
    let mut best = Planned {
        tree: JoinTree::Hash(Box::new(a.tree.clone()), Box::new(b.tree.clone())),
        rows,
        cost: hash_cost,
        variables: variables.clone(),
        // The larger side is probed, and its order kept.
        sorted: if a.rows >= b.rows {
            a.sorted.clone()
        } else {
            b.sorted.clone()
        },
    };
    if let (Some(x), Some(y)) = (&a.sorted, &b.sorted) {
        let merge_cost = a.cost + b.cost + a.rows + b.rows + rows;
        if x == y && merge_cost < best.cost {
            best = Planned {
                tree: JoinTree::Merge(
                    Box::new(a.tree.clone()),
                    Box::new(b.tree.clone()),
                    x.clone(),
                ),
                rows,
                cost: merge_cost,
                variables: variables.clone(),
                sorted: Some(x.clone()),
            };
        }
    }
    if let JoinTree::Scan(i) = b.tree {
        let index_cost = a.cost + a.rows * LOOKUP_COST + rows;
        if index_cost < best.cost {
            best = Planned {
                tree: JoinTree::Index(Box::new(a.tree.clone()), i),
                rows,
                cost: index_cost,
                variables,
                sorted: a.sorted.clone(),
            };
        }
    }
    Some(best)
}

fn cross(a: &Planned, b: &Planned) -> Planned {
    let (rows, variables, _) = join_size(a, b.rows, &b.variables);
    Planned {
        tree: JoinTree::Hash(Box::new(a.tree.clone()), Box::new(b.tree.clone())),
        rows,
        cost: a.cost + b.cost + a.rows + b.rows + rows,
        variables,
        sorted: None,
    }
}

/// The estimated rows of a tree's result, recomputed from its leaves.
pub fn estimate_rows(tree: &JoinTree, patterns: &[PatternEstimate]) -> f64 {
    planned_of(tree, patterns).rows
}

fn planned_of(tree: &JoinTree, patterns: &[PatternEstimate]) -> Planned {
    match tree {
        JoinTree::Scan(i) => leaf(*i, &patterns[*i]),
        JoinTree::Hash(a, b) | JoinTree::Merge(a, b, _) => {
            cross(&planned_of(a, patterns), &planned_of(b, patterns))
        }
        JoinTree::Index(a, i) => cross(&planned_of(a, patterns), &leaf(*i, &patterns[*i])),
    }
}

/// The cheapest join tree found for the patterns (at least one).
pub fn order(patterns: &[PatternEstimate]) -> Planned {
    assert!(!patterns.is_empty(), "a BGP to order has patterns");
    if patterns.len() <= DP_LIMIT {
        dynamic(patterns)
    } else {
        greedy(patterns)
    }
}

fn dynamic(patterns: &[PatternEstimate]) -> Planned {
    let n = patterns.len();
    let full = (1usize << n) - 1;
    let mut best: Vec<Option<Planned>> = vec![None; full + 1];
    for (i, p) in patterns.iter().enumerate() {
        best[1 << i] = Some(leaf(i, p));
    }
    for set in 1..=full {
        if set.count_ones() < 2 {
            continue;
        }
        let mut chosen: Option<Planned> = None;
        // Every split into two non-empty halves, each tried as the left side.
        let mut sub = (set - 1) & set;
        while sub > 0 {
            let rest = set & !sub;
            if let (Some(a), Some(b)) = (&best[sub], &best[rest]) {
                if let Some(candidate) = best_join(a, b) {
                    if chosen.as_ref().is_none_or(|c| candidate.cost < c.cost) {
                        chosen = Some(candidate);
                    }
                }
            }
            sub = (sub - 1) & set;
        }
        best[set] = chosen;
    }
    if let Some(plan) = best[full].take() {
        return plan;
    }
    // Not connected: join the connected components by cross products,
    // smallest first.
    let mut components: Vec<Planned> = Vec::new();
    let mut left = full;
    while left != 0 {
        let component = (1..=left)
            .rev()
            .filter(|s| s & left == *s && best[*s].is_some())
            .max_by_key(|s| s.count_ones())
            .expect("single patterns are always planned");
        components.push(best[component].clone().expect("filtered"));
        left &= !component;
    }
    components.sort_by(|a, b| a.rows.total_cmp(&b.rows));
    let mut plan = components.remove(0);
    for c in components {
        plan = cross(&plan, &c);
    }
    plan
}

fn greedy(patterns: &[PatternEstimate]) -> Planned {
    let mut remaining: Vec<usize> = (0..patterns.len()).collect();
    remaining.sort_by(|&a, &b| patterns[a].rows.total_cmp(&patterns[b].rows));
    let first = remaining.remove(0);
    let mut plan = leaf(first, &patterns[first]);
    while !remaining.is_empty() {
        let mut pick: Option<(usize, Planned)> = None;
        for (k, &i) in remaining.iter().enumerate() {
            if let Some(candidate) = best_join(&plan, &leaf(i, &patterns[i])) {
                if pick.as_ref().is_none_or(|(_, p)| candidate.cost < p.cost) {
                    pick = Some((k, candidate));
                }
            }
        }
        let (k, next) = pick.unwrap_or_else(|| {
            let i = remaining[0];
            (0, cross(&plan, &leaf(i, &patterns[i])))
        });
        remaining.remove(k);
        plan = next;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(rows: f64, vars: &[(&str, f64)]) -> PatternEstimate {
        PatternEstimate {
            rows,
            variables: vars
                .iter()
                .map(|(v, d)| (Variable::new_unchecked(*v), *d))
                .collect(),
            sorted_on: Some(Variable::new_unchecked(vars[0].0)),
        }
    }

    fn scans(tree: &JoinTree, out: &mut Vec<usize>) {
        match tree {
            JoinTree::Scan(i) => out.push(*i),
            JoinTree::Hash(a, b) | JoinTree::Merge(a, b, _) => {
                scans(a, out);
                scans(b, out);
            }
            JoinTree::Index(a, i) => {
                scans(a, out);
                out.push(*i);
            }
        }
    }

    #[test]
    fn a_selective_pattern_drives_index_lookups_into_large_ones() {
        // ?p :label ?l (8000) . ?p :feature <F> (13) . ?p a <T> (46)
        let patterns = [
            pattern(8000.0, &[("p", 8000.0), ("l", 8000.0)]),
            pattern(13.0, &[("p", 13.0)]),
            pattern(46.0, &[("p", 46.0)]),
        ];
        let plan = order(&patterns);
        let mut order_seen = Vec::new();
        scans(&plan.tree, &mut order_seen);
        assert_eq!(order_seen[0], 1, "{:?}", plan.tree);
        assert!(
            matches!(&plan.tree, JoinTree::Index(_, 0)),
            "the label pattern is looked up per row: {:?}",
            plan.tree
        );
        assert!(plan.rows <= 13.0);
    }

    #[test]
    fn large_inputs_sorted_on_the_join_variable_are_merged() {
        let patterns = [
            pattern(50_000.0, &[("s", 50_000.0), ("a", 900.0)]),
            pattern(40_000.0, &[("s", 40_000.0), ("b", 40_000.0)]),
        ];
        let plan = order(&patterns);
        assert!(matches!(plan.tree, JoinTree::Merge(..)), "{:?}", plan.tree);
    }

    #[test]
    fn greedy_and_dynamic_plans_cover_every_pattern_once() {
        let mut patterns = Vec::new();
        for i in 0..14 {
            let shared = format!("v{}", i / 2);
            let own = format!("w{i}");
            patterns.push(pattern(
                (i * 37 % 11 + 1) as f64 * 100.0,
                &[(shared.as_str(), 50.0), (own.as_str(), 100.0)],
            ));
        }
        for n in [1, 2, 5, 10, 14] {
            let plan = order(&patterns[..n]);
            let mut seen = Vec::new();
            scans(&plan.tree, &mut seen);
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }
}
