//! Ranges of IDs that a FILTER leaves a variable: `?d >= "2008-02-01"^^xsd:date
//! && ?d < "2008-02-29"^^xsd:date` allows only `xsd:date` values near that
//! month. A pattern whose object is `?d` then scans only those IDs (inline
//! values are stored in value order) instead of all its rows. The ranges are
//! wider than the filter, never narrower: the filter still decides each row.
//!
//! Comparisons with dates and dateTimes: a comparison between them and
//! anything else is an error, so a range within their own tag loses
//! nothing.
//!
//! Comparisons with numbers: numbers compare across types (an integer bound
//! admits decimals, doubles and floats, some held in the vocabulary), which
//! one range of one tag cannot cover, so a numeric bound gives a range of
//! inline integers that the planner applies only to a predicate whose
//! numeric objects are all inline integers (`bgp::narrowed` checks). The
//! bound may be an expression of numbers and variables the planner has
//! values for (`?sim < ?orig + 120` once `?orig` is substituted, see
//! `seeded_filter`); it is computed in doubles and widened by one, so
//! rounding never makes the range narrower than the filter.
//!
//! Prefixes: `STRSTARTS(?v, "lit")` and a REGEX anchored at the start
//! (`REGEX(?v, "^lit…")`) hold only for string literals that start with
//! that text; their keys are one range of the sorted vocabulary (literals
//! sort by lexical form first), so `?v` takes IDs from that range (while
//! the store has no terms of its own in its delta, which are unsorted).

use super::exists;
use crate::context::QueryContext;
use crate::EngineError;
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, Function};
use std::ops::Bound;
use tern_index::{inline, Id, ScanRange, Tag};

/// The variables a filter confines, each with the IDs it may take.
/// `bound`: values substituted for variables, usable in bounds.
pub fn from_filter(
    expression: &Expression,
    ctx: &QueryContext,
    bound: &[(Variable, Id)],
) -> Result<Vec<(Variable, ScanRange)>, EngineError> {
    let mut ranges: Vec<(Variable, Id, Id)> = Vec::new();
    let mut narrow = |variable: &Variable, low: Id, high: Id| {
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
    };
    for conjunct in exists::conjuncts(expression) {
        if let Some((variable, prefix)) = string_prefix(&conjunct) {
            if let Some((low, high)) = ctx.index.literal_prefix_ids(&prefix)? {
                if low < high {
                    narrow(variable, low, Id(high.0 - 1));
                } else {
                    // No literal starts so: a range of the vocabulary that
                    // nothing is in.
                    narrow(variable, Id::new(Tag::Vocab, 1), Id::new(Tag::Vocab, 0));
                }
            }
            continue;
        }
        let Some((variable, side, constant)) = comparison(&conjunct, bound) else {
            continue;
        };
        let literal = match constant {
            Constant::Number(value) => {
                let (low, high) = integer_window(&side, value);
                narrow(variable, low, high);
                continue;
            }
            Constant::Literal(literal) => literal,
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
        narrow(variable, low, high);
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

/// `STRSTARTS(?v, "text")` or `REGEX(?v, "^text…"[, flags])`: the variable
/// and the text every value that passes starts with.
fn string_prefix(expression: &Expression) -> Option<(&Variable, String)> {
    let Expression::FunctionCall(function, args) = expression else {
        return None;
    };
    let (Some(Expression::Variable(variable)), Some(Expression::Literal(text))) =
        (args.first(), args.get(1))
    else {
        return None;
    };
    if text.language().is_some() || text.datatype() != oxrdf::vocab::xsd::STRING {
        return None;
    }
    let prefix = match (function, args.len()) {
        (Function::StrStarts, 2) => text.value().to_owned(),
        (Function::Regex, 2) => regex_prefix(text.value())?,
        (Function::Regex, 3) => match &args[2] {
            // Only flags that keep `^` at the start and the text as it is.
            Expression::Literal(flags) if flags.value().chars().all(|c| c == 's') => {
                regex_prefix(text.value())?
            }
            _ => return None,
        },
        _ => return None,
    };
    (!prefix.is_empty()).then_some((variable, prefix))
}

/// The literal text a regular expression anchored at the start requires
/// first (`"^Efficient "` → `Efficient `), conservatively: none for an
/// alternation anywhere, and a character a quantifier may drop is not part
/// of it.
fn regex_prefix(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix('^')?;
    if pattern.contains('|') {
        return None;
    }
    let mut prefix = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let literal = match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => e,
                _ => break, // a class such as \d, or a bad escape
            },
            '.' | '^' | '$' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' => break,
            c => c,
        };
        if matches!(chars.peek(), Some('*' | '?' | '{')) {
            break; // the quantifier may take this character away
        }
        prefix.push(literal);
    }
    Some(prefix)
}

/// Where a comparison puts the variable relative to the constant.
pub(super) enum Side {
    AtLeast,
    AtMost,
    Near,
}

/// The two operands of a comparison (`=`, `<`, `<=`, `>`, `>=`) and where
/// each puts the other: `a > b` has `a` at least `b` and `b` at most `a`.
pub(super) fn operands(expression: &Expression) -> Option<(&Expression, &Expression, Side, Side)> {
    Some(match expression {
        Expression::Greater(a, b) | Expression::GreaterOrEqual(a, b) => {
            (a, b, Side::AtLeast, Side::AtMost)
        }
        Expression::Less(a, b) | Expression::LessOrEqual(a, b) => {
            (a, b, Side::AtMost, Side::AtLeast)
        }
        Expression::Equal(a, b) => (a, b, Side::Near, Side::Near),
        _ => return None,
    })
}

