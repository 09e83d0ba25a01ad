//! Structural OpenAPI v3 schemas derived from field types (what controller-gen's `crd` generator
//! does for Go types).
//!
//! "Structural" (apiextensions.k8s.io/v1) means every node has a `type` (or the int-or-string
//! escape), no `$ref`s and no recursion: nested structs are inlined, which the checker made
//! possible by rejecting recursive types. Built with `serde_yaml::Mapping`, which keeps insertion
//! order, so the YAML is byte-for-byte stable whatever serde_json features the workspace enables.

use serde_yaml::{Mapping, Value};

use crate::model::{Field, FieldType, Package, StructDef};

/// `key: value` pairs -> a YAML mapping, in order.
pub(super) fn map<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut mapping = Mapping::new();
    for (key, value) in pairs {
        mapping.insert(Value::from(key), value);
    }
    Value::Mapping(mapping)
}

/// Inserts `key: value` into a mapping value.
pub(super) fn insert(target: &mut Value, key: &str, value: Value) {
    if let Value::Mapping(mapping) = target {
        mapping.insert(Value::from(key), value);
    }
}

fn string(text: &str) -> Value {
    Value::from(text)
}

/// The `openAPIV3Schema` of a kind.
pub(super) fn kind_schema(package: &Package, def: &StructDef) -> Value {
    let mut properties = map([
        (
            "apiVersion",
            map([
                ("type", string("string")),
                (
                    "description",
                    string("APIVersion of this representation of an object."),
                ),
            ]),
        ),
        (
            "kind",
            map([
                ("type", string("string")),
                ("description", string("Kind of the object.")),
            ]),
        ),
        ("metadata", map([("type", string("object"))])),
    ]);
    let mut required = Vec::new();
    for field in def.fields.iter().filter(|field| field.name != "metadata") {
        insert(
            &mut properties,
            &field.json_name,
            field_schema(package, field),
        );
        if is_required(field) {
            required.push(string(&field.json_name));
        }
    }
    let mut schema = map([("type", string("object"))]);
    if !def.docs.is_empty() {
        insert(&mut schema, "description", string(&description(&def.docs)));
    }
    insert(&mut schema, "properties", properties);
    if !required.is_empty() {
        insert(&mut schema, "required", Value::Sequence(required));
    }
    schema
}

/// Whether a field must be present: not `Option`, not `+kubegen:optional` (or `+kubegen:required`).
fn is_required(field: &Field) -> bool {
    field.markers.required || (!matches!(field.ty, FieldType::Option(_)) && !field.markers.optional)
}

fn description(docs: &[String]) -> String {
    docs.join("\n").trim().to_owned()
}

fn field_schema(package: &Package, field: &Field) -> Value {
    let mut schema = type_schema(package, &field.ty);
    if !field.docs.is_empty() {
        insert(
            &mut schema,
            "description",
            string(&description(&field.docs)),
        );
    }
    let markers = &field.markers;
    let integer = matches!(field.ty.without_option(), FieldType::I32 | FieldType::I64);
    let number = |value: f64| {
        if integer && value.fract() == 0.0 {
            // Whole numbers on integer fields print as integers, as kubectl expects.
            #[allow(clippy::cast_possible_truncation)]
            Value::from(value as i64)
        } else {
            Value::from(value)
        }
    };
    if let Some(default) = &markers.default
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(default)
    {
        insert(
            &mut schema,
            "default",
            serde_yaml::to_value(json).unwrap_or(Value::Null),
        );
    }
    if !markers.enum_values.is_empty() {
        insert(
            &mut schema,
            "enum",
            Value::Sequence(markers.enum_values.iter().map(|v| string(v)).collect()),
        );
    }
    let limits = [
        ("minimum", markers.minimum.map(number)),
        ("maximum", markers.maximum.map(number)),
        ("minLength", markers.min_length.map(Value::from)),
        ("maxLength", markers.max_length.map(Value::from)),
        ("minItems", markers.min_items.map(Value::from)),
        ("maxItems", markers.max_items.map(Value::from)),
        ("pattern", markers.pattern.as_deref().map(string)),
    ];
    for (key, value) in limits {
        if let Some(value) = value {
            insert(&mut schema, key, value);
        }
    }
    schema
}

