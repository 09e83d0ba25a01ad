//! How server-side apply sees a schema node: a leaf, a granular struct or map, an associative or
//! set list, or "deduced" (no schema) — kube-openapi `schemaconv` turning OpenAPI into
//! structured-merge-diff types.
//!
//! The rules, as `schemaconv` applies them:
//! - `x-kubernetes-list-type`: `atomic` (a leaf), `set` (elements are scalars, owned one by one),
//!   `map` (elements owned one by one, identified by `x-kubernetes-list-map-keys`; a key field the
//!   element omits takes its schema `default`, as `protocol: TCP` for container ports).
//! - Without it, `x-kubernetes-patch-strategy: merge` makes a list associative by
//!   `x-kubernetes-patch-merge-key` (a set without one); every other list is atomic.
//! - Objects are granular unless `x-kubernetes-map-type: atomic`; `x-kubernetes-int-or-string` and
//!   scalars are leaves.
//! - No schema (a custom resource without one, `x-kubernetes-preserve-unknown-fields`, a field
//!   the schema does not declare, `RawExtension`): "deduced" like structured-merge-diff's
//!   `__untyped_deduced_`: objects are granular maps, lists atomic.
//!
//! # Why OpenAPI, not a schema type of our own
//! structured-merge-diff has its own schema language, which kube-openapi builds from the OpenAPI
//! documents once per server. The rules above read the same OpenAPI v3 schemas and their
//! `x-kubernetes-*` extensions directly, node by node as the walks reach them: a server hands its
//! published documents ([`Schema::openapi`]) and converts nothing, and a test writes a few lines
//! of OpenAPI by hand.

use serde_json::{Map, Value};

/// The schema of one kind, as the `Tracker` reads it: an OpenAPI v3 schema (`root`) and the
/// named schemas its `$ref`s point into (`components.schemas` of the document), or nothing, when
/// every value is deduced (a custom resource without a schema).
#[derive(Clone, Copy, Debug, Default)]
pub struct Schema<'a> {
    pub(crate) schemas: Schemas<'a>,
    pub(crate) root: Node<'a>,
    /// Whether a create compares against the zero value of the kind's Go type
    /// ([`Schemas::zero_value`]) rather than `{}`.
    pub(crate) go_zero_value: bool,
}

impl<'a> Schema<'a> {
    /// A kind whose values are all deduced: no document describes it.
    pub fn deduced() -> Schema<'a> {
        Schema::default()
    }

    /// The kind `root` (None: the document lacks it, and values are deduced) among the named
    /// schemas `components`, as a custom resource's: a create is compared against `{}`.
    pub fn openapi(components: &'a Map<String, Value>, root: Option<&'a Value>) -> Schema<'a> {
        Schema {
            schemas: Schemas {
                components: Some(components),
            },
            root,
            go_zero_value: false,
        }
    }

    /// The same kind as a built-in one: the real server decodes a created object into its Go
    /// type, so the create is compared against that type's zero value, in which struct fields
    /// that are not pointers are present and empty (`Schemas::zero_value`).
    pub fn built_in(self) -> Schema<'a> {
        Schema {
            go_zero_value: true,
            ..self
        }
    }
}

/// Follows `$ref` and the single-`allOf` wrapper the v3 documents put around a `$ref` that carries
/// a description or default. Returns the schema and whether it is a named (built-in) type; a
/// reference to a missing schema resolves to `null`.
pub fn resolve<'a>(components: &'a Map<String, Value>, schema: &'a Value) -> (&'a Value, bool) {
    let mut current = schema;
    let mut named = false;
    for _ in 0..8 {
        let target = match current.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => &all[0],
            _ => current,
        };
        let Some(name) = target
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
        else {
            return (target, named);
        };
        match components.get(name) {
            Some(next) => {
                current = next;
                named = true;
            }
            None => return (&Value::Null, true),
        }
    }
    (current, named)
}

/// The named schemas a kind's schema refers to; None for a kind without a document.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Schemas<'a> {
    pub(crate) components: Option<&'a Map<String, Value>>,
}

/// A schema node: None when the value is deduced.
pub(crate) type Node<'a> = Option<&'a Value>;

/// What merging, ownership and comparison do with a value.
#[derive(Debug)]
pub(crate) enum Shape<'a> {
    /// Replaced and owned as a whole.
    Leaf,
    /// Fields owned one by one: declared `properties`, else `additional` (a map's values; None
    /// and deduced for an undeclared field).
    Granular {
        properties: Option<&'a Map<String, Value>>,
        additional: Node<'a>,
    },
    /// Elements owned one by one.
    List { items: Node<'a>, keys: ListKeys },
}

