//! Typed views of RDF literals, and constructors for result literals.
//!
//! A literal whose datatype we know and whose lexical form is valid for it
//! becomes a typed [`Value`]; anything else (unknown datatype, ill-typed
//! lexical form such as `"abc"^^xsd:integer`) is [`Value::Other`], which
//! operators treat as an opaque term.

use super::numeric::Numeric;
use oxrdf::vocab::xsd;
use oxrdf::{Literal, NamedNodeRef, Term};
use oxsdatatypes::{
    Date, DateTime, DayTimeDuration, Decimal, Double, Duration, Float, GDay, GMonth, GMonthDay,
    GYear, GYearMonth, Integer, Time, YearMonthDuration,
};
use std::str::FromStr;

pub(super) const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema#";

/// The value of a literal, as far as SPARQL operators care.
#[derive(Debug, Clone, Copy)]
pub(super) enum Value<'a> {
    Numeric(Numeric),
    Boolean(bool),
    /// Simple literal or `xsd:string` (the same thing in RDF 1.1).
    String(&'a str),
    /// Language-tagged string: (lexical form, language tag).
    LangString(&'a str, &'a str),
    DateTime(DateTime),
    Date(Date),
    Time(Time),
    GYearMonth(GYearMonth),
    GYear(GYear),
    GMonthDay(GMonthDay),
    GDay(GDay),
    GMonth(GMonth),
    Duration(Duration),
    YearMonthDuration(YearMonthDuration),
    DayTimeDuration(DayTimeDuration),
    /// Unknown datatype, or a lexical form that is invalid for its datatype.
    Other,
}

/// The typed value of a literal term; `None` for IRIs and blank nodes.
pub(super) fn term_value(term: &Term) -> Option<Value<'_>> {
    match term {
        Term::Literal(literal) => Some(literal_value(literal)),
        _ => None,
    }
}

/// The typed value of a literal.
pub(super) fn literal_value(literal: &Literal) -> Value<'_> {
    if let Some(language) = literal.language() {
        return Value::LangString(literal.value(), language);
    }
    match literal.datatype().as_str().strip_prefix(XSD_NS) {
        Some(local) => parse_xsd(local, literal.value()).unwrap_or(Value::Other),
        None => Value::Other,
    }
}

/// Parses `lexical` as a value of the XSD datatype whose local name is
/// `local`; `None` when the datatype is unknown or the lexical form invalid.
pub(super) fn parse_xsd<'a>(local: &str, lexical: &'a str) -> Option<Value<'a>> {
    Some(match local {
        "string" => Value::String(lexical),
        "boolean" => Value::Boolean(parse_boolean(lexical)?),
        "decimal" => Value::Numeric(Numeric::Decimal(Decimal::from_str(lexical).ok()?)),
        "float" => Value::Numeric(Numeric::Float(parse_float(lexical)?)),
        "double" => Value::Numeric(Numeric::Double(parse_double(lexical)?)),
        "dateTime" => Value::DateTime(lexical.parse().ok()?),
        "date" => Value::Date(lexical.parse().ok()?),
        "time" => Value::Time(lexical.parse().ok()?),
        "gYearMonth" => Value::GYearMonth(lexical.parse().ok()?),
        "gYear" => Value::GYear(lexical.parse().ok()?),
        "gMonthDay" => Value::GMonthDay(lexical.parse().ok()?),
        "gDay" => Value::GDay(lexical.parse().ok()?),
        "gMonth" => Value::GMonth(lexical.parse().ok()?),
        "duration" => Value::Duration(lexical.parse().ok()?),
        "yearMonthDuration" => Value::YearMonthDuration(lexical.parse().ok()?),
        "dayTimeDuration" => Value::DayTimeDuration(lexical.parse().ok()?),
        _ => Value::Numeric(Numeric::Integer(parse_integer(local, lexical)?)),
    })
}

/// Value range of `xsd:integer` and the types derived from it, by local
/// name; `None` for any other name. Integers are 64-bit here, so the upper
/// end of `xsd:unsignedLong` and arbitrary-size integers are out of reach.
pub(super) fn integer_range(local: &str) -> Option<(i64, i64)> {
    Some(match local {
        "integer" | "long" => (i64::MIN, i64::MAX),
        "int" => (i32::MIN.into(), i32::MAX.into()),
        "short" => (i16::MIN.into(), i16::MAX.into()),
        "byte" => (i8::MIN.into(), i8::MAX.into()),
        "nonPositiveInteger" => (i64::MIN, 0),
        "negativeInteger" => (i64::MIN, -1),
        "nonNegativeInteger" | "unsignedLong" => (0, i64::MAX),
        "positiveInteger" => (1, i64::MAX),
        "unsignedInt" => (0, u32::MAX.into()),
        "unsignedShort" => (0, u16::MAX.into()),
        "unsignedByte" => (0, u8::MAX.into()),
        _ => return None,
    })
}

/// Parses an integer lexical form (`[+-]?[0-9]+`) of the integer type
/// `local`, checking the type's value range.
pub(super) fn parse_integer(local: &str, lexical: &str) -> Option<Integer> {
    let (min, max) = integer_range(local)?;
    // i64's parser accepts exactly the XSD lexical space (sign, digits).
    let value = i64::from_str(lexical).ok()?;
    (min..=max).contains(&value).then(|| value.into())
}

