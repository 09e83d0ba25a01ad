//! Resource quantities (`100m`, `1.5`, `512Mi`, `1e3`) read as thousandths of their unit, the
//! scale kube-scheduler compares CPU in (`resource.Quantity.MilliValue`,
//! `staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`). Memory is compared in the
//! same thousandths of a byte, so one rule serves both.
//!
//! # Differences from apimachinery
//! The number is read as an `f64` and rounded up: exact for every quantity below 2^53
//! thousandths (9 TB of memory); apimachinery's arbitrary precision is not needed for fit.

/// `quantity` in thousandths of its unit, rounded up; `None` when it is not a quantity.
pub(crate) fn milli(quantity: &str) -> Option<i64> {
    let quantity = quantity.trim();
    let split = quantity
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    let thousandths = (value * factor * 1000.0).ceil();
    // Saturating cast: a quantity beyond i64 thousandths is "more than any node has".
    thousandths.is_finite().then_some(thousandths as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_read_in_thousandths() {
        assert_eq!(milli("100m"), Some(100));
        assert_eq!(milli("1"), Some(1000));
        assert_eq!(milli("1.5"), Some(1500));
        assert_eq!(milli("2k"), Some(2_000_000));
        assert_eq!(milli("1Ki"), Some(1_024_000));
        assert_eq!(milli("1Gi"), Some(1_073_741_824_000));
        assert_eq!(milli("1e3"), Some(1_000_000));
        assert_eq!(milli("0.1m"), Some(1), "rounded up, as MilliValue does");
    }

    #[test]
    fn malformed_quantities_are_none() {
        assert_eq!(milli("lots"), None);
        assert_eq!(milli("1Xi"), None);
        assert_eq!(milli(""), None);
    }
}
