//! Equality (`=`, `sameTerm` is plain term equality), the ordering
//! operators (`<`, `<=`, `>`, `>=`) and the ORDER BY total order.

use super::numeric::{self, Numeric};
use super::value::{literal_value, Value};
use oxrdf::{Literal, Term};
use oxsdatatypes::{DateTime, Decimal, Duration, TimezoneOffset};
use std::cmp::Ordering;

/// The `=` operator: value equality for literals of known datatypes,
/// RDFterm-equal otherwise.
///
/// Literals of two different known kinds (say a string and a number) are
/// simply unequal, since their value spaces are disjoint; a literal of an
/// unknown datatype (or an ill-typed one) equals only itself and is a type
/// error against any other literal, as RDFterm-equal prescribes, except a
/// language-tagged one, which it cannot equal (the open-world tests of
/// SPARQL 1.0 expect `"xyz"@en != "xyz"^^:unknown`).
pub(super) fn equals(a: &Term, b: &Term) -> Option<bool> {
    match (a, b) {
        (Term::Literal(a), Term::Literal(b)) => literal_equals(a, b),
        (Term::Literal(_), _) | (_, Term::Literal(_)) => Some(false),
        _ => Some(a == b),
    }
}

fn literal_equals(a: &Literal, b: &Literal) -> Option<bool> {
    use Value as V;
    let (va, vb) = (literal_value(a), literal_value(b));
    Some(match (va, vb) {
        // A language-tagged literal's datatype is rdf:langString, known to
        // differ from any other, even one this engine does not know.
        (V::LangString(..), V::Other) | (V::Other, V::LangString(..)) => false,
        (V::Other, _) | (_, V::Other) => {
            if a == b {
                true
            } else {
                return None;
            }
        }
        (V::Numeric(x), V::Numeric(y)) => numeric::compare(x, y) == Some(Ordering::Equal),
        (V::Boolean(x), V::Boolean(y)) => x == y,
        (V::String(x), V::String(y)) => x == y,
        (V::LangString(x, lx), V::LangString(y, ly)) => x == y && lx.eq_ignore_ascii_case(ly),
        (V::DateTime(x), V::DateTime(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::Date(x), V::Date(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::Time(x), V::Time(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::GYearMonth(x), V::GYearMonth(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::GYear(x), V::GYear(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::GMonthDay(x), V::GMonthDay(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::GMonth(x), V::GMonth(y)) => determinate_equal(x.partial_cmp(&y))?,
        (V::GDay(x), V::GDay(y)) => determinate_equal(x.partial_cmp(&y))?,
        _ => match (as_duration(va), as_duration(vb)) {
            // op:duration-equal holds across the three duration types.
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    })
}

/// Equality of two date/time values: a value with a timezone and one
/// without are only comparable far apart (±14 hours); otherwise the answer
/// is indeterminate, which we report as an error.
fn determinate_equal(order: Option<Ordering>) -> Option<bool> {
    Some(order? == Ordering::Equal)
}

/// Any of the three duration types as a general duration.
fn as_duration(value: Value<'_>) -> Option<Duration> {
    match value {
        Value::Duration(d) => Some(d),
        Value::YearMonthDuration(d) => Some(d.into()),
        Value::DayTimeDuration(d) => Some(d.into()),
        _ => None,
    }
}

/// The comparison behind `<`, `<=`, `>`, `>=`.
///
/// `None` is a type error (terms that are not comparable literals, or dates
/// whose order is indeterminate); `Some(None)` means the values are
/// unordered (a NaN is involved), so every comparison is false.
pub(super) fn partial_compare(a: &Term, b: &Term) -> Option<Option<Ordering>> {
    use Value as V;
    let (Term::Literal(a), Term::Literal(b)) = (a, b) else {
        return None;
    };
    let (va, vb) = (literal_value(a), literal_value(b));
    Some(match (va, vb) {
        (V::Numeric(x), V::Numeric(y)) => numeric::compare(x, y),
        (V::Boolean(x), V::Boolean(y)) => Some(x.cmp(&y)),
        // Rust compares UTF-8 bytewise, which is code point order (fn:compare).
        (V::String(x), V::String(y)) => Some(x.cmp(y)),
        (V::DateTime(x), V::DateTime(y)) => Some(x.partial_cmp(&y)?),
        (V::Date(x), V::Date(y)) => Some(x.partial_cmp(&y)?),
        (V::Time(x), V::Time(y)) => Some(x.partial_cmp(&y)?),
        (V::GYearMonth(x), V::GYearMonth(y)) => Some(x.partial_cmp(&y)?),
        (V::GYear(x), V::GYear(y)) => Some(x.partial_cmp(&y)?),
        (V::GMonthDay(x), V::GMonthDay(y)) => Some(x.partial_cmp(&y)?),
        (V::GMonth(x), V::GMonth(y)) => Some(x.partial_cmp(&y)?),
        (V::GDay(x), V::GDay(y)) => Some(x.partial_cmp(&y)?),
        _ => Some(as_duration(va)?.partial_cmp(&as_duration(vb)?)?),
    })
}

/// See [`super::numeric_order_place`].
pub(super) fn numeric_order_place(term: Option<&Term>) -> Option<f64> {
    let Some(Term::Literal(literal)) = term else {
        return None;
    };
    let Value::Numeric(number) = literal_value(literal) else {
        return None;
    };
    let double = f64::from(number.to_double());
    // -0 and +0 are the same value (as in `numeric_total_cmp`).
    (!double.is_nan()).then_some(if double == 0.0 { 0.0 } else { double })
}

/// See [`super::order_cmp`].
pub(super) fn order_cmp(a: Option<&Term>, b: Option<&Term>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => term_cmp(a, b),
    }
}

fn term_cmp(a: &Term, b: &Term) -> Ordering {
    match (a, b) {
        (Term::BlankNode(x), Term::BlankNode(y)) => x.as_str().cmp(y.as_str()),
        (Term::NamedNode(x), Term::NamedNode(y)) => x.as_str().cmp(y.as_str()),
        (Term::Literal(x), Term::Literal(y)) => literal_cmp(x, y),
        // Different kinds; or RDF 1.2 triple terms (when enabled), ordered
        // by their serialization.
        _ => term_rank(a)
            .cmp(&term_rank(b))
            .then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

fn term_rank(term: &Term) -> u8 {
    match term {
        Term::BlankNode(_) => 0,
        Term::NamedNode(_) => 1,
        Term::Literal(_) => 2,
        #[allow(unreachable_patterns)] // RDF 1.2 triple terms, when enabled
        _ => 3,
    }
}

/// Literals: by kind, then by value inside a kind, then by the literal's
/// components. Every step compares a key computed from one literal alone,
/// so the result is a total order (which `sort_by` requires).
fn literal_cmp(a: &Literal, b: &Literal) -> Ordering {
    let (va, vb) = (literal_value(a), literal_value(b));
    kind_rank(va)
        .cmp(&kind_rank(vb))
        .then_with(|| value_cmp(va, vb))
        .then_with(|| a.value().cmp(b.value()))
        .then_with(|| a.datatype().as_str().cmp(b.datatype().as_str()))
        .then_with(|| a.language().cmp(&b.language()))
}

fn kind_rank(value: Value<'_>) -> u8 {
    match value {
        Value::Numeric(_) => 0,
        Value::Boolean(_) => 1,
        Value::String(_) => 2,
        Value::LangString(..) => 3,
        Value::DateTime(_) => 4,
        Value::Date(_) => 5,
        Value::Time(_) => 6,
        Value::GYearMonth(_) => 7,
        Value::GYear(_) => 8,
        Value::GMonthDay(_) => 9,
        Value::GMonth(_) => 10,
        Value::GDay(_) => 11,
        Value::Duration(_) | Value::YearMonthDuration(_) | Value::DayTimeDuration(_) => 12,
        Value::Other => 13,
    }
}

/// A date/time value on the timeline: itself if it has a timezone, else the
/// same local time in UTC (`None` on overflow).
macro_rules! in_utc {
    ($value:expr) => {
        if $value.timezone_offset().is_some() {
            Some($value)
        } else {
            $value.adjust(Some(TimezoneOffset::UTC))
        }
    };
}

/// Value order inside one kind. Values without a timezone are placed as if
/// they were in UTC, which makes the (otherwise partial) order total.
fn value_cmp(a: Value<'_>, b: Value<'_>) -> Ordering {
    use Value as V;
    match (a, b) {
        (V::Numeric(x), V::Numeric(y)) => numeric_total_cmp(x, y),
        (V::Boolean(x), V::Boolean(y)) => x.cmp(&y),
        (V::String(x), V::String(y)) => x.cmp(y),
        (V::DateTime(x), V::DateTime(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::Date(x), V::Date(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::Time(x), V::Time(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::GYearMonth(x), V::GYearMonth(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::GYear(x), V::GYear(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::GMonthDay(x), V::GMonthDay(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::GMonth(x), V::GMonth(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        (V::GDay(x), V::GDay(y)) => key_cmp(in_utc!(x), in_utc!(y)),
        _ => match (as_duration(a), as_duration(b)) {
            (Some(x), Some(y)) => key_cmp(duration_key(x), duration_key(y)),
            _ => Ordering::Equal,
        },
    }
}

/// Compares keys that all carry a timezone (so `partial_cmp` is total on
/// them); a missing key (overflow) sorts first.
fn key_cmp<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    }
}

/// Durations are only partially ordered (P1M vs P30D); placing them on the
/// timeline from one of XSD's reference points gives a total order that
/// agrees with every determinate comparison.
fn duration_key(duration: Duration) -> Option<DateTime> {
    let reference: DateTime = "1696-09-01T00:00:00Z".parse().ok()?;
    reference.checked_add_duration(duration)
}

/// Numerics by value across types, NaN first. The key is the value as a
/// double, refined by the exact decimal value where it has one (so large
/// integers that round to the same double still order correctly).
fn numeric_total_cmp(a: Numeric, b: Numeric) -> Ordering {
    let (da, db) = (f64::from(a.to_double()), f64::from(b.to_double()));
    match (da.is_nan(), db.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => {
            // -0 and +0 are the same value.
            let normalize = |x: f64| if x == 0.0 { 0.0 } else { x };
            normalize(da)
                .total_cmp(&normalize(db))
                .then_with(|| exact_value(a).cmp(&exact_value(b)))
        }
    }
}

fn exact_value(value: Numeric) -> Option<Decimal> {
    match value {
        Numeric::Integer(v) => Some(v.into()),
        Numeric::Decimal(v) => Some(v),
        Numeric::Float(v) => Decimal::try_from(v).ok(),
        Numeric::Double(v) => Decimal::try_from(v).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::test_util::{boolean, eval, iri, lang, simple, typed};
    use oxrdf::{BlankNode, NamedNode};

    /// Wherever two keys' numeric places differ, they order as the places
    /// do in the full ORDER BY order: across numeric types, zeros, NaN,
    /// integers too large for a double, ill-typed numbers and non-numbers.
    #[test]
    fn numeric_places_agree_with_the_order() {
        let keys: Vec<Option<Term>> = vec![
            None,
            Some(typed("1", "integer")),
            Some(typed("01", "integer")),
            Some(typed("1.0", "decimal")),
            Some(typed("1.5", "float")),
            Some(typed("-0", "double")),
            Some(typed("0", "float")),
            Some(typed("NaN", "double")),
            Some(typed("INF", "double")),
            Some(typed("-INF", "float")),
            Some(typed("9007199254740993", "integer")),
            Some(typed("9007199254740992", "integer")),
            Some(typed("abc", "integer")),
            Some(typed("2", "byte")),
            simple("1"),
            lang("1", "en"),
            iri("http://example.org/1"),
            Some(typed("2008-04-26", "date")),
        ];
        let mut placed = 0;
        for a in &keys {
            for b in &keys {
                let (pa, pb) = (
                    numeric_order_place(a.as_ref()),
                    numeric_order_place(b.as_ref()),
                );
                if let (Some(x), Some(y)) = (pa, pb) {
                    if x != y {
                        placed += 1;
                        assert_eq!(
                            x.total_cmp(&y),
                            order_cmp(a.as_ref(), b.as_ref()),
                            "{a:?} {b:?}"
                        );
                    }
                }
            }
        }
        assert!(placed > 50, "{placed} pairs decided by places");
        assert_eq!(
            numeric_order_place(keys[7].as_ref()),
            None,
            "NaN has no place"
        );
        assert_eq!(numeric_order_place(keys[12].as_ref()), None, "ill-typed");
        assert_eq!(numeric_order_place(keys[14].as_ref()), None, "a string");
    }

    #[test]
    fn numeric_equality_across_types() {
        assert_eq!(eval("1 = 1.0"), boolean(true));
        assert_eq!(eval("1 = 1.0e0"), boolean(true));
        assert_eq!(eval("\"1\"^^xsd:int = 1"), boolean(true));
        assert_eq!(eval("\"01\"^^xsd:integer = 1"), boolean(true));
        assert_eq!(eval("1 = 2"), boolean(false));
        assert_eq!(eval("1 != 2"), boolean(true));
        assert_eq!(eval("(0e0/0) = (0e0/0)"), boolean(false));
        assert_eq!(eval("(0e0/0) != (0e0/0)"), boolean(true));
    }

    #[test]
    fn equality_of_other_kinds() {
        assert_eq!(eval("\"a\" = \"a\"^^xsd:string"), boolean(true));
        assert_eq!(eval("\"a\"@en = \"a\"@EN"), boolean(true));
        assert_eq!(eval("\"a\"@en = \"a\""), boolean(false));
        assert_eq!(eval("\"a\" = 1"), boolean(false));
        assert_eq!(eval("true = \"1\"^^xsd:boolean"), boolean(true));
        assert_eq!(eval("<http://a> = <http://a>"), boolean(true));
        assert_eq!(eval("<http://a> = \"http://a\""), boolean(false));
        // Unknown datatypes: same term is equal, anything else an error.
        assert_eq!(eval("\"x\"^^ex:t = \"x\"^^ex:t"), boolean(true));
        assert_eq!(eval("\"x\"^^ex:t = \"y\"^^ex:t"), None);
        assert_eq!(eval("\"x\"^^ex:t != \"y\"^^ex:t"), None);
        assert_eq!(eval("\"abc\"^^xsd:integer = 1"), None);
    }

    #[test]
    fn dates_and_durations() {
        assert_eq!(
            eval("\"2002-04-02T12:00:00-01:00\"^^xsd:dateTime = \"2002-04-02T17:00:00+04:00\"^^xsd:dateTime"),
            boolean(true)
        );
        assert_eq!(
            eval("\"2002-04-02T12:00:00Z\"^^xsd:dateTime < \"2002-04-02T12:00:01Z\"^^xsd:dateTime"),
            boolean(true)
        );
        // With and without timezone: indeterminate near each other...
        assert_eq!(
            eval("\"2002-04-02T12:00:00Z\"^^xsd:dateTime = \"2002-04-02T12:00:00\"^^xsd:dateTime"),
            None
        );
        // ...but determinate far apart.
        assert_eq!(
            eval("\"2002-04-02T12:00:00Z\"^^xsd:dateTime < \"2002-04-04T12:00:00\"^^xsd:dateTime"),
            boolean(true)
        );
        assert_eq!(
            eval("\"P1Y\"^^xsd:yearMonthDuration = \"P12M\"^^xsd:duration"),
            boolean(true)
        );
        assert_eq!(
            eval("\"PT1H\"^^xsd:dayTimeDuration < \"PT61M\"^^xsd:dayTimeDuration"),
            boolean(true)
        );
        assert_eq!(
            eval("\"2002-04-02\"^^xsd:date = \"2002-04-02T00:00:00\"^^xsd:dateTime"),
            boolean(false)
        );
    }

    #[test]
    fn ordering_operators() {
        assert_eq!(eval("1 < 1.5"), boolean(true));
        assert_eq!(eval("2e0 > 1.5"), boolean(true));
        assert_eq!(eval("1 <= 1.0"), boolean(true));
        assert_eq!(eval("1 >= 2"), boolean(false));
        assert_eq!(eval("\"abc\" < \"abd\""), boolean(true));
        assert_eq!(eval("\"B\" < \"a\""), boolean(true));
        assert_eq!(eval("false < true"), boolean(true));
        assert_eq!(eval("(0e0/0) < 1"), boolean(false));
        assert_eq!(eval("(0e0/0) >= 1"), boolean(false));
        assert_eq!(eval("\"a\" < 1"), None);
        assert_eq!(eval("\"a\"@en < \"b\"@en"), None);
        assert_eq!(eval("<http://a> < <http://b>"), None);
    }

    #[test]
    fn same_term_is_not_value_equality() {
        assert_eq!(eval("sameTerm(1, 1.0)"), boolean(false));
        assert_eq!(eval("sameTerm(1, 1)"), boolean(true));
        assert_eq!(eval("sameTerm(\"a\", \"a\"^^xsd:string)"), boolean(true));
        assert_eq!(eval("sameTerm(\"x\"^^ex:t, \"y\"^^ex:t)"), boolean(false));
    }

    #[test]
    fn order_between_kinds() {
        let bnode = Some(Term::from(BlankNode::new_unchecked("b")));
        let sorted = [
            None,
            bnode,
            iri("http://a"),
            iri("http://b"),
            Some(typed("NaN", "double")),
            Some(typed("-1", "integer")),
            Some(typed("0.5", "decimal")),
            Some(typed("01", "integer")),
            Some(typed("1", "double")),
            Some(typed("1", "integer")),
            Some(typed("2", "float")),
            Some(typed("10", "integer")),
            Some(typed("false", "boolean")),
            Some(typed("true", "boolean")),
            simple("10"),
            simple("9"),
            simple("a"),
            lang("a", "en"),
            lang("a", "fr"),
            lang("b", "de"),
            Some(typed("2000-01-01T00:00:00Z", "dateTime")),
            Some(typed("2000-01-01T00:30:00", "dateTime")),
            Some(typed("2000-01-01T00:00:00-01:00", "dateTime")),
            Some(typed("1999-01-01", "date")),
            Some(typed("P29D", "dayTimeDuration")),
            Some(typed("P1M", "yearMonthDuration")),
            Some(typed("P40D", "dayTimeDuration")),
            Some(typed("abc", "integer")),
            Some(Literal::new_typed_literal("z", NamedNode::new_unchecked("http://t")).into()),
        ];
        for (i, a) in sorted.iter().enumerate() {
            for (j, b) in sorted.iter().enumerate() {
                assert_eq!(
                    order_cmp(a.as_ref(), b.as_ref()),
                    i.cmp(&j),
                    "{a:?} vs {b:?}"
                );
            }
        }
        let mut shuffled = sorted.to_vec();
        shuffled.reverse();
        shuffled.sort_by(|a, b| order_cmp(a.as_ref(), b.as_ref()));
        assert_eq!(shuffled, sorted);
    }

    #[test]
    fn large_integers_order_exactly() {
        let a = typed("9007199254740993", "integer");
        let b = typed("9007199254740992", "double");
        let c = typed("9007199254740992", "integer");
        assert_eq!(order_cmp(Some(&c), Some(&a)), Ordering::Less);
        assert_eq!(order_cmp(Some(&b), Some(&a)), Ordering::Less);
    }
}