/// How the elements of a granular list are identified.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ListKeys {
    /// By value (`v:`).
    Set,
    /// By these key fields (`k:`).
    Map(Vec<String>),
}

impl<'a> Schemas<'a> {
    /// Resolves references and wrappers of `node`.
    pub(crate) fn resolve(&self, node: Node<'a>) -> Node<'a> {
        let (schema, components) = (node?, self.components?);
        let (resolved, _) = resolve(components, schema);
        (!resolved.is_null()).then_some(resolved)
    }

    /// The shape of `value` under `node`.
    pub(crate) fn shape(&self, node: Node<'a>, value: &Value) -> Shape<'a> {
        let Some(schema) = self.resolve(node) else {
            return deduced(value);
        };
        let text = |key: &str| schema.get(key).and_then(Value::as_str);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            return Shape::Leaf;
        }
        if text("type") == Some("array") || schema.get("items").is_some() {
            return list_shape(schema);
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|a| a.is_object());
        if text("type") == Some("object") || properties.is_some() || additional.is_some() {
            if text("x-kubernetes-map-type") == Some("atomic") {
                return Shape::Leaf;
            }
            if properties.is_none() && additional.is_none() {
                return deduced(value);
            }
            return Shape::Granular {
                properties,
                additional,
            };
        }
        if text("type").is_none() {
            return deduced(value);
        }
        Shape::Leaf
    }

    /// The schema of field `key` of a granular object; None (deduced) when undeclared.
    pub(crate) fn field(shape: &Shape<'a>, key: &str) -> Node<'a> {
        match shape {
            Shape::Granular {
                properties,
                additional,
            } => properties.and_then(|p| p.get(key)).or(*additional),
            _ => None,
        }
    }

    /// The default of field `key` of the element schema `items`, if it declares one.
    pub(crate) fn default_of(&self, items: Node<'a>, key: &str) -> Option<&'a Value> {
        let schema = self.resolve(items)?;
        let field = schema.get("properties")?.get(key)?;
        let own = field.get("default");
        own.or_else(|| self.resolve(Some(field)).and_then(|f| f.get("default")))
    }

    /// The zero value the real server compares a created object against: `{}` for the root and
    /// for every struct field its Go type does not make a pointer (the documents mark them with
    /// `default: {}`), recursively, and `null` for the other fields Go serializes even when unset
    /// (no `omitempty`: the documents list them as `required`, e.g. a PodSpec's `containers`).
    /// Custom resources start from `{}`.
    pub(crate) fn zero_value(&self, node: Node<'a>) -> Value {
        let mut out = Map::new();
        let Some(schema) = self.resolve(node) else {
            return Value::Object(out);
        };
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Value::Object(out);
        };
        for (key, field) in properties {
            let empty_default = field.get("default") == Some(&Value::Object(Map::new()));
            let is_struct = self
                .resolve(Some(field))
                .is_some_and(|f| f.get("properties").is_some());
            if empty_default && is_struct {
                out.insert(key.clone(), self.zero_value(Some(field)));
            }
        }
        let required = schema.get("required").and_then(Value::as_array);
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if properties.contains_key(key) && !out.contains_key(key) {
                out.insert(key.to_string(), Value::Null);
            }
        }
        Value::Object(out)
    }
}

fn deduced(value: &Value) -> Shape<'static> {
    if value.is_object() {
        Shape::Granular {
            properties: None,
            additional: None,
        }
    } else {
        Shape::Leaf
    }
}

fn list_shape(schema: &Value) -> Shape<'_> {
    let items = schema.get("items");
    let text = |key: &str| schema.get(key).and_then(Value::as_str);
    let keys = match text("x-kubernetes-list-type") {
        Some("set") => ListKeys::Set,
        Some("map") => ListKeys::Map(
            schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
        ),
        Some(_) => return Shape::Leaf,
        None => {
            let merge = text("x-kubernetes-patch-strategy")
                .is_some_and(|s| s.split(',').any(|part| part == "merge"));
            match text("x-kubernetes-patch-merge-key") {
                _ if !merge => return Shape::Leaf,
                Some(key) => ListKeys::Map(vec![key.to_string()]),
                None => ListKeys::Set,
            }
        }
    };
    Shape::List { items, keys }
}
