//! Fixture tests in sample-controller's style: seed objects into a fake API, fill the informer
//! caches from it, run one reconcile, and assert the exact actions the controller sent.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Event;
use kube_core::Resource;
use kubegen_cache::{Indexer, Lister, ObjectKey};
use kubegen_client::{GetOptions, ListOptions, ResourceClient};
use kubegen_clientset::fake::Clientset as FakeClientset;
use kubegen_fake::{Action, conflict, internal_error};
use serde_json::{Value, json};

use super::*;
use crate::metrics::PoliceMetrics;
use crate::namespaces::ProtectedNamespaces;
use crate::writer::Writer;
use kubegen_runtime::Recorder;

const OWN_NAMESPACE: &str = "image-police";

fn whitelist(namespace: &str, name: &str, images: Value) -> Value {
    json!({
        "apiVersion": "police.example.com/v1beta1", "kind": "WhiteList",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"images": images},
    })
}

fn deployment(namespace: &str, name: &str, init: &[&str], images: &[&str]) -> Value {
    let containers = |prefix: &str, list: &[&str]| -> Vec<Value> {
        list.iter()
            .enumerate()
            .map(|(i, image)| json!({"name": format!("{prefix}{i}"), "image": image}))
            .collect()
    };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"initContainers": containers("init", init), "containers": containers("c", images)},
            },
        },
    })
}

struct Fixture {
    clientset: FakeClientset,
    reconciler: Reconciler,
}

/// A lister over a cache holding exactly `items`, as an informer would after its list.
fn cache_of<K: Resource + Send + Sync + 'static>(items: Vec<K>) -> Lister<K> {
    let indexer = Indexer::new();
    for item in items {
        indexer.insert(ObjectKey::of(&item), Arc::new(item));
    }
    Lister::new(indexer)
}

impl Fixture {
    async fn new(objects: Vec<Value>) -> Fixture {
        let clientset = FakeClientset::new(objects).unwrap_or_else(|e| panic!("seed: {e}"));
        let reconciler = Reconciler {
            whitelists: WhiteListLister::new(cache_of(Vec::new())),
            deployments: DeploymentLister::new(cache_of(Vec::new())),
            writer: Writer::new((*clientset).clone()),
            protected: ProtectedNamespaces::new(OWN_NAMESPACE, false),
            events: Recorder::new(clientset.fake().client(), COMPONENT, "test-replica"),
            metrics: PoliceMetrics::default(),
        };
        let mut fixture = Fixture {
            clientset,
            reconciler,
        };
        fixture.sync_caches().await;
        fixture
    }

    /// Refills the caches from the fake server, as the informers would, and forgets the reads.
    async fn sync_caches(&mut self) {
        let all = ListOptions::default();
        let whitelists = self
            .clientset
            .police_v1beta1()
            .white_lists_all_namespaces()
            .list(&all)
            .await;
        let deployments = self
            .clientset
            .apps_v1()
            .deployments_all_namespaces()
            .list(&all)
            .await;
        let whitelists = whitelists.unwrap_or_else(|e| panic!("list: {e}"));
        let deployments = deployments.unwrap_or_else(|e| panic!("list: {e}"));
        self.reconciler.whitelists = WhiteListLister::new(cache_of(whitelists.items));
        self.reconciler.deployments = DeploymentLister::new(cache_of(deployments.items));
        self.clientset.fake().clear_actions();
    }

