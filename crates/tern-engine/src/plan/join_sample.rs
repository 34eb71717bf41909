//! Join sizes measured at planning time where the statistics are blind.
//!
//! The join estimate divides by the larger side's distinct values, which
//! assumes every value of the smaller side occurs in the larger. A small
//! pattern over a general predicate breaks that: `?x bsbm:country <AT>`
//! holds producers, vendors and reviewers, and joined with `?product
//! bsbm:producer ?x` only the 32 producers among its 747 subjects match
//! (BSBM 10M), so the join was estimated at 28,480 products instead of
//! 1,618 and the plan around it went wrong. Like Virtuoso's sampling of the
//! pages a bound prefix hits, the planner reads the smaller pattern (it is
//! small), takes values spread over it, and counts the larger pattern's
//! rows for each from the index's directory: the join's rows are the small
//! side's rows times the mean count. The join order search takes the result
//! as a correction (see `join_order`).

use super::join_order::SampledJoin;
use crate::context::QueryContext;
use crate::exec::{PatternRows, PatternTerm, Scan};
use crate::EngineError;
use oxrdf::Variable;
use tern_index::Id;

/// What the planner knows of one pattern: its exact rows, its variables
/// (output columns) and how it reads the index.
pub(super) type ScanSpec = (u64, Vec<Variable>, PatternRows);

/// A pattern with fewer rows is not sampled: its joins are cheap whatever
/// the plan, and its estimate cannot be far off in rows.
const SMALL_MIN: u64 = 16;
/// The most rows read from the smaller pattern to draw its values.
const SMALL_MAX: u64 = 16_384;
/// The larger pattern has at least this many times the smaller's rows:
/// between patterns of similar size a wrong containment guess costs little.
const SIZE_RATIO: u64 = 4;
/// Values drawn from the smaller pattern, each counted in the larger.
const SAMPLE: usize = 32;
/// Most pairs sampled in one group of patterns (a bound on planning time:
/// each pair reads up to `SMALL_MAX` rows and counts `SAMPLE` prefixes).
const MAX_PAIRS: usize = 8;
/// Groups with more patterns are not sampled (pairs grow quadratically).
const MAX_PATTERNS: usize = 16;

/// The joins of `scans` worth measuring, measured: pairs sharing exactly
/// one variable, the smaller between `SMALL_MIN` and `SMALL_MAX` rows and
/// the larger `SIZE_RATIO` times bigger, smallest first.
pub(super) fn sampled_joins(
    ctx: &QueryContext,
    scans: &[ScanSpec],
) -> Result<Vec<SampledJoin>, EngineError> {
    if scans.len() < 2 || scans.len() > MAX_PATTERNS {
        return Ok(Vec::new());
    }
    let mut pairs = Vec::new();
    for (small, (rows, variables, _)) in scans.iter().enumerate() {
        if !(SMALL_MIN..=SMALL_MAX).contains(rows) {
            continue;
        }
        for (large, (large_rows, large_variables, _)) in scans.iter().enumerate() {
            if large == small || *large_rows < rows.saturating_mul(SIZE_RATIO) {
                continue;
            }
            let mut shared = variables.iter().filter(|v| large_variables.contains(v));
            if let (Some(v), None) = (shared.next(), shared.next()) {
                pairs.push((*rows, small, large, v.clone()));
            }
        }
    }
    pairs.sort_by_key(|&(rows, small, large, _)| (rows, small, large));
    pairs.truncate(MAX_PAIRS);
    let mut drawn: Vec<(usize, Variable, Vec<Id>)> = Vec::new();
    let mut sampled = Vec::with_capacity(pairs.len());
    for (rows, small, large, variable) in pairs {
        let values = match drawn.iter().find(|(i, v, _)| *i == small && *v == variable) {
            Some((_, _, values)) => values,
            None => {
                let values = draw(ctx, &scans[small], &variable)?;
                drawn.push((small, variable.clone(), values));
                &drawn.last().expect("just pushed").2
            }
        };
        if values.is_empty() {
            continue;
        }
        let Some((matches, hits)) = count_matches(ctx, &scans[large], &variable, values)? else {
            continue;
        };
        sampled.push(SampledJoin {
            small,
            large,
            variable,
            rows: rows as f64 * matches as f64 / values.len() as f64,
            hits,
            samples: values.len(),
        });
    }
    Ok(sampled)
}

/// The triple position (0 to 2) of `variable` in a pattern, if it has one.
fn position_of(spec: &ScanSpec, variable: &Variable) -> Option<usize> {
    let column = spec.1.iter().position(|v| v == variable)?;
    spec.2
        .terms
        .iter()
        .position(|t| *t == PatternTerm::Variable(column))
}

/// Up to `SAMPLE` values of `variable` from rows spread evenly over the
/// pattern (its rows are sorted, so the first ones would all be alike).
fn draw(ctx: &QueryContext, spec: &ScanSpec, variable: &Variable) -> Result<Vec<Id>, EngineError> {
    let Some(position) = position_of(spec, variable) else {
        return Ok(Vec::new());
    };
    let pattern = &spec.2;
    let column = pattern
        .perm
        .order()
        .iter()
        .position(|&p| p == position)
        .expect("a permutation orders all three positions");
    let mut all = Vec::new();
    for batch in ctx
        .index
        .scan(pattern.perm, pattern.prefix(), pattern.scan_range)
    {
        all.extend_from_slice(&batch?.columns[column]);
        if all.len() as u64 > SMALL_MAX {
            break;
        }
    }
    if all.len() <= SAMPLE {
        return Ok(all);
    }
    let step = all.len() as f64 / SAMPLE as f64;
    Ok((0..SAMPLE)
        .map(|k| all[((k as f64 + 0.5) * step) as usize])
        .collect())
}

/// Rows of the larger pattern summed over `values` of `variable`, each
/// counted from the index with the value bound, and how many values had
/// any; `None` if the variable is not a triple position there (a graph
/// variable).
fn count_matches(
    ctx: &QueryContext,
    spec: &ScanSpec,
    variable: &Variable,
    values: &[Id],
) -> Result<Option<(u64, usize)>, EngineError> {
    let Some(position) = position_of(spec, variable) else {
        return Ok(None);
    };
    let pattern = &spec.2;
    let (mut total, mut hits) = (0, 0);
    for &value in values {
        let mut terms = pattern.terms;
        terms[position] = PatternTerm::Constant(value);
        let bound = pattern.bound_to(terms, pattern.graph);
        let count = Scan::estimate(ctx, &bound)?;
        total += count;
        hits += usize::from(count > 0);
    }
    Ok(Some((total, hits)))
}
