//! Content negotiation as kubectl meets it: protobuf request bodies for built-in kinds, `Accept`
//! headers with several media ranges, and the 415/406 answers a real server gives (asked v1.15).
//! Requests go straight to `ApiServer::handle`, so each can carry exactly the headers under test.

use bytes::Bytes;
use http_body_util::BodyExt;
use kubegen_testserver::{ApiServer, ServerOptions};
use serde_json::{Value, json};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What kubectl 1.32 sends with every protobuf body.
const KUBECTL_ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

struct Answer {
    code: u16,
    content_type: String,
    body: Value,
}

async fn send(
    api: &ApiServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let mut request = http::Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = api.handle(request.body(Bytes::from(body)).unwrap()).await;
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if content_type == PROTOBUF {
        kubegen_codec::decode_object(&bytes).unwrap_or(Value::Null)
    } else {
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    };
    Answer {
        code,
        content_type,
        body,
    }
}

/// A body kubectl sent to a real server (see crates/codec/tests/fixtures/README.md).
fn kubectl_body(kind: &str) -> Vec<u8> {
    let path = format!(
        "{}/../codec/tests/fixtures/kubectl-create-{kind}.pb",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap()
}

fn protobuf(object: &Value) -> Vec<u8> {
    kubegen_codec::encode_object(object).unwrap()
}

#[tokio::test]
async fn kubectl_create_bodies_are_stored_and_answered_in_protobuf() {
    let api = ApiServer::new(ServerOptions::default());
    let headers = [("content-type", PROTOBUF), ("accept", KUBECTL_ACCEPT)];
    for (kind, path) in [
        ("deployment", "/apis/apps/v1/namespaces/default/deployments"),
        ("configmap", "/api/v1/namespaces/default/configmaps"),
        ("secret", "/api/v1/namespaces/default/secrets"),
        ("namespace", "/api/v1/namespaces"),
    ] {
        let created = send(&api, "POST", path, &headers, kubectl_body(kind)).await;
        assert_eq!(created.code, 201, "{kind}");
        assert_eq!(created.content_type, PROTOBUF, "{kind}");
    }
    let deployment = send(
        &api,
        "GET",
        "/apis/apps/v1/namespaces/default/deployments/x",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(deployment.body["spec"]["replicas"], 0);
    assert_eq!(
        deployment.body["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(deployment.body["metadata"].get("generateName"), None);
    let secret = send(
        &api,
        "GET",
        "/api/v1/namespaces/default/secrets/sec",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(secret.body["data"], json!({"password": "aHVudGVyMg=="}));
    let config_map = send(
        &api,
        "GET",
        "/api/v1/namespaces/default/configmaps/cm",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(config_map.body["data"], json!({"a": "1", "empty": ""}));
}

#[tokio::test]
async fn updates_and_status_updates_read_protobuf_bodies() {
    let api = ApiServer::new(ServerOptions::default());
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let headers = [("content-type", PROTOBUF), ("accept", KUBECTL_ACCEPT)];
    let created = send(&api, "POST", path, &headers, kubectl_body("deployment")).await;
    let mut object = created.body;
    object["spec"]["replicas"] = json!(3);
    let updated = send(
        &api,
        "PUT",
        &format!("{path}/x"),
        &headers,
        protobuf(&object),
    )
    .await;
    assert_eq!(
        (updated.code, &updated.body["spec"]["replicas"]),
        (200, &json!(3))
    );
    let mut object = updated.body;
    object["status"] = json!({"replicas": 3, "readyReplicas": 2});
    let status = send(
        &api,
        "PUT",
        &format!("{path}/x/status"),
        &headers,
        protobuf(&object),
    )
    .await;
    assert_eq!(status.code, 200, "{}", status.body);
    assert_eq!(status.body["status"]["readyReplicas"], 2);
}

#[tokio::test]
async fn a_delete_reads_protobuf_delete_options() {
    let api = ApiServer::new(ServerOptions::default());
    let headers = [("content-type", PROTOBUF), ("accept", KUBECTL_ACCEPT)];
    let path = "/api/v1/namespaces/default/configmaps";
    send(&api, "POST", path, &headers, kubectl_body("configmap")).await;
    let options =
        json!({"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"});
    let deleted = send(
        &api,
        "DELETE",
        &format!("{path}/cm"),
        &headers,
        protobuf(&options),
    )
    .await;
    assert_eq!(deleted.code, 200, "{}", deleted.body);
}

#[tokio::test]
async fn a_custom_resource_sent_as_protobuf_is_415_like_a_real_server() {
    let api = ApiServer::new(ServerOptions::default());
    let crd = json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true}]},
    });
    let json_type = [("content-type", "application/json")];
    let created = send(
        &api,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &json_type,
        crd.to_string().into_bytes(),
    )
    .await;
    assert_eq!(created.code, 201);
    let envelope = kubegen_codec::Envelope {
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        ..kubegen_codec::Envelope::default()
    };
    let answer = send(
        &api,
        "POST",
        "/apis/example.com/v1/namespaces/default/widgets",
        &[("content-type", PROTOBUF)],
        envelope.encode(),
    )
    .await;
    assert_eq!(answer.code, 415);
    assert_eq!(
        answer.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
    );
}

#[tokio::test]
async fn an_unreadable_body_is_415_unsupported_media_type() {
    let api = ApiServer::new(ServerOptions::default());
    let answer = send(
        &api,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("content-type", "text/foo")],
        br#"{"metadata":{"name":"t"}}"#.to_vec(),
    )
    .await;
    assert_eq!(
        answer.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            "reason": "UnsupportedMediaType", "code": 415,
        })
    );
}

#[tokio::test]
async fn an_accept_header_the_server_cannot_write_is_406_and_nothing_is_written() {
    let api = ApiServer::new(ServerOptions::default());
    let path = "/api/v1/namespaces/default/configmaps";
    let body = br#"{"metadata":{"name":"t"}}"#.to_vec();
    let route = send(
        &api,
        "POST",
        path,
        &[("content-type", "application/json"), ("accept", "text/foo")],
        body.clone(),
    )
    .await;
    assert_eq!(
        route.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            "reason": "NotAcceptable", "details": {}, "code": 406,
        })
    );
    let handler = send(
        &api,
        "POST",
        path,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json;as=Foo"),
        ],
        body,
    )
    .await;
    assert_eq!(
        handler.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf",
            "reason": "NotAcceptable", "code": 406,
        })
    );
    let missing = send(&api, "GET", &format!("{path}/t"), &[], Vec::new()).await;
    assert_eq!(missing.code, 404);
}
