//! A custom resource's numbers as kube-apiserver keeps them: its unstructured JSON decoder reads
//! each number as an `int64` when the literal is one and as a `float64` otherwise
//! (`apimachinery/pkg/util/json`'s `convertNumber`), and Go's encoder writes a whole `float64`
//! without a fraction. So `100.0` is stored and read back as `100` (seen on v1.36.2 with Istio's
//! `percentage: {value: 100.0}`), while `1` stays `1` and `0.5` stays `0.5`.
//!
//! # Difference
//! A fraction is written as `serde_json` writes an `f64` (shortest round trip), which differs from
//! Go's text for very small or large magnitudes (`1.5e-5` where Go writes `0.000015`); the value
//! is the same.

use serde_json::{Number, Value};

/// Rewrites every whole number written with a fraction or an exponent as the integer Go writes.
pub(crate) fn as_go_keeps(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(whole) = whole(number) {
                *number = whole;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_go_keeps),
        Value::Object(map) => map.values_mut().for_each(as_go_keeps),
        _ => {}
    }
}

/// The integer a float literal holds, if it holds one Go writes without a fraction (within
/// `i64`, where the digits are exact).
fn whole(number: &Number) -> Option<Number> {
    if number.is_i64() || number.is_u64() {
        return None;
    }
    let float = number.as_f64()?;
    let exact = float.is_finite() && float.fract() == 0.0 && float.abs() < 9.2e18;
    #[allow(clippy::cast_possible_truncation)]
    exact.then(|| Number::from(float as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_floats_become_integers_and_everything_else_stays() {
        let mut value: Value = serde_json::from_str(
            r#"{"a": 100.0, "b": [1e3, 0.5, -2.0, 1, 9007199254740993], "c": {"d": 1.5e-5, "e": "1.0"}}"#,
        )
        .unwrap();
        as_go_keeps(&mut value);
        assert_eq!(
            value,
            json!({"a": 100, "b": [1000, 0.5, -2, 1, 9007199254740993_i64], "c": {"d": 1.5e-5, "e": "1.0"}})
        );
        assert_eq!(serde_json::to_string(&value["a"]).unwrap(), "100");
    }
}
