//! Aggregates (spec 18.5.1): an [`Accumulator`] receives the values of one
//! group one at a time and yields the aggregate at the end.
//!
//! Errors (`None` values: unbound or failed expressions) are skipped by
//! `COUNT`, `MIN`, `MAX` and `SAMPLE`, and make `SUM`, `AVG` and
//! `GROUP_CONCAT` an error, as does a value those cannot use (a non-number
//! in `SUM`, an IRI in `GROUP_CONCAT`): the spec defines these three by
//! folding XPath operators over all values, so one bad value fails the fold.

use super::compare::order_cmp;
use super::numeric::{self, Numeric};
use super::value::{integer_literal, string_literal};
use oxrdf::Term;
use oxsdatatypes::Integer;
use rustc_hash::FxHashSet;
use spargebra::algebra::AggregateFunction;
use std::cmp::Ordering;
use std::collections::HashSet;
use tern_index::Id;

/// An aggregate being computed over one group.
pub struct Accumulator {
    /// Values already seen, for `DISTINCT`.
    ///
    /// What only some aggregates keep is boxed, so that an accumulator is
    /// small (64 bytes, not 160): a grouping makes one per group and
    /// aggregate, and at 213 K groups (BSBM 100M BI Q03) writing them was a
    /// measurable part of a new group's cost.
    // A set is three words where a box is one (see above).
    #[allow(clippy::box_collection)]
    seen: Option<Box<HashSet<Term>>>,
    /// IDs already seen, for `DISTINCT` over one column (see
    /// [`Accumulator::first_id`]); made on the first.
    seen_ids: Option<Box<FxHashSet<Id>>>,
    state: State,
    /// Approximate bytes of the values it keeps (DISTINCT sets, the text of
    /// GROUP_CONCAT), for the query's memory budget.
    held: usize,
}

/// Memory of one kept term: its text, the `Term` and the set's slot.
fn term_bytes(term: &Term) -> usize {
    let text = match term {
        Term::NamedNode(n) => n.as_str().len(),
        Term::BlankNode(b) => b.as_str().len(),
        Term::Literal(l) => {
            l.value().len() + l.language().map_or(0, str::len) + l.datatype().as_str().len()
        }
        #[allow(unreachable_patterns)]
        _ => 64,
    };
    text + 96
}

enum State {
    Count(u64),
    /// `COUNT(*)`: rows, deduplicated for `COUNT(DISTINCT *)`.
    CountRows {
        count: u64,
        // Boxed to keep the accumulator small (see `Accumulator::seen`).
        #[allow(clippy::box_collection)]
        seen: Option<Box<HashSet<Vec<Option<Term>>>>>,
    },
    /// The running sum; `None` once an error occurred.
    Sum(Option<Numeric>),
    Avg {
        sum: Option<Numeric>,
        count: u64,
    },
    /// Keeps the value that orders first (`Ordering::Less` for `MIN`) or
    /// last (`Ordering::Greater` for `MAX`) in ORDER BY order.
    Extreme {
        keep: Ordering,
        best: Option<Box<Term>>,
    },
    GroupConcat(Box<Concatenation>),
    Sample(Option<Box<Term>>),
    /// Custom aggregates are unknown: always an error.
    Unsupported,
}

/// The state of a `GROUP_CONCAT`.
struct Concatenation {
    separator: String,
    /// The text so far; `None` once an error occurred. The result is a
    /// simple literal even when every value had the same language tag, as
    /// the SPARQL 1.1 tests agg-groupconcat-04 and -06 require.
    text: Option<String>,
    empty: bool,
}

impl Accumulator {
    /// An accumulator for `function` (over the values passed to
    /// [`Accumulator::add`]), deduplicating them when `distinct`.
    pub fn new(function: &AggregateFunction, distinct: bool) -> Accumulator {
        let state = match function {
            AggregateFunction::Count => State::Count(0),
            AggregateFunction::Sum => State::Sum(Some(Numeric::Integer(Integer::from(0)))),
            AggregateFunction::Avg => State::Avg {
                sum: Some(Numeric::Integer(Integer::from(0))),
                count: 0,
            },
            AggregateFunction::Min => State::Extreme {
                keep: Ordering::Less,
                best: None,
            },
            AggregateFunction::Max => State::Extreme {
                keep: Ordering::Greater,
                best: None,
            },
            AggregateFunction::GroupConcat { separator } => {
                State::GroupConcat(Box::new(Concatenation {
                    separator: separator.clone().unwrap_or_else(|| " ".to_owned()),
                    text: Some(String::new()),
                    empty: true,
                }))
            }
            AggregateFunction::Sample => State::Sample(None),
            AggregateFunction::Custom(_) => State::Unsupported,
        };
        Accumulator {
            seen: distinct.then(Box::default),
            seen_ids: None,
            state,
            held: 0,
        }
    }

