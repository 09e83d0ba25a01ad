//! Step 2 of `kubegen import`: an `openAPIV3Schema` becomes the IR: structs with typed fields and
//! the markers that regenerate each node's schema.
//!
//! # How a node is carried
//! Each schema node becomes a Rust type ([`Ty`]) plus markers. The type says what the generator
//! derives anyway (`type`, `format` of integers, `properties`, `required`, `items`,
//! `additionalProperties`, int-or-string, preserve-unknown-fields); named markers carry the
//! keywords they exist for (`description`, bounds, lengths, `pattern`, string `enum`, `format`,
//! `default` of scalars, list types and map keys, CEL rules). Whatever is left, including the
//! keywords of array items and map values, goes into one `+kubegen:schema=<JSON merge patch>`
//! against what the generator would emit for the type and named markers: so the regenerated
//! schema equals the input without a marker per keyword the generator never interprets
//! (`oneOf`, `x-kubernetes-map-type`, `nullable`, ...).
//!
//! # Shapes
//! - `x-kubernetes-int-or-string` -> `IntOrString`;
//! - `x-kubernetes-preserve-unknown-fields` without `properties`, a node without `type`, or a node
//!   deeper than `max_depth` (Argo's recursive templates) -> `serde_json::Value`;
//! - `additionalProperties` -> `BTreeMap<String, T>`; `items` -> `Vec<T>` (arrays of arrays too);
//! - `integer` -> `i32` only for `format: int32`, else `i64` (never `f64`: 2^53 + 1 survives);
//! - `number` -> `serde_json::Number`, which keeps the JSON form (`1` stays `1`, `1.0` stays
//!   `1.0`; an `f64` would write `1` back as `1.0`), the format going to the markers;
//! - `oneOf`/`anyOf` other than int-or-string are value validation in structural schemas: they
//!   stay in the merge patch, the Rust type follows the structural properties.
//! - strings with `enum` stay `String` (open: an unknown value decodes and re-encodes as is) with
//!   an `Enum` marker naming the known values.

use serde_json::{Map, Value, json};

use super::ir::{FieldIr, StructIr, Ty, text};
use super::markers::{merge_diff, named_markers, rules};
use super::problems::Problems;

/// Builds the structs of every kind of one package.
pub(crate) struct Builder<'p> {
    pub(crate) structs: Vec<StructIr>,
    pub(crate) problems: &'p mut Problems,
    /// Nodes deeper than this become `serde_json::Value`.
    pub(crate) max_depth: usize,
}

/// Where a node is: for names (`Gateway.spec.listeners`) and for messages (`.spec.listeners[*]`).
#[derive(Clone)]
struct At<'a> {
    place: &'a str,
    owner: &'a str,
    name: String,
    schema: String,
    depth: usize,
}

