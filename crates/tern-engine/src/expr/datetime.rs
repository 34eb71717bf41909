//! Date and time functions (`NOW`, `YEAR` … `SECONDS`, `TIMEZONE`, `TZ`)
//! and, as an extension of the operator table, date/duration arithmetic.
//!
//! The spec defines the accessors on `xsd:dateTime`; they also accept the
//! types that carry the component (`xsd:date` for `YEAR`/`MONTH`/`DAY`,
//! `xsd:time` for `HOURS`/`MINUTES`/`SECONDS`, both for the timezone).

use super::value::{
    display_literal, integer_literal, simple_literal, term_value, typed_literal, Value,
};
use oxrdf::vocab::xsd;
use oxrdf::Term;
use oxsdatatypes::{DateTime, Duration, TimezoneOffset};

/// `NOW`: the query's fixed current time.
pub(super) fn now(now: DateTime) -> Option<Term> {
    display_literal(now, xsd::DATE_TIME)
}

pub(super) fn year(term: &Term) -> Option<Term> {
    Some(integer_literal(match term_value(term)? {
        Value::DateTime(v) => v.year(),
        Value::Date(v) => v.year(),
        _ => return None,
    }))
}

pub(super) fn month(term: &Term) -> Option<Term> {
    Some(integer_literal(match term_value(term)? {
        Value::DateTime(v) => v.month(),
        Value::Date(v) => v.month(),
        _ => return None,
    }))
}

pub(super) fn day(term: &Term) -> Option<Term> {
    Some(integer_literal(match term_value(term)? {
        Value::DateTime(v) => v.day(),
        Value::Date(v) => v.day(),
        _ => return None,
    }))
}

pub(super) fn hours(term: &Term) -> Option<Term> {
    Some(integer_literal(match term_value(term)? {
        Value::DateTime(v) => v.hour(),
        Value::Time(v) => v.hour(),
        _ => return None,
    }))
}

pub(super) fn minutes(term: &Term) -> Option<Term> {
    Some(integer_literal(match term_value(term)? {
        Value::DateTime(v) => v.minute(),
        Value::Time(v) => v.minute(),
        _ => return None,
    }))
}

/// `SECONDS`: an `xsd:decimal` including the fraction.
pub(super) fn seconds(term: &Term) -> Option<Term> {
    let seconds = match term_value(term)? {
        Value::DateTime(v) => v.second(),
        Value::Time(v) => v.second(),
        _ => return None,
    };
    Some(typed_literal(seconds.to_string(), xsd::DECIMAL))
}

fn timezone_offset(term: &Term) -> Option<Option<TimezoneOffset>> {
    Some(match term_value(term)? {
        Value::DateTime(v) => v.timezone_offset(),
        Value::Date(v) => v.timezone_offset(),
        Value::Time(v) => v.timezone_offset(),
        _ => return None,
    })
}

/// `TIMEZONE`: the offset as an `xsd:dayTimeDuration`; an error when the
/// value has no timezone.
pub(super) fn timezone(term: &Term) -> Option<Term> {
    let offset = timezone_offset(term)??;
    display_literal(
        oxsdatatypes::DayTimeDuration::from(offset),
        xsd::DAY_TIME_DURATION,
    )
}

/// `TZ`: the timezone as written (`Z`, `-05:00`), `""` when there is none.
pub(super) fn tz(term: &Term) -> Option<Term> {
    Some(simple_literal(
        timezone_offset(term)?.map_or_else(String::new, |offset| offset.to_string()),
    ))
}

/// Any duration type as a general duration.
fn duration(value: Value<'_>) -> Option<Duration> {
    match value {
        Value::Duration(d) => Some(d),
        Value::YearMonthDuration(d) => Some(d.into()),
        Value::DayTimeDuration(d) => Some(d.into()),
        _ => None,
    }
}

