use serde_json::json;

use super::*;

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).expect("test YAML parses")
}

/// Every node below `schema`, with its path.
fn nodes<'a>(schema: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((path.clone(), schema));
    if let Some(Value::Mapping(properties)) = schema.get("properties") {
        for (name, property) in properties {
            let name = name.as_str().unwrap_or_default();
            nodes(property, format!("{path}.{name}"), out);
        }
    }
    for (key, suffix) in [("items", "[*]"), ("additionalProperties", ".*")] {
        if let Some(child) = schema.get(key) {
            nodes(child, format!("{path}{suffix}"), out);
        }
    }
}

#[test]
fn every_well_known_type_has_a_structural_schema() {
    for well_known in WellKnown::ALL {
        let schema = well_known.schema();
        let mut all = Vec::new();
        nodes(&schema, well_known.name().to_owned(), &mut all);
        for (path, node) in all {
            let typed = node.get("type").is_some()
                || node.get("x-kubernetes-int-or-string").is_some()
                || node.get("x-kubernetes-preserve-unknown-fields").is_some();
            assert!(typed, "{path} has no type");
            for key in ["$ref", "allOf", "oneOf", "x-kubernetes-patch-strategy"] {
                assert!(node.get(key).is_none(), "{path} has `{key}`");
            }
            let default = node.get("default");
            assert!(
                !matches!(default, Some(Value::Mapping(_) | Value::Sequence(_))),
                "{path} has a non-scalar default"
            );
        }
    }
}

#[test]
fn condition_keeps_upstream_required_fields_and_formats() {
    let schema = WellKnown::Condition.schema();
    assert_eq!(
        schema["required"],
        yaml("[type, status, lastTransitionTime, reason, message]")
    );
    let time = &schema["properties"]["lastTransitionTime"];
    assert_eq!(
        (&time["type"], &time["format"]),
        (&yaml("string"), &yaml("date-time"))
    );
    // The referring property's description wins over the referenced type's.
    let description = time["description"].as_str().unwrap_or_default();
    assert!(
        description.starts_with("lastTransitionTime is the last time"),
        "{description}"
    );
    assert_eq!(
        schema["properties"]["observedGeneration"]["format"],
        yaml("int64")
    );
}

#[test]
fn container_ports_keep_their_list_map_keys_and_the_protocol_default() {
    let schema = WellKnown::PodTemplateSpec.schema();
    let ports =
        &schema["properties"]["spec"]["properties"]["containers"]["items"]["properties"]["ports"];
    assert_eq!(ports["x-kubernetes-list-type"], yaml("map"));
    assert_eq!(
        ports["x-kubernetes-list-map-keys"],
        yaml("[containerPort, protocol]")
    );
    assert_eq!(
        ports["items"]["properties"]["protocol"]["default"],
        yaml("TCP")
    );
}

#[test]
fn a_default_outside_the_enum_is_dropped() {
    // Upstream: `seccompProfile.type` has `default: ""` and enum Localhost, RuntimeDefault, ...
    let schema = WellKnown::PodTemplateSpec.schema();
    let pod = &schema["properties"]["spec"]["properties"];
    let kind = &pod["securityContext"]["properties"]["seccompProfile"]["properties"]["type"];
    assert_eq!(
        kind["enum"],
        yaml("[Localhost, RuntimeDefault, Unconfined]")
    );
    assert!(kind.get("default").is_none(), "{kind:?}");
}

#[test]
fn quantities_become_int_or_string() {
    let schema = WellKnown::ResourceRequirements.schema();
    let limit = &schema["properties"]["limits"]["additionalProperties"];
    assert_eq!(
        limit,
        &yaml("{anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}")
    );
}

#[test]
fn duration_is_a_string_and_has_no_rust_default() {
    assert_eq!(WellKnown::Duration.schema(), yaml("{type: string}"));
    assert_eq!(WellKnown::Duration.rust_path(), "kube_core::Duration");
    assert!(!WellKnown::Duration.has_default());
    assert!(!WellKnown::Condition.has_default() && WellKnown::PodTemplateSpec.has_default());
    assert_eq!(
        WellKnown::Toleration.rust_path(),
        "k8s_openapi::api::core::v1::Toleration"
    );
}

#[test]
fn references_are_inlined_and_unknown_keywords_dropped() {
    let schemas = json!({
        "A": {"type": "object", "x-kubernetes-unions": [], "properties": {
            "b": {"allOf": [{"$ref": "#/components/schemas/B"}], "description": "outer",
                  "default": {}, "x-kubernetes-patch-strategy": "merge"}}},
        "B": {"type": "object", "description": "inner", "required": ["c"],
              "properties": {"c": {"type": "string", "default": ""}}},
    });
    assert_eq!(
        definition_schema("A", &schemas),
        Ok(yaml(
            "{type: object, properties: {b: {description: outer, type: object,
              properties: {c: {type: string, default: ''}}, required: [c]}}}"
        ))
    );
}

#[test]
fn recursion_one_of_and_untyped_nodes_are_errors() {
    let schemas = json!({
        "R": {"type": "object", "properties": {"r": {"$ref": "#/components/schemas/R"}}},
        "O": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "U": {"description": "no type"},
    });
    assert_eq!(
        definition_schema("R", &schemas),
        Err("`R` is recursive".to_owned())
    );
    let one_of = definition_schema("O", &schemas).expect_err("must fail");
    assert!(
        one_of.starts_with("`oneOf` outside int-or-string"),
        "{one_of}"
    );
    let untyped = definition_schema("U", &schemas).expect_err("must fail");
    assert!(
        untyped.starts_with("schema node without a type"),
        "{untyped}"
    );
}