    fn actions(&self) -> Vec<String> {
        self.clientset
            .actions()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn action(&self, index: usize) -> Action {
        self.clientset.actions()[index].clone()
    }

    async fn stored_whitelist(&self, namespace: &str, name: &str) -> WhiteList {
        let whitelists = self.clientset.police_v1beta1().white_lists(namespace);
        whitelists
            .get(name, &GetOptions::default())
            .await
            .unwrap_or_else(|e| panic!("get: {e}"))
    }
}

fn ready(whitelist: &WhiteList) -> (String, Option<String>) {
    let status = whitelist.status.clone().unwrap_or_default();
    let condition = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .cloned()
        .unwrap_or_default();
    (condition.status, condition.reason)
}

async fn ok(fixture: &Fixture, key: &str) {
    fixture
        .reconciler
        .reconcile_namespace(key)
        .await
        .unwrap_or_else(|e| panic!("reconcile: {e}"));
}

/// The actions of a reconcile deleting one Deployment in a namespace with `whitelists`: the
/// deletion, an Event on the Deployment and one on each list, then each list's status.
fn expected_deletion(namespace: &str, deployment: &str, whitelists: &[&str]) -> Vec<String> {
    let mut actions = vec![
        format!("delete deployments {namespace}/{deployment}"),
        format!("create events {namespace}"),
    ];
    actions.extend(
        whitelists
            .iter()
            .map(|_| format!("create events {namespace}")),
    );
    actions.extend(
        whitelists
            .iter()
            .map(|list| format!("update whitelists/status {namespace}/{list}")),
    );
    actions
}

#[tokio::test]
async fn allowed_images_delete_nothing_and_report_ready() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "web", &[], &["nginx:1.25"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), vec!["update whitelists/status team/wl"]);
    let stored = fixture.stored_whitelist("team", "wl").await;
    assert_eq!(ready(&stored), ("True".into(), Some("Enforcing".into())));
    let status = stored.status.unwrap_or_default();
    assert_eq!(status.observed_generation, stored.metadata.generation);
    assert_eq!(status.violations_handled, Some(0));
}

#[tokio::test]
async fn forbidden_image_deletes_the_deployment_records_events_and_status() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "bad", &[], &["redis:7"]),
        deployment("team", "good", &[], &["nginx:1.25"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), expected_deletion("team", "bad", &["wl"]));

    let uid = fixture
        .reconciler
        .deployments
        .get_by_key("team/bad")
        .and_then(|d| d.metadata.uid.clone());
    let delete = fixture.action(0);
    assert_eq!(
        delete
            .body
            .as_ref()
            .and_then(|b| b.pointer("/preconditions/uid"))
            .and_then(Value::as_str),
        uid.as_deref()
    );
    assert_eq!(
        delete
            .body
            .as_ref()
            .and_then(|b| b.get("propagationPolicy")),
        Some(&json!("Background"))
    );
    let involved = |i: usize| {
        fixture
            .action(i)
            .body
            .and_then(|b| b.pointer("/involvedObject/kind").cloned())
    };
    assert_eq!(involved(1), Some(json!("Deployment")));
    assert_eq!(involved(2), Some(json!("WhiteList")));
    assert_eq!(
        fixture
            .action(1)
            .body
            .and_then(|b| b.get("reason").cloned()),
        Some(json!(REASON_DELETED))
    );

    let status = fixture
        .stored_whitelist("team", "wl")
        .await
        .status
        .unwrap_or_default();
    assert_eq!(status.violations_handled, Some(1));
    let violation = &status.last_violations[0];
    assert_eq!(
        (
            violation.deployment.as_str(),
            violation.image.as_str(),
            violation.reason.as_str()
        ),
        ("bad", "redis:7", "ImageNotListed")
    );
    assert_eq!(
        fixture
            .reconciler
            .metrics
            .scraped("image_police_deployments_deleted_total"),
        Some(1.0)
    );
}

