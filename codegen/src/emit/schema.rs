//! Structural OpenAPI v3 schemas derived from field types (what controller-gen's `crd` generator
//! does for Go types).
//!
//! "Structural" (apiextensions.k8s.io/v1) means every node has a `type` (or the int-or-string
//! escape), no `$ref`s and no recursion: nested structs are inlined, which the checker made
//! possible by rejecting recursive types. Built with `serde_yaml::Mapping`, which keeps insertion
//! order, so the YAML is byte-for-byte stable whatever serde_json features the workspace enables.

use serde_yaml::{Mapping, Value};

use crate::model::Tag;
use crate::model::{CelRule, EnumDef, Field, FieldType, Package, StructDef};

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
        if field.is_required() {
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
    insert_rules(&mut schema, &struct_rules(def));
    if let Some(patch) = struct_patch(def) {
        merge_patch(&mut schema, patch);
    }
    schema
}

/// The CEL rules written on a struct (`+kubegen:validation:XValidation:` type tags).
fn struct_rules(def: &StructDef) -> Vec<CelRule> {
    def.tags
        .iter()
        .filter_map(|(tag, _)| match tag {
            Tag::Rule(rule) => Some(rule.clone()),
            _ => None,
        })
        .collect()
}

/// `x-kubernetes-validations: [{rule, message, messageExpression, reason, fieldPath}]`, when
/// there are rules.
fn insert_rules(schema: &mut Value, rules: &[CelRule]) {
    if rules.is_empty() {
        return;
    }
    let entries = rules.iter().map(|rule| {
        let mut entry = map([("rule", string(&rule.rule))]);
        let optional = [
            ("message", &rule.message),
            ("messageExpression", &rule.message_expression),
            ("reason", &rule.reason),
            ("fieldPath", &rule.field_path),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                insert(&mut entry, key, string(value));
            }
        }
        if let Some(flag) = rule.optional_old_self {
            insert(&mut entry, "optionalOldSelf", Value::Bool(flag));
        }
        entry
    });
    insert(
        schema,
        "x-kubernetes-validations",
        Value::Sequence(entries.collect()),
    );
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
    let flag = |set: bool| set.then_some(Value::Bool(true));
    let limits = [
        ("format", markers.format.as_deref().map(string)),
        ("minimum", markers.minimum.map(number)),
        ("exclusiveMinimum", flag(markers.exclusive_minimum)),
        ("maximum", markers.maximum.map(number)),
        ("exclusiveMaximum", flag(markers.exclusive_maximum)),
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
    // The API server rejects `uniqueItems: true` ("the runtime complexity becomes quadratic");
    // a set list is its structural spelling, checked by the server the same way.
    let list_type = markers
        .list_type
        .as_deref()
        .or(markers.unique_items.then_some("set"));
    if let Some(list_type) = list_type {
        insert(&mut schema, "x-kubernetes-list-type", string(list_type));
    }
    if !markers.list_map_keys.is_empty() {
        let keys = markers.list_map_keys.iter().map(|key| string(key));
        insert(
            &mut schema,
            "x-kubernetes-list-map-keys",
            Value::Sequence(keys.collect()),
        );
    }
    insert_rules(&mut schema, &markers.rules);
    if let Some(patch) = &markers.schema {
        merge_patch(&mut schema, patch);
    }
    schema
}

/// The `+kubegen:schema=` patch written on a struct (a kind's root node, for one).
fn struct_patch(def: &StructDef) -> Option<&serde_json::Value> {
    def.tags.iter().find_map(|(tag, _)| match tag {
        Tag::Schema(patch) => Some(patch),
        _ => None,
    })
}

