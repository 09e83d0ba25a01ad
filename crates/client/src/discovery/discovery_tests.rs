use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use http::{Request, Response};
use kubegen_testserver::TestServer;
use parking_lot::Mutex;
use serde_json::json;

use super::*;
use crate::body::Body;
use crate::config::kubeconfig::Kubeconfig;
use crate::config::{Config, LoadOptions};
use crate::transport::Transport;

/// A client of this crate for `server` (its own `client()` is of the copy of this crate that
/// kubegen-testserver links).
pub(crate) fn client_of(server: &TestServer) -> Client {
    let kubeconfig =
        Kubeconfig::parse(&server.kubeconfig_yaml(), std::path::Path::new(".")).unwrap();
    Client::new(Config::from_kubeconfig(&kubeconfig, &LoadOptions::default()).unwrap()).unwrap()
}

#[test]
fn the_content_type_tells_aggregated_from_classic_in_any_parameter_order() {
    let cases = [
        (
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            Form::Aggregated,
        ),
        (
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
            Form::Aggregated,
        ),
        (
            "application/json; as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io;charset=utf-8",
            Form::Aggregated,
        ),
        ("application/json", Form::Classic),
        (
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
            Form::Classic,
        ),
        (
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            Form::Classic,
        ),
        ("", Form::Classic),
    ];
    for (content_type, expected) in cases {
        assert_eq!(form_of(content_type), expected, "{content_type}");
    }
}

#[test]
fn an_aggregated_document_splits_into_groups_and_resource_lists() {
    let list: GroupDiscoveryList = serde_json::from_value(json!({"items": [{
        "metadata": {"name": "example.com"},
        "versions": [
            {"version": "v2", "freshness": "Current", "resources": [{
                "resource": "widgets", "responseKind": {"group": "example.com", "version": "v2", "kind": "Widget"},
                "scope": "Namespaced", "singularResource": "widget", "verbs": ["get", "list"], "shortNames": ["wd"],
                "subresources": [{"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get"]}]}]},
            {"version": "v1", "freshness": "Stale", "resources": []},
        ]}]}))
    .unwrap();
    let split = documents::split(list);
    assert_eq!(
        split.groups,
        [ApiGroup {
            name: "example.com".into(),
            versions: vec![GroupVersionRef {
                group_version: "example.com/v2".into(),
                version: "v2".into()
            }],
            preferred_version: Some(GroupVersionRef {
                group_version: "example.com/v2".into(),
                version: "v2".into()
            }),
        }]
    );
    assert_eq!(split.stale, ["example.com/v1"]);
    let resources = &split.resources["example.com/v2"].resources;
    assert_eq!(resources.len(), 2);
    assert_eq!(
        (
            resources[0].name.as_str(),
            resources[0].namespaced,
            resources[0].short_names.as_slice()
        ),
        ("widgets", true, ["wd".to_owned()].as_slice())
    );
    assert_eq!(
        (
            resources[1].name.as_str(),
            resources[1].kind.as_str(),
            resources[1].group.as_deref()
        ),
        ("widgets/scale", "Scale", Some("autoscaling"))
    );
}

/// `group version name`, kind, namespaced, verbs, short names.
type Summary = (String, String, bool, Vec<String>, Vec<String>);

/// What identifies a resource across both forms (the forms differ in `group`/`version` of a
/// custom resource's subresources, as on a real server).
fn summary(found: &ServerResources) -> Vec<Summary> {
    let mut out: Vec<_> = found
        .resources
        .iter()
        .flat_map(|(gv, list)| {
            list.resources.iter().map(move |r| {
                (
                    format!("{gv} {}", r.name),
                    r.kind.clone(),
                    r.namespaced,
                    r.verbs.clone(),
                    r.short_names.clone(),
                )
            })
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn aggregated_and_classic_discovery_of_the_test_server_agree() {
    let server = TestServer::start().await;
    let client = client_of(&server);
    let aggregated = server_resources(&client).await.unwrap();
    let classic = fetch(&client, "application/json").await.unwrap();
    assert!(aggregated.aggregated);
    assert!(!classic.aggregated);
    assert_eq!(aggregated.groups, classic.groups);
    assert_eq!(summary(&aggregated), summary(&classic));
    assert_eq!(aggregated.groups[0].name, "");
    assert!(aggregated.failed.is_empty() && classic.failed.is_empty());
    let deployments = aggregated
        .preferred()
        .into_iter()
        .find(|(_, _, r)| r.name == "deployments");
    assert_eq!(deployments.map(|(g, v, _)| (g, v)), Some(("apps", "v1")));
}

/// A server of before 1.26: it ignores the aggregated media types and answers every discovery
/// request in the classic form; one group version's document fails.
struct OldServer {
    inner: Client,
    asked: Mutex<Vec<String>>,
}

impl Transport for OldServer {
    fn send(
        &self,
        mut request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        self.asked.lock().push(request.uri().path().to_owned());
        request.headers_mut().insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/json"),
        );
        Box::pin(async move {
            if request.uri().path() == "/apis/batch/v1" {
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "service unavailable", "reason": "ServiceUnavailable", "code": 503});
                let response = Response::builder()
                    .status(503)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Body::from_bytes(status.to_string().into_bytes()));
                return Ok(response.unwrap());
            }
            self.inner.send(request).await.or_else(|e| {
                let code = e.code().unwrap_or(500);
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": e.to_string(), "reason": "NotFound", "code": code});
                Ok(Response::builder().status(code).body(Body::from_bytes(status.to_string().into_bytes())).unwrap())
            })
        })
    }
}

#[tokio::test]
async fn a_server_without_aggregated_discovery_is_read_group_version_by_group_version() {
    let server = TestServer::start().await;
    let old = Arc::new(OldServer {
        inner: client_of(&server),
        asked: Mutex::new(Vec::new()),
    });
    let client = Client::with_transport(old.clone(), "default");
    let found = server_resources(&client).await.unwrap();
    assert!(!found.aggregated);
    assert!(
        found.resources["v1"]
            .resources
            .iter()
            .any(|r| r.name == "configmaps")
    );
    assert!(
        found.resources["apps/v1"]
            .resources
            .iter()
            .any(|r| r.name == "deployments")
    );
    assert_eq!(found.failed.keys().collect::<Vec<_>>(), ["batch/v1"]);
    assert!(
        found.failed["batch/v1"].contains("service unavailable"),
        "{:?}",
        found.failed
    );
    let asked = old.asked.lock().clone();
    assert!(
        asked.contains(&"/api/v1".to_owned()) && asked.contains(&"/apis/apps/v1".to_owned()),
        "{asked:?}"
    );
    assert!(!found.resources.contains_key("batch/v1"));
}
