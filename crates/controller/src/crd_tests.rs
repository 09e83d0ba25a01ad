//! Tests of the CRD version choice and of installing `v1beta1` CRDs. kubegen-testserver serves
//! only `apiextensions.k8s.io/v1`, so a 1.15 server is played by a small transport answering what
//! a real 1.15 kube-apiserver answered to the same requests.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::{Request, Response};
use kubegen_client::{Body, Transport};
use kubegen_testserver::TestServer;
use parking_lot::Mutex;
use serde_json::json;

use super::*;
use crate::manifests;

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

#[test]
fn v1_is_preferred_and_v1beta1_is_the_fallback() {
    assert_eq!(crd_file_for(&["v1", "v1beta1"]), Some(CRD_V1));
    assert_eq!(crd_file_for(&["v1beta1"]), Some(CRD_V1BETA1));
    assert_eq!(crd_file_for(&["v2"]), None);
}

#[test]
fn v1beta1_manifest_round_trips_through_the_stand_in_type() {
    let documents =
        manifests::documents(&deploy_dir().join(CRD_V1BETA1)).unwrap_or_else(|e| panic!("{e}"));
    assert!(!documents.is_empty());
    for document in documents {
        let crd: CustomResourceDefinitionV1beta1 =
            serde_json::from_value(document.clone()).unwrap_or_else(|e| panic!("{e}"));
        let written = serde_json::to_value(&crd).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            written, document,
            "the create body must be the manifest as written"
        );
    }
}

#[tokio::test]
async fn a_server_serving_apiextensions_v1_gets_crd_yaml() {
    let server = TestServer::start().await;
    let client = crate::embedded::client_for(&server).unwrap_or_else(|e| panic!("{e}"));
    let file = crd_manifest(&client, &deploy_dir())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file, deploy_dir().join(CRD_V1));
}

/// Plays a 1.15 API server: discovery lists only `apiextensions.k8s.io/v1beta1` (or what
/// `discovery` says), created CRDs are echoed and read back Established. Records `METHOD path` of
/// every request.
struct Server115 {
    discovery: String,
    requests: Mutex<Vec<String>>,
}

/// `GET /apis/apiextensions.k8s.io` on kube-apiserver 1.15.
const DISCOVERY_115: &str = r#"{"kind":"APIGroup","apiVersion":"v1","name":"apiextensions.k8s.io","versions":[{"groupVersion":"apiextensions.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"apiextensions.k8s.io/v1beta1","version":"v1beta1"}}"#;

impl Server115 {
    fn new(discovery: &str) -> Arc<Server115> {
        Arc::new(Server115 {
            discovery: discovery.to_owned(),
            requests: Mutex::new(Vec::new()),
        })
    }

    fn answer(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        self.requests.lock().push(format!("{method} {path}"));
        let collection = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions";
        match (method, path) {
            ("GET", DISCOVERY_PATH) => (200, self.discovery.as_bytes().to_vec()),
            ("POST", path) if path == collection => (201, body.to_vec()),
            ("GET", path) if path.starts_with(collection) => {
                let name = path.rsplit('/').next().unwrap_or_default();
                let established = json!({
                    "apiVersion": "apiextensions.k8s.io/v1beta1",
                    "kind": "CustomResourceDefinition",
                    "metadata": {"name": name},
                    "spec": {},
                    "status": {"conditions": [
                        {"type": "NamesAccepted", "status": "True"},
                        {"type": "Established", "status": "True"},
                    ]},
                });
                (200, established.to_string().into_bytes())
            }
            _ => {
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "the server could not find the requested resource",
                    "reason": "NotFound", "code": 404});
                (404, status.to_string().into_bytes())
            }
        }
    }
}

impl Transport for Server115 {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<Response<Body>>> + Send + '_>> {
        let method = request.method().to_string();
        let path = request.uri().path().to_owned();
        let (code, body) = self.answer(&method, &path, request.body());
        Box::pin(async move {
            let response = Response::builder()
                .status(code)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Body::from_bytes(body));
            Ok(response.unwrap_or_else(|e| panic!("{e}")))
        })
    }
}

#[tokio::test]
async fn a_server_without_apiextensions_v1_gets_the_v1beta1_crds_installed() {
    let server = Server115::new(DISCOVERY_115);
    let client = Client::with_transport(server.clone(), "default");
    let file = crd_manifest(&client, &deploy_dir())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file, deploy_dir().join(CRD_V1BETA1));
    let created = manifests::apply(&client, std::slice::from_ref(&file))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        created.contains(&"CustomResourceDefinition whitelists.police.example.com".to_owned()),
        "{created:?}"
    );
    let requests = server.requests.lock().clone();
    let collection = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions";
    assert_eq!(requests[0], format!("GET {DISCOVERY_PATH}"));
    assert!(
        requests
            .iter()
            .any(|r| *r == format!("GET {collection}/whitelists.police.example.com")),
        "waited for Established: {requests:?}"
    );
    assert_eq!(
        requests
            .iter()
            .filter(|r| **r == format!("POST {collection}"))
            .count(),
        created.len()
    );
    assert!(
        requests
            .iter()
            .all(|r| !r.contains("apiextensions.k8s.io/v1/")),
        "never asks the v1 API of a server without it: {requests:?}"
    );
}

#[tokio::test]
async fn discovery_without_a_known_crd_version_is_an_error_naming_what_was_served() {
    let future = Server115::new(&DISCOVERY_115.replace("v1beta1", "v2"));
    let client = Client::with_transport(future, "default");
    let error = crd_manifest(&client, &deploy_dir())
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        error,
        "discovery of /apis/apiextensions.k8s.io failed: the server serves apiextensions.k8s.io \
         [\"v2\"], neither v1 nor v1beta1"
    );
}
