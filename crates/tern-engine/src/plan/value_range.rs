//! Ranges of IDs that a FILTER leaves a variable: `?d >= "2008-02-01"^^xsd:date
//! && ?d < "2008-02-29"^^xsd:date` allows only `xsd:date` values near that
//! month. A pattern whose object is `?d` then scans only those IDs (inline
//! values are stored in value order) instead of all its rows. The ranges are
//! wider than the filter, never narrower: the filter still decides each row.
//!
//! Comparisons: only dates and dateTimes so far: a comparison between them
//! and anything else is an error, so a range within their own tag loses
//! nothing. Numbers compare across types (an `xsd:integer` bound admits
//! decimals, doubles and floats held in the vocabulary), which one range of
//! one tag cannot cover.
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
pub fn from_filter(
    expression: &Expression,
    ctx: &QueryContext,
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