fn type_schema(package: &Package, ty: &FieldType) -> Value {
    let typed = |name: &str| map([("type", string(name))]);
    let formatted =
        |name: &str, format: &str| map([("type", string(name)), ("format", string(format))]);
    match ty {
        FieldType::String => typed("string"),
        FieldType::Bool => typed("boolean"),
        FieldType::I32 => formatted("integer", "int32"),
        FieldType::I64 => formatted("integer", "int64"),
        FieldType::F64 => formatted("number", "double"),
        FieldType::Time => formatted("string", "date-time"),
        FieldType::Quantity | FieldType::IntOrString => map([
            (
                "anyOf",
                Value::Sequence(vec![typed("integer"), typed("string")]),
            ),
            ("x-kubernetes-int-or-string", Value::Bool(true)),
        ]),
        FieldType::ObjectMeta => typed("object"),
        FieldType::Option(inner) => type_schema(package, inner),
        FieldType::Vec(inner) => map([
            ("type", string("array")),
            ("items", type_schema(package, inner)),
        ]),
        FieldType::Map(inner) => map([
            ("type", string("object")),
            ("additionalProperties", type_schema(package, inner)),
        ]),
        FieldType::Named(name) => match package.structs.iter().find(|def| &def.name == name) {
            Some(def) => struct_schema(package, def),
            None => typed("object"),
        },
    }
}

/// A `default` that [`remove_defaults`] took out of a schema.
#[derive(Debug, PartialEq)]
pub(super) struct RemovedDefault {
    /// Where the field sits, e.g. `.spec.workers` (`[*]` for list items, `.*` for map values).
    pub(super) path: String,
    /// The default value that was removed.
    pub(super) value: Value,
}

/// Removes every `default` from a schema built by [`kind_schema`] and returns what it removed, in
/// schema order. For API servers that cannot apply defaults (before 1.16).
///
/// It follows the schema's structure (`properties`, `items`, `additionalProperties`) instead of
/// deleting every `default` key, so a *property* named `default` stays.
pub(super) fn remove_defaults(schema: &mut Value) -> Vec<RemovedDefault> {
    let mut removed = Vec::new();
    remove_defaults_at(schema, String::new(), &mut removed);
    removed
}

fn remove_defaults_at(schema: &mut Value, path: String, removed: &mut Vec<RemovedDefault>) {
    let Value::Mapping(node) = schema else {
        return;
    };
    if let Some(value) = node.remove("default") {
        removed.push(RemovedDefault {
            path: path.clone(),
            value,
        });
    }
    if let Some(Value::Mapping(properties)) = node.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let name = name.as_str().unwrap_or_default();
            remove_defaults_at(property, format!("{path}.{name}"), removed);
        }
    }
    if let Some(items) = node.get_mut("items") {
        remove_defaults_at(items, format!("{path}[*]"), removed);
    }
    if let Some(values) = node.get_mut("additionalProperties") {
        remove_defaults_at(values, format!("{path}.*"), removed);
    }
}

fn struct_schema(package: &Package, def: &StructDef) -> Value {
    let mut properties = Mapping::new();
    let mut required = Vec::new();
    for field in &def.fields {
        properties.insert(string(&field.json_name), field_schema(package, field));
        if is_required(field) {
            required.push(string(&field.json_name));
        }
    }
    let mut schema = map([("type", string("object"))]);
    if !def.docs.is_empty() {
        insert(&mut schema, "description", string(&description(&def.docs)));
    }
    insert(&mut schema, "properties", Value::Mapping(properties));
    if !required.is_empty() {
        insert(&mut schema, "required", Value::Sequence(required));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        serde_yaml::from_str(text).expect("test YAML parses")
    }

    #[test]
    fn a_property_named_default_is_not_a_default() {
        let mut schema = yaml(
            "{type: object, properties: {default: {type: string, default: x},
              tags: {type: array, items: {type: string, default: y}},
              labels: {type: object, additionalProperties: {type: string, default: z}}}}",
        );
        let removed = remove_defaults(&mut schema);
        assert_eq!(
            schema,
            yaml(
                "{type: object, properties: {default: {type: string},
                  tags: {type: array, items: {type: string}},
                  labels: {type: object, additionalProperties: {type: string}}}}"
            )
        );
        let paths: Vec<(&str, &Value)> = removed
            .iter()
            .map(|r| (r.path.as_str(), &r.value))
            .collect();
        assert_eq!(
            paths,
            [
                (".default", &Value::from("x")),
                (".tags[*]", &Value::from("y")),
                (".labels.*", &Value::from("z")),
            ]
        );
    }
}
