use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, Response};
use kubegen_testserver::TestServer;
use serde_json::json;

use super::*;
use crate::body::Body;
use crate::client::Client;
use crate::discovery::cache::CacheOptions;
use crate::discovery::documents::{ApiGroup, ApiResourceList, GroupVersionRef};
use crate::discovery::tests::client_of;
use crate::transport::Transport;

fn entry(name: &str, kind: &str, singular: &str, short: &[&str]) -> ApiResourceEntry {
    ApiResourceEntry {
        name: name.into(),
        singular_name: singular.into(),
        namespaced: true,
        kind: kind.into(),
        verbs: vec!["get".into(), "list".into()],
        short_names: short.iter().map(|s| (*s).to_owned()).collect(),
        ..ApiResourceEntry::default()
    }
}

fn group(name: &str, versions: &[&str]) -> ApiGroup {
    let versions: Vec<GroupVersionRef> = versions
        .iter()
        .map(|v| GroupVersionRef {
            group_version: group_version(name, v),
            version: (*v).to_owned(),
        })
        .collect();
    ApiGroup {
        name: name.into(),
        preferred_version: versions.first().cloned(),
        versions,
    }
}

/// A server with the shapes that make mapping interesting: the same kind in two groups, a
/// resource only in a non-preferred version, short names shared across groups, a 1.15-style
/// entry without a singular name, and two resources of one kind in one group version.
fn discovered() -> ServerResources {
    let mut resources = BTreeMap::new();
    let mut add = |gv: &str, entries: Vec<ApiResourceEntry>| {
        resources.insert(
            gv.to_owned(),
            ApiResourceList {
                group_version: gv.to_owned(),
                resources: entries,
            },
        );
    };
    add(
        "v1",
        vec![
            entry("events", "Event", "event", &["ev"]),
            entry("pods", "Pod", "", &["po"]),
            entry("pods/status", "Pod", "", &[]),
            entry("pods/eviction", "Eviction", "", &[]),
        ],
    );
    add(
        "events.k8s.io/v1",
        vec![entry("events", "Event", "event", &["ev"])],
    );
    add(
        "example.com/v2",
        vec![entry("widgets", "Widget", "widget", &["wd"])],
    );
    add(
        "example.com/v1",
        vec![
            entry("widgets", "Widget", "widget", &["wd"]),
            entry("gadgets", "Gadget", "gadget", &["po"]),
        ],
    );
    add(
        "twins.example.com/v1",
        vec![
            entry("lefts", "Twin", "left", &[]),
            entry("rights", "Twin", "right", &[]),
        ],
    );
    ServerResources {
        groups: vec![
            group("", &["v1"]),
            group("events.k8s.io", &["v1"]),
            group("example.com", &["v2", "v1"]),
            group("twins.example.com", &["v1"]),
        ],
        resources,
        ..ServerResources::default()
    }
}

fn resource_of(found: Result<RestMapping>) -> String {
    match found {
        Ok(m) => format!("{}.{}", m.resource.plural, m.resource.api_version),
        Err(e) => e.to_string(),
    }
}

#[test]
fn names_map_by_plural_singular_and_short_name_in_priority_order() {
    let d = discovered();
    let cases = [
        ("pods", "pods.v1"),
        ("Pod", "pods.v1"),
        ("pod", "pods.v1"), // no singularName: the lower-cased kind
        ("po", "pods.v1"),  // the core group declares it first
        ("events", "events.v1"),
        ("events.events.k8s.io", "events.events.k8s.io/v1"),
        ("ev.events.k8s.io", "events.events.k8s.io/v1"),
        ("widgets", "widgets.example.com/v2"),
        ("widget.v1.example.com", "widgets.example.com/v1"),
        ("wd", "widgets.example.com/v2"),
        ("gadgets", "gadgets.example.com/v1"),
        ("po.example.com", "gadgets.example.com/v1"),
        (
            "pods.example.com",
            "the server doesn't have a resource type \"pods.example.com\"",
        ),
        (
            "status",
            "the server doesn't have a resource type \"status\"",
        ),
        (
            "nothing",
            "the server doesn't have a resource type \"nothing\"",
        ),
    ];
    for (typed, expected) in cases {
        assert_eq!(resource_of(find_resource(&d, typed)), expected, "{typed}");
    }
}