/// `+` on dates and durations: a point in time plus a duration (either
/// order), or the sum of two durations (keeping the type when both have
/// the same one).
pub(super) fn add(a: &Term, b: &Term) -> Option<Term> {
    let (va, vb) = (term_value(a)?, term_value(b)?);
    match (va, vb) {
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => {
            display_literal(x.checked_add(y)?, xsd::YEAR_MONTH_DURATION)
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => {
            display_literal(x.checked_add(y)?, xsd::DAY_TIME_DURATION)
        }
        (point, d) | (d, point) if duration(d).is_some() && duration(point).is_none() => {
            shift(point, duration(d)?)
        }
        _ => display_literal(duration(va)?.checked_add(duration(vb)?)?, xsd::DURATION),
    }
}

/// `-` on dates and durations: the `xsd:dayTimeDuration` between two points
/// of the same type, a point minus a duration, or a duration difference.
pub(super) fn subtract(a: &Term, b: &Term) -> Option<Term> {
    let (va, vb) = (term_value(a)?, term_value(b)?);
    let between = match (va, vb) {
        (Value::DateTime(x), Value::DateTime(y)) => Some(x.checked_sub(y)?),
        (Value::Date(x), Value::Date(y)) => Some(x.checked_sub(y)?),
        (Value::Time(x), Value::Time(y)) => Some(x.checked_sub(y)?),
        _ => None,
    };
    if let Some(between) = between {
        return display_literal(between, xsd::DAY_TIME_DURATION);
    }
    match (va, vb) {
        (Value::YearMonthDuration(x), Value::YearMonthDuration(y)) => {
            display_literal(x.checked_sub(y)?, xsd::YEAR_MONTH_DURATION)
        }
        (Value::DayTimeDuration(x), Value::DayTimeDuration(y)) => {
            display_literal(x.checked_sub(y)?, xsd::DAY_TIME_DURATION)
        }
        (point, d) if duration(d).is_some() && duration(point).is_none() => {
            shift(point, duration(d)?.checked_neg()?)
        }
        _ => display_literal(duration(va)?.checked_sub(duration(vb)?)?, xsd::DURATION),
    }
}

/// A dateTime, date or time moved by `duration`.
fn shift(point: Value<'_>, duration: Duration) -> Option<Term> {
    match point {
        Value::DateTime(v) => display_literal(v.checked_add_duration(duration)?, xsd::DATE_TIME),
        Value::Date(v) => display_literal(v.checked_add_duration(duration)?, xsd::DATE),
        Value::Time(v) => display_literal(v.checked_add_duration(duration)?, xsd::TIME),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::expr::test_util::{eval, lit, simple};

    const DT: &str = "\"2011-01-10T14:45:13.815-05:00\"^^xsd:dateTime";

    fn on(function: &str, arg: &str) -> String {
        format!("{function}({arg})")
    }

    #[test]
    fn date_parts() {
        assert_eq!(eval(&on("YEAR", DT)), lit("2011", "integer"));
        assert_eq!(eval(&on("MONTH", DT)), lit("1", "integer"));
        assert_eq!(eval(&on("DAY", DT)), lit("10", "integer"));
        assert_eq!(eval(&on("HOURS", DT)), lit("14", "integer"));
        assert_eq!(eval(&on("MINUTES", DT)), lit("45", "integer"));
        assert_eq!(eval(&on("SECONDS", DT)), lit("13.815", "decimal"));
        assert_eq!(
            eval("YEAR(\"-0044-03-15\"^^xsd:date)"),
            lit("-44", "integer")
        );
        assert_eq!(eval("HOURS(\"23:59:00\"^^xsd:time)"), lit("23", "integer"));
        assert_eq!(eval("YEAR(\"2011\")"), None);
        assert_eq!(eval("HOURS(\"2011-01-10\"^^xsd:date)"), None);
    }

    #[test]
    fn timezones() {
        assert_eq!(eval(&on("TIMEZONE", DT)), lit("-PT5H", "dayTimeDuration"));
        assert_eq!(eval(&on("TZ", DT)), simple("-05:00"));
        let utc = "\"2011-01-10T14:45:13Z\"^^xsd:dateTime";
        assert_eq!(eval(&on("TIMEZONE", utc)), lit("PT0S", "dayTimeDuration"));
        assert_eq!(eval(&on("TZ", utc)), simple("Z"));
        let india = "\"2011-01-10T14:45:13+05:30\"^^xsd:dateTime";
        assert_eq!(
            eval(&on("TIMEZONE", india)),
            lit("PT5H30M", "dayTimeDuration")
        );
        assert_eq!(eval(&on("TZ", india)), simple("+05:30"));
        let local = "\"2011-01-10T14:45:13\"^^xsd:dateTime";
        assert_eq!(eval(&on("TIMEZONE", local)), None);
        assert_eq!(eval(&on("TZ", local)), simple(""));
        // The parts are those of the local time, not UTC.
        assert_eq!(
            eval("HOURS(\"2011-01-10T23:00:00-05:00\"^^xsd:dateTime)"),
            lit("23", "integer")
        );
        assert_eq!(
            eval("DAY(\"2011-01-10T23:00:00-05:00\"^^xsd:dateTime)"),
            lit("10", "integer")
        );
    }

    #[test]
    fn now_is_fixed() {
        assert_eq!(eval("NOW()"), lit("2024-03-05T10:20:30.5Z", "dateTime"));
        assert_eq!(eval("NOW() = NOW()"), lit("true", "boolean"));
        assert_eq!(eval("YEAR(NOW())"), lit("2024", "integer"));
    }

    #[test]
    fn arithmetic() {
        assert_eq!(
            eval("\"2000-01-02T00:00:00Z\"^^xsd:dateTime - \"2000-01-01T12:00:00Z\"^^xsd:dateTime"),
            lit("PT12H", "dayTimeDuration")
        );
        assert_eq!(
            eval("\"2000-01-31\"^^xsd:date + \"P1M\"^^xsd:yearMonthDuration"),
            lit("2000-02-29", "date")
        );
        assert_eq!(
            eval("\"P1D\"^^xsd:dayTimeDuration + \"2000-01-01T00:00:00Z\"^^xsd:dateTime"),
            lit("2000-01-02T00:00:00Z", "dateTime")
        );
        assert_eq!(
            eval("\"2000-01-01T00:00:00Z\"^^xsd:dateTime - \"PT1H\"^^xsd:dayTimeDuration"),
            lit("1999-12-31T23:00:00Z", "dateTime")
        );
        assert_eq!(
            eval("\"P1Y\"^^xsd:yearMonthDuration + \"P2M\"^^xsd:yearMonthDuration"),
            lit("P1Y2M", "yearMonthDuration")
        );
        assert_eq!(
            eval("\"P1Y\"^^xsd:yearMonthDuration + \"P2D\"^^xsd:dayTimeDuration"),
            lit("P1Y2D", "duration")
        );
        assert_eq!(
            eval("\"2000-01-01T00:00:00Z\"^^xsd:dateTime + \"2000-01-01T00:00:00Z\"^^xsd:dateTime"),
            None
        );
        assert_eq!(
            eval("\"P1D\"^^xsd:dayTimeDuration - \"2000-01-01\"^^xsd:date"),
            None
        );
        // Mixed signs have no lexical form: an error, not a panic.
        assert_eq!(
            eval("\"P1M\"^^xsd:yearMonthDuration + \"-P1D\"^^xsd:dayTimeDuration"),
            None
        );
    }
}
