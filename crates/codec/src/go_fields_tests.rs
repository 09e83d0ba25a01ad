use super::*;
use crate::descriptors::pool;

#[test]
fn every_table_entry_names_a_field_of_the_schema_with_known_facts() {
    for line in TABLE.lines() {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let (message, field) = name.rsplit_once('.').unwrap_or_default();
        let descriptor = pool()
            .get_message_by_name(message)
            .unwrap_or_else(|| panic!("{line}: no message {message}"));
        assert!(
            descriptor.get_field_by_name(field).is_some(),
            "{line}: no field {field}"
        );
        for fact in words {
            assert!(
                matches!(fact, "pointer" | "always" | "inline") || fact.starts_with("json="),
                "{line}: unknown fact {fact}"
            );
        }
    }
}

fn field(message: &str, name: &str) -> FieldDescriptor {
    pool()
        .get_message_by_name(message)
        .and_then(|m| m.get_field_by_name(name))
        .unwrap_or_else(|| panic!("{message}.{name}"))
}

#[test]
fn json_names_follow_the_go_tags_where_they_differ_from_the_proto_names() {
    let uid = field("k8s.io.api.authentication.v1.BoundObjectReference", "uID");
    assert_eq!(json_name(&uid), "uid");
    let props = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
    assert_eq!(json_name(&field(props, "ref")), "$ref");
    assert_eq!(
        json_name(&field(props, "xKubernetesPreserveUnknownFields")),
        "x-kubernetes-preserve-unknown-fields"
    );
    let name = field(
        "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "generateName",
    );
    assert_eq!(json_name(&name), "generateName");
}

#[test]
fn zeros_are_kept_for_pointers_and_fields_without_omitempty_only() {
    assert!(keeps_zero(&field(
        "k8s.io.api.apps.v1.DeploymentSpec",
        "replicas"
    )));
    assert!(keeps_zero(&field(
        "k8s.io.api.core.v1.ContainerPort",
        "containerPort"
    )));
    assert!(!keeps_zero(&field(
        "k8s.io.api.core.v1.PodSpec",
        "hostNetwork"
    )));
    assert!(!keeps_zero(&field(
        "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "generation"
    )));
}

#[test]
fn embedded_structs_are_inline() {
    assert!(is_inline(&field("k8s.io.api.core.v1.Probe", "handler")));
    assert!(!is_inline(&field(
        "k8s.io.api.core.v1.Container",
        "livenessProbe"
    )));
}
