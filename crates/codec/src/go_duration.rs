//! Go's `time.Duration` text form (`1h2m3.5s`, `300ms`), which meta/v1 `Duration` uses in JSON.
//! Mirrors Go's `Duration.String` and `time.ParseDuration`.

const SECOND: u64 = 1_000_000_000;

/// Formats nanoseconds as Go's `Duration.String` does: `0s`, `1.5µs`, `100ms`, `1m30s`, `72h0m0s`.
pub(crate) fn format(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let text = if n == 0 {
        "0s".to_string()
    } else if n < 1_000 {
        format!("{n}ns")
    } else if n < 1_000_000 {
        format!("{}µs", decimal(n, 1_000))
    } else if n < SECOND {
        format!("{}ms", decimal(n, 1_000_000))
    } else {
        let seconds = n / SECOND;
        let (hours, minutes) = (seconds / 3600, seconds / 60 % 60);
        let secs = decimal(seconds % 60 * SECOND + n % SECOND, SECOND);
        match (hours, minutes) {
            (0, 0) => format!("{secs}s"),
            (0, m) => format!("{m}m{secs}s"),
            (h, m) => format!("{h}h{m}m{secs}s"),
        }
    };
    format!("{sign}{text}")
}

/// `value / unit` with the remainder as a decimal fraction, trailing zeros dropped.
fn decimal(value: u64, unit: u64) -> String {
    let (whole, rest) = (value / unit, value % unit);
    if rest == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let fraction = format!("{rest:0width$}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

/// Parses Go's duration syntax: an optional sign, then one or more `<decimal><unit>` with units
/// `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`; a bare `0` is zero.
pub(crate) fn parse(text: &str) -> Result<i64, String> {
    let bad = || format!("invalid duration {text:?}");
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let number: f64 = rest[..number_end].parse().map_err(|_| bad())?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    if total > i64::MAX as f64 {
        return Err(format!("duration {text:?} out of range"));
    }
    let nanos = total.round() as i64;
    Ok(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_matches_go_duration_string() {
        for (nanos, text) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (100_000_000, "100ms"),
            (1_000_000_000, "1s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-2_000_000_000, "-2s"),
        ] {
            assert_eq!(format(nanos), text, "{nanos}");
        }
    }

    #[test]
    fn parse_reads_what_format_writes() {
        for nanos in [
            0,
            1,
            1_500,
            100_000_000,
            90_000_000_000,
            3_723_500_000_000,
            -2_000_000_000,
        ] {
            assert_eq!(parse(&format(nanos)), Ok(nanos));
        }
        assert_eq!(parse("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(parse("2us"), Ok(2_000));
    }

    #[test]
    fn parse_rejects_text_without_units() {
        for bad in ["", "-", "5", "1x", "h", "1..2s"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
