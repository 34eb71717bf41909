//! Durations on the command line: `50ms`, `2s`, `1.5`, `10m`, `1h`, `0`.
//! A bare number is seconds.

use std::time::Duration;

/// The longest duration a flag takes: a hundred years is "never" for every
/// timeout and time to live, and far from where `Duration` overflows.
const LONGEST_SECONDS: f64 = 100.0 * 365.0 * 24.0 * 3600.0;

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    // The unit is the letters at the end, so that `1e6` is a number.
    let split = text
        .rfind(|c: char| !c.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{text:?} is not a duration like 50ms, 2s, 10m or 1h"))?;
    let seconds = match unit {
        "us" => value / 1e6,
        "ms" => value / 1e3,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (us, ms, s, m, h)")),
    };
    if seconds > LONGEST_SECONDS {
        return Err(format!("{text:?} is longer than 100 years"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_absurd_ones_are_refused() {
        assert_eq!(parse_duration("20ms"), Ok(Duration::from_millis(20)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1e3ms"), Ok(Duration::from_secs(1)));
        for bad in [
            "1e300",
            "1e20",
            "inf",
            "NaN",
            "-1",
            "",
            "5 parsecs",
            "1e400",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
