//! Literals stored inside the [`Id`] itself.
//!
//! A literal is inlined only when formatting its decoded value gives back exactly
//! the lexical form that was read: `"1"^^xsd:integer` is inlined, `"01"^^xsd:integer`
//! goes to the vocabulary. Round trips are therefore exact by construction, and the
//! check is the single place that decides what "canonical" means.

use crate::id::{Id, Tag, PAYLOAD_BITS, PAYLOAD_MASK};
use std::fmt::Write;

pub const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
pub const XSD_DECIMAL: &str = "http://www.w3.org/2001/XMLSchema#decimal";
pub const XSD_DOUBLE: &str = "http://www.w3.org/2001/XMLSchema#double";
pub const XSD_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";
pub const XSD_DATE: &str = "http://www.w3.org/2001/XMLSchema#date";
pub const XSD_DATE_TIME: &str = "http://www.w3.org/2001/XMLSchema#dateTime";

/// Number of fraction digits of inlined decimals.
pub const DECIMAL_SCALE: u32 = 6;
const DECIMAL_FACTOR: i64 = 10i64.pow(DECIMAL_SCALE);

const INT_OFFSET: i64 = 1 << (PAYLOAD_BITS - 1);
const INT_MIN: i64 = -INT_OFFSET;
const INT_MAX: i64 = INT_OFFSET - 1;

/// Tries to store the literal `lexical`^^`datatype` inside an ID.
pub fn encode(lexical: &str, datatype: &str) -> Option<Id> {
    let id = match datatype {
        XSD_INTEGER => integer_id(lexical.parse::<i64>().ok()?)?,
        XSD_DECIMAL => decimal_id(parse_decimal(lexical)?)?,
        XSD_DOUBLE => double_id(lexical.parse::<f64>().ok()?)?,
        XSD_BOOLEAN => match lexical {
            "true" => Id::new(Tag::Boolean, 1),
            "false" => Id::new(Tag::Boolean, 0),
            _ => return None,
        },
        XSD_DATE => {
            let (days, tz) = parse_date(lexical)?;
            Id::new(Tag::Date, pack_time(days, tz)?)
        }
        XSD_DATE_TIME => {
            let (millis, tz) = parse_date_time(lexical)?;
            Id::new(Tag::DateTime, pack_time(millis, tz)?)
        }
        _ => return None,
    };
    let mut back = String::with_capacity(lexical.len());
    write_lexical(id, &mut back);
    (back == lexical).then_some(id)
}

/// The datatype IRI of an inline ID, `None` for IDs that are not inline values.
pub fn datatype(id: Id) -> Option<&'static str> {
    Some(match id.tag() {
        Tag::Boolean => XSD_BOOLEAN,
        Tag::Integer => XSD_INTEGER,
        Tag::Decimal => XSD_DECIMAL,
        Tag::Double => XSD_DOUBLE,
        Tag::Date => XSD_DATE,
        Tag::DateTime => XSD_DATE_TIME,
        _ => return None,
    })
}

/// Appends the lexical form of an inline ID to `out` (nothing for other IDs).
pub fn write_lexical(id: Id, out: &mut String) {
    match id.tag() {
        Tag::Boolean => out.push_str(if id.payload() == 1 { "true" } else { "false" }),
        Tag::Integer => {
            let value = integer_value(id);
            if value < 0 {
                out.push('-');
            }
            push_digits(out, value.unsigned_abs(), 1);
        }
        Tag::Decimal => write_decimal(decimal_units(id), out),
        Tag::Double => write_double(double_value(id), out),
        Tag::Date => {
            let (days, tz) = unpack_time(id.payload());
            let (y, mo, d) = civil_from_days(days);
            write_ymd(y, mo, d, out);
            write_tz(tz, out);
        }
        Tag::DateTime => {
            let (utc_millis, tz) = unpack_time(id.payload());
            let local = utc_millis + tz.map_or(0, |m| m * 60_000);
            let days = local.div_euclid(86_400_000);
            let ms = local.rem_euclid(86_400_000);
            let (y, mo, d) = civil_from_days(days);
            write_ymd(y, mo, d, out);
            let (h, mi, s, frac) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
            out.push('T');
            push_digits(out, h as u64, 2);
            out.push(':');
            push_digits(out, mi as u64, 2);
            out.push(':');
            push_digits(out, s as u64, 2);
            push_fraction(out, frac as u64, 3);
            write_tz(tz, out);
        }
        _ => {}
    }
}