    /// For a DISTINCT aggregate of one column's values (its accumulator
    /// made without `distinct`: this is its deduplication): whether `id`
    /// comes for the first time. The same term always has the same ID
    /// within a query, so a repeated ID is a repeated term, skipped without
    /// decoding it (COUNT(DISTINCT ?d) over 175K rows decoded every one).
    pub fn first_id(&mut self, id: Id) -> bool {
        let new = self.seen_ids.get_or_insert_with(Box::default).insert(id);
        if new {
            self.held += 16;
        }
        new
    }

    /// `COUNT(DISTINCT ?v)` of a column: counts `id` when bound and new;
    /// the count needs no term, so nothing is decoded.
    pub fn count_distinct_id(&mut self, id: Id) {
        if id != Id::UNDEFINED && self.first_id(id) {
            if let State::Count(count) = &mut self.state {
                *count += 1;
            }
        }
    }

    /// Approximate bytes of the values it keeps.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// `COUNT(*)` (or `COUNT(DISTINCT *)`): feed it whole rows with
    /// [`Accumulator::add_row`].
    pub fn count_star(distinct: bool) -> Accumulator {
        Accumulator {
            seen: None,
            seen_ids: None,
            state: State::CountRows {
                count: 0,
                seen: distinct.then(Box::default),
            },
            held: 0,
        }
    }

    /// Adds the value of the aggregated expression for one solution
    /// (`None`: unbound or error). On a `COUNT(*)` accumulator this counts
    /// as a row of that single value.
    pub fn add(&mut self, value: Option<Term>) {
        if let State::CountRows { .. } = self.state {
            self.add_row(&[value]);
            return;
        }
        if let (Some(seen), Some(term)) = (&mut self.seen, &value) {
            if !seen.insert(term.clone()) {
                return;
            }
            self.held += term_bytes(term);
        }
        match &mut self.state {
            State::Count(count) => *count += u64::from(value.is_some()),
            State::Sum(sum) => *sum = add_numeric(*sum, value.as_ref()),
            State::Avg { sum, count } => {
                *sum = add_numeric(*sum, value.as_ref());
                *count += 1;
            }
            State::Extreme { keep, best } => {
                if let Some(value) = value {
                    let better = best
                        .as_deref()
                        .is_none_or(|best| order_cmp(Some(&value), Some(best)) == *keep);
                    if better {
                        *best = Some(Box::new(value));
                    }
                }
            }
            State::GroupConcat(concatenation) => {
                let Concatenation {
                    separator,
                    text,
                    empty,
                } = &mut **concatenation;
                let first = *empty;
                *empty = false;
                let before = text.as_ref().map_or(0, String::capacity);
                *text = concat_value(text.take(), value.as_ref(), separator, first);
                let after = text.as_ref().map_or(0, String::capacity);
                self.held = (self.held + after).saturating_sub(before);
            }
            State::Sample(sample) => {
                if sample.is_none() {
                    *sample = value.map(Box::new);
                }
            }
            State::CountRows { .. } | State::Unsupported => {}
        }
    }

    /// Adds one solution to a `COUNT(*)` accumulator: `row` holds the
    /// solution's values (any fixed order of the variables), used to
    /// deduplicate for `COUNT(DISTINCT *)`. Ignored by other accumulators.
    pub fn add_row(&mut self, row: &[Option<Term>]) {
        if let State::CountRows { count, seen } = &mut self.state {
            if let Some(seen) = seen {
                if seen.contains(row) {
                    return;
                }
                seen.insert(row.to_vec());
                self.held += 48 + row.iter().flatten().map(term_bytes).sum::<usize>();
            }
            *count += 1;
        }
    }

    /// Counts one solution for `COUNT(*)` or `COUNT(?v)` without DISTINCT,
    /// where all that matters is whether the value is bound: nothing is
    /// decoded. Ignored by other accumulators.
    pub fn count_one(&mut self, bound: bool) {
        self.count_rows(u64::from(bound));
    }