impl Builder<'_> {
    /// The struct of kind `kind` from its `openAPIV3Schema`; `place` names the CRD and version.
    pub(crate) fn kind(&mut self, place: &str, kind: &str, schema: &Value) -> usize {
        let at = At {
            place,
            owner: kind,
            name: kind.to_owned(),
            schema: String::new(),
            depth: 0,
        };
        let index = self.object(&at, schema, &["apiVersion", "kind", "metadata"]);
        let mut expected = json!({"type": "object"});
        let mut properties = Map::new();
        let constant = [
            (
                "apiVersion",
                json!({"type": "string", "description": "APIVersion of this representation of an object."}),
            ),
            (
                "kind",
                json!({"type": "string", "description": "Kind of the object."}),
            ),
            ("metadata", json!({"type": "object"})),
        ];
        for (key, value) in constant {
            properties.insert(key.to_owned(), value);
        }
        let mut actual = schema.clone();
        strip_children(&Ty::Struct(index), &mut actual);
        if let Some(object) = actual.as_object_mut() {
            object.remove("required");
            object.remove("description");
            if let Some(Value::Object(input)) = schema.get("properties") {
                let mut kept = Map::new();
                for key in ["apiVersion", "kind", "metadata"] {
                    kept.insert(
                        key.to_owned(),
                        input.get(key).cloned().unwrap_or(Value::Null),
                    );
                }
                object.insert("properties".to_owned(), Value::Object(kept));
            }
        }
        if let Some(object) = expected.as_object_mut() {
            object.insert("properties".to_owned(), Value::Object(properties));
        }
        root_required(schema, &self.structs[index], &mut expected, &mut actual);
        let mut markers = Vec::new();
        rules(schema, "", &mut markers, &mut actual);
        if let Some(patch) = merge_diff(&expected, &actual) {
            markers.push(format!("+kubegen:schema={patch}"));
        }
        self.structs[index].markers = markers;
        index
    }

    /// A struct from an object node's `properties` (fields sorted by JSON name), minus `skip`.
    fn object(&mut self, at: &At<'_>, node: &Value, skip: &[&str]) -> usize {
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|keys| keys.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(Value::Object(properties)) = node.get("properties") {
            for (json, child) in properties {
                if skip.contains(&json.as_str()) {
                    continue;
                }
                let child_at = At {
                    name: format!("{}.{json}", at.name),
                    schema: format!("{}.{json}", at.schema),
                    depth: at.depth + 1,
                    ..at.clone()
                };
                fields.push(self.field(&child_at, json, child, required.contains(&json.as_str())));
            }
        }
        self.structs.push(StructIr {
            path: at.name.clone(),
            owner: at.owner.to_owned(),
            fields,
            markers: Vec::new(),
        });
        self.structs.len() - 1
    }

    fn field(&mut self, at: &At<'_>, json: &str, node: &Value, required: bool) -> FieldIr {
        let ty = self.ty(at, node);
        let mut markers = Vec::new();
        let mut actual = node.clone();
        strip_children(&ty, &mut actual);
        named_markers(&self.structs, &ty, node, &mut markers, &mut actual);
        let mut expected = expected(&ty);
        let nullable = node.get("nullable").and_then(Value::as_bool) == Some(true);
        if let (true, Some(object)) = (nullable, expected.as_object_mut()) {
            object.insert("nullable".to_owned(), Value::Bool(true));
        }
        let mut actual_full = actual;
        add_children(&ty, node, &mut expected, &mut actual_full);
        if let Some(patch) = merge_diff(&expected, &actual_full) {
            markers.push(format!("+kubegen:schema={patch}"));
        }
        FieldIr {
            json: json.to_owned(),
            docs: text(node, "description"),
            ty,
            required,
            nullable,
            markers,
        }
    }

    /// The Rust type of a node (building structs for objects with properties).
    fn ty(&mut self, at: &At<'_>, node: &Value) -> Ty {
        if node
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            == Some(true)
        {
            return Ty::IntOrString;
        }
        if at.depth > self.max_depth {
            self.problems.warn(
                &format!("{}, at {}", at.place, at.schema),
                format!(
                    "deeper than {} levels: free JSON (`serde_json::Value`)",
                    self.max_depth
                ),
            );
            return Ty::Json;
        }
        let preserve = node
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true);
        match node.get("type").and_then(Value::as_str) {
            Some("string") => Ty::String,
            Some("boolean") => Ty::Bool,
            Some("integer") if text(node, "format") == "int32" => Ty::I32,
            Some("integer") => Ty::I64,
            Some("number") => Ty::Number,
            Some("array") => {
                let items = node.get("items").unwrap_or(&Value::Null);
                Ty::Vec(Box::new(self.ty(
                    &At {
                        depth: at.depth + 1,
                        schema: format!("{}[*]", at.schema),
                        ..at.clone()
                    },
                    items,
                )))
            }
            Some("object") if node.get("properties").is_some() => {
                Ty::Struct(self.object(at, node, &[]))
            }
            Some("object") if preserve => Ty::Json,
            Some("object") => match node.get("additionalProperties") {
                Some(values @ Value::Object(_)) => Ty::Map(Box::new(self.ty(
                    &At {
                        depth: at.depth + 1,
                        schema: format!("{}.*", at.schema),
                        ..at.clone()
                    },
                    values,
                ))),
                _ => Ty::Struct(self.object(at, node, &[])),
            },
            Some(other) => {
                self.problems.push(
                    &format!("{}, at {}", at.place, at.schema),
                    format!("unknown schema type `{other}`"),
                );
                Ty::Json
            }
            None => Ty::Json,
        }
    }
}