/// What a variable is compared with: a number [`numeric_value`] computes,
/// or another literal.
enum Constant<'a> {
    Number(f64),
    Literal(&'a oxrdf::Literal),
}

/// `?v op E` or `E op ?v` with a comparison operator, where `E` is a
/// literal or an expression that [`numeric_value`] computes (`?v` itself
/// is not in `bound`).
fn comparison<'a>(
    expression: &'a Expression,
    bound: &[(Variable, Id)],
) -> Option<(&'a Variable, Side, Constant<'a>)> {
    let (a, b, side_if_variable_left, side_if_variable_right) = operands(expression)?;
    let constant = |e: &'a Expression| match (numeric_value(e, bound), e) {
        (Some(value), _) => Some(Constant::Number(value)),
        (None, Expression::Literal(literal)) => Some(Constant::Literal(literal)),
        _ => None,
    };
    let is_bound = |v: &Variable| bound.iter().any(|(b, _)| b == v);
    match (a, b) {
        (Expression::Variable(v), other) if !is_bound(v) => {
            if let Some(c) = constant(other) {
                return Some((v, side_if_variable_left, c));
            }
        }
        _ => {}
    }
    match (a, b) {
        (other, Expression::Variable(v)) if !is_bound(v) => {
            Some((v, side_if_variable_right, constant(other)?))
        }
        _ => None,
    }
}

/// The value of a numeric literal, of a variable bound to an inline number,
/// or of `+`, `-`, `*` and signs over those, as a double (finite); none for
/// anything else.
pub(super) fn numeric_value(expression: &Expression, bound: &[(Variable, Id)]) -> Option<f64> {
    let value = match expression {
        Expression::Literal(literal) => {
            let numeric = [
                inline::XSD_INTEGER,
                inline::XSD_DECIMAL,
                inline::XSD_DOUBLE,
                oxrdf::vocab::xsd::FLOAT.as_str(),
            ];
            if !numeric.contains(&literal.datatype().as_str()) {
                return None;
            }
            literal.value().trim().parse::<f64>().ok()?
        }
        Expression::Variable(v) => {
            let id = bound.iter().find_map(|(b, id)| (b == v).then_some(*id))?;
            match id.tag() {
                Tag::Integer => inline::integer_value(id) as f64,
                Tag::Decimal => inline::decimal_value(id),
                Tag::Double => inline::double_value(id),
                _ => return None,
            }
        }
        Expression::Add(a, b) => numeric_value(a, bound)? + numeric_value(b, bound)?,
        Expression::Subtract(a, b) => numeric_value(a, bound)? - numeric_value(b, bound)?,
        Expression::Multiply(a, b) => numeric_value(a, bound)? * numeric_value(b, bound)?,
        Expression::UnaryPlus(a) => numeric_value(a, bound)?,
        Expression::UnaryMinus(a) => -numeric_value(a, bound)?,
        _ => return None,
    };
    value.is_finite().then_some(value)
}

/// Whether `expression` has the shape [`numeric_value`] computes once its
/// variables have values; its variables go to `out` (once each).
pub(super) fn arithmetic_variables(expression: &Expression, out: &mut Vec<Variable>) -> bool {
    match expression {
        Expression::Literal(_) => numeric_value(expression, &[]).is_some(),
        Expression::Variable(v) => {
            if !out.contains(v) {
                out.push(v.clone());
            }
            true
        }
        Expression::Add(a, b) | Expression::Subtract(a, b) | Expression::Multiply(a, b) => {
            arithmetic_variables(a, out) && arithmetic_variables(b, out)
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) => arithmetic_variables(a, out),
        _ => false,
    }
}

/// The inline integers a comparison with `value` may let through, widened
/// past the rounding of `value`'s arithmetic in doubles.
fn integer_window(side: &Side, value: f64) -> (Id, Id) {
    let (tag_low, tag_high) = inline::tag_bounds(Tag::Integer);
    let slack = value.abs() * 1e-12 + 1.0;
    let at = |x: f64| -> Id {
        // Beyond the inline range the tag's own end is as far as it goes.
        if x <= inline::integer_value(tag_low) as f64 {
            tag_low
        } else if x >= inline::integer_value(tag_high) as f64 {
            tag_high
        } else {
            inline::integer_id(x as i64).unwrap_or(tag_high)
        }
    };
    let (low, high) = (at((value - slack).floor()), at((value + slack).ceil()));
    match side {
        Side::AtLeast => (low, tag_high),
        Side::AtMost => (tag_low, high),
        Side::Near => (low, high),
    }
}

#[cfg(test)]
mod tests {
    use super::regex_prefix;

    #[test]
    fn anchored_regexes_give_the_text_they_require() {
        for (pattern, prefix) in [
            ("^Efficient ", Some("Efficient ")),
            ("^Co", Some("Co")),
            ("^c.m", Some("c")),
            ("^a\\.b\\d", Some("a.b")),
            ("^abc?", Some("ab")),
            ("^ab*c", Some("a")),
            ("^ab{2}", Some("a")),
            ("^(ab)", Some("")),
            ("^[ab]c", Some("")),
            ("^ab|cd", None),
            ("ab", None),
            ("c.m", None),
        ] {
            assert_eq!(regex_prefix(pattern).as_deref(), prefix, "{pattern}");
        }
    }
}