    /// Counts `rows` rows at once, for a count of every row (`COUNT(*)`)
    /// that needs nothing of them.
    pub fn count_rows(&mut self, rows: u64) {
        match &mut self.state {
            State::Count(count) | State::CountRows { count, seen: None } if self.seen.is_none() => {
                *count += rows
            }
            _ => debug_assert!(false, "counting rows of an aggregate that needs the values"),
        }
    }

    /// The count of a `COUNT` (with or without DISTINCT), final as it
    /// stands; `None` for the other aggregates. A grouping hands it out
    /// as an ID without making its literal.
    pub fn count(&self) -> Option<u64> {
        match self.state {
            State::Count(count) | State::CountRows { count, .. } => Some(count),
            _ => None,
        }
    }

    /// The aggregate's value; `None` for an error (or `MIN`/`MAX`/`SAMPLE`
    /// of no value).
    pub fn finish(self) -> Option<Term> {
        match self.state {
            State::Count(count) | State::CountRows { count, .. } => {
                Some(integer_literal(i64::try_from(count).ok()?))
            }
            State::Sum(sum) => Some(sum?.into_term()),
            // The spec's Avg of an empty group is 0.
            State::Avg { count: 0, .. } => Some(integer_literal(0)),
            State::Avg { sum, count } => {
                let count = Numeric::Integer(i64::try_from(count).ok()?.into());
                Some(numeric::divide(sum?, count)?.into_term())
            }
            State::Extreme { best, .. } => best.map(|term| *term),
            State::GroupConcat(concatenation) => Some(string_literal(concatenation.text?, None)),
            State::Sample(sample) => sample.map(|term| *term),
            State::Unsupported => None,
        }
    }
}

/// One step of `SUM`: a non-numeric or missing value is an error.
fn add_numeric(sum: Option<Numeric>, value: Option<&Term>) -> Option<Numeric> {
    numeric::add(sum?, Numeric::from_term(value?)?)
}