/// A root `required` naming `apiVersion`, `kind` or `metadata` (Argo requires `metadata`): the
/// generator writes only the fields' list, so the patch carries the whole list.
fn root_required(schema: &Value, root: &StructIr, expected: &mut Value, actual: &mut Value) {
    let Some(list) = schema.get("required").and_then(Value::as_array) else {
        return;
    };
    let reserved = ["apiVersion", "kind", "metadata"];
    if !list
        .iter()
        .any(|key| key.as_str().is_some_and(|k| reserved.contains(&k)))
    {
        return;
    }
    let generated: Vec<Value> = root
        .fields
        .iter()
        .filter(|field| field.required)
        .map(|field| Value::from(field.json.as_str()))
        .collect();
    if let (Some(expected), Some(actual)) = (expected.as_object_mut(), actual.as_object_mut()) {
        if !generated.is_empty() {
            expected.insert("required".to_owned(), Value::Array(generated));
        }
        actual.insert("required".to_owned(), Value::Array(list.clone()));
    }
}

/// Removes what the type's children carry themselves: a struct's `properties` (its fields; a
/// placeholder stays, since the generator always writes `properties` for a struct) and
/// `required`, a list's `items` and a map's `additionalProperties` (compared by
/// [`add_children`]). Free JSON keeps everything: a cut-off subtree lives on in the patch.
fn strip_children(ty: &Ty, node: &mut Value) {
    let Some(object) = node.as_object_mut() else {
        return;
    };
    match ty {
        Ty::Struct(_) => {
            object.remove("required");
            if object.contains_key("properties") {
                object.insert("properties".to_owned(), json!({}));
            }
        }
        Ty::Vec(_) => {
            object.remove("items");
        }
        Ty::Map(_) => {
            object.remove("additionalProperties");
        }
        _ => {}
    }
}

/// The node as the generator emits it for `ty` alone, without children.
fn expected(ty: &Ty) -> Value {
    match ty {
        Ty::String => json!({"type": "string"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::I32 => json!({"type": "integer", "format": "int32"}),
        Ty::I64 => json!({"type": "integer", "format": "int64"}),
        Ty::Number => json!({"type": "number"}),
        Ty::IntOrString => {
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true})
        }
        Ty::Json => json!({"x-kubernetes-preserve-unknown-fields": true}),
        Ty::Struct(_) => json!({"type": "object", "properties": {}}),
        Ty::Vec(_) => json!({"type": "array"}),
        Ty::Map(_) => json!({"type": "object"}),
    }
}

/// Adds the `items`/`additionalProperties` nodes to both sides, recursively, so their keywords
/// land in the field's patch; a struct's own properties are its fields' business.
fn add_children(ty: &Ty, node: &Value, expected_node: &mut Value, actual: &mut Value) {
    let (key, inner) = match ty {
        Ty::Vec(inner) => ("items", inner),
        Ty::Map(inner) => ("additionalProperties", inner),
        _ => return,
    };
    let child = node.get(key).cloned().unwrap_or(Value::Null);
    let mut child_actual = child.clone();
    strip_children(inner, &mut child_actual);
    let mut child_expected = expected(inner);
    add_children(inner, &child, &mut child_expected, &mut child_actual);
    if let Some(object) = expected_node.as_object_mut() {
        object.insert(key.to_owned(), child_expected);
    }
    if let Some(object) = actual.as_object_mut() {
        object.insert(key.to_owned(), child_actual);
    }
}