/// `xsd:boolean` lexical space: `true`, `false`, `1`, `0`.
pub(super) fn parse_boolean(lexical: &str) -> Option<bool> {
    match lexical {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// `xsd:double` lexical space. Rust's float parser is more lenient
/// (`inf`, `infinity`, `nan` in any case), so the XSD grammar is checked
/// first.
pub(super) fn parse_double(lexical: &str) -> Option<Double> {
    Some(f64::from_str(xsd_float_lexical(lexical)?).ok()?.into())
}

/// `xsd:float` lexical space (same grammar as double, rounded to 32 bits).
pub(super) fn parse_float(lexical: &str) -> Option<Float> {
    Some(f32::from_str(xsd_float_lexical(lexical)?).ok()?.into())
}

/// Validates the XSD float/double grammar and returns a string Rust's
/// parser reads with the same meaning.
fn xsd_float_lexical(lexical: &str) -> Option<&str> {
    match lexical {
        "INF" | "+INF" => return Some("inf"),
        "-INF" => return Some("-inf"),
        "NaN" => return Some("NaN"),
        _ => {}
    }
    let bytes = lexical.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let mut mantissa_digits = 0;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
        mantissa_digits += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == exponent_start {
            return None;
        }
    }
    (i == bytes.len()).then_some(lexical)
}

/// A literal term with the given lexical form and datatype.
pub(super) fn typed_literal(lexical: impl Into<String>, datatype: NamedNodeRef<'_>) -> Term {
    Literal::new_typed_literal(lexical, datatype).into()
}

/// A simple literal (`xsd:string`) term.
pub(super) fn simple_literal(value: impl Into<String>) -> Term {
    Literal::new_simple_literal(value).into()
}

/// A string literal carrying `language` when given (the tag comes from an
/// existing literal, so it is already valid), a simple literal otherwise.
pub(super) fn string_literal(value: impl Into<String>, language: Option<&str>) -> Term {
    match language {
        Some(language) => Literal::new_language_tagged_literal_unchecked(value, language).into(),
        None => Literal::new_simple_literal(value).into(),
    }
}

/// An `xsd:boolean` literal term.
pub(super) fn boolean_literal(value: bool) -> Term {
    typed_literal(if value { "true" } else { "false" }, xsd::BOOLEAN)
}

/// An `xsd:integer` literal term.
pub(super) fn integer_literal(value: impl Into<Integer>) -> Term {
    typed_literal(value.into().to_string(), xsd::INTEGER)
}

/// A literal term for a date/time or duration value, using the type's
/// canonical serialization; `None` when the value has none (see
/// [`display`]).
pub(super) fn display_literal(
    value: impl std::fmt::Display,
    datatype: NamedNodeRef<'_>,
) -> Option<Term> {
    Some(typed_literal(display(value)?, datatype))
}

/// `value.to_string()` without its panic: a duration whose month and second
/// parts have opposite signs (say `P1M` plus `-P1D`) has no lexical form,
/// and its `Display` reports an error.
pub(super) fn display(value: impl std::fmt::Display) -> Option<String> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{value}").ok()?;
    Some(out)
}

/// The string and language of a string literal (simple, `xsd:string` or
/// language-tagged); `None` for any other term — the "string literal"
/// argument type of the spec's string functions.
pub(super) fn string_and_language(term: &Term) -> Option<(&str, Option<&str>)> {
    match term_value(term)? {
        Value::String(value) => Some((value, None)),
        Value::LangString(value, language) => Some((value, Some(language))),
        _ => None,
    }
}

/// The string of a simple literal or `xsd:string`; `None` for anything else
/// (language-tagged strings included).
pub(super) fn simple_string(term: &Term) -> Option<&str> {
    match term_value(term)? {
        Value::String(value) => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(lexical: &str, datatype: NamedNodeRef<'_>) -> String {
        format!(
            "{:?}",
            literal_value(&Literal::new_typed_literal(lexical, datatype))
        )
    }

    #[test]
    fn derived_integer_types_check_their_range() {
        assert!(value_of("127", xsd::BYTE).starts_with("Numeric(Integer"));
        assert_eq!(value_of("1200", xsd::BYTE), "Other");
        assert_eq!(value_of("-1", xsd::NON_NEGATIVE_INTEGER), "Other");
        assert_eq!(value_of("0", xsd::POSITIVE_INTEGER), "Other");
        assert!(value_of("+0042", xsd::INTEGER).contains("42"));
        assert_eq!(value_of("1.0", xsd::INTEGER), "Other");
        assert_eq!(value_of(" 1", xsd::INTEGER), "Other");
    }

    #[test]
    fn double_lexical_space_is_xsd_not_rust() {
        assert!(parse_double("1.5e3").is_some_and(|d| f64::from(d) == 1500.0));
        assert!(parse_double(".5").is_some_and(|d| f64::from(d) == 0.5));
        assert!(parse_double("5.").is_some_and(|d| f64::from(d) == 5.0));
        assert!(parse_double("-INF").is_some_and(|d| f64::from(d) == f64::NEG_INFINITY));
        assert!(parse_double("NaN").is_some_and(Double::is_nan));
        assert!(parse_double("inf").is_none());
        assert!(parse_double("infinity").is_none());
        assert!(parse_double("nan").is_none());
        assert!(parse_double("1e").is_none());
        assert!(parse_double(".").is_none());
        assert!(parse_double("").is_none());
        assert!(parse_float("0.1").is_some_and(|f| f32::from(f) == 0.1_f32));
    }

    #[test]
    fn booleans_and_strings() {
        assert_eq!(value_of("1", xsd::BOOLEAN), "Boolean(true)");
        assert_eq!(value_of("TRUE", xsd::BOOLEAN), "Other");
        let lang = Literal::new_language_tagged_literal("chat", "fr").unwrap();
        assert_eq!(
            format!("{:?}", literal_value(&lang)),
            "LangString(\"chat\", \"fr\")"
        );
        assert_eq!(
            format!("{:?}", literal_value(&Literal::new_simple_literal("a"))),
            "String(\"a\")"
        );
    }
}
