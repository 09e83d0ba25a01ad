use bytes::Bytes;
use http::{Request, header};
use http_body_util::BodyExt;
use kubegen_codec::{Envelope, KindSchema, decode_object};
use serde_json::{Value, json};

use super::*;
use crate::{ApiServer, ServerOptions};

const PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf, application/json";

async fn call(
    api: &ApiServer,
    (method, path): (&str, &str),
    accept: &str,
    body: Value,
) -> (u16, String, Bytes) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::ACCEPT, accept)
        .header(header::CONTENT_TYPE, "application/json")
        .body(if body.is_null() {
            Bytes::new()
        } else {
            Bytes::from(body.to_string())
        })
        .unwrap();
    let response = api.handle(request).await;
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (code, content_type, bytes)
}

async fn with_config_map() -> ApiServer {
    let api = ApiServer::new(ServerOptions::default());
    let object = json!({"metadata": {"name": "c1"}, "data": {"a": "b"}});
    let path = ("POST", "/api/v1/namespaces/default/configmaps");
    let (code, _, _) = call(&api, path, "application/json", object).await;
    assert_eq!(code, 201);
    api
}

#[tokio::test]
async fn writes_of_built_in_kinds_are_answered_in_protobuf_when_asked() {
    let api = ApiServer::new(ServerOptions::default());
    let object = json!({"metadata": {"name": "c1"}, "data": {"a": "b"}});
    let path = ("POST", "/api/v1/namespaces/default/configmaps");
    let (code, content_type, body) = call(&api, path, PROTOBUF_FIRST, object).await;
    assert_eq!((code, content_type.as_str()), (201, PROTOBUF_MEDIA_TYPE));
    let created = decode_object(&body).unwrap();
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["data"], json!({"a": "b"}));
    assert_eq!(created["metadata"]["namespace"], "default");
}

#[tokio::test]
async fn get_in_protobuf_decodes_to_the_json_answer() {
    let api = with_config_map().await;
    let path = ("GET", "/api/v1/namespaces/default/configmaps/c1");
    let (_, _, json) = call(&api, path, "application/json", Value::Null).await;
    let (code, content_type, body) = call(&api, path, PROTOBUF_FIRST, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (200, PROTOBUF_MEDIA_TYPE));
    let json: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(decode_object(&body).unwrap(), json);
}

#[tokio::test]
async fn errors_are_protobuf_statuses_when_protobuf_was_negotiated() {
    let api = with_config_map().await;
    let path = ("GET", "/api/v1/namespaces/default/configmaps/nope");
    let (code, content_type, body) = call(&api, path, PROTOBUF_FIRST, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (404, PROTOBUF_MEDIA_TYPE));
    let status = decode_object(&body).unwrap();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "configmaps \"nope\" not found");
    assert_eq!(status["details"]["name"], "nope");
}

#[tokio::test]
async fn paged_lists_in_protobuf_carry_continue_and_remaining_item_count() {
    let api = with_config_map().await;
    let path = ("POST", "/api/v1/namespaces/default/configmaps");
    call(
        &api,
        path,
        "application/json",
        json!({"metadata": {"name": "c2"}}),
    )
    .await;
    let path = ("GET", "/api/v1/namespaces/default/configmaps?limit=1");
    let (code, content_type, body) = call(&api, path, PROTOBUF_FIRST, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (200, PROTOBUF_MEDIA_TYPE));
    let envelope = Envelope::decode(&body).unwrap();
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("v1", "ConfigMapList")
    );
    let schema = KindSchema::lookup("v1", "ConfigMapList").unwrap();
    let list = schema.decode_json(&envelope.raw).unwrap();
    assert_eq!(list["metadata"]["remainingItemCount"], 1);
    assert!(list["metadata"]["continue"].is_string());
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], "c1");
    assert_eq!(items[0].get("kind"), None);
}

#[tokio::test]
async fn custom_resources_and_tables_stay_json_while_crds_are_protobuf() {
    let api = with_config_map().await;
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json";
    let path = ("GET", "/api/v1/namespaces/default/configmaps");
    let (code, content_type, body) = call(&api, path, table, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
    let value: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(value["kind"], "Table");
    let crd = json!({
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "things", "kind": "Thing"},
                 "versions": [{"name": "v1", "served": true, "storage": true}]},
    });
    let path = (
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    );
    let (code, content_type, _) = call(&api, path, PROTOBUF_FIRST, crd).await;
    assert_eq!((code, content_type.as_str()), (201, PROTOBUF_MEDIA_TYPE));
    let path = ("POST", "/apis/example.com/v1/namespaces/default/things");
    let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}});
    let (code, content_type, _) = call(&api, path, PROTOBUF_FIRST, thing).await;
    assert_eq!((code, content_type.as_str()), (201, "application/json"));
    let path = ("GET", "/apis/example.com/v1/namespaces/default/things");
    let (code, content_type, _) = call(&api, path, PROTOBUF_FIRST, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
}

