//! Which Arrow type a term's value has, and the value itself, for the
//! typed columns of the Arrow stream. A value goes into a typed column
//! only when writing it back in its type's canonical lexical form gives
//! exactly the term's lexical form, so that turning the column back into
//! RDF terms is exact; any other term goes to the column's `__term`
//! companion in N-Triples syntax.

use oxrdf::TermRef;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

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
        TermRef::Literal(l) => l,
        _ => return None,
    };
    if literal.language().is_some() {
        return None;
    }
    let kind = match literal.datatype().as_str().strip_prefix(XSD)? {
        "string" => Kind::String,
        "integer" => Kind::Integer,
        "double" => Kind::Double,
        "decimal" => Kind::Decimal(fraction_digits(literal.value())?),
        "boolean" => Kind::Boolean,
        "date" => Kind::Date,
        "dateTime" => Kind::DateTime,
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
    let datatype = literal.datatype().as_str().strip_prefix(XSD)?;
    match (kind, datatype) {
        (Kind::String, "string") => Some(Value::Text(lexical)),
        (Kind::Integer, "integer") => {
            let n: i64 = lexical.parse().ok()?;
            (n.to_string() == lexical).then_some(Value::Integer(n))
        }
        (Kind::Double, "double") => {
            let x: f64 = lexical.parse().ok()?;
            (canonical_double(x) == lexical).then_some(Value::Double(x))
        }
        (Kind::Decimal(scale), "decimal") => {
            if fraction_digits(lexical)? != scale {
                return None;
            }
            let digits: String = lexical.chars().filter(|&c| c != '.').collect();
            let n: i128 = digits.parse().ok()?;
            (format_decimal(n, scale) == lexical).then_some(Value::Decimal(n))
        }
        (Kind::Boolean, "boolean") => match lexical {
            "true" => Some(Value::Boolean(true)),
            "false" => Some(Value::Boolean(false)),
            _ => None,
        },
        (Kind::Date, "date") => {
            let days = parse_date(lexical)?;
            (format_date(days) == lexical).then_some(Value::Date(days))
        }
        (Kind::DateTime, "dateTime") => {
            let (date, time) = lexical.split_once('T')?;
            let time = time.strip_suffix('Z')?;
            let days = i64::from(parse_date(date)?);
            let ms = parse_time(time)?;
            let value = days * 86_400_000 + ms;
            (format_date_time(value) == lexical).then_some(Value::DateTime(value))
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

pub fn format_decimal(n: i128, scale: i8) -> String {
    let digits = n.unsigned_abs().to_string();
    let scale = scale.max(0) as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// XSD's canonical form of a double: a mantissa with one digit before the
/// point and at least one after it, then `E` and the exponent.
pub fn canonical_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "INF" } else { "-INF" }.to_owned();
    }
    let text = format!("{x:E}");
    match text.split_once('E') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => {
            format!("{mantissa}.0E{exponent}")
        }
        _ => text,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian `YYYY-MM-DD` (years 0001
/// to 9999).
fn parse_date(text: &str) -> Option<i32> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let number = |s: &str| s.parse::<u32>().ok();
    let (y, m, d) = (
        number(&text[..4])?,
        number(&text[5..7])?,
        number(&text[8..])?,
    );
    if y == 0 || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y as i64, m, d) as i32)
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Milliseconds of `hh:mm:ss` or `hh:mm:ss.fff` (at most 3 fraction digits).
fn parse_time(text: &str) -> Option<i64> {
    let (hms, fraction) = match text.split_once('.') {
        Some((hms, f))
            if !f.is_empty() && f.len() <= 3 && f.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (hms, f)
        }
        Some(_) => return None,
        None => (text, ""),
    };
    let b = hms.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let number = |s: &str| s.parse::<i64>().ok();
    let (h, m, s) = (number(&hms[..2])?, number(&hms[3..5])?, number(&hms[6..])?);
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let ms = if fraction.is_empty() {
        0
    } else {
        number(&format!("{fraction:0<3}"))?
    };
    Some(((h * 60 + m) * 60 + s) * 1000 + ms)
}

pub fn format_date_time(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, millis) = (rest / 1000, rest % 1000);
    let date = format_date(days as i32);
    if millis == 0 {
        format!("{date}T{h:02}:{m:02}:{s:02}Z")
    } else {
        let fraction = format!("{millis:03}");
        format!(
            "{date}T{h:02}:{m:02}:{s:02}.{}Z",
            fraction.trim_end_matches('0')
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Literal, NamedNode};

    fn typed(lexical: &str, datatype: &str) -> Literal {
        Literal::new_typed_literal(
            lexical,
            NamedNode::new_unchecked(format!("{XSD}{datatype}")),
        )
    }

    #[test]
    fn canonical_values_round_trip_and_others_do_not_fit() {
        let cases = [
            ("42", "integer", true),
            ("-7", "integer", true),
            ("007", "integer", false),
            ("1.5E0", "double", true),
            ("1.0E3", "double", true),
            ("1.5", "double", false),
            ("12.50", "decimal", true),
            ("-0.25", "decimal", true),
            ("true", "boolean", true),
            ("1", "boolean", false),
            ("2024-02-29", "date", true),
            ("2023-02-29", "date", false),
            ("2024-01-01Z", "date", false),
            ("1969-12-31T23:59:59.5Z", "dateTime", true),
            ("2008-06-20T00:00:00Z", "dateTime", true),
            ("2008-06-20T00:00:00", "dateTime", false),
            ("2008-06-20T00:00:00+02:00", "dateTime", false),
        ];
        for (lexical, datatype, fits) in cases {
            let literal = typed(lexical, datatype);
            let kind = natural_kind(literal.as_ref().into());
            assert_eq!(kind.is_some(), fits, "{lexical}^^{datatype}");
            if let Some(kind) = kind {
                let back = match value(kind, literal.as_ref().into()).unwrap() {
                    Value::Integer(n) => n.to_string(),
                    Value::Double(x) => canonical_double(x),
                    Value::Decimal(n) => match kind {
                        Kind::Decimal(scale) => format_decimal(n, scale),
                        _ => unreachable!(),
                    },
                    Value::Boolean(b) => b.to_string(),
                    Value::Date(d) => format_date(d),
                    Value::DateTime(ms) => format_date_time(ms),
                    Value::Text(t) => t.to_owned(),
                };
                assert_eq!(back, lexical);
            }
        }
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2000-03-01"), Some(11_017));
    }
}