pub fn integer_id(value: i64) -> Option<Id> {
    (INT_MIN..=INT_MAX)
        .contains(&value)
        .then(|| Id::new(Tag::Integer, (value - INT_MIN) as u64))
}

pub fn integer_value(id: Id) -> i64 {
    id.payload() as i64 + INT_MIN
}

/// A decimal as a count of 10^-[`DECIMAL_SCALE`] units.
pub fn decimal_id(units: i64) -> Option<Id> {
    (INT_MIN..=INT_MAX)
        .contains(&units)
        .then(|| Id::new(Tag::Decimal, (units - INT_MIN) as u64))
}

pub fn decimal_units(id: Id) -> i64 {
    id.payload() as i64 + INT_MIN
}

pub fn decimal_value(id: Id) -> f64 {
    decimal_units(id) as f64 / DECIMAL_FACTOR as f64
}

/// Doubles keep their top 60 bits in an order-preserving form; only values whose
/// lowest 4 mantissa bits are zero fit without loss.
pub fn double_id(value: f64) -> Option<Id> {
    let bits = value.to_bits();
    if bits & 0xF != 0 {
        return None;
    }
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    Some(Id::new(Tag::Double, ordered >> 4))
}

pub fn double_value(id: Id) -> f64 {
    let ordered = id.payload() << 4;
    let bits = if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        // Negative: every bit was flipped, and the 4 dropped bits were zeros.
        !(ordered | 0xF)
    };
    f64::from_bits(bits)
}

/// Days (for dates) or milliseconds (for dateTimes) and the timezone offset in
/// minutes, `None` when the value has no timezone.
pub fn time_value(id: Id) -> (i64, Option<i64>) {
    unpack_time(id.payload())
}

fn parse_decimal(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    if frac_part.len() > DECIMAL_SCALE as usize {
        return None;
    }
    let int: i64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let mut frac: i64 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().ok()?
    };
    frac *= 10i64.pow(DECIMAL_SCALE - frac_part.len() as u32);
    let units = int.checked_mul(DECIMAL_FACTOR)?.checked_add(frac)?;
    Some(if neg { -units } else { units })
}

fn write_decimal(units: i64, out: &mut String) {
    if units < 0 {
        out.push('-');
    }
    let abs = units.unsigned_abs();
    let factor = DECIMAL_FACTOR as u64;
    push_digits(out, abs / factor, 1);
    if abs.is_multiple_of(factor) {
        out.push_str(".0");
    } else {
        push_fraction(out, abs % factor, DECIMAL_SCALE as usize);
    }
}

/// Appends `value` in decimal digits, zero-padded to `width`. Lexical forms
/// are written for every inline value of an export, so without `fmt`.
fn push_digits(out: &mut String, mut value: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    while value > 0 || start == digits.len() {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
    }
    let start = start.min(digits.len().saturating_sub(width));
    out.push_str(std::str::from_utf8(&digits[start..]).expect("ASCII digits"));
}

/// Appends `.` and the fraction `value / 10^width` without its trailing
/// zeros; nothing for a zero fraction.
fn push_fraction(out: &mut String, mut value: u64, mut width: usize) {
    if value == 0 {
        return;
    }
    while value.is_multiple_of(10) {
        value /= 10;
        width -= 1;
    }
    out.push('.');
    push_digits(out, value, width);
}

