//! The sizes the static estimate reads from a rule's schema (apiextensions
//! `pkg/apiserver/schema/cel/compilation.go`, `sizeEstimator`, over the declared types of
//! apiserver `pkg/cel/common/schemas.go`): a path from the rule's `self` through fields,
//! `@items`, `@keys` and `@values` to a node, and that node's largest size (`MaxElements`).

use crate::cel_types::{declares_type_and_meta, escape};
use crate::node::Node;

/// `MaxRequestSizeBytes`, the largest body the sizes are estimated from.
pub(super) const MAX_REQUEST: u64 = 3 * 1024 * 1024;

/// A node of the declared types a path walks (apiserver `DeclType`): a schema node, maybe a
/// resource root, or a string the server adds (`kind`, `metadata.name`, a map's key).
#[derive(Clone, Copy)]
pub(super) enum Decl<'a> {
    Schema(Node<'a>, bool),
    /// The `metadata` of a resource root: `name` and `generateName`.
    Meta,
    /// A string with no schema of its own (`kind`, `apiVersion`, `metadata.name`).
    String,
    /// A map's key.
    Key,
}

impl<'a> Decl<'a> {
    pub(super) fn child(self, step: &str) -> Option<Decl<'a>> {
        match self {
            Decl::Schema(node, resource) => {
                if node.int_or_string() {
                    return None;
                }
                match (node.kind(), step) {
                    ("array", "@items" | "@values") => {
                        let items = node.items()?;
                        typed(items).then_some(Decl::Schema(items, items.embedded()))
                    }
                    ("object", "@items" | "@values") => {
                        let values = additional(node)?;
                        typed(values).then_some(Decl::Schema(values, values.embedded()))
                    }
                    ("object", "@keys") => additional(node).map(|_| Decl::Key),
                    ("object", field) if additional(node).is_none() => {
                        if resource && !declares_type_and_meta(node) {
                            match field {
                                "kind" | "apiVersion" => return Some(Decl::String),
                                "metadata" => return Some(Decl::Meta),
                                _ => {}
                            }
                        }
                        let (_, property) = node.properties().find(|(key, _)| {
                            key.as_str() == field || escape(key).as_deref() == Some(field)
                        })?;
                        typed(property).then_some(Decl::Schema(property, property.embedded()))
                    }
                    _ => None,
                }
            }
            Decl::Meta => matches!(step, "name" | "generateName").then_some(Decl::String),
            Decl::String | Decl::Key => None,
        }
    }

    /// `DeclType.MaxElements`; `None` where the server has no declared type.
    pub(super) fn max_elements(self) -> Option<u64> {
        let Decl::Schema(node, _) = self else {
            return Some(match self {
                Decl::String => MAX_REQUEST - 2,
                _ => 0,
            });
        };
        let max_length = || limit(node, "maxLength");
        if node.int_or_string() {
            return Some(max_length().map_or(MAX_REQUEST - 2, |n| n.saturating_mul(4)));
        }
        Some(match node.kind() {
            "array" => {
                let item = min_size(node.items()?)?;
                limit(node, "maxItems").unwrap_or((MAX_REQUEST - 2) / (item + 1))
            }
            "object" => match additional(node) {
                Some(values) => {
                    let value = min_size(values)?;
                    limit(node, "maxProperties").unwrap_or((MAX_REQUEST - 2) / (value + 6))
                }
                None => 0,
            },
            "string" => match node.text("format") {
                Some("byte") => max_length().unwrap_or(MAX_REQUEST - 2),
                Some("duration" | "date-time") => 32,
                Some("date") => 12,
                _ => match max_length() {
                    Some(n) => n.saturating_mul(4),
                    None => match node.get("enum").and_then(serde_json::Value::as_array) {
                        Some(values) if !values.is_empty() => values
                            .iter()
                            .filter_map(serde_json::Value::as_str)
                            .map(|s| s.len() as u64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST - 2,
                    },
                },
            },
            "boolean" | "number" | "integer" => 0,
            _ => return None,
        })
    }
}

/// Whether the server declares a CEL type for `node`.
fn typed(node: Node<'_>) -> bool {
    min_size(node).is_some()
}

fn additional(node: Node<'_>) -> Option<Node<'_>> {
    node.get("additionalProperties")
        .filter(|a| a.is_object())
        .map(Node)
}

fn limit(node: Node<'_>, key: &str) -> Option<u64> {
    node.get(key)
        .and_then(serde_json::Value::as_i64)
        .map(|n| n.max(0).unsigned_abs())
}

/// The smallest JSON a value of `node` can be (`MinSerializedSize`); `None` where the real
/// server has no type.
pub(super) fn min_size(node: Node<'_>) -> Option<u64> {
    if node.int_or_string() {
        return Some(1);
    }
    Some(match node.kind() {
        "array" => {
            min_size(node.items()?)?;
            2
        }
        "object" => match additional(node) {
            Some(values) => {
                min_size(values)?;
                2
            }
            None => {
                let required: Vec<&str> = node
                    .get("required")
                    .and_then(serde_json::Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(serde_json::Value::as_str)
                    .collect();
                node.properties()
                    .filter(|(name, p)| required.contains(&name.as_str()) && p.default().is_none())
                    .filter_map(|(name, p)| Some(name.len() as u64 + min_size(p)? + 4))
                    .sum::<u64>()
                    + 2
            }
        },
        "string" => match node.text("format") {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        },
        "boolean" => 4,
        "number" | "integer" => 1,
        _ => return None,
    })
}