#[tokio::test]
async fn every_deletion_of_one_reconcile_records_both_events() {
    // One reconcile, one timestamp, and a Deployment named like its WhiteList: Event names
    // (`<object>.<nanoseconds>`) must still all differ.
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "a", &[], &["redis:7"]),
        deployment("team", "wl", &[], &["mysql:8"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        vec![
            "delete deployments team/a",
            "create events team",
            "create events team",
            "delete deployments team/wl",
            "create events team",
            "create events team",
            "update whitelists/status team/wl",
        ]
    );
    let stored = ResourceClient::<Event>::namespaced(fixture.clientset.client().clone(), "team")
        .list(&ListOptions::default())
        .await
        .unwrap_or_else(|e| panic!("list events: {e}"));
    let mut recorded: Vec<_> = stored
        .items
        .iter()
        .map(|e| {
            (
                e.involved_object.kind.clone().unwrap_or_default(),
                e.reason.clone().unwrap_or_default(),
                e.message.clone().unwrap_or_default(),
            )
        })
        .collect();
    recorded.sort();
    let kinds_and_reasons: Vec<_> = recorded
        .iter()
        .map(|(kind, reason, _)| (kind.as_str(), reason.as_str()))
        .collect();
    assert_eq!(
        kinds_and_reasons,
        [
            ("Deployment", REASON_DELETED),
            ("Deployment", REASON_DELETED),
            ("WhiteList", REASON_ENFORCED),
            ("WhiteList", REASON_ENFORCED),
        ]
    );
    assert!(recorded[2].2.contains("\"redis:7\""), "{:?}", recorded[2]);
    assert_eq!(
        fixture
            .reconciler
            .metrics
            .scraped("image_police_events_failed_total"),
        Some(0.0),
        "no Event failed"
    );
}

#[tokio::test]
async fn tag_mismatch_is_forbidden() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "old", &[], &["nginx:1.24"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), expected_deletion("team", "old", &["wl"]));
    let status = fixture
        .stored_whitelist("team", "wl")
        .await
        .status
        .unwrap_or_default();
    assert_eq!(status.last_violations[0].reason, "TagNotAllowed");
}

#[tokio::test]
async fn init_container_with_a_denied_image_is_forbidden() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "sneaky", &["busybox:1.36"], &["nginx:1.25"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        expected_deletion("team", "sneaky", &["wl"])
    );
    let status = fixture
        .stored_whitelist("team", "wl")
        .await
        .status
        .unwrap_or_default();
    assert_eq!(status.last_violations[0].container, "init0 (init)");
}

#[tokio::test]
async fn image_without_tag_is_judged_as_latest() {
    let fixture = Fixture::new(vec![
        whitelist("pinned", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("pinned", "untagged", &[], &["nginx"]),
        whitelist(
            "floating",
            "wl",
            json!([{"name": "nginx", "tags": ["latest"]}]),
        ),
        deployment("floating", "untagged", &[], &["nginx"]),
    ])
    .await;
    ok(&fixture, "pinned").await;
    ok(&fixture, "floating").await;
    let mut expected = expected_deletion("pinned", "untagged", &["wl"]);
    expected.push("update whitelists/status floating/wl".into());
    assert_eq!(fixture.actions(), expected);
}

#[tokio::test]
async fn protected_namespace_is_reported_and_left_alone() {
    let fixture = Fixture::new(vec![
        whitelist(
            OWN_NAMESPACE,
            "wl",
            json!([{"name": "nginx", "tags": ["1.25"]}]),
        ),
        deployment(OWN_NAMESPACE, "controller", &[], &["image-police:0.1.0"]),
        whitelist(
            "kube-system",
            "wl",
            json!([{"name": "nginx", "tags": ["1.25"]}]),
        ),
        deployment("kube-system", "coredns", &[], &["coredns/coredns:1.11"]),
    ])
    .await;
    ok(&fixture, OWN_NAMESPACE).await;
    ok(&fixture, "kube-system").await;
    assert_eq!(
        fixture.actions(),
        vec![
            format!("update whitelists/status {OWN_NAMESPACE}/wl"),
            "update whitelists/status kube-system/wl".to_owned()
        ]
    );
    let stored = fixture.stored_whitelist("kube-system", "wl").await;
    assert_eq!(
        ready(&stored),
        ("False".into(), Some("ProtectedNamespace".into()))
    );
}

#[tokio::test]
async fn namespace_without_whitelists_is_left_alone() {
    let fixture = Fixture::new(vec![deployment("team", "bad", &[], &["redis:7"])]).await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), Vec::<String>::new());
}