/// XSD canonical form: `1.5E2`, `1.0E0`, `INF`, `-INF`, `NaN`.
/// Appends the canonical lexical form of a double (as inline doubles are
/// written).
pub fn write_double(value: f64, out: &mut String) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "INF" } else { "-INF" });
    } else {
        let formatted = format!("{value:E}");
        match formatted.split_once('E') {
            Some((mantissa, exponent)) if !mantissa.contains('.') => {
                let _ = write!(out, "{mantissa}.0E{exponent}");
            }
            _ => out.push_str(&formatted),
        }
    }
}

const TIME_BITS: u32 = PAYLOAD_BITS - 8;
const TIME_OFFSET: i64 = 1 << (TIME_BITS - 1);
/// The timezone code of +14:00, the highest; 0 stands for no timezone.
const MAX_TZ_CODE: u64 = 840 / 15 + 56 + 1;

/// Packs a point in time (UTC) and its timezone so that packed order is time order.
fn pack_time(value: i64, tz_minutes: Option<i64>) -> Option<u64> {
    let biased = value.checked_add(TIME_OFFSET)?;
    if !(0..(1 << TIME_BITS)).contains(&biased) {
        return None;
    }
    let tz_code = match tz_minutes {
        None => 0,
        Some(m) => {
            if m % 15 != 0 || !(-840..=840).contains(&m) {
                return None;
            }
            (m / 15 + 56 + 1) as u64 // 1..=MAX_TZ_CODE
        }
    };
    Some(((biased as u64) << 8 | tz_code) & PAYLOAD_MASK)
}

/// The order of two inline `xsd:date` or two inline `xsd:dateTime` values
/// where their IDs decide it: the same timezone (or none on both), or, for
/// dateTimes, timezones on both (then the UTC instants are compared). `None`
/// when one has a timezone and the other not (SPARQL then needs an implicit
/// timezone) and for anything else.
pub fn compare_times(a: Id, b: Id) -> Option<std::cmp::Ordering> {
    if a.tag() != b.tag() || !matches!(a.tag(), Tag::Date | Tag::DateTime) {
        return None;
    }
    let (ta, tb) = (a.payload() & 0xFF, b.payload() & 0xFF);
    if ta == tb {
        return Some(a.cmp(&b));
    }
    (a.tag() == Tag::DateTime && ta != 0 && tb != 0)
        .then(|| (a.payload() >> 8).cmp(&(b.payload() >> 8)))
}

/// The lowest and highest IDs of the inline values of `id`'s type
/// (`xsd:date` or `xsd:dateTime`) that a comparison with `id` may not tell
/// apart from it, whatever the timezones: those within two days of it.
/// Timezones shift a value by at most 14 hours, so every value that compares
/// equal to `id`, or on the other side of it than these bounds, lies within
/// them. `None` for other IDs.
pub fn time_window(id: Id) -> Option<(Id, Id)> {
    let slack = match id.tag() {
        Tag::Date => 2,
        Tag::DateTime => 2 * 86_400_000,
        _ => return None,
    };
    let biased = (id.payload() >> 8) as i64;
    let low = (biased - slack).max(0) as u64;
    let high = (biased + slack).min((1 << TIME_BITS) - 1) as u64;
    Some((
        Id::new(id.tag(), low << 8),
        Id::new(id.tag(), high << 8 | MAX_TZ_CODE),
    ))
}

/// The lowest and highest IDs of a tag.
pub fn tag_bounds(tag: Tag) -> (Id, Id) {
    (Id::new(tag, 0), Id::new(tag, PAYLOAD_MASK))
}

fn unpack_time(payload: u64) -> (i64, Option<i64>) {
    let value = (payload >> 8) as i64 - TIME_OFFSET;
    let code = (payload & 0xFF) as i64;
    (value, (code != 0).then(|| (code - 1 - 56) * 15))
}

