//! XSD constructor functions — casts such as `xsd:integer(?x)` — following
//! the XPath casting rules (spec 17.5, XPath Functions 3.1 section 19).
//!
//! Targets: `xsd:string`, `xsd:boolean`, `xsd:decimal`, `xsd:float`,
//! `xsd:double`, `xsd:integer` and its derived types (`xsd:int`...,
//! range-checked, result keeps the requested type), `xsd:dateTime`,
//! `xsd:date`, `xsd:time`, the `xsd:g*` types and the three duration types.
//! Results are in canonical form (`xsd:integer(" 05 ")` is `"5"`).

use super::numeric::Numeric;
use super::value::{
    display, integer_range, literal_value, parse_xsd, simple_literal, typed_literal, Value, XSD_NS,
};
use oxrdf::{Literal, NamedNodeRef, Term};
use oxsdatatypes::{
    Date, DateTime, DayTimeDuration, Decimal, Double, Duration, Float, GDay, GMonth, GMonthDay,
    GYear, GYearMonth, Integer, Time, YearMonthDuration,
};

/// Casts `arg` to the XSD type `target`; `None` for an impossible cast or
/// when `target` is not a supported XSD type.
pub(super) fn cast(target: NamedNodeRef<'_>, arg: &Term) -> Option<Term> {
    let local = target.as_str().strip_prefix(XSD_NS)?;
    match arg {
        // IRIs cast to their string only.
        Term::NamedNode(node) if local == "string" => Some(simple_literal(node.as_str())),
        Term::Literal(literal) => cast_literal(target, local, literal),
        _ => None,
    }
}

fn cast_literal(target: NamedNodeRef<'_>, local: &str, literal: &Literal) -> Option<Term> {
    let value = literal_value(literal);
    if local == "string" {
        // Any literal: the canonical form of its value, or else its
        // lexical form (language-tagged strings, unknown datatypes).
        return Some(simple_literal(
            canonical(value).unwrap_or_else(|| literal.value().to_owned()),
        ));
    }
    let result = match value {
        // From strings: the target's lexical rules, after XSD whitespace
        // collapsing (internal whitespace is invalid in all targets anyway).
        Value::String(lexical) => parse_xsd(local, lexical.trim_matches(is_xml_space))?,
        Value::LangString(..) | Value::Other => return None,
        value => convert(local, value)?,
    };
    Some(typed_literal(canonical(result)?, target))
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The canonical lexical form of a typed value.
fn canonical(value: Value<'_>) -> Option<String> {
    match value {
        Value::Numeric(v) => Some(v.lexical()),
        Value::Boolean(v) => Some(if v { "true" } else { "false" }.to_owned()),
        Value::String(v) => Some(v.to_owned()),
        Value::DateTime(v) => display(v),
        Value::Date(v) => display(v),
        Value::Time(v) => display(v),
        Value::GYearMonth(v) => display(v),
        Value::GYear(v) => display(v),
        Value::GMonthDay(v) => display(v),
        Value::GDay(v) => display(v),
        Value::GMonth(v) => display(v),
        Value::Duration(v) => display(v),
        Value::YearMonthDuration(v) => display(v),
        Value::DayTimeDuration(v) => display(v),
        Value::LangString(..) | Value::Other => None,
    }
}

/// Value-to-value casts (the non-string rows of the casting table).
fn convert<'a>(local: &str, value: Value<'a>) -> Option<Value<'a>> {
    use Numeric as N;
    use Value as V;
    Some(match (local, value) {
        ("boolean", V::Boolean(v)) => V::Boolean(v),
        ("boolean", V::Numeric(v)) => V::Boolean(v.is_true()),
        ("double", V::Numeric(v)) => V::Numeric(N::Double(v.to_double())),
        ("double", V::Boolean(v)) => V::Numeric(N::Double(Double::from(u8::from(v)))),
        ("float", V::Numeric(v)) => V::Numeric(N::Float(match v {
            N::Integer(v) => v.into(),
            N::Decimal(v) => v.into(),
            N::Float(v) => v,
            N::Double(v) => v.into(),
        })),
        ("float", V::Boolean(v)) => V::Numeric(N::Float(Float::from(u8::from(v)))),
        // NaN and infinities have no decimal or integer value: errors.
        ("decimal", V::Numeric(v)) => V::Numeric(N::Decimal(match v {
            N::Integer(v) => v.into(),
            N::Decimal(v) => v,
            N::Float(v) => Decimal::try_from(v).ok()?,
            N::Double(v) => Decimal::try_from(v).ok()?,
        })),
        ("decimal", V::Boolean(v)) => V::Numeric(N::Decimal(Decimal::from(v))),
        (_, V::Numeric(_) | V::Boolean(_)) => V::Numeric(N::Integer(to_integer(local, value)?)),
        ("dateTime", V::DateTime(v)) => V::DateTime(v),
        ("dateTime", V::Date(v)) => V::DateTime(DateTime::try_from(v).ok()?),
        ("date", V::Date(v)) => V::Date(v),
        ("date", V::DateTime(v)) => V::Date(Date::try_from(v).ok()?),
        ("time", V::Time(v)) => V::Time(v),
        ("time", V::DateTime(v)) => V::Time(Time::from(v)),
        ("gYear", V::GYear(v)) => V::GYear(v),
        ("gYear", V::DateTime(v)) => V::GYear(GYear::try_from(v).ok()?),
        ("gYear", V::Date(v)) => V::GYear(GYear::try_from(v).ok()?),
        ("gYearMonth", V::GYearMonth(v)) => V::GYearMonth(v),
        ("gYearMonth", V::DateTime(v)) => V::GYearMonth(GYearMonth::try_from(v).ok()?),
        ("gYearMonth", V::Date(v)) => V::GYearMonth(GYearMonth::from(v)),
        ("gMonthDay", V::GMonthDay(v)) => V::GMonthDay(v),
        ("gMonthDay", V::DateTime(v)) => V::GMonthDay(GMonthDay::from(v)),
        ("gMonthDay", V::Date(v)) => V::GMonthDay(GMonthDay::from(v)),
        ("gMonth", V::GMonth(v)) => V::GMonth(v),
        ("gMonth", V::DateTime(v)) => V::GMonth(GMonth::from(v)),
        ("gMonth", V::Date(v)) => V::GMonth(GMonth::from(v)),
        ("gDay", V::GDay(v)) => V::GDay(v),
        ("gDay", V::DateTime(v)) => V::GDay(GDay::from(v)),
        ("gDay", V::Date(v)) => V::GDay(GDay::from(v)),
        ("duration", value) => V::Duration(as_duration(value)?),
        // Casting between duration types keeps only the target's part.
        ("yearMonthDuration", value) => V::YearMonthDuration(year_month_part(as_duration(value)?)),
        ("dayTimeDuration", value) => {
            let duration = as_duration(value)?;
            let rest = duration.checked_sub(Duration::from(year_month_part(duration)))?;
            V::DayTimeDuration(DayTimeDuration::try_from(rest).ok()?)
        }
        _ => return None,
    })
}