#[tokio::test]
async fn status_conflict_is_retried_on_a_fresh_read_keeping_the_violations() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "bad", &[], &["redis:7"]),
    ])
    .await;
    let conflicted = std::sync::atomic::AtomicBool::new(false);
    fixture
        .clientset
        .fake()
        .prepend_reactor("update", "whitelists/status", move |action| {
            let first = !conflicted.swap(true, std::sync::atomic::Ordering::SeqCst);
            first.then(|| Err(conflict(action)))
        });
    ok(&fixture, "team").await;
    let mut expected = expected_deletion("team", "bad", &["wl"]);
    expected.extend([
        "get whitelists team/wl".to_owned(),
        "update whitelists/status team/wl".to_owned(),
    ]);
    assert_eq!(fixture.actions(), expected);
    let status = fixture
        .stored_whitelist("team", "wl")
        .await
        .status
        .unwrap_or_default();
    assert_eq!(status.violations_handled, Some(1));
}

#[tokio::test]
async fn status_conflict_is_returned_for_requeue() {
    let fixture = Fixture::new(vec![whitelist(
        "team",
        "wl",
        json!([{"name": "nginx", "tags": ["1.25"]}]),
    )])
    .await;
    fixture
        .clientset
        .fake()
        .prepend_reactor("update", "whitelists/status", |action| {
            Some(Err(conflict(action)))
        });
    let error = fixture.reconciler.reconcile_namespace("team").await.err();
    assert!(
        matches!(&error, Some(ReconcileError::StatusUpdateFailed { key, .. }) if key == "team/wl"),
        "{error:?}"
    );
    assert!(error.is_some_and(|e| e.is_conflict()));
    let (update, get) = ("update whitelists/status team/wl", "get whitelists team/wl");
    assert_eq!(fixture.actions(), vec![update, get, update, get, update]);
}

#[tokio::test]
async fn failed_delete_is_returned_but_status_is_still_written() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "bad", &[], &["redis:7"]),
    ])
    .await;
    fixture
        .clientset
        .fake()
        .prepend_reactor("delete", "deployments", |action| {
            Some(Err(internal_error(action, "etcd down")))
        });
    let error = fixture.reconciler.reconcile_namespace("team").await.err();
    assert!(
        matches!(error, Some(ReconcileError::DeleteFailed { ref name, .. }) if name == "bad"),
        "{error:?}"
    );
    assert_eq!(
        fixture.actions(),
        vec![
            "delete deployments team/bad",
            "update whitelists/status team/wl"
        ]
    );
}

#[tokio::test]
async fn idle_reconcile_writes_nothing() {
    let mut fixture = Fixture::new(vec![whitelist(
        "team",
        "wl",
        json!([{"name": "nginx", "tags": ["1.25"]}]),
    )])
    .await;
    ok(&fixture, "team").await;
    fixture.sync_caches().await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), Vec::<String>::new());
}