/// Applies a JSON merge patch (RFC 7386) to a schema node: objects merge key by key, `null`
/// removes a key, anything else replaces. How `+kubegen:schema=` carries the keywords no named
/// marker does (`kubegen import` writes them), so the regenerated schema equals the CRD's.
pub(super) fn merge_patch(target: &mut Value, patch: &serde_json::Value) {
    let serde_json::Value::Object(entries) = patch else {
        *target = serde_yaml::to_value(patch).unwrap_or(Value::Null);
        return;
    };
    if !matches!(target, Value::Mapping(_)) {
        *target = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(mapping) = target else {
        return;
    };
    for (key, value) in entries {
        let key = Value::from(key.as_str());
        if value.is_null() {
            mapping.remove(&key);
        } else if let Some(existing) = mapping.get_mut(&key) {
            merge_patch(existing, value);
        } else {
            let mut fresh = Value::Null;
            merge_patch(&mut fresh, value);
            mapping.insert(key, fresh);
        }
    }
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
        FieldType::Number => typed("number"),
        FieldType::Time => formatted("string", "date-time"),
        FieldType::Quantity | FieldType::IntOrString => map([
            (
                "anyOf",
                Value::Sequence(vec![typed("integer"), typed("string")]),
            ),
            ("x-kubernetes-int-or-string", Value::Bool(true)),
        ]),
        FieldType::ObjectMeta => typed("object"),
        FieldType::Bytes => formatted("string", "byte"),
        FieldType::Json => map([("x-kubernetes-preserve-unknown-fields", Value::Bool(true))]),
        FieldType::WellKnown(well_known) => well_known.schema(),
        FieldType::Option(inner) if ty.is_nullable() => {
            let mut schema = type_schema(package, inner);
            if let Value::Mapping(entries) = &mut schema {
                entries.insert(string("nullable"), Value::Bool(true));
            }
            schema
        }
        FieldType::Option(inner) => type_schema(package, inner),
        FieldType::Vec(inner) => map([
            ("type", string("array")),
            ("items", type_schema(package, inner)),
        ]),
        FieldType::Map(inner) => map([
            ("type", string("object")),
            ("additionalProperties", type_schema(package, inner)),
        ]),
        FieldType::Named(name) => {
            if let Some(def) = package.structs.iter().find(|def| &def.name == name) {
                struct_schema(package, def)
            } else if let Some(def) = package.enums.iter().find(|def| &def.name == name) {
                enum_schema(def)
            } else {
                typed("object")
            }
        }
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
    walk(schema, String::new(), &mut |node, path| {
        if let Some(value) = node.remove("default") {
            removed.push(RemovedDefault {
                path: path.to_owned(),
                value,
            });
        }
    });
    removed
}

/// Keywords of structural schemas that API servers before 1.16 do not know (their CRD
/// validation rejects unknown fields).
const NEWER_THAN_1_15: [&str; 4] = [
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Validation that [`remove_newer_keywords`] took out of a schema: the server will not check it.
#[derive(Debug, PartialEq)]
pub(super) struct RemovedValidation {
    /// Where the field sits, as in [`RemovedDefault`].
    pub(super) path: String,
    /// What is no longer checked, e.g. ``CEL rule `self >= oldSelf` `` or `listType=set`.
    pub(super) what: String,
}

/// Removes the keywords of [`NEWER_THAN_1_15`] from a schema built by [`kind_schema`]; returns
/// the CEL rules and the `set`/`map` list types (which reject duplicates) it removed.
pub(super) fn remove_newer_keywords(schema: &mut Value) -> Vec<RemovedValidation> {
    let mut removed = Vec::new();
    walk(schema, String::new(), &mut |node, path| {
        for key in NEWER_THAN_1_15 {
            let Some(value) = node.remove(key) else {
                continue;
            };
            let mut record = |what: String| {
                removed.push(RemovedValidation {
                    path: path.to_owned(),
                    what,
                });
            };
            match (key, &value) {
                ("x-kubernetes-validations", Value::Sequence(rules)) => {
                    for rule in rules {
                        record(format!(
                            "CEL rule `{}`",
                            rule["rule"].as_str().unwrap_or_default()
                        ));
                    }
                }
                ("x-kubernetes-list-type", Value::String(list_type)) if list_type != "atomic" => {
                    record(format!(
                        "no duplicates (`x-kubernetes-list-type: {list_type}`)"
                    ));
                }
                _ => {}
            }
        }
    });
    removed
}

/// Calls `visit` on every schema node (with its path, `[*]` for list items, `.*` for map
/// values), following `properties`, `items` and `additionalProperties`, so that a *property*
/// named like a keyword is left alone.
fn walk(schema: &mut Value, path: String, visit: &mut impl FnMut(&mut Mapping, &str)) {
    let Value::Mapping(node) = schema else {
        return;
    };
    visit(node, &path);
    if let Some(Value::Mapping(properties)) = node.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let name = name.as_str().unwrap_or_default();
            walk(property, format!("{path}.{name}"), visit);
        }
    }
    if let Some(items) = node.get_mut("items") {
        walk(items, format!("{path}[*]"), visit);
    }
    if let Some(values) = node.get_mut("additionalProperties") {
        walk(values, format!("{path}.*"), visit);
    }
}