fn parse_tz(s: &str) -> Option<Option<i64>> {
    match s {
        "" => Some(None),
        "Z" => Some(Some(0)),
        _ => {
            let b = s.as_bytes();
            if b.len() != 6 || b[3] != b':' || !(b[0] == b'+' || b[0] == b'-') {
                return None;
            }
            let h: i64 = s[1..3].parse().ok()?;
            let m: i64 = s[4..6].parse().ok()?;
            let total = h * 60 + m;
            Some(Some(if b[0] == b'-' { -total } else { total }))
        }
    }
}

/// Splits `-?YYYY-MM-DD` off the front; returns (year, month, day, rest).
fn parse_ymd(s: &str) -> Option<(i64, u32, u32, &str)> {
    let (neg, body) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
    let dash = body.find('-')?;
    if dash < 4 || !body[..dash].bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // More digits than any calendar arithmetic here can take: not inlined.
    if dash > 9 {
        return None;
    }
    let year: i64 = body[..dash].parse().ok()?;
    let rest = &body[dash + 1..];
    if rest.len() < 5 || rest.as_bytes()[2] != b'-' {
        return None;
    }
    let month: u32 = rest[..2].parse().ok()?;
    let day: u32 = rest[3..5].parse().ok()?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some((if neg { -year } else { year }, month, day, &rest[5..]))
}

fn parse_date(s: &str) -> Option<(i64, Option<i64>)> {
    // Lexical forms of dates are ASCII; the slicing below relies on it (a
    // multibyte character inside one panicked: found by fuzzing).
    if !s.is_ascii() {
        return None;
    }
    let (y, m, d, rest) = parse_ymd(s)?;
    Some((days_from_civil(y, m, d), parse_tz(rest)?))
}

fn parse_date_time(s: &str) -> Option<(i64, Option<i64>)> {
    if !s.is_ascii() {
        return None;
    }
    let (y, mo, d, rest) = parse_ymd(s)?;
    let rest = rest.strip_prefix('T')?;
    if rest.len() < 8 || rest.as_bytes()[2] != b':' || rest.as_bytes()[5] != b':' {
        return None;
    }
    let h: i64 = rest[..2].parse().ok()?;
    let mi: i64 = rest[3..5].parse().ok()?;
    let sec: i64 = rest[6..8].parse().ok()?;
    if h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let mut rest = &rest[8..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        millis = frac[..digits].parse::<i64>().ok()? * 10i64.pow(3 - digits as u32);
        rest = &frac[digits..];
    }
    let tz = parse_tz(rest)?;
    // Years far outside any calendar overflow the milliseconds (found by
    // fuzzing): such values stay in the vocabulary as written.
    let local = days_from_civil(y, mo, d)
        .checked_mul(86_400_000)?
        .checked_add(((h * 60 + mi) * 60 + sec) * 1000 + millis)?;
    Some((local.checked_sub(tz.unwrap_or(0) * 60_000)?, tz))
}

fn write_ymd(y: i64, m: u32, d: u32, out: &mut String) {
    if y < 0 {
        out.push('-');
    }
    push_digits(out, y.unsigned_abs(), 4);
    out.push('-');
    push_digits(out, u64::from(m), 2);
    out.push('-');
    push_digits(out, u64::from(d), 2);
}