#[tokio::test]
async fn empty_list_without_allow_none_is_a_configuration_error() {
    let fixture = Fixture::new(vec![
        whitelist("team", "wl", json!([])),
        deployment("team", "any", &[], &["redis:7"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), vec!["update whitelists/status team/wl"]);
    let stored = fixture.stored_whitelist("team", "wl").await;
    assert_eq!(ready(&stored), ("False".into(), Some("InvalidSpec".into())));
}

#[tokio::test]
async fn a_second_whitelist_in_the_namespace_allows_more() {
    let fixture = Fixture::new(vec![
        whitelist("team", "web", json!([{"name": "nginx", "tags": ["1.25"]}])),
        whitelist("team", "cache", json!([{"name": "redis", "tags": ["7"]}])),
        deployment("team", "redis", &[], &["redis:7"]),
        deployment("team", "mysql", &[], &["mysql:8"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        expected_deletion("team", "mysql", &["cache", "web"])
    );
    for list in ["cache", "web"] {
        let status = fixture
            .stored_whitelist("team", list)
            .await
            .status
            .unwrap_or_default();
        assert_eq!(status.violations_handled, Some(1), "{list}");
        assert_eq!(status.last_violations[0].deployment, "mysql", "{list}");
    }
}

impl Fixture {
    async fn delete_whitelist(&mut self, namespace: &str, name: &str) {
        let whitelists = self.clientset.police_v1beta1().white_lists(namespace);
        whitelists
            .delete(name, &kubegen_client::DeleteOptions::default())
            .await
            .unwrap_or_else(|e| panic!("delete: {e}"));
        self.sync_caches().await;
    }

    async fn create_deployment(&mut self, object: Value) {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        let deployments = self.clientset.apps_v1().deployments(namespace);
        let object = serde_json::from_value(object).unwrap_or_else(|e| panic!("{e}"));
        deployments
            .create(&object, &Default::default())
            .await
            .unwrap_or_else(|e| panic!("create: {e}"));
        self.sync_caches().await;
    }

    async fn reason(&self, namespace: &str, whitelist: &str) -> (String, Option<String>) {
        ready(&self.stored_whitelist(namespace, whitelist).await)
    }
}

#[tokio::test]
async fn deleting_the_list_that_allowed_an_image_deletes_the_deployment() {
    let mut fixture = Fixture::new(vec![
        whitelist("team", "web", json!([{"name": "nginx", "tags": ["1.25"]}])),
        whitelist("team", "cache", json!([{"name": "redis", "tags": ["7"]}])),
        deployment("team", "redis", &[], &["redis:7"]),
    ])
    .await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        vec![
            "update whitelists/status team/cache",
            "update whitelists/status team/web"
        ],
        "the union allows redis"
    );
    fixture.delete_whitelist("team", "cache").await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        expected_deletion("team", "redis", &["web"])
    );
    let status = fixture
        .stored_whitelist("team", "web")
        .await
        .status
        .unwrap_or_default();
    assert_eq!(status.violations_handled, Some(1));
    assert_eq!(status.last_violations[0].deployment, "redis");
    assert_eq!(status.last_violations[0].reason, "ImageNotListed");
}

#[tokio::test]
async fn deleting_the_last_list_enforces_nothing_and_writes_nothing() {
    let mut fixture = Fixture::new(vec![
        whitelist("team", "web", json!([{"name": "nginx", "tags": ["1.25"]}])),
        deployment("team", "web", &[], &["nginx:1.25"]),
    ])
    .await;
    ok(&fixture, "team").await;
    fixture.delete_whitelist("team", "web").await;
    fixture
        .create_deployment(deployment("team", "cache", &[], &["redis:7"]))
        .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), Vec::<String>::new());
}

#[tokio::test]
async fn an_invalid_list_pauses_its_namespace_whichever_event_comes_next() {
    let mut fixture = Fixture::new(vec![
        whitelist("team", "web", json!([{"name": "nginx", "tags": ["1.25"]}])),
        whitelist("team", "broken", json!([])),
        deployment("team", "mysql", &[], &["mysql:8"]),
    ])
    .await;
    // The reconcile a WhiteList event triggers: nothing deleted, both lists say why.
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        vec![
            "update whitelists/status team/broken",
            "update whitelists/status team/web"
        ]
    );
    assert_eq!(
        fixture.reason("team", "broken").await,
        ("False".into(), Some("InvalidSpec".into()))
    );
    assert_eq!(
        fixture.reason("team", "web").await,
        ("False".into(), Some("EnforcementPaused".into()))
    );
    // A later, unrelated Deployment event reconciles the same namespace: still nothing deleted,
    // and the statuses already say everything.
    fixture
        .create_deployment(deployment("team", "late", &[], &["mysql:8"]))
        .await;
    ok(&fixture, "team").await;
    assert_eq!(fixture.actions(), Vec::<String>::new());
    // Deleting the invalid list resumes enforcement and refreshes the remaining list's status.
    fixture.delete_whitelist("team", "broken").await;
    ok(&fixture, "team").await;
    assert_eq!(
        fixture.actions(),
        vec![
            "delete deployments team/late",
            "create events team",
            "create events team",
            "delete deployments team/mysql",
            "create events team",
            "create events team",
            "update whitelists/status team/web",
        ]
    );
    assert_eq!(
        fixture.reason("team", "web").await,
        ("True".into(), Some("Enforcing".into()))
    );
}
