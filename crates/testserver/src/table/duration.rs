//! The human durations of Table cells (`5m3s`, `3d4h`), as apimachinery `util/duration`'s
//! `HumanDuration` writes them, and the age of a timestamp as the printers'
//! `translateTimestampSince` does.
//!
//! Why copy the rules exactly: kubectl prints these strings as they come, so a test or a user
//! comparing `kubectl get` output against a real cluster must see the same precision.

/// About 2-3 significant figures of `seconds` (apimachinery `duration.HumanDuration`).
pub(crate) fn human(seconds: i64) -> String {
    // Up to one second in the future is "now": clocks of client and server differ a little.
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_rest(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_rest(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return with_rest(hours / 24, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return with_rest(hours / 24 / 365, "y", (hours / 24) % 365, "d");
    }
    format!("{}y", hours / 24 / 365)
}

/// `<big><unit>` or `<big><unit><small><small_unit>` when `small` is not zero.
fn with_rest(big: i64, unit: &str, small: i64, small_unit: &str) -> String {
    if small == 0 {
        format!("{big}{unit}")
    } else {
        format!("{big}{unit}{small}{small_unit}")
    }
}

/// The age of an RFC 3339 timestamp at `now`: `<unknown>` when absent, `<invalid>` when it does
/// not parse (the CRD printer's rule for `date` columns).
pub(crate) fn age(timestamp: Option<&str>, now: jiff::Timestamp) -> String {
    let Some(text) = timestamp.filter(|t| !t.is_empty()) else {
        return "<unknown>".into();
    };
    match text.parse::<jiff::Timestamp>() {
        Ok(at) => human(now.as_second() - at.as_second()),
        Err(_) => "<invalid>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_follow_apimachinery_precision_rules() {
        for (seconds, want) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (303, "5m3s"),
            (599, "9m59s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 59, "47h"),
            (48 * 3600, "2d"),
            (3 * 86400 + 4 * 3600, "3d4h"),
            (8 * 86400, "8d"),
            (400 * 86400, "400d"),
            (2 * 365 * 86400, "2y"),
            (3 * 365 * 86400 + 10 * 86400, "3y10d"),
            (9 * 365 * 86400 + 10 * 86400, "9y"),
        ] {
            assert_eq!(human(seconds), want, "{seconds}s");
        }
    }

    #[test]
    fn age_of_missing_or_bad_timestamps_is_marked() {
        let now: jiff::Timestamp = "2024-01-01T00:10:00Z".parse().unwrap();
        assert_eq!(age(Some("2024-01-01T00:05:00Z"), now), "5m");
        assert_eq!(age(None, now), "<unknown>");
        assert_eq!(age(Some(""), now), "<unknown>");
        assert_eq!(age(Some("yesterday"), now), "<invalid>");
    }
}