#[test]
fn kinds_map_to_their_groups_preferred_version_unless_one_is_named() {
    let d = discovered();
    assert_eq!(
        resource_of(find_kind(&d, "example.com", None, "Widget")),
        "widgets.example.com/v2"
    );
    assert_eq!(
        resource_of(find_kind(&d, "example.com", Some("v1"), "Widget")),
        "widgets.example.com/v1"
    );
    assert_eq!(
        resource_of(find_kind(&d, "example.com", None, "Gadget")),
        "gadgets.example.com/v1"
    );
    assert_eq!(
        resource_of(find_kind(&d, "", Some("v1"), "Event")),
        "events.v1"
    );
    assert_eq!(
        resource_of(find_kind(&d, "example.com", Some("v2"), "Gadget")),
        "no matches for kind \"Gadget\" in version \"example.com/v2\""
    );
    assert_eq!(
        resource_of(find_kind(&d, "", Some("v2"), "Pod")),
        "no matches for kind \"Pod\" in version \"v2\""
    );
    assert_eq!(
        resource_of(find_kind(&d, "nope.io", None, "Pod")),
        "no matches for kind \"Pod\" in group \"nope.io\""
    );
    let pods = find_kind(&d, "", Some("v1"), "Pod").unwrap();
    assert_eq!(pods.subresources, ["status", "eviction"]);
    assert!(pods.namespaced && pods.supports("list") && !pods.supports("delete"));
}

#[test]
fn two_resources_of_one_kind_in_the_deciding_group_version_are_ambiguous() {
    let d = discovered();
    let error = find_kind(&d, "twins.example.com", None, "Twin").unwrap_err();
    assert_eq!(
        error.to_string(),
        "Twin in group \"twins.example.com\" matches more than one resource: lefts.twins.example.com/v1 (Twin), rights.twins.example.com/v1 (Twin)"
    );
    assert!(!error.is_no_match());
}

/// Counts discovery requests on their way to the test server.
struct Counting {
    inner: Client,
    requests: AtomicUsize,
}

impl Transport for Counting {
    fn send(
        &self,
        request: Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        if request.uri().path().starts_with("/api")
            && !request.uri().path().contains("customresourcedefinitions")
        {
            self.requests.fetch_add(1, Ordering::SeqCst);
        }
        Box::pin(self.inner.send(request))
    }
}

#[tokio::test]
async fn a_miss_refreshes_discovery_once_then_names_the_kind() {
    let server = TestServer::start().await;
    let counting = Arc::new(Counting {
        inner: client_of(&server),
        requests: AtomicUsize::new(0),
    });
    let client = Client::with_transport(counting.clone(), "default");
    let mapper = RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )));
    assert_eq!(
        resource_of(mapper.mapping_for("apps/v1", "Deployment").await),
        "deployments.apps/v1"
    );
    assert_eq!(counting.requests.load(Ordering::SeqCst), 2);

    // A CRD created after discovery was read: the miss refreshes and finds it.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
                 "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "shortNames": ["gz"]},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let request = Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(bytes::Bytes::from(crd.to_string()))
        .unwrap();
    client
        .request_json::<serde_json::Value>(request)
        .await
        .unwrap();
    let gizmos = mapper.mapping_for_resource("gz").await.unwrap();
    assert_eq!(
        (gizmos.resource.kind.as_str(), gizmos.namespaced),
        ("Gizmo", false)
    );
    assert_eq!(counting.requests.load(Ordering::SeqCst), 4);

    // A second miss within the interval does not ask again.
    let error = mapper
        .mapping_for("example.com/v1", "Nothing")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "no matches for kind \"Nothing\" in version \"example.com/v1\""
    );
    assert!(error.is_no_match());
    assert_eq!(counting.requests.load(Ordering::SeqCst), 4);
}
