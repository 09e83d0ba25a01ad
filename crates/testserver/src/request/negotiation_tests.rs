use http::HeaderValue;

use super::*;
use crate::registry::Registry;

fn def(group: &str, plural: &str) -> ResourceDefinition {
    match Registry::with_builtins().get(group, "v1", plural) {
        Some(def) => (*def).clone(),
        None => ResourceDefinition {
            group: group.into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: plural.into(),
            ..ResourceDefinition::default()
        },
    }
}

fn headers(name: header::HeaderName, value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(name, HeaderValue::from_str(value).unwrap());
    headers
}

fn accept(value: &str, def: &ResourceDefinition) -> Result<WireFormat, (u16, String)> {
    check_accept(&headers(header::ACCEPT, value), def).map_err(|e| (e.code, e.message))
}

#[test]
fn ranges_sort_by_q_then_exact_before_wildcard_keeping_ties_in_order() {
    let ranges = parse_accept(
        "*/*;q=0.8, application/json;q=0.5, application/vnd.kubernetes.protobuf;q=0.9, text/a, text/b",
    );
    let order: Vec<String> = ranges
        .iter()
        .map(|r| format!("{}/{}", r.kind, r.subtype))
        .collect();
    assert_eq!(
        order,
        [
            "text/a",
            "text/b",
            "application/vnd.kubernetes.protobuf",
            "*/*",
            "application/json"
        ]
    );
    let wildcards = parse_accept("*/*, application/*, application/json");
    assert_eq!(wildcards[0].subtype, "json");
    assert_eq!(wildcards[1].subtype, "*");
}

#[test]
fn the_first_writable_range_in_q_order_is_chosen_with_its_conversion() {
    let configmaps = def("", "configmaps");
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let header = format!("application/json;q=0.5, {table};q=0.9");
    let ranges = parse_accept(&header);
    let chosen = choose(&ranges, &configmaps).map(|(r, f)| (r.param("as"), f));
    assert_eq!(chosen, Some((Some("Table"), WireFormat::Json)));
    let ranges = parse_accept("application/json;as=Foo;g=meta.k8s.io;v=v1, application/json;q=0.1");
    let chosen = choose(&ranges, &configmaps).map(|(r, f)| (r.param("as"), f));
    assert_eq!(chosen, Some((None, WireFormat::Json)));
}

#[test]
fn built_in_kinds_are_answered_in_protobuf_when_it_comes_first() {
    let configmaps = def("", "configmaps");
    for value in [
        "application/vnd.kubernetes.protobuf,application/json",
        "application/vnd.kubernetes.protobuf, */*",
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        "application/json;q=0.5, application/vnd.kubernetes.protobuf",
    ] {
        assert_eq!(
            accept(value, &configmaps),
            Ok(WireFormat::Protobuf),
            "{value}"
        );
    }
}

#[test]
fn tables_custom_resources_and_json_first_headers_are_answered_in_json() {
    let configmaps = def("", "configmaps");
    for value in [
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json",
        "application/json, application/vnd.kubernetes.protobuf",
        "application/json;q=0",
        "application/json;charset=utf-8",
        "application/json;q=abc",
        "*/*",
        "",
    ] {
        assert_eq!(accept(value, &configmaps), Ok(WireFormat::Json), "{value}");
    }
    let widgets = def("example.com", "widgets");
    assert_eq!(
        accept(
            "application/vnd.kubernetes.protobuf, application/json",
            &widgets
        ),
        Ok(WireFormat::Json)
    );
}

#[test]
fn partial_object_metadata_of_custom_resources_is_protobuf_when_asked() {
    let widgets = def("example.com", "widgets");
    let header = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json";
    assert_eq!(accept(header, &widgets), Ok(WireFormat::Protobuf));
}

#[test]
fn unknown_media_types_fail_the_route_check_of_built_in_kinds() {
    let configmaps = def("", "configmaps");
    for value in ["text/foo", "application/*", "garbage"] {
        assert_eq!(
            accept(value, &configmaps),
            Err((406, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf".into())),
            "{value}"
        );
    }
}

#[test]
fn ranges_this_server_cannot_write_fail_in_the_handler() {
    let configmaps = def("", "configmaps");
    assert_eq!(
        accept("application/json;as=Foo", &configmaps),
        Err((
            406,
            "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf".into()
        ))
    );
    assert_eq!(
        accept("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", &configmaps),
        Err((
            406,
            "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf".into()
        ))
    );
    let only_json = Err((
        406,
        "only the following media types are accepted: application/json".into(),
    ));
    let widgets = def("example.com", "widgets");
    assert_eq!(accept("text/foo", &widgets), only_json);
    assert_eq!(
        accept("application/vnd.kubernetes.protobuf", &widgets),
        only_json
    );
    assert_eq!(accept("application/*", &widgets), Ok(WireFormat::Json));
}

fn body(
    content_type: &str,
    body: &[u8],
    def: &ResourceDefinition,
) -> Result<serde_json::Value, (u16, String)> {
    body_as_json(
        &headers(header::CONTENT_TYPE, content_type),
        Bytes::copy_from_slice(body),
        def,
    )
    .map(|b| serde_json::from_slice(&b).unwrap())
    .map_err(|e| (e.code, e.message))
}

#[test]
fn yaml_and_protobuf_bodies_become_json() {
    let configmaps = def("", "configmaps");
    let yaml = body(
        "application/yaml",
        b"metadata:\n  name: y\ndata: {a: '1'}\n",
        &configmaps,
    );
    assert_eq!(
        yaml,
        Ok(serde_json::json!({"metadata": {"name": "y"}, "data": {"a": "1"}}))
    );
    let object =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}});
    let protobuf = kubegen_codec::encode_object(&object).unwrap();
    assert_eq!(
        body(
            "application/vnd.kubernetes.protobuf",
            &protobuf,
            &configmaps
        ),
        Ok(object)
    );
}

#[test]
fn unreadable_media_types_are_415_listing_what_the_resource_reads() {
    let all = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf";
    assert_eq!(
        body("text/foo", b"{}", &def("", "configmaps")),
        Err((415, all.into()))
    );
    let custom = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml";
    let protobuf = body(
        "application/vnd.kubernetes.protobuf",
        b"k8s\0",
        &def("example.com", "widgets"),
    );
    assert_eq!(protobuf, Err((415, custom.into())));
}

#[test]
fn a_json_body_sent_as_protobuf_is_a_bad_request_in_the_real_wording() {
    let error = body(
        "application/vnd.kubernetes.protobuf",
        br#"{"metadata":{}}"#,
        &def("", "configmaps"),
    );
    assert_eq!(
        error,
        Err((400, "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]".into()))
    );
}
