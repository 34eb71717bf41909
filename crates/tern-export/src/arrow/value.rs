//! Which Arrow type a term's value has, and the value itself, for the
//! typed columns of the Arrow stream. A value goes into a typed column
//! only when writing it back in its type's canonical lexical form gives
//! exactly the term's lexical form, so that turning the column back into
//! RDF terms is exact; any other term goes to the column's `__term`
//! companion in N-Triples syntax.

use crate::term::XSD_STRING;
use oxrdf::TermRef;
use tern_index::{inline, Tag};

/// The kinds of typed column, in the order a tie between kinds is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Iri,
    String,
    Integer,
    Double,
    /// xsd:decimal with this many fraction digits.
    Decimal(i8),
    Boolean,
    Date,
    DateTime,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Iri => "iri",
            Kind::String => "string",
            Kind::Integer => "integer",
            Kind::Double => "double",
            Kind::Decimal(_) => "decimal",
            Kind::Boolean => "boolean",
            Kind::Date => "date",
            Kind::DateTime => "dateTime",
        }
    }
}

/// A term's value in the type of its kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Integer(i64),
    Double(f64),
    Decimal(i128),
    Boolean(bool),
    /// Days since 1970-01-01.
    Date(i32),
    /// Milliseconds since 1970-01-01T00:00:00Z.
    DateTime(i64),
}

/// The kind `term` would go into, with no decimal scale fixed yet.
pub fn natural_kind(term: TermRef<'_>) -> Option<Kind> {
    let literal = match term {
        TermRef::NamedNode(_) => return Some(Kind::Iri),
        TermRef::Literal(l) if l.language().is_none() => l,
        _ => return None,
    };
    let kind = match literal.datatype().as_str() {
        XSD_STRING => Kind::String,
        inline::XSD_INTEGER => Kind::Integer,
        inline::XSD_DOUBLE => Kind::Double,
        inline::XSD_DECIMAL => Kind::Decimal(fraction_digits(literal.value())?),
        inline::XSD_BOOLEAN => Kind::Boolean,
        inline::XSD_DATE => Kind::Date,
        inline::XSD_DATE_TIME => Kind::DateTime,
        _ => return None,
    };
    value(kind, term).map(|_| kind)
}

/// `term`'s value as `kind`, if it is one and round-trips exactly.
pub fn value(kind: Kind, term: TermRef<'_>) -> Option<Value<'_>> {
    let literal = match (kind, term) {
        (Kind::Iri, TermRef::NamedNode(n)) => return Some(Value::Text(n.as_str())),
        (_, TermRef::Literal(l)) if l.language().is_none() => l,
        _ => return None,
    };
    let lexical = literal.value();
    let datatype = literal.datatype().as_str();
    match kind {
        Kind::String if datatype == XSD_STRING => Some(Value::Text(lexical)),
        Kind::Double if datatype == inline::XSD_DOUBLE => {
            // Not through `inline::encode`: the index inlines only doubles
            // whose last mantissa bits are zero.
            let x: f64 = lexical.parse().ok()?;
            let mut canonical = String::with_capacity(lexical.len());
            inline::write_double(x, &mut canonical);
            (canonical == lexical).then_some(Value::Double(x))
        }
        Kind::Decimal(scale) if datatype == inline::XSD_DECIMAL => {
            // The column keeps the lexical form's own scale, which the
            // index's fixed-point decimals do not.
            if fraction_digits(lexical)? != scale {
                return None;
            }
            let digits: String = lexical.chars().filter(|&c| c != '.').collect();
            let n: i128 = digits.parse().ok()?;
            (format_decimal(n, scale) == lexical).then_some(Value::Decimal(n))
        }
        // The index's inline encoding accepts exactly the canonical forms.
        Kind::Integer | Kind::Boolean | Kind::Date | Kind::DateTime => {
            let id = inline::encode(lexical, datatype)?;
            match (kind, id.tag()) {
                (Kind::Integer, Tag::Integer) => Some(Value::Integer(inline::integer_value(id))),
                (Kind::Boolean, Tag::Boolean) => Some(Value::Boolean(id.payload() == 1)),
                (Kind::Date, Tag::Date) => match inline::time_value(id) {
                    (days, None) => i32::try_from(days).ok().map(Value::Date),
                    _ => None,
                },
                // In UTC ("Z"): a Timestamp column has one timezone.
                (Kind::DateTime, Tag::DateTime) => match inline::time_value(id) {
                    (ms, Some(0)) => Some(Value::DateTime(ms)),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// Fraction digits of a decimal written with a point and digits only.
fn fraction_digits(lexical: &str) -> Option<i8> {
    let unsigned = lexical.strip_prefix('-').unwrap_or(lexical);
    let (int, frac) = unsigned.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(int) && digits(frac) && int.len() + frac.len() <= 38).then_some(frac.len() as i8)
}

fn format_decimal(n: i128, scale: i8) -> String {
    let digits = n.unsigned_abs().to_string();
    let scale = scale.max(0) as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

    fn typed(lexical: &str, datatype: &str) -> Literal {
        Literal::new_typed_literal(
            lexical,
            NamedNode::new_unchecked(format!("{XSD}{datatype}")),
        )
    }

    #[test]
    fn canonical_values_fit_and_others_do_not() {
        let cases = [
            ("42", "integer", Some(Value::Integer(42))),
            ("-7", "integer", Some(Value::Integer(-7))),
            ("007", "integer", None),
            ("1.5E0", "double", Some(Value::Double(1.5))),
            ("1.0E3", "double", Some(Value::Double(1000.0))),
            ("1.5", "double", None),
            ("12.50", "decimal", Some(Value::Decimal(1250))),
            ("-0.25", "decimal", Some(Value::Decimal(-25))),
            ("true", "boolean", Some(Value::Boolean(true))),
            ("1", "boolean", None),
            ("2024-02-29", "date", Some(Value::Date(19_782))),
            ("1970-01-02", "date", Some(Value::Date(1))),
            ("2023-02-29", "date", None),
            ("2024-01-01Z", "date", None),
            (
                "1969-12-31T23:59:59.5Z",
                "dateTime",
                Some(Value::DateTime(-500)),
            ),
            (
                "1970-01-01T00:00:01Z",
                "dateTime",
                Some(Value::DateTime(1000)),
            ),
            ("2008-06-20T00:00:00", "dateTime", None),
            ("2008-06-20T00:00:00+02:00", "dateTime", None),
        ];
        for (lexical, datatype, expected) in cases {
            let literal = typed(lexical, datatype);
            let term: TermRef<'_> = literal.as_ref().into();
            let got = natural_kind(term).and_then(|kind| value(kind, term));
            assert_eq!(got, expected, "{lexical}^^{datatype}");
        }
    }
}
