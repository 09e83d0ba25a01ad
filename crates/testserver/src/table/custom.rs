//! Cells of custom resources: a CRD version's `additionalPrinterColumns` (each a
//! `crate::registry::printer_column::PrinterColumn`, part of the resource's definition), each a
//! JSONPath into the object, typed and formatted like apiextensions-apiserver's
//! `tableconvertor.go`.
//!
//! The JSONPath is evaluated with the `jsonpath-rust` crate (RFC 9535). Kubernetes writes its
//! paths without the leading `$` and allows any characters in dotted member names
//! (`.metadata.labels.app-name`), so [`to_rfc9535`] rewrites such members into bracket form first.
//! As in the real server only the first match is used and a path that matches nothing gives a
//! `null` cell.

use jsonpath_rust::JsonPath;
use serde_json::{Value, json};

use super::duration::age;
use crate::registry::printer_column::PrinterColumn;

impl PrinterColumn {
    /// The `TableColumnDefinition` of this column.
    pub(crate) fn definition(&self) -> Value {
        let description = if self.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                self.json_path
            )
        } else {
            self.description.clone()
        };
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": description,
            "priority": self.priority,
        })
    }

    /// This column's cell for `object`.
    pub(crate) fn cell(&self, object: &Value, now: jiff::Timestamp) -> Value {
        let path = to_rfc9535(&self.json_path);
        let Some(found) = object
            .query(&path)
            .ok()
            .and_then(|results| results.first().copied().cloned())
        else {
            return Value::Null;
        };
        typed_cell(&self.type_, found, now)
    }
}

/// `cellForJSONValue` and, for strings, the JSONPath printer's text form.
fn typed_cell(column_type: &str, value: Value, now: jiff::Timestamp) -> Value {
    match (column_type, value) {
        (_, Value::Null) => Value::Null,
        ("string", Value::String(s)) => Value::String(s),
        // Maps and lists print as compact JSON, scalars as their text.
        ("string", other) => Value::String(other.to_string()),
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            // Go truncates a float64 towards zero when converting to int64.
            None => n.as_f64().map_or(Value::Null, |f| json!(f.trunc() as i64)),
        },
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        ("boolean", Value::Bool(b)) => Value::Bool(b),
        ("date", Value::String(s)) => Value::String(age(Some(&s), now)),
        _ => Value::Null,
    }
}

/// A Kubernetes JSONPath (`.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`)
/// as an RFC 9535 query: `$` in front, dotted members that are not plain identifiers in
/// bracket form, brackets copied as they are.
pub(crate) fn to_rfc9535(path: &str) -> String {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let path = path.strip_prefix('$').unwrap_or(path);
    let mut out = String::from("$");
    let mut rest = path;
    while let Some(c) = rest.chars().next() {
        match c {
            '[' => {
                let end = bracket_end(rest);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            }
            '.' if rest.starts_with("..") => {
                out.push_str("..");
                rest = &rest[2..];
            }
            '.' => rest = &rest[1..],
            _ => {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                let member = &rest[..end];
                let plain = member
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*');
                if plain && !out.ends_with("..") {
                    out.push('.');
                    out.push_str(member);
                } else if plain {
                    out.push_str(member);
                } else {
                    let quoted = member.replace('\\', "\\\\").replace('\'', "\\'");
                    out.push_str(&format!("['{quoted}']"));
                }
                rest = &rest[end..];
            }
        }
    }
    out
}

/// The length of the bracket expression `text` starts with, quotes respected.
fn bracket_end(text: &str) -> usize {
    let mut depth = 0;
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(type_: &str, path: &str) -> PrinterColumn {
        PrinterColumn {
            name: "C".into(),
            type_: type_.into(),
            json_path: path.into(),
            ..PrinterColumn::default()
        }
    }

    fn now() -> jiff::Timestamp {
        "2024-01-01T01:00:00Z".parse().unwrap()
    }

    #[test]
    fn kubernetes_paths_become_rfc9535_queries() {
        for (k8s, want) in [
            (".spec.replicas", "$.spec.replicas"),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                "$.status.conditions[?(@.type==\"Ready\")].status",
            ),
            (".metadata.labels.app-name", "$.metadata.labels['app-name']"),
            (".spec.images[0]", "$.spec.images[0]"),
            ("{.spec.x}", "$.spec.x"),
            ("..name", "$..name"),
        ] {
            assert_eq!(to_rfc9535(k8s), want, "{k8s}");
        }
    }

    #[test]
    fn cells_are_typed_like_the_crd_table_convertor() {
        let object = json!({
            "metadata": {"creationTimestamp": "2024-01-01T00:55:00Z", "labels": {"app-name": "web"}},
            "spec": {"replicas": 3, "ratio": 1.5, "on": true, "images": ["a", "b"], "map": {"b": 1, "a": 2}},
            "status": {"conditions": [{"type": "Other", "status": "False"}, {"type": "Ready", "status": "True"}]},
        });
        for (type_, path, want) in [
            ("integer", ".spec.replicas", json!(3)),
            ("integer", ".spec.ratio", json!(1)),
            ("number", ".spec.replicas", json!(3.0)),
            ("boolean", ".spec.on", json!(true)),
            ("string", ".spec.replicas", json!("3")),
            ("string", ".spec.images", json!("[\"a\",\"b\"]")),
            ("string", ".spec.images[*]", json!("a")),
            ("string", ".metadata.labels.app-name", json!("web")),
            (
                "string",
                ".status.conditions[?(@.type==\"Ready\")].status",
                json!("True"),
            ),
            ("date", ".metadata.creationTimestamp", json!("5m")),
            ("date", ".spec.replicas", Value::Null),
            ("integer", ".spec.missing", Value::Null),
            ("boolean", ".spec.replicas", Value::Null),
        ] {
            assert_eq!(
                column(type_, path).cell(&object, now()),
                want,
                "{type_} {path}"
            );
        }
    }

    #[test]
    fn a_column_without_description_names_its_path() {
        let definition = column("integer", ".spec.replicas").definition();
        assert_eq!(
            definition["description"],
            "Custom resource definition column (in JSONPath format): .spec.replicas"
        );
        assert_eq!(definition["priority"], 0);
        assert_eq!(definition["format"], "");
    }
}
