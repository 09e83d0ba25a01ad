//! The fields of an object its kind's schema does not declare: what `fieldValidation` reports
//! (apimachinery's strict decoding and structural pruning, reduced to finding the paths). `$ref`s
//! resolve as server-side apply's schema walk resolves them ([`kubegen_apply::resolve`]).

use kubegen_apply::resolve;
use serde_json::{Map, Value};

/// A kind's schema: the root schema and the named schemas its `$ref`s point into
/// (`components.schemas` of an OpenAPI v3 document).
pub(crate) struct KindSchema<'a> {
    pub(crate) root: &'a Value,
    pub(crate) components: &'a Map<String, Value>,
}

/// The dotted paths (`spec.template.spec.containers[0].foo`) of the fields in `object` that the
/// schema does not declare, in key order (the real server reports them in document order).
pub(crate) fn unknown_fields(schema: &KindSchema<'_>, object: &Value, patch: bool) -> Vec<String> {
    let mut walk = Walk {
        components: schema.components,
        patch,
        found: Vec::new(),
    };
    walk.value(schema.root, object, "");
    walk.found
}

/// The Status message of a Strict rejection (`strict decoding error: unknown field "a", unknown
/// field "b"`).
pub(crate) fn strict_error_message(fields: &[String]) -> String {
    let listed: Vec<String> = fields
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    format!("strict decoding error: {}", listed.join(", "))
}

struct Walk<'a> {
    components: &'a Map<String, Value>,
    /// Whether the document is a merge patch: `$` directives and `null` deletions are skipped.
    patch: bool,
    found: Vec<String>,
}

impl<'a> Walk<'a> {
    fn resolve(&self, schema: &'a Value) -> (&'a Value, bool) {
        resolve(self.components, schema)
    }

    fn value(&mut self, schema: &'a Value, value: &Value, path: &str) {
        let (schema, named) = self.resolve(schema);
        if schema.is_null() {
            return;
        }
        match value {
            Value::Object(map) => self.object(schema, named, map, path),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item_schema, item, &format!("{path}[{i}]"));
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, schema: &'a Value, named: bool, map: &Map<String, Value>, path: &str) {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        let preserve = flag("x-kubernetes-preserve-unknown-fields");
        let embedded = flag("x-kubernetes-embedded-resource");
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|a| a.is_object());
        // A named type without declared fields (RawExtension, FieldsV1) holds arbitrary JSON; an
        // inline one (a custom resource's structural schema) declares exactly no fields.
        let opaque = named && properties.is_none() && additional.is_none();
        if opaque || (preserve && properties.is_none() && additional.is_none()) {
            return;
        }
        for (key, field) in map {
            if self.patch && (key.starts_with('$') || field.is_null()) {
                continue;
            }
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            match properties.and_then(|p| p.get(key)).or(additional) {
                Some(field_schema) => self.value(field_schema, field, &child),
                None if preserve => {}
                None if embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") => {}
                None => self.found.push(child),
            }
        }
    }
}
