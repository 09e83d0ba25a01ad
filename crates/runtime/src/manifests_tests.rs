//! Creating manifests on the test server, and on a played 1.15 server for `v1beta1` CRDs
//! (kubegen-testserver serves only `apiextensions.k8s.io/v1`): a small transport answering what
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
use crate::crds::{self, CrdVersion, DISCOVERY_PATH};

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(path)
}

#[tokio::test]
async fn crds_and_samples_are_created_once_and_again_without_error() {
    let server = TestServer::start().await;
    let client = server.client();
    let paths = [deploy("crd.yaml"), deploy("samples")];
    let created = create_from_paths(&client, &paths)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for expected in [
        "CustomResourceDefinition whitelists.police.example.com",
        "Namespace police-demo",
        "WhiteList police-demo/allowed-images",
        "Deployment police-demo/cache-forbidden",
    ] {
        assert!(
            created.contains(&expected.to_owned()),
            "{expected}: {created:?}"
        );
    }
    let again = create_from_paths(&client, &paths)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, Vec::<String>::new());
}

#[tokio::test]
async fn a_namespaced_object_without_a_namespace_goes_to_the_clients() {
    let server = TestServer::start().await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\n";
    let created = create_from_yaml(&server.client(), "inline.yaml", yaml)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(created, ["ConfigMap default/settings"]);
}

/// The error creating `yaml` gives (empty if it succeeds).
async fn creation_error(client: &Client, source: &str, yaml: &str) -> String {
    let result = create_from_yaml(client, source, yaml).await;
    result.err().map(|e| e.to_string()).unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_kind_the_server_does_not_serve_is_an_error_naming_the_file_and_kind() {
    let server = TestServer::start().await;
    let yaml = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n";
    let error = creation_error(&server.client(), "gadgets.yaml", yaml).await;
    assert_eq!(
        error,
        "gadgets.yaml: no matches for kind \"Gadget\" in version \"example.com/v1\""
    );
}

#[tokio::test]
async fn a_refused_object_is_an_error_naming_the_file_and_object() {
    let server = TestServer::start().await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n";
    let error = creation_error(&server.client(), "bad.yaml", yaml).await;
    assert_eq!(
        error,
        "bad.yaml: creating ConfigMap default/Not_A_Name failed"
    );
}

#[tokio::test]
async fn a_server_serving_apiextensions_v1_takes_v1_crds() {
    let server = TestServer::start().await;
    let version = crds::served_version(&server.client()).await;
    assert_eq!(version.ok(), Some(CrdVersion::V1));
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

/// `GET /apis/apiextensions.k8s.io/v1beta1` on kube-apiserver 1.15.
const RESOURCES_115: &str = r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apiextensions.k8s.io/v1beta1","resources":[{"name":"customresourcedefinitions","singularName":"","namespaced":false,"kind":"CustomResourceDefinition","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["crd","crds"]},{"name":"customresourcedefinitions/status","singularName":"","namespaced":false,"kind":"CustomResourceDefinition","verbs":["get","patch","update"]}]}"#;

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
            ("GET", "/api") => (200, br#"{"kind":"APIVersions","versions":["v1"]}"#.to_vec()),
            ("GET", "/api/v1") => (
                200,
                br#"{"kind":"APIResourceList","groupVersion":"v1","resources":[]}"#.to_vec(),
            ),
            ("GET", "/apis") => {
                let groups = format!(
                    r#"{{"kind":"APIGroupList","apiVersion":"v1","groups":[{}]}}"#,
                    self.discovery
                );
                (200, groups.into_bytes())
            }
            ("GET", "/apis/apiextensions.k8s.io/v1beta1") => {
                (200, RESOURCES_115.as_bytes().to_vec())
            }
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
    let version = crds::served_version(&client).await;
    assert_eq!(version.ok(), Some(CrdVersion::V1beta1));
    let yaml =
        std::fs::read_to_string(deploy("crd-v1beta1.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let created = create_from_yaml(&client, "crd-v1beta1.yaml", &yaml)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        created.contains(&"CustomResourceDefinition whitelists.police.example.com".to_owned()),
        "{created:?}"
    );
    let requests = server.requests.lock().clone();
    let collection = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions";
    assert!(
        requests
            .iter()
            .any(|r| *r == format!("GET {collection}/whitelists.police.example.com")),
        "waited for Established: {requests:?}"
    );
    let posts = requests
        .iter()
        .filter(|r| **r == format!("POST {collection}"));
    assert_eq!(posts.count(), created.len());
    let discoveries = requests
        .iter()
        .filter(|r| r.ends_with("/apiextensions.k8s.io/v1beta1"));
    assert_eq!(
        discoveries.count(),
        1,
        "discovery is remembered: {requests:?}"
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
    let error = crds::served_version(&client)
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
