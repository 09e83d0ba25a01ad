use std::io::Read;

use prost_reflect::ReflectMessage;
use serde_json::json;

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/openapi/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap();
    if !name.ends_with(".gz") {
        return bytes;
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// A decoded message as JSON for comparison: set fields by proto name, `Any.yaml` parsed.
fn normalized(message: &DynamicMessage) -> Value {
    if message.descriptor().name() == "Any" {
        let yaml = message
            .get_field_by_name("yaml")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        return serde_yaml::from_str::<Value>(&yaml).unwrap();
    }
    let mut out = Map::new();
    for (field, value) in message.fields() {
        out.insert(field.name().to_string(), proto_value(value));
    }
    Value::Object(out)
}

fn proto_value(value: &Proto) -> Value {
    match value {
        Proto::Message(m) => normalized(m),
        Proto::List(items) => Value::Array(items.iter().map(proto_value).collect()),
        Proto::String(s) => json!(s),
        Proto::Bool(b) => json!(b),
        Proto::F64(f) => json!(f),
        Proto::I64(i) => json!(i),
        other => json!(format!("{other:?}")),
    }
}

fn decode(version: OpenApiVersion, bytes: &[u8]) -> Value {
    let descriptor = pool().get_message_by_name(version.document()).unwrap();
    normalized(&DynamicMessage::decode(descriptor, bytes).unwrap())
}

fn assert_same_as_real(version: OpenApiVersion, json: &str, protobuf: &str) {
    let document: Value = serde_json::from_slice(&fixture(json)).unwrap();
    let ours = decode(version, &openapi_to_protobuf(version, &document).unwrap());
    let real = decode(version, &fixture(protobuf));
    if ours != real {
        let (ours, real) = (ours.to_string(), real.to_string());
        let at = ours
            .bytes()
            .zip(real.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let window = |s: &str| s[at.saturating_sub(300)..(at + 300).min(s.len())].to_string();
        panic!(
            "differs at {at}:\nours: {}\nreal: {}",
            window(&ours),
            window(&real)
        );
    }
}

#[test]
fn the_v2_document_converts_to_what_kube_apiserver_1_36_answers() {
    assert_same_as_real(
        OpenApiVersion::V2,
        "openapi-v2-1.36.json.gz",
        "openapi-v2-1.36.pb.gz",
    );
}

#[test]
fn a_v3_document_converts_to_what_kube_apiserver_1_36_answers() {
    assert_same_as_real(
        OpenApiVersion::V3,
        "openapi-v3-coordination-1.36.json",
        "openapi-v3-coordination-1.36.pb",
    );
}

#[test]
fn maps_extensions_and_oneofs_follow_gnostics_mapping() {
    let document = json!({
        "swagger": "2.0",
        "paths": {"/api/": {"get": {"operationId": "getCoreAPIVersions",
            "parameters": [{"name": "pretty", "in": "query", "type": "string"},
                           {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/X"}},
                           {"$ref": "#/parameters/y"}],
            "responses": {"200": {"description": "OK"}}}}},
        "definitions": {"X": {"type": "object", "x-kubernetes-group-version-kind": [{"kind": "X"}],
            "properties": {"n": {"type": "integer", "default": 1}},
            "additionalProperties": false}},
    });
    let value = decode(
        OpenApiVersion::V2,
        &openapi_to_protobuf(OpenApiVersion::V2, &document).unwrap(),
    );
    let get = &value["paths"]["path"][0]["value"]["get"];
    assert_eq!(value["paths"]["path"][0]["name"], "/api/");
    assert_eq!(get["operation_id"], "getCoreAPIVersions");
    let parameters = &get["parameters"];
    assert_eq!(
        parameters[0]["parameter"]["non_body_parameter"]["query_parameter_sub_schema"]["name"],
        "pretty"
    );
    assert_eq!(
        parameters[1]["parameter"]["body_parameter"]["schema"]["_ref"],
        "#/definitions/X"
    );
    assert_eq!(parameters[2]["json_reference"]["_ref"], "#/parameters/y");
    assert_eq!(
        get["responses"]["response_code"][0]["value"]["response"]["description"],
        "OK"
    );
    let x = &value["definitions"]["additional_properties"][0]["value"];
    assert_eq!(x["type"]["value"], json!(["object"]));
    assert_eq!(
        x["vendor_extension"][0],
        json!({"name": "x-kubernetes-group-version-kind", "value": [{"kind": "X"}]})
    );
    assert_eq!(x["additional_properties"], json!({"boolean": false}));
    let n = &x["properties"]["additional_properties"][0];
    assert_eq!(n["name"], "n");
    assert_eq!(n["value"]["default"], json!(1));
}

#[test]
fn a_document_that_is_not_an_object_is_an_error() {
    let error = openapi_to_protobuf(OpenApiVersion::V3, &json!([1])).unwrap_err();
    assert!(error.to_string().contains("JSON object"), "{error}");
}

fn arbitrary_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z$/x-]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("$ref".to_string()),
                    Just("in".to_string()),
                    Just("type".to_string()),
                    Just("properties".to_string()),
                    Just("paths".to_string()),
                    Just("x-a".to_string()),
                    "[a-zA-Z/]{1,6}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn arbitrary_documents_never_panic(document in arbitrary_json()) {
        for version in [OpenApiVersion::V2, OpenApiVersion::V3] {
            let _ = openapi_to_protobuf(version, &document);
        }
    }
}