fn write_tz(tz: Option<i64>, out: &mut String) {
    match tz {
        None => {}
        Some(0) => out.push('Z'),
        Some(m) => {
            out.push(if m < 0 { '-' } else { '+' });
            push_digits(out, m.unsigned_abs() / 60, 2);
            out.push(':');
            push_digits(out, m.unsigned_abs() % 60, 2);
        }
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_with_multibyte_characters_are_not_inlined() {
        // Found by fuzzing: slicing at fixed byte positions panicked.
        for lexical in [
            "2025-02-3\u{6ab}25:00:00Z",
            "2025-\u{e9}2-03",
            "2025-02-03T1\u{e9}:00:00Z",
        ] {
            assert_eq!(parse_date(lexical), None);
            assert_eq!(parse_date_time(lexical), None);
        }
    }

    fn round_trip(lex: &str, dt: &str) -> Option<String> {
        let id = encode(lex, dt)?;
        let mut out = String::new();
        write_lexical(id, &mut out);
        assert_eq!(datatype(id), Some(dt));
        Some(out)
    }

    #[test]
    fn canonical_forms_are_inlined_and_come_back_unchanged() {
        for (lex, dt) in [
            ("0", XSD_INTEGER),
            ("-42", XSD_INTEGER),
            ("576460752303423487", XSD_INTEGER),
            ("1.5", XSD_DECIMAL),
            ("-0.25", XSD_DECIMAL),
            ("3.0", XSD_DECIMAL),
            ("1.5E2", XSD_DOUBLE),
            ("1.0E0", XSD_DOUBLE),
            ("-INF", XSD_DOUBLE),
            ("true", XSD_BOOLEAN),
            ("2008-06-20", XSD_DATE),
            ("2008-06-20Z", XSD_DATE),
            ("-0044-03-15+01:00", XSD_DATE),
            ("2008-06-20T12:34:56", XSD_DATE_TIME),
            ("2008-06-20T12:34:56.5Z", XSD_DATE_TIME),
            ("1999-12-31T23:59:59-05:30", XSD_DATE_TIME),
            // Zero padding: fraction digits after the point, short years,
            // hours, minutes and timezones.
            ("-0.000001", XSD_DECIMAL),
            ("10.05", XSD_DECIMAL),
            ("0007-01-02T03:04:05.05+00:45", XSD_DATE_TIME),
            ("2008-06-20T00:00:00.007-14:00", XSD_DATE_TIME),
            ("0999-10-09", XSD_DATE),
        ] {
            assert_eq!(round_trip(lex, dt).as_deref(), Some(lex), "{lex}^^{dt}");
        }
    }

    #[test]
    fn non_canonical_or_out_of_range_forms_are_not_inlined() {
        for (lex, dt) in [
            ("01", XSD_INTEGER),
            ("+1", XSD_INTEGER),
            ("576460752303423488", XSD_INTEGER),
            ("1.50", XSD_DECIMAL),
            ("1.1234567", XSD_DECIMAL),
            ("1.5e2", XSD_DOUBLE),
            ("0.1", XSD_DOUBLE),
            ("1", XSD_BOOLEAN),
            ("2008-02-30", XSD_DATE),
            ("2008-06-20T12:34:56+00:00", XSD_DATE_TIME),
            ("2008-06-20T12:34:56.1234", XSD_DATE_TIME),
            ("abc", XSD_INTEGER),
        ] {
            assert_eq!(encode(lex, dt), None, "{lex}^^{dt}");
        }
    }

    #[test]
    fn id_order_is_value_order() {
        let ints: Vec<Id> = ["-5", "-1", "0", "3", "100"]
            .iter()
            .map(|l| encode(l, XSD_INTEGER).unwrap())
            .collect();
        assert!(ints.windows(2).all(|w| w[0] < w[1]));
        let doubles: Vec<Id> = [
            "-INF", "-1.5E2", "-1.0E0", "0.0E0", "2.5E-1", "1.0E3", "INF",
        ]
        .iter()
        .map(|l| encode(l, XSD_DOUBLE).unwrap())
        .collect();
        assert!(doubles.windows(2).all(|w| w[0] < w[1]), "{doubles:?}");
        let times: Vec<Id> = [
            "1999-12-31T23:00:00Z",
            "2000-01-01T00:30:00+01:00",
            "2000-01-01T00:00:00Z",
        ]
        .iter()
        .map(|l| encode(l, XSD_DATE_TIME).unwrap())
        .collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]));
    }
}
