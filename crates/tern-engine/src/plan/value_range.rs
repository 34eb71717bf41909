//! Ranges of IDs that a FILTER leaves a variable: `?d >= "2008-02-01"^^xsd:date
//! && ?d < "2008-02-29"^^xsd:date` allows only `xsd:date` values near that
//! month. A pattern whose object is `?d` then scans only those IDs (inline
//! values are stored in value order) instead of all its rows. The ranges are
//! wider than the filter, never narrower: the filter still decides each row.
//!
//! Only dates and dateTimes so far: a comparison between them and anything
//! else is an error, so a range within their own tag loses nothing. Numbers
//! compare across types (an `xsd:integer` bound admits decimals, doubles and
//! floats held in the vocabulary), which one range of one tag cannot cover.

use super::exists;
use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::Expression;
use std::ops::Bound;
use tern_index::{inline, Id, ScanRange};

/// The variables a filter confines, each with the IDs it may take.
pub fn from_filter(
    expression: &Expression,
    ctx: &QueryContext,
) -> Result<Vec<(Variable, ScanRange)>, EngineError> {
    let mut ranges: Vec<(Variable, Id, Id)> = Vec::new();
    for conjunct in exists::conjuncts(expression) {
        let Some((variable, side, literal)) = comparison(&conjunct) else {
            continue;
        };
        let Some(id) = ctx.lookup(&Term::Literal(literal.clone()))? else {
            continue;
        };
        let Some((near_low, near_high)) = inline::time_window(id) else {
            continue;
        };
        let (tag_low, tag_high) = inline::tag_bounds(id.tag());
        let (low, high) = match side {
            Side::AtLeast => (near_low, tag_high),
            Side::AtMost => (tag_low, near_high),
            Side::Near => (near_low, near_high),
        };
        match ranges.iter_mut().find(|(v, _, _)| v == variable) {
            // Both conjuncts must hold: the ranges intersect (an empty
            // intersection, such as a date bound and a dateTime bound, is
            // right: no value passes both).
            Some((_, l, h)) => {
                *l = (*l).max(low);
                *h = (*h).min(high);
            }
            None => ranges.push((variable.clone(), low, high)),
        }
    }
    Ok(ranges
        .into_iter()
        .map(|(v, low, high)| {
            let range = ScanRange {
                start: Bound::Included(low),
                end: Bound::Included(high),
            };
            (v, range)
        })
        .collect())
}

/// Where a comparison puts the variable relative to the constant.
enum Side {
    AtLeast,
    AtMost,
    Near,
}

/// `?v op literal` or `literal op ?v` with a comparison operator.
fn comparison(expression: &Expression) -> Option<(&Variable, Side, &oxrdf::Literal)> {
    let (a, b, side_if_variable_left, side_if_variable_right) = match expression {
        Expression::Greater(a, b) | Expression::GreaterOrEqual(a, b) => {
            (a, b, Side::AtLeast, Side::AtMost)
        }
        Expression::Less(a, b) | Expression::LessOrEqual(a, b) => {
            (a, b, Side::AtMost, Side::AtLeast)
        }
        Expression::Equal(a, b) => (a, b, Side::Near, Side::Near),
        _ => return None,
    };
    match (a.as_ref(), b.as_ref()) {
        (Expression::Variable(v), Expression::Literal(l)) => Some((v, side_if_variable_left, l)),
        (Expression::Literal(l), Expression::Variable(v)) => Some((v, side_if_variable_right, l)),
        _ => None,
    }
}