/// Numeric or boolean to an integer type: truncation toward zero, then the
/// target's range check.
fn to_integer(local: &str, value: Value<'_>) -> Option<Integer> {
    let (min, max) = integer_range(local)?;
    let integer = match value {
        Value::Boolean(v) => Integer::from(v),
        Value::Numeric(Numeric::Integer(v)) => v,
        Value::Numeric(Numeric::Decimal(v)) => Integer::try_from(v).ok()?,
        Value::Numeric(Numeric::Float(v)) => Integer::try_from(v).ok()?,
        Value::Numeric(Numeric::Double(v)) => Integer::try_from(v).ok()?,
        _ => return None,
    };
    (min..=max).contains(&i64::from(integer)).then_some(integer)
}

fn as_duration(value: Value<'_>) -> Option<Duration> {
    match value {
        Value::Duration(v) => Some(v),
        Value::YearMonthDuration(v) => Some(v.into()),
        Value::DayTimeDuration(v) => Some(v.into()),
        _ => None,
    }
}

fn year_month_part(duration: Duration) -> YearMonthDuration {
    YearMonthDuration::new(duration.years() * 12 + duration.months())
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{eval, lit, simple};

    #[test]
    fn to_integer() {
        assert_eq!(eval("xsd:integer(\"12\")"), lit("12", "integer"));
        assert_eq!(eval("xsd:integer(\" +012 \")"), lit("12", "integer"));
        assert_eq!(eval("xsd:integer(\"1.5\")"), None);
        assert_eq!(eval("xsd:integer(\"abc\")"), None);
        assert_eq!(eval("xsd:integer(1.9)"), lit("1", "integer"));
        assert_eq!(eval("xsd:integer(-1.9)"), lit("-1", "integer"));
        assert_eq!(eval("xsd:integer(2.7e0)"), lit("2", "integer"));
        assert_eq!(eval("xsd:integer(1e0/0)"), None);
        assert_eq!(eval("xsd:integer(true)"), lit("1", "integer"));
        assert_eq!(eval("xsd:integer(\"1\"@en)"), None);
        assert_eq!(eval("xsd:integer(<http://a>)"), None);
        assert_eq!(eval("xsd:int(\"42\")"), lit("42", "int"));
        assert_eq!(eval("xsd:byte(\"200\")"), None);
        assert_eq!(eval("xsd:byte(100)"), lit("100", "byte"));
        assert_eq!(eval("xsd:nonNegativeInteger(-1)"), None);
    }

    #[test]
    fn to_decimal_float_double() {
        assert_eq!(eval("xsd:decimal(\"1.50\")"), lit("1.5", "decimal"));
        assert_eq!(eval("xsd:decimal(\"1e3\")"), None);
        assert_eq!(eval("xsd:decimal(3)"), lit("3", "decimal"));
        assert_eq!(eval("xsd:decimal(2.5e0)"), lit("2.5", "decimal"));
        assert_eq!(eval("xsd:decimal(false)"), lit("0", "decimal"));
        assert_eq!(eval("xsd:decimal(0e0/0)"), None);
        assert_eq!(eval("xsd:double(\"1e3\")"), lit("1000", "double"));
        assert_eq!(eval("xsd:double(\"-INF\")"), lit("-INF", "double"));
        assert_eq!(eval("xsd:double(\"inf\")"), None);
        assert_eq!(eval("xsd:double(1.5)"), lit("1.5", "double"));
        assert_eq!(eval("xsd:double(true)"), lit("1", "double"));
        assert_eq!(eval("xsd:float(\"0.5\")"), lit("0.5", "float"));
        assert_eq!(eval("xsd:float(2)"), lit("2", "float"));
        assert_eq!(eval("xsd:double(\"2020-01-01\"^^xsd:date)"), None);
    }

    #[test]
    fn to_boolean() {
        assert_eq!(eval("xsd:boolean(\"1\")"), lit("true", "boolean"));
        assert_eq!(eval("xsd:boolean(\"false\")"), lit("false", "boolean"));
        assert_eq!(eval("xsd:boolean(\"yes\")"), None);
        assert_eq!(eval("xsd:boolean(\"TRUE\")"), None);
        assert_eq!(eval("xsd:boolean(0.0)"), lit("false", "boolean"));
        assert_eq!(eval("xsd:boolean(-3)"), lit("true", "boolean"));
        assert_eq!(eval("xsd:boolean(0e0/0)"), lit("false", "boolean"));
    }

    #[test]
    fn to_string() {
        assert_eq!(eval("xsd:string(<http://a/b>)"), simple("http://a/b"));
        assert_eq!(eval("xsd:string(\"01\"^^xsd:integer)"), simple("1"));
        assert_eq!(eval("xsd:string(1.50)"), simple("1.5"));
        assert_eq!(eval("xsd:string(\"1\"^^xsd:boolean)"), simple("true"));
        assert_eq!(eval("xsd:string(\"chat\"@fr)"), simple("chat"));
        assert_eq!(eval("xsd:string(\"x\"^^ex:t)"), simple("x"));
        assert_eq!(eval("xsd:string(\"abc\"^^xsd:integer)"), simple("abc"));
        assert_eq!(eval("xsd:string(xsd:string(\"a\"))"), simple("a"));
    }

    #[test]
    fn dates_and_durations() {
        assert_eq!(
            eval("xsd:dateTime(\"2002-05-30T09:00:00Z\")"),
            lit("2002-05-30T09:00:00Z", "dateTime")
        );
        assert_eq!(eval("xsd:dateTime(\"2002-05-30\")"), None);
        assert_eq!(
            eval("xsd:dateTime(\"2002-05-30\"^^xsd:date)"),
            lit("2002-05-30T00:00:00", "dateTime")
        );
        assert_eq!(
            eval("xsd:date(\"2002-05-30T09:00:00+02:00\"^^xsd:dateTime)"),
            lit("2002-05-30+02:00", "date")
        );
        assert_eq!(
            eval("xsd:time(\"2002-05-30T09:00:00\"^^xsd:dateTime)"),
            lit("09:00:00", "time")
        );
        assert_eq!(
            eval("xsd:gYear(\"2002-05-30\"^^xsd:date)"),
            lit("2002", "gYear")
        );
        assert_eq!(eval("xsd:dateTime(1)"), None);
        assert_eq!(
            eval("xsd:yearMonthDuration(\"P1Y2M3DT4H\"^^xsd:duration)"),
            lit("P1Y2M", "yearMonthDuration")
        );
        assert_eq!(
            eval("xsd:dayTimeDuration(\"P1Y2M3DT4H\"^^xsd:duration)"),
            lit("P3DT4H", "dayTimeDuration")
        );
        assert_eq!(eval("xsd:duration(\"P14M\")"), lit("P1Y2M", "duration"));
    }

    #[test]
    fn not_a_cast() {
        assert_eq!(eval("xsd:anyURI(\"http://a\")"), None);
        assert_eq!(eval("xsd:string()"), None);
    }
}