/// One step of `GROUP_CONCAT`: appends a literal's lexical form (string
/// literals, and as an extension any other literal); IRIs, blank nodes and
/// errors fail the aggregate. The language tag survives when all values
/// share it.
fn concat_value(
    text: Option<String>,
    value: Option<&Term>,
    separator: &str,
    first: bool,
) -> Option<String> {
    let mut text = text?;
    let Some(Term::Literal(literal)) = value else {
        return None;
    };
    if !first {
        text.push_str(separator);
    }
    text.push_str(literal.value());
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::test_util::{iri, lang, lit, simple};
    use oxrdf::NamedNode;

    /// A grouping makes one accumulator per group and aggregate: what only
    /// some aggregates keep stays boxed.
    #[test]
    fn an_accumulator_is_small() {
        assert!(
            std::mem::size_of::<Accumulator>() <= 64,
            "{}",
            std::mem::size_of::<Accumulator>()
        );
    }

    fn run(function: AggregateFunction, distinct: bool, values: &[Option<Term>]) -> Option<Term> {
        let mut accumulator = Accumulator::new(&function, distinct);
        for value in values {
            accumulator.add(value.clone());
        }
        accumulator.finish()
    }

    fn int(v: &str) -> Option<Term> {
        lit(v, "integer")
    }

    #[test]
    fn count_and_count_distinct() {
        let values = [int("1"), int("1"), None, int("2"), simple("1")];
        assert_eq!(run(AggregateFunction::Count, false, &values), int("4"));
        assert_eq!(run(AggregateFunction::Count, true, &values), int("3"));
        assert_eq!(run(AggregateFunction::Count, false, &[]), int("0"));
    }

    #[test]
    fn count_star() {
        let rows = [
            vec![int("1"), None],
            vec![int("1"), None],
            vec![int("1"), int("2")],
        ];
        for (distinct, expected) in [(false, "3"), (true, "2")] {
            let mut accumulator = Accumulator::count_star(distinct);
            for row in &rows {
                accumulator.add_row(row);
            }
            assert_eq!(accumulator.finish(), int(expected));
        }
    }

    #[test]
    fn sum() {
        let mixed = [int("1"), lit("2.5", "decimal"), lit("3", "int")];
        assert_eq!(
            run(AggregateFunction::Sum, false, &mixed),
            lit("6.5", "decimal")
        );
        assert_eq!(
            run(AggregateFunction::Sum, false, &[int("1"), int("2")]),
            int("3")
        );
        assert_eq!(
            run(
                AggregateFunction::Sum,
                false,
                &[int("1"), lit("1.5", "double")]
            ),
            lit("2.5", "double")
        );
        assert_eq!(
            run(AggregateFunction::Sum, true, &[int("2"), int("2")]),
            int("2")
        );
        assert_eq!(run(AggregateFunction::Sum, false, &[]), int("0"));
        assert_eq!(
            run(AggregateFunction::Sum, false, &[int("1"), simple("a")]),
            None
        );
        assert_eq!(run(AggregateFunction::Sum, false, &[int("1"), None]), None);
    }

    #[test]
    fn avg() {
        assert_eq!(run(AggregateFunction::Avg, false, &[]), int("0"));
        assert_eq!(
            run(AggregateFunction::Avg, false, &[int("1"), int("2")]),
            lit("1.5", "decimal")
        );
        assert_eq!(
            run(
                AggregateFunction::Avg,
                false,
                &[int("1"), int("2"), int("3")]
            ),
            lit("2", "decimal")
        );
        assert_eq!(
            run(
                AggregateFunction::Avg,
                false,
                &[lit("1", "float"), int("2")]
            ),
            lit("1.5", "float")
        );
        assert_eq!(
            run(
                AggregateFunction::Avg,
                true,
                &[int("1"), int("1"), int("4")]
            ),
            lit("2.5", "decimal")
        );
        assert_eq!(
            run(AggregateFunction::Avg, false, &[int("1"), simple("x")]),
            None
        );
    }

    #[test]
    fn min_max_across_kinds() {
        let values = [
            simple("b"),
            int("10"),
            None,
            lit("2.5", "decimal"),
            iri("http://a"),
            lang("a", "en"),
        ];
        assert_eq!(run(AggregateFunction::Min, false, &values), iri("http://a"));
        assert_eq!(run(AggregateFunction::Max, false, &values), lang("a", "en"));
        let numbers = [int("10"), lit("2.5", "decimal"), lit("1e1", "double")];
        assert_eq!(
            run(AggregateFunction::Min, false, &numbers),
            lit("2.5", "decimal")
        );
        // 10 and 1e1 tie by value; the fallback order (lexical form) decides.
        assert_eq!(
            run(AggregateFunction::Max, false, &numbers),
            lit("1e1", "double")
        );
        assert_eq!(run(AggregateFunction::Min, false, &[]), None);
        assert_eq!(run(AggregateFunction::Max, false, &[None]), None);
    }

    #[test]
    fn group_concat() {
        let separator = |s: &str| AggregateFunction::GroupConcat {
            separator: Some(s.to_owned()),
        };
        let values = [simple("a"), simple("b"), simple("a")];
        assert_eq!(run(separator(", "), false, &values), simple("a, b, a"));
        assert_eq!(run(separator(", "), true, &values), simple("a, b"));
        assert_eq!(
            run(
                AggregateFunction::GroupConcat { separator: None },
                false,
                &values
            ),
            simple("a b a")
        );
        assert_eq!(run(separator(","), false, &[]), simple(""));
        assert_eq!(
            run(separator("|"), false, &[simple("x"), int("1")]),
            simple("x|1")
        );
        assert_eq!(
            run(separator("|"), false, &[lang("x", "en"), lang("y", "en")]),
            simple("x|y")
        );
        assert_eq!(
            run(separator("|"), false, &[lang("x", "en"), simple("y")]),
            simple("x|y")
        );
        assert_eq!(
            run(separator("|"), false, &[simple("x"), iri("http://a")]),
            None
        );
        assert_eq!(run(separator("|"), false, &[simple("x"), None]), None);
    }

    #[test]
    fn sample_and_custom() {
        assert_eq!(
            run(
                AggregateFunction::Sample,
                false,
                &[None, int("1"), int("2")]
            ),
            int("1")
        );
        assert_eq!(run(AggregateFunction::Sample, false, &[]), None);
        let custom = AggregateFunction::Custom(NamedNode::new_unchecked("http://ex/agg"));
        assert_eq!(run(custom, false, &[int("1")]), None);
    }
}
