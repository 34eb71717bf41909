//! Byte sizes on the command line: `64M`, `2G`, `512MiB`, `1000000`.

pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits_end);
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("not a size: {text:?}"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("unknown size unit in {text:?} (use K, M, G or T)")),
    };
    let bytes = value * factor as f64;
    // Sizes are budgets of this machine's memory and disk: an exbibyte is
    // past any of them, and past it the conversion to u64 would saturate.
    if bytes >= (1u64 << 60) as f64 {
        return Err(format!("{text:?} is larger than 1 EiB"));
    }
    Ok(bytes as u64)
}

/// The default builder budget: 40% of this machine's memory.
pub fn default_memory() -> u64 {
    total_memory() / 5 * 2
}

/// This machine's memory (4 GiB where /proc/meminfo cannot be read).
pub fn total_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|kb| kb.parse::<u64>().ok())
                })
        })
        .map_or(4 << 30, |kb| kb * 1024)
}

pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("99999999999999999999T").is_err());
        assert!(parse_size("1e300").is_err());
    }
}
