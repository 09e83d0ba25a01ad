//! Reading the stored JSON the way the printers read typed objects: absent fields are their
//! zero value, and the label and selector formats of apimachinery (`labels.FormatLabels`,
//! `labels.Selector.String`, `metav1.FormatLabelSelector`).

use std::collections::BTreeSet;

use serde_json::Value;

pub(super) fn text<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn int(o: &Value, pointer: &str) -> i64 {
    o.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

pub(super) fn items<'a>(o: &'a Value, pointer: &str) -> &'a [Value] {
    o.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Entries of a map or list field.
pub(super) fn count(o: &Value, pointer: &str) -> i64 {
    let n = match o.pointer(pointer) {
        Some(Value::Object(map)) => map.len(),
        Some(Value::Array(list)) => list.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `spec.replicas`, with the real server's default of 1.
pub(super) fn replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// Container names and images, comma-joined (`layoutContainerCells`).
pub(super) fn containers(o: &Value, pointer: &str) -> (String, String) {
    let list = items(o, pointer);
    let names: Vec<&str> = list.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// A `map[string]string` as `k=v,...` in key order, `<none>` when empty (`labels.FormatLabels`).
pub(super) fn format_labels(map: Option<&Value>) -> String {
    let pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// A LabelSelector in selector syntax, requirements sorted by key (`labels.Selector.String`);
/// `<error>` for an operator that does not exist.
pub(crate) fn label_selector(sel: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for expr in items(sel, "/matchExpressions") {
        let key = text(expr, "/key");
        let values: BTreeSet<&str> = items(expr, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let values = values.into_iter().collect::<Vec<_>>().join(",");
        let requirement = match text(expr, "/operator") {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".into(),
        };
        requirements.push((key.to_string(), requirement));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = requirements.into_iter().map(|(_, r)| r).collect();
    parts.join(",")
}

/// `metav1.FormatLabelSelector`: the selector, `<none>` when it selects everything.
pub(super) fn format_selector(sel: Option<&Value>) -> String {
    let text = sel.map_or(String::new(), label_selector);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}