#[tokio::test(start_paused = true)]
async fn watches_in_protobuf_are_length_prefixed_watch_events() {
    let api = with_config_map().await;
    let path = (
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
    );
    let (code, content_type, body) = call(&api, path, PROTOBUF_FIRST, Value::Null).await;
    assert_eq!(
        (code, content_type.as_str()),
        (200, kubegen_codec::PROTOBUF_WATCH_MEDIA_TYPE)
    );
    let length = u32::from_be_bytes(body[..4].try_into().unwrap()) as usize;
    assert_eq!(length, body.len() - 4, "one frame");
    let event = KindSchema::lookup("v1", "WatchEvent")
        .unwrap()
        .decode_json(&body[4..])
        .unwrap();
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["kind"], "ConfigMap");
    assert_eq!(event["object"]["metadata"]["name"], "c1");
}

#[test]
fn a_json_watch_event_is_one_line() {
    let object = json!({"kind": "ConfigMap"});
    let line = watch_event(
        WireFormat::Json,
        "ADDED",
        &object,
        b"{\"kind\":\"ConfigMap\"}",
    );
    assert_eq!(
        &line[..],
        b"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\"}}\n"
    );
}

#[test]
fn an_object_without_a_protobuf_form_is_written_as_json() {
    let object = json!({"apiVersion": "example.com/v1", "kind": "Thing"});
    let json = object.to_string();
    let line = watch_event(WireFormat::Protobuf, "ADDED", &object, json.as_bytes());
    assert!(line.ends_with(b"}\n"));
}

/// client-go's metadata client asks for `application/vnd.kubernetes.protobuf;as=...;g=meta.k8s.io;v=v1`
/// first; v1.36 answers `PartialObjectMetadataList` in protobuf (fixture
/// crates/codec/tests/fixtures/streams/list-partialobjectmetadata-1.36.bin).
#[tokio::test(start_paused = true)]
async fn partial_object_metadata_is_answered_in_protobuf() {
    let api = with_config_map().await;
    let accept = |kind: &str| {
        format!(
            "application/vnd.kubernetes.protobuf;as={kind};g=meta.k8s.io;v=v1, application/json;as={kind};g=meta.k8s.io;v=v1"
        )
    };
    let path = ("GET", "/api/v1/namespaces/default/configmaps");
    let (code, content_type, body) = call(
        &api,
        path,
        &accept("PartialObjectMetadataList"),
        Value::Null,
    )
    .await;
    assert_eq!((code, content_type.as_str()), (200, PROTOBUF_MEDIA_TYPE));
    let envelope = Envelope::decode(&body).unwrap();
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let list = KindSchema::lookup("meta.k8s.io/v1", "PartialObjectMetadataList")
        .unwrap()
        .decode_json(&envelope.raw)
        .unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "c1");
    assert_eq!(list["items"][0].get("data"), None);

    let path = ("GET", "/api/v1/namespaces/default/configmaps/c1");
    let (_, content_type, body) =
        call(&api, path, &accept("PartialObjectMetadata"), Value::Null).await;
    assert_eq!(content_type, PROTOBUF_MEDIA_TYPE);
    let object = decode_object(&body).unwrap();
    assert_eq!(object["kind"], "PartialObjectMetadata");
    assert_eq!(object["metadata"]["name"], "c1");

    let path = (
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
    );
    let (_, _, body) = call(&api, path, &accept("PartialObjectMetadata"), Value::Null).await;
    let event = KindSchema::lookup("v1", "WatchEvent")
        .unwrap()
        .decode_json(&body[4..])
        .unwrap();
    assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(event["object"]["metadata"]["name"], "c1");
}

/// v1.36 answers `GET /apis/samplecrd.example.com/v1/networks` with
/// `Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
/// in protobuf, and the same request without `as=` in JSON.
#[tokio::test]
async fn partial_object_metadata_of_custom_resources_is_protobuf_too() {
    let api = ApiServer::new(ServerOptions::default());
    let crd = json!({
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "things", "kind": "Thing"},
                 "versions": [{"name": "v1", "served": true, "storage": true}]},
    });
    let path = (
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    );
    call(&api, path, "application/json", crd).await;
    let path = ("POST", "/apis/example.com/v1/namespaces/default/things");
    let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}});
    call(&api, path, "application/json", thing).await;
    let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json";
    let path = ("GET", "/apis/example.com/v1/namespaces/default/things");
    let (code, content_type, body) = call(&api, path, accept, Value::Null).await;
    assert_eq!((code, content_type.as_str()), (200, PROTOBUF_MEDIA_TYPE));
    let envelope = Envelope::decode(&body).unwrap();
    assert_eq!(envelope.kind, "PartialObjectMetadataList");
    let list = KindSchema::lookup("meta.k8s.io/v1", "PartialObjectMetadataList")
        .unwrap()
        .decode_json(&envelope.raw)
        .unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "t");
}
