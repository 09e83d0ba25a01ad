use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::{Request, Response};
use kubegen_client::{Body, GetOptions, Transport};
use kubegen_testserver::TestServer;
use serde_json::json;

use super::*;
use crate::manifests::mapper;

/// A custom resource before its CRD, and a ConfigMap without a namespace.
const MIXED: &str = r#"
apiVersion: example.com/v1
kind: Gizmo
metadata: {name: first, namespace: default}
spec: {size: 3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
"#;

async fn gizmo_size(client: &Client) -> Value {
    let mapping = mapper(client)
        .mapping_for("example.com/v1", "Gizmo")
        .await
        .unwrap();
    let api = ResourceClient::<DynamicObject>::dynamic(
        client.clone(),
        &mapping.resource,
        Some("default"),
    );
    let gizmo = api.get("first", &GetOptions::default()).await.unwrap();
    gizmo.data["spec"]["size"].clone()
}

#[tokio::test]
async fn crds_are_applied_first_and_their_objects_after_them() {
    let server = TestServer::start().await;
    let client = server.client();
    let options = ApplyOptions::new("kubegen-apply-test");
    let applied = apply_yaml(&client, &mapper(&client), "mixed.yaml", MIXED, &options)
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", std::error::Error::source(&e)));
    let summary: Vec<(usize, &str, Outcome)> = applied
        .iter()
        .map(|a| (a.index, a.object.as_str(), a.outcome))
        .collect();
    assert_eq!(
        summary,
        [
            (
                2,
                "CustomResourceDefinition gizmos.example.com",
                Outcome::Applied
            ),
            (1, "Gizmo default/first", Outcome::Applied),
            (3, "ConfigMap default/settings", Outcome::Applied),
        ]
    );
    assert_eq!(gizmo_size(&client).await, json!(3));

    // Applied again with a change: updated in place, owned by the same manager.
    let changed = MIXED.replace("size: 3", "size: 5");
    apply_yaml(&client, &mapper(&client), "mixed.yaml", &changed, &options)
        .await
        .unwrap();
    assert_eq!(gizmo_size(&client).await, json!(5));
}

#[tokio::test(start_paused = true)]
async fn errors_name_the_document_its_object_and_the_cause() {
    let server = TestServer::start().await;
    let client = server.client();
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\n";
    let options = ApplyOptions::new("kubegen-apply-test");
    let error = apply_yaml(&client, &mapper(&client), "gadgets.yaml", yaml, &options)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "gadgets.yaml: document 2 (Gadget g) failed"
    );
    let cause = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(
        cause.as_deref(),
        Some("no matches for kind \"Gadget\" in version \"example.com/v1\"")
    );

    let nameless = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n";
    let error = apply_yaml(&client, &mapper(&client), "x.yaml", nameless, &options)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "x.yaml: document 1 has no apiVersion, kind or metadata.name"
    );

    let refused = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n";
    let error = apply_yaml(&client, &mapper(&client), "bad.yaml", refused, &options)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "bad.yaml: document 1 (ConfigMap default/Not_A_Name) failed"
    );
    let Error::DocumentFailed { source, .. } = error else {
        panic!("{error}")
    };
    assert_eq!(source.code(), Some(422));
}

/// A server before 1.16: apply patches get 415, everything else reaches the test server.
struct NoApply(Client);

impl Transport for NoApply {
    fn send(
        &self,
        request: Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<Response<Body>>> + Send + '_>> {
        let apply = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes() == b"application/apply-patch+yaml");
        Box::pin(async move {
            if apply {
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "the server has rejected the request: unsupported media type", "reason": "UnsupportedMediaType", "code": 415});
                let response = Response::builder()
                    .status(415)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Body::from_bytes(status.to_string().into_bytes()));
                return Ok(response.unwrap());
            }
            self.0.send(request).await
        })
    }
}

#[tokio::test]
async fn without_server_side_apply_objects_are_created_then_merge_patched() {
    let server = TestServer::start().await;
    let client = Client::with_transport(Arc::new(NoApply(server.client())), "default");
    let options = ApplyOptions::new("kubegen-apply-test");
    let applied = apply_yaml(&client, &mapper(&client), "mixed.yaml", MIXED, &options)
        .await
        .unwrap();
    let outcomes: Vec<Outcome> = applied.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [Outcome::Created; 3]);
    let changed = MIXED.replace("size: 3", "size: 7");
    let applied = apply_yaml(&client, &mapper(&client), "mixed.yaml", &changed, &options)
        .await
        .unwrap();
    let outcomes: Vec<Outcome> = applied.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [Outcome::Updated; 3]);
    assert_eq!(gizmo_size(&server.client()).await, json!(7));
}
