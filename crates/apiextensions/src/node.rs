//! Reading one node of a structural schema (apiextensions `pkg/apiserver/schema/structural.go`):
//! the few keys that shape a value — `properties`, `additionalProperties`, `items`, `nullable`,
//! `default` and the `x-kubernetes-*` extensions — straight from the CRD's JSON.

use serde_json::Value;

/// A schema node (a `JSONSchemaProps` object).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<'a>(pub(crate) &'a Value);

impl<'a> Node<'a> {
    fn flag(self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool) == Some(true)
    }

    pub(crate) fn text(self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub(crate) fn get(self, key: &str) -> Option<&'a Value> {
        self.0.get(key)
    }

    /// `type`, "" when absent.
    pub(crate) fn kind(self) -> &'a str {
        self.text("type").unwrap_or("")
    }

    pub(crate) fn nullable(self) -> bool {
        self.flag("nullable")
    }

    pub(crate) fn preserve_unknown(self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields")
    }

    pub(crate) fn embedded(self) -> bool {
        self.flag("x-kubernetes-embedded-resource")
    }

    pub(crate) fn int_or_string(self) -> bool {
        self.flag("x-kubernetes-int-or-string")
    }

    pub(crate) fn default(self) -> Option<&'a Value> {
        self.0.get("default")
    }

    /// The declared property `key`.
    pub(crate) fn property(self, key: &str) -> Option<Node<'a>> {
        self.0.get("properties")?.get(key).map(Node)
    }

    /// The declared properties, in name order.
    pub(crate) fn properties(self) -> impl Iterator<Item = (&'a String, Node<'a>)> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k, Node(v)))
    }

    /// `additionalProperties` as a schema (a `true` is a schema accepting anything).
    pub(crate) fn additional(self) -> Option<Node<'a>> {
        match self.0.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Node(&ANY)),
            Some(schema @ Value::Object(_)) => Some(Node(schema)),
            _ => None,
        }
    }

    /// Whether `additionalProperties: false` forbids undeclared properties.
    pub(crate) fn forbids_additional(self) -> bool {
        self.0.get("additionalProperties") == Some(&Value::Bool(false))
    }

    /// The schema of field `key` of an object: declared, or `additionalProperties`.
    pub(crate) fn field(self, key: &str) -> Option<Node<'a>> {
        self.property(key).or_else(|| self.additional())
    }

    /// `items` (a single schema; the tuple form is not structural).
    pub(crate) fn items(self) -> Option<Node<'a>> {
        self.0.get("items").filter(|i| i.is_object()).map(Node)
    }

    /// The `x-kubernetes-validations` rules.
    pub(crate) fn rules(self) -> &'a [Value] {
        self.0
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `x-kubernetes-list-type`.
    pub(crate) fn list_type(self) -> Option<&'a str> {
        self.text("x-kubernetes-list-type")
    }

    /// `x-kubernetes-list-map-keys`.
    pub(crate) fn map_keys(self) -> Vec<&'a str> {
        self.0
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|keys| keys.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

static ANY: Value = Value::Null;

/// `path.key` (the way kube-openapi and `field.Path` name a property).
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path[index]`.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}