fn struct_schema(package: &Package, def: &StructDef) -> Value {
    let mut properties = Mapping::new();
    let mut required = Vec::new();
    for field in &def.fields {
        properties.insert(string(&field.json_name), field_schema(package, field));
        if field.is_required() {
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
    insert_rules(&mut schema, &struct_rules(def));
    if let Some(patch) = struct_patch(def) {
        merge_patch(&mut schema, patch);
    }
    schema
}

/// `type: string` with the variants' values as `enum`.
fn enum_schema(def: &EnumDef) -> Value {
    let mut schema = map([("type", string("string"))]);
    if !def.docs.is_empty() {
        insert(&mut schema, "description", string(&description(&def.docs)));
    }
    let values = def.variants.iter().map(|variant| string(&variant.value));
    insert(&mut schema, "enum", Value::Sequence(values.collect()));
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

    /// The schema of kind `Demo` declared (with its other types) in `types`.
    fn demo_schema(types: &str) -> Value {
        let kind = "/// +genclient\npub struct Demo {\n    pub metadata: ObjectMeta,\n    pub spec: Spec,\n}\n";
        let (_, model) =
            crate::testutil::load(&format!("{kind}{types}")).expect("test input is valid");
        let package = &model.packages[0];
        kind_schema(package, &package.structs[0])["properties"]["spec"].clone()
    }

    #[test]
    fn enums_bytes_json_and_well_known_types_map_to_their_schemas() {
        let spec = demo_schema(
            "pub struct Spec {\n    pub phase: Phase,\n    pub data: Vec<u8>,\n\
             pub raw: serde_json::Value,\n    pub every: Option<Duration>,\n\
             /// The selector.\n    pub selector: Option<LabelSelector>,\n}\n\
             /// Where it is.\npub enum Phase {\n    Pending,\n    /// +kubegen:value=in-progress\n    InProgress,\n}\n",
        );
        let properties = &spec["properties"];
        assert_eq!(
            properties["phase"],
            yaml("{type: string, description: Where it is., enum: [Pending, in-progress]}")
        );
        assert_eq!(properties["data"], yaml("{type: string, format: byte}"));
        assert_eq!(
            properties["raw"],
            yaml("{x-kubernetes-preserve-unknown-fields: true}")
        );
        assert_eq!(properties["every"], yaml("{type: string}"));
        let selector = &properties["selector"];
        assert_eq!(selector["description"], yaml("The selector."));
        assert_eq!(selector["x-kubernetes-map-type"], yaml("atomic"));
        assert_eq!(
            selector["properties"]["matchExpressions"]["items"]["required"],
            yaml("[key, operator]")
        );
        assert_eq!(spec["required"], yaml("[phase, data, raw]"));
    }

    #[test]
    fn list_types_map_keys_and_cel_rules_are_written() {
        let spec = demo_schema(
            "/// +kubegen:validation:XValidation:rule=\"self.min <= self.max\",message=\"min > max\"\n\
             pub struct Spec {\n    pub min: i32,\n    pub max: i32,\n\
             /// +kubegen:listType=map\n    /// +kubegen:listMapKeys=type\n\
             /// +kubegen:validation:MaxItems=8\n\
             /// +kubegen:validation:XValidation:rule=\"self.all(c, c.reason != '')\"\n\
             pub conditions: Vec<Condition>,\n}\n",
        );
        assert_eq!(
            spec["x-kubernetes-validations"],
            yaml("[{rule: self.min <= self.max, message: min > max}]")
        );
        let conditions = &spec["properties"]["conditions"];
        assert_eq!(conditions["maxItems"], yaml("8"));
        assert_eq!(conditions["x-kubernetes-list-type"], yaml("map"));
        assert_eq!(conditions["x-kubernetes-list-map-keys"], yaml("[type]"));
        assert_eq!(
            conditions["x-kubernetes-validations"],
            yaml("[{rule: \"self.all(c, c.reason != '')\"}]")
        );
        assert_eq!(
            conditions["items"]["properties"]["type"]["type"],
            yaml("string")
        );
    }

    #[test]
    fn every_validation_marker_is_written_with_the_servers_keyword() {
        let spec = demo_schema(
            "/// +kubegen:validation:XValidation:rule=\"self.a <= 64\",messageExpression=\"'a ' + self.b\",reason=FieldValueForbidden,fieldPath=\".a\"\n\
             pub struct Spec {\n\
             /// +kubegen:validation:Minimum=1\n/// +kubegen:validation:Maximum=128\n/// +kubegen:default=2\n\
             /// +kubegen:validation:XValidation:rule=\"self >= oldSelf\",message=\"no shrinking\"\n    pub a: i32,\n\
             /// +kubegen:validation:MinLength=1\n/// +kubegen:validation:MaxLength=63\n\
             /// +kubegen:validation:Pattern=^[a-z]+$\n/// +kubegen:validation:Format=hostname\n\
             /// +kubegen:validation:Enum=x;y\n    pub b: String,\n\
             /// +kubegen:validation:MinItems=1\n/// +kubegen:validation:MaxItems=8\n\
             /// +kubegen:validation:UniqueItems=true\n    pub c: Vec<String>,\n\
             /// +kubegen:validation:Minimum=0\n/// +kubegen:validation:ExclusiveMinimum=true\n\
             /// +kubegen:validation:Maximum=0.5\n/// +kubegen:validation:ExclusiveMaximum=true\n    pub d: f64,\n}\n",
        );
        assert_eq!(
            spec["x-kubernetes-validations"],
            yaml(
                "[{rule: self.a <= 64, messageExpression: \"'a ' + self.b\", reason: FieldValueForbidden, fieldPath: .a}]"
            )
        );
        let properties = &spec["properties"];
        assert_eq!(
            properties["a"],
            yaml(
                "{type: integer, format: int32, default: 2, minimum: 1, maximum: 128,
                   x-kubernetes-validations: [{rule: self >= oldSelf, message: no shrinking}]}"
            )
        );
        assert_eq!(
            properties["b"],
            yaml(
                "{type: string, enum: [x, y], format: hostname, minLength: 1, maxLength: 63, pattern: '^[a-z]+$'}"
            )
        );
        assert_eq!(
            properties["c"],
            yaml(
                "{type: array, items: {type: string}, minItems: 1, maxItems: 8, x-kubernetes-list-type: set}"
            )
        );
        assert_eq!(
            properties["d"],
            yaml(
                "{type: number, format: double, minimum: 0.0, exclusiveMinimum: true, maximum: 0.5, exclusiveMaximum: true}"
            )
        );
    }

    #[test]
    fn schema_patches_merge_last_and_null_removes_a_key() {
        let spec = demo_schema(
            "pub struct Spec {\n\
             /// +kubegen:json=podIP\n/// +kubegen:validation:MaxLength=15\n\
             /// +kubegen:schema={\"format\":\"ipv4\",\"maxLength\":null,\"x-kubernetes-validations\":[{\"rule\":\"true\",\"optionalOldSelf\":true}]}\n\
             pub pod_ip: Option<String>,\n\
             /// +kubegen:schema={\"items\":{\"maxLength\":3},\"format\":null}\n    pub sizes: Vec<i64>,\n}\n",
        );
        let properties = &spec["properties"];
        assert_eq!(
            properties["podIP"],
            yaml(
                "{type: string, format: ipv4, x-kubernetes-validations: [{rule: 'true', optionalOldSelf: true}]}"
            )
        );
        assert_eq!(
            properties["sizes"],
            yaml("{type: array, items: {type: integer, format: int64, maxLength: 3}}")
        );
    }

    #[test]
    fn keywords_newer_than_1_15_are_removed_at_every_depth() {
        let mut schema = yaml(
            "{type: object, x-kubernetes-validations: [{rule: 'true'}], properties: {
              conditions: {type: array, x-kubernetes-list-type: map,
                x-kubernetes-list-map-keys: [type],
                items: {type: object, x-kubernetes-map-type: atomic}},
              x-kubernetes-list-type: {type: string}}}",
        );
        let removed = remove_newer_keywords(&mut schema);
        let removed: Vec<(&str, &str)> = removed
            .iter()
            .map(|r| (r.path.as_str(), r.what.as_str()))
            .collect();
        assert_eq!(
            removed,
            [
                ("", "CEL rule `true`"),
                (
                    ".conditions",
                    "no duplicates (`x-kubernetes-list-type: map`)"
                ),
            ]
        );
        assert_eq!(
            schema,
            yaml(
                "{type: object, properties: {conditions: {type: array, items: {type: object}},
                  x-kubernetes-list-type: {type: string}}}"
            )
        );
    }
}
