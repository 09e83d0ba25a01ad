//! The controllers against the in-process test server (which runs them by default).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret, ServiceAccount};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, PropagationPolicy,
    ResourceClient,
};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);
/// How long a real garbage collector may take to notice a new resource: it rereads discovery
/// every 30 s (`--garbage-collector` resync), so twice that, plus margin.
const COLLECTOR_DISCOVERY: Duration = Duration::from_secs(75);

async fn create_namespace(client: &Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    ResourceClient::<Namespace>::cluster(client.clone())
        .create(&ns, &CreateOptions::default())
        .await
        .unwrap();
}

/// Polls `check` until it holds (the controllers work in the background).
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    eventually_within(WAIT, what, check).await;
}

/// [`eventually`], with a deadline of its own.
async fn eventually_within<F, Fut>(wait: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn exists<K: kubegen_client::ApiObject>(api: &ResourceClient<K>, name: &str) -> bool {
    match api.get(name, &GetOptions::default()).await {
        Ok(_) => true,
        Err(e) if e.is_not_found() => false,
        Err(e) => panic!("{e}"),
    }
}

fn config_map(name: &str, owners: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": owners}})).unwrap()
}

fn owner_ref(kind: &str, api_version: &str, name: &str, uid: &str, block: bool) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "blockOwnerDeletion": block})
}

#[tokio::test]
async fn a_deleted_namespace_is_emptied_then_removed_after_its_content() {
    let server = TestServer::start().await;
    namespace_deletion(&server.client(), "doomed").await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_deleted_namespace_is_emptied_then_removed_after_its_content_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    namespace_deletion(&client, &format!("kcm-e2e-doomed-{}", std::process::id())).await;
}

/// Deletes namespace `doomed` holding a ConfigMap: the ConfigMap's DELETED comes before the
/// namespace's, which is Terminating, then carries the five deletion conditions, then goes.
async fn namespace_deletion(client: &Client, doomed: &str) {
    let client = client.clone();
    create_namespace(&client, doomed).await;
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), doomed);
    maps.create(&config_map("one", json!([])), &CreateOptions::default())
        .await
        .unwrap();
    let all_maps = ResourceClient::<ConfigMap>::all_namespaces(client.clone());
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let rv = namespaces
        .list(&ListOptions::default())
        .await
        .unwrap()
        .metadata
        .resource_version;
    let mut opts = ListOptions::default();
    opts.resource_version = rv;
    let mut map_events = all_maps.watch(&opts).await.unwrap();
    let mut ns_events = namespaces.watch(&opts).await.unwrap();
    namespaces
        .delete(doomed, &DeleteOptions::default())
        .await
        .unwrap();
    let terminating = namespaces.get(doomed, &GetOptions::default()).await;
    if let Ok(ns) = terminating {
        assert!(ns.metadata.deletion_timestamp.is_some());
    }
    eventually("the namespace to go", || async {
        !exists(&namespaces, doomed).await
    })
    .await;
    // Order by resourceVersion: the ConfigMap's (and ServiceAccount's) deletion comes first.
    let mut deleted_map_rv = 0u64;
    while let Some(event) = map_events.next().await {
        if let kubegen_client::WatchEvent::Deleted(cm) = event.unwrap()
            && cm.metadata.name.as_deref() == Some("one")
        {
            deleted_map_rv = cm.metadata.resource_version.unwrap().parse().unwrap();
            break;
        }
    }
    let mut kinds = Vec::new();
    let mut deleted_ns_rv = 0u64;
    while let Some(event) = ns_events.next().await {
        match event.unwrap() {
            kubegen_client::WatchEvent::Modified(ns)
                if ns.metadata.name.as_deref() == Some(doomed) =>
            {
                let conditions = ns.status.and_then(|s| s.conditions).unwrap_or_default();
                kinds.push(format!("MODIFIED({})", conditions.len()));
            }
            kubegen_client::WatchEvent::Deleted(ns)
                if ns.metadata.name.as_deref() == Some(doomed) =>
            {
                deleted_ns_rv = ns.metadata.resource_version.unwrap().parse().unwrap();
                kinds.push("DELETED".into());
                break;
            }
            _ => {}
        }
    }
    // As on v1.36: Terminating, the five deletion conditions, then the deletion.
    assert_eq!(kinds, ["MODIFIED(0)", "MODIFIED(5)", "DELETED"]);
    assert!(
        deleted_map_rv < deleted_ns_rv,
        "{deleted_map_rv} < {deleted_ns_rv}"
    );
}

#[tokio::test]
async fn a_finalizer_on_content_keeps_the_namespace_terminating_with_conditions() {
    let server = TestServer::start().await;
    let client = server.client();
    create_namespace(&client, "held").await;
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "held");
    let mut held = config_map("held", json!([]));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    maps.create(&held, &CreateOptions::default()).await.unwrap();
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    namespaces
        .delete("held", &DeleteOptions::default())
        .await
        .unwrap();
    let message = |ns: &Namespace, type_: &str| {
        let conditions = ns
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        conditions
            .into_iter()
            .find(|c| c.type_ == type_)
            .and_then(|c| c.message)
    };
    eventually("the remaining-content conditions", || async {
        let ns = namespaces.get("held", &GetOptions::default()).await.unwrap();
        message(&ns, "NamespaceFinalizersRemaining").as_deref()
            == Some("Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")
    })
    .await;
    let ns = namespaces
        .get("held", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(
        message(&ns, "NamespaceContentRemaining").as_deref(),
        Some("Some resources are remaining: configmaps. has 1 resource instances")
    );
    let patch = kubegen_client::Patch::Merge(json!({"metadata": {"finalizers": null}}));
    maps.patch("held", &patch, &Default::default())
        .await
        .unwrap();
    eventually("the namespace to go", || async {
        !exists(&namespaces, "held").await
    })
    .await;
}

#[tokio::test]
async fn without_the_controller_manager_a_deleted_namespace_stays_terminating() {
    let mut options = kubegen_testserver::ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let client = server.client();
    create_namespace(&client, "stays").await;
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    namespaces
        .delete("stays", &DeleteOptions::default())
        .await
        .unwrap();
    let ns = namespaces
        .get("stays", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    // Finalizing by hand (what the namespace controller does) removes it.
    let mut finalized = namespaces
        .get("stays", &GetOptions::default())
        .await
        .unwrap();
    finalized.spec.as_mut().unwrap().finalizers = Some(vec![]);
    let _: Namespace = namespaces
        .update_subresource("stays", "finalize", &finalized, &Default::default())
        .await
        .unwrap();
    assert!(!exists(&namespaces, "stays").await);
}

async fn owner_and_dependents(client: &Client, ns: &str) -> (ResourceClient<ConfigMap>, String) {
    create_namespace(client, ns).await;
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    let owner = maps
        .create(&config_map("owner", json!([])), &CreateOptions::default())
        .await
        .unwrap();
    let uid = owner.metadata.uid.unwrap();
    let blocking = owner_ref("ConfigMap", "v1", "owner", &uid, true);
    let free = owner_ref("ConfigMap", "v1", "owner", &uid, false);
    maps.create(
        &config_map("blocking", json!([blocking])),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    maps.create(
        &config_map("free", json!([free])),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    (maps, uid)
}

#[tokio::test]
async fn background_deletion_collects_the_dependents() {
    let server = TestServer::start().await;
    let (maps, _) = owner_and_dependents(&server.client(), "bg").await;
    maps.delete("owner", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the dependents to go", || async {
        !exists(&maps, "blocking").await && !exists(&maps, "free").await
    })
    .await;
}

#[tokio::test]
async fn foreground_deletion_removes_dependents_first_then_the_owner() {
    let server = TestServer::start().await;
    let (maps, _) = owner_and_dependents(&server.client(), "fg").await;
    let foreground = DeleteOptions::default().propagation_policy(PropagationPolicy::Foreground);
    maps.delete("owner", &foreground).await.unwrap();
    eventually("everything to go", || async {
        !exists(&maps, "owner").await
            && !exists(&maps, "blocking").await
            && !exists(&maps, "free").await
    })
    .await;
}

#[tokio::test]
async fn a_blocking_dependent_with_a_finalizer_holds_a_foreground_owner() {
    let server = TestServer::start().await;
    blocked(&server.client(), "block").await;
}

async fn blocked(client: &Client, ns: &str) {
    create_namespace(client, ns).await;
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    let owner = maps
        .create(&config_map("owner", json!([])), &CreateOptions::default())
        .await
        .unwrap();
    let uid = owner.metadata.uid.unwrap();
    let mut dependent = config_map(
        "dependent",
        json!([owner_ref("ConfigMap", "v1", "owner", &uid, true)]),
    );
    dependent.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    maps.create(&dependent, &CreateOptions::default())
        .await
        .unwrap();
    let foreground = DeleteOptions::default().propagation_policy(PropagationPolicy::Foreground);
    maps.delete("owner", &foreground).await.unwrap();
    eventually("the dependent to be deleting", || async {
        let d = maps.get("dependent", &GetOptions::default()).await.unwrap();
        d.metadata.deletion_timestamp.is_some()
    })
    .await;
    let held = maps.get("owner", &GetOptions::default()).await.unwrap();
    assert_eq!(
        held.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );
    let patch = kubegen_client::Patch::Merge(json!({"metadata": {"finalizers": null}}));
    maps.patch("dependent", &patch, &Default::default())
        .await
        .unwrap();
    eventually("the owner to go", || async {
        !exists(&maps, "owner").await
    })
    .await;
}

#[tokio::test]
async fn orphan_deletion_strips_the_owner_reference_and_keeps_the_dependents() {
    let server = TestServer::start().await;
    let (maps, _) = owner_and_dependents(&server.client(), "orphan").await;
    let orphan = DeleteOptions::default().propagation_policy(PropagationPolicy::Orphan);
    maps.delete("owner", &orphan).await.unwrap();
    eventually("the owner to go", || async {
        !exists(&maps, "owner").await
    })
    .await;
    for name in ["blocking", "free"] {
        let kept = maps.get(name, &GetOptions::default()).await.unwrap();
        assert_eq!(kept.metadata.owner_references, None, "{name}");
    }
}

#[tokio::test]
async fn a_dependent_whose_owner_never_existed_is_collected() {
    let server = TestServer::start().await;
    dangling(&server.client(), "dangling").await;
}

async fn dangling(client: &Client, ns: &str) {
    create_namespace(client, ns).await;
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    let ghost = owner_ref(
        "ConfigMap",
        "v1",
        "ghost",
        "00000000-0000-0000-0000-000000000000",
        false,
    );
    maps.create(
        &config_map("orphaned", json!([ghost])),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    eventually("the dependent to go", || async {
        !exists(&maps, "orphaned").await
    })
    .await;
}

#[tokio::test]
async fn a_cluster_scoped_owner_keeps_then_releases_namespaced_dependents() {
    let server = TestServer::start().await;
    let client = server.client();
    create_namespace(&client, "owner-ns").await;
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    create_namespace(&client, "cluster-owner").await;
    let owner = namespaces
        .get("cluster-owner", &GetOptions::default())
        .await
        .unwrap();
    let reference = owner_ref(
        "Namespace",
        "v1",
        "cluster-owner",
        owner.metadata.uid.as_deref().unwrap(),
        false,
    );
    let maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "owner-ns");
    maps.create(
        &config_map("owned", json!([reference])),
        &CreateOptions::default(),
    )
    .await
    .unwrap();
    // A live owner: the dependent stays.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(exists(&maps, "owned").await);
    namespaces
        .delete("cluster-owner", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the dependent to go", || async {
        !exists(&maps, "owned").await
    })
    .await;
}

#[tokio::test]
async fn a_new_namespace_gets_a_default_service_account_whose_token_works() {
    let server = TestServer::start().await;
    let client = server.client();
    create_namespace(&client, "fresh").await;
    let accounts = ResourceClient::<ServiceAccount>::namespaced(client.clone(), "fresh");
    eventually("the default ServiceAccount", || async {
        exists(&accounts, "default").await
    })
    .await;
    let as_default = server
        .service_account_client("fresh", "default")
        .await
        .unwrap();
    let ns = ResourceClient::<Namespace>::cluster(as_default);
    // Authenticated (no 401); what it may do is up to the authorizer (allow-all here).
    ns.get("fresh", &GetOptions::default()).await.unwrap();
    accounts
        .delete("default", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the default ServiceAccount again", || async {
        exists(&accounts, "default").await
    })
    .await;
}

#[tokio::test]
async fn a_token_secret_is_filled_and_goes_with_its_service_account() {
    let server = TestServer::start().await;
    let client = server.client();
    create_namespace(&client, "tokens").await;
    let accounts = ResourceClient::<ServiceAccount>::namespaced(client.clone(), "tokens");
    eventually("the default ServiceAccount", || async {
        exists(&accounts, "default").await
    })
    .await;
    let secrets = ResourceClient::<Secret>::namespaced(client.clone(), "tokens");
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "tok", "annotations": {"kubernetes.io/service-account.name": "default"}},
        "type": "kubernetes.io/service-account-token",
    }))
    .unwrap();
    secrets
        .create(&secret, &CreateOptions::default())
        .await
        .unwrap();
    eventually("the token", || async {
        let s = secrets.get("tok", &GetOptions::default()).await.unwrap();
        s.data.is_some_and(|d| d.contains_key("token"))
    })
    .await;
    let filled = secrets.get("tok", &GetOptions::default()).await.unwrap();
    let data = filled.data.unwrap();
    let mut keys: Vec<_> = data.keys().cloned().collect();
    keys.sort();
    // No TLS, no CA: no ca.crt (the real controller writes it only with a root CA).
    assert_eq!(keys, ["namespace", "token"]);
    assert_eq!(data["namespace"].0, b"tokens");
    let sa = accounts
        .get("default", &GetOptions::default())
        .await
        .unwrap();
    let annotations = filled.metadata.annotations.unwrap();
    assert_eq!(
        annotations.get("kubernetes.io/service-account.uid"),
        sa.metadata.uid.as_ref()
    );
    let token = String::from_utf8(data["token"].0.clone()).unwrap();
    let as_token = Client::new(server.config().bearer_token(&token)).unwrap();
    ResourceClient::<Namespace>::cluster(as_token)
        .get("tokens", &GetOptions::default())
        .await
        .unwrap();
    accounts
        .delete("default", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the secret to go", || async {
        !exists(&secrets, "tok").await
    })
    .await;
}

#[tokio::test]
async fn a_custom_resource_owner_is_collected_with_its_replica_set() {
    let server = TestServer::start().await;
    let client = server.client();
    create_namespace(&client, "crs").await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let crds = kubegen_client::ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
    };
    let crd: kubegen_client::DynamicObject = serde_json::from_value(crd).unwrap();
    ResourceClient::dynamic(client.clone(), &crds, None)
        .create(&crd, &CreateOptions::default())
        .await
        .unwrap();
    let widgets = kubegen_client::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widget: kubegen_client::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}
    }))
    .unwrap();
    let api = ResourceClient::dynamic(client.clone(), &widgets, Some("crs"));
    let widget = api
        .create(&widget, &CreateOptions::default())
        .await
        .unwrap();
    let uid = widget.metadata.uid.unwrap();
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "rs", "ownerReferences": [owner_ref("Widget", "example.com/v1", "w", &uid, true)]},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    }))
    .unwrap();
    let sets = ResourceClient::<ReplicaSet>::namespaced(client.clone(), "crs");
    sets.create(&rs, &CreateOptions::default()).await.unwrap();
    let foreground = DeleteOptions::default().propagation_policy(PropagationPolicy::Foreground);
    api.delete("w", &foreground).await.unwrap();
    eventually("the widget and its ReplicaSet to go", || async {
        !exists(&sets, "rs").await
            && matches!(api.get("w", &GetOptions::default()).await, Err(e) if e.is_not_found())
    })
    .await;
}

/// `(type, name, finalizers, owner names)` of each ConfigMap event in `ns` until `last` is
/// deleted.
async fn config_map_events(
    maps: &ResourceClient<ConfigMap>,
    rv: Option<String>,
    last: &str,
) -> Vec<(String, String, Vec<String>, Vec<String>)> {
    let mut opts = ListOptions::default();
    opts.resource_version = rv;
    let mut events = maps.watch(&opts).await.unwrap();
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(WAIT, events.next()).await.unwrap() {
        let (kind, cm) = match event.unwrap() {
            kubegen_client::WatchEvent::Added(cm) => ("ADDED", cm),
            kubegen_client::WatchEvent::Modified(cm) => ("MODIFIED", cm),
            kubegen_client::WatchEvent::Deleted(cm) => ("DELETED", cm),
            _ => continue,
        };
        let name = cm.metadata.name.clone().unwrap();
        let owners = cm.metadata.owner_references.unwrap_or_default();
        let done = kind == "DELETED" && name == last;
        seen.push((
            kind.to_owned(),
            name,
            cm.metadata.finalizers.unwrap_or_default(),
            owners.into_iter().map(|o| o.name).collect(),
        ));
        if done {
            break;
        }
    }
    seen
}

fn event(
    kind: &str,
    name: &str,
    finalizers: &[&str],
    owners: &[&str],
) -> (String, String, Vec<String>, Vec<String>) {
    let strings = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect();
    (
        kind.into(),
        name.into(),
        strings(finalizers),
        strings(owners),
    )
}

/// The sequences captured from v1.36 with kube-controller-manager (`kubectl get cm --watch-only
/// --output-watch-events` while `kubectl delete cm owner --cascade=foreground|orphan`).
#[tokio::test]
async fn foreground_and_orphan_deletions_emit_the_events_of_v1_36() {
    let server = TestServer::start().await;
    sequences(&server.client(), "sequences").await;
}

async fn sequences(client: &Client, ns: &str) {
    let (maps, _) = owner_and_dependents(client, ns).await;
    let rv = maps
        .list(&ListOptions::default())
        .await
        .unwrap()
        .metadata
        .resource_version;
    let foreground = DeleteOptions::default().propagation_policy(PropagationPolicy::Foreground);
    maps.delete("owner", &foreground).await.unwrap();
    let mut seen = config_map_events(&maps, rv, "owner").await;
    // The two dependents go in either order, as on the real server (one queue, many workers).
    seen[1..3].sort();
    assert_eq!(
        seen,
        [
            event("MODIFIED", "owner", &["foregroundDeletion"], &[]),
            event("DELETED", "blocking", &[], &["owner"]),
            event("DELETED", "free", &[], &["owner"]),
            event("DELETED", "owner", &["foregroundDeletion"], &[]),
        ]
    );
    let owner = maps
        .create(&config_map("owner2", json!([])), &CreateOptions::default())
        .await
        .unwrap();
    let reference = owner_ref(
        "ConfigMap",
        "v1",
        "owner2",
        owner.metadata.uid.as_deref().unwrap(),
        false,
    );
    let dependent = maps
        .create(
            &config_map("dep2", json!([reference])),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let orphan = DeleteOptions::default().propagation_policy(PropagationPolicy::Orphan);
    maps.delete("owner2", &orphan).await.unwrap();
    let seen = config_map_events(&maps, dependent.metadata.resource_version, "owner2").await;
    assert_eq!(
        seen,
        [
            event("MODIFIED", "owner2", &["orphan"], &[]),
            event("MODIFIED", "dep2", &[], &[]),
            event("DELETED", "owner2", &["orphan"], &[]),
        ]
    );
}

/// Runs `scenario` in a fresh namespace on the real cluster, then deletes the namespace.
async fn on_cluster<F, Fut>(name: &str, scenario: F)
where
    F: FnOnce(Client, String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let client = kubegen_e2e_support::cluster_client().await;
    let ns = format!("kcm-e2e-{name}-{}", std::process::id());
    scenario(client.clone(), ns.clone()).await;
    let namespaces = ResourceClient::<Namespace>::cluster(client);
    let _ = namespaces.delete(&ns, &DeleteOptions::default()).await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn foreground_and_orphan_deletions_emit_the_events_of_v1_36_on_cluster() {
    on_cluster("sequences", |client, ns| async move {
        sequences(&client, &ns).await
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_blocking_dependent_with_a_finalizer_holds_a_foreground_owner_on_cluster() {
    on_cluster(
        "block",
        |client, ns| async move { blocked(&client, &ns).await },
    )
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_dependent_whose_owner_never_existed_is_collected_on_cluster() {
    on_cluster("dangling", |client, ns| async move {
        dangling(&client, &ns).await
    })
    .await;
}

/// The cluster-scoped CRD the custom-resource cascades use (one name for every run: CRDs are
/// cluster-wide, and a real cluster several runs share already has it).
const WIDGET_GROUP: &str = "kcm-e2e.example.com";

fn widgets() -> kubegen_client::ApiResource {
    kubegen_client::ApiResource {
        group: WIDGET_GROUP.into(),
        version: "v1".into(),
        api_version: format!("{WIDGET_GROUP}/v1"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

/// Installs the Widget CRD unless it is there, and waits until Widgets can be listed.
async fn install_widgets(client: &Client) {
    let crds = kubegen_client::ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
    };
    let crd: kubegen_client::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{WIDGET_GROUP}")},
        "spec": {"group": WIDGET_GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap();
    match ResourceClient::dynamic(client.clone(), &crds, None)
        .create(&crd, &CreateOptions::default())
        .await
    {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => panic!("creating the Widget CRD: {e}"),
    }
    let all = ResourceClient::dynamic(client.clone(), &widgets(), None);
    eventually("Widgets to be served", || async {
        all.list(&ListOptions::default()).await.is_ok()
    })
    .await;
}

/// Waits until the garbage collector knows Widgets, so that a cascade test measures the cascade,
/// not the collector's discovery: a real kube-controller-manager notices a new CRD only when it
/// next rereads discovery (every 30 s), and until then it neither watches Widgets nor can look
/// one up. The probe: a ConfigMap owned by a Widget that is deleted at once is collected only
/// once the collector can tell that its owner is gone.
async fn collector_knows_widgets(client: &Client, ns: &str) {
    let api = ResourceClient::dynamic(client.clone(), &widgets(), Some(ns));
    let probe: kubegen_client::DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{WIDGET_GROUP}/v1"), "kind": "Widget", "metadata": {"name": "gc-probe"}
    }))
    .unwrap();
    let probe = api.create(&probe, &CreateOptions::default()).await.unwrap();
    let owner = owner_ref(
        "Widget",
        &format!("{WIDGET_GROUP}/v1"),
        "gc-probe",
        probe.metadata.uid.as_deref().unwrap(),
        false,
    );
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    config_maps
        .create(
            &config_map("gc-probe", json!([owner])),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    api.delete("gc-probe", &DeleteOptions::default())
        .await
        .unwrap();
    eventually_within(
        COLLECTOR_DISCOVERY,
        "the garbage collector to collect a dependent of a deleted Widget",
        || async { !exists(&config_maps, "gc-probe").await },
    )
    .await;
}

/// A Widget `w` owning Deployment `web` (which the deployment controller gives a ReplicaSet),
/// deleted with `policy`; returns the Widget's watch events (type and finalizers), and the
/// resourceVersions of the Widget's and the Deployment's DELETED (0 when not deleted).
async fn widget_cascade(
    client: &Client,
    ns: &str,
    policy: PropagationPolicy,
) -> (Vec<(String, Vec<String>)>, u64, u64) {
    install_widgets(client).await;
    create_namespace(client, ns).await;
    collector_knows_widgets(client, ns).await;
    let api = ResourceClient::dynamic(client.clone(), &widgets(), Some(ns));
    let widget: kubegen_client::DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{WIDGET_GROUP}/v1"), "kind": "Widget", "metadata": {"name": "w"}
    }))
    .unwrap();
    let widget = api
        .create(&widget, &CreateOptions::default())
        .await
        .unwrap();
    let owner = owner_ref(
        "Widget",
        &format!("{WIDGET_GROUP}/v1"),
        "w",
        widget.metadata.uid.as_deref().unwrap(),
        true,
    );
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "ownerReferences": [owner]},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }))
    .unwrap();
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), ns);
    let sets = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns);
    deployments
        .create(&deployment, &CreateOptions::default())
        .await
        .unwrap();
    eventually("the Deployment's ReplicaSet", || async {
        !sets
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .is_empty()
    })
    .await;
    // Its Pod too: by then the collector's informers (one hop behind the API server, like the
    // deployment controller's) have seen the Deployment, so a foreground delete waits for it.
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), ns);
    eventually("the ReplicaSet's Pod", || async {
        !pods
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .is_empty()
    })
    .await;
    let rv = api
        .list(&ListOptions::default())
        .await
        .unwrap()
        .metadata
        .resource_version;
    let mut opts = ListOptions::default();
    opts.resource_version = rv;
    let mut widget_events = api.watch(&opts).await.unwrap();
    let mut deployment_events = deployments.watch(&opts).await.unwrap();
    api.delete("w", &DeleteOptions::default().propagation_policy(policy))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut widget_deleted = 0;
    while let Some(event) = tokio::time::timeout(WAIT, widget_events.next())
        .await
        .unwrap()
    {
        let (kind, object) = match event.unwrap() {
            kubegen_client::WatchEvent::Modified(o) => ("MODIFIED", o),
            kubegen_client::WatchEvent::Deleted(o) => ("DELETED", o),
            _ => continue,
        };
        seen.push((
            kind.to_owned(),
            object.metadata.finalizers.clone().unwrap_or_default(),
        ));
        if kind == "DELETED" {
            widget_deleted = object.metadata.resource_version.unwrap().parse().unwrap();
            break;
        }
    }
    let mut deployment_deleted = 0;
    if policy != PropagationPolicy::Orphan {
        while let Some(event) = tokio::time::timeout(WAIT, deployment_events.next())
            .await
            .unwrap()
        {
            if let kubegen_client::WatchEvent::Deleted(d) = event.unwrap() {
                deployment_deleted = d.metadata.resource_version.unwrap().parse().unwrap();
                break;
            }
        }
        eventually("the ReplicaSets to go", || async {
            sets.list(&ListOptions::default())
                .await
                .unwrap()
                .items
                .is_empty()
        })
        .await;
    }
    (seen, widget_deleted, deployment_deleted)
}

fn finalizers(kind: &str, finalizers: &[&str]) -> (String, Vec<String>) {
    (
        kind.into(),
        finalizers.iter().map(|f| (*f).to_owned()).collect(),
    )
}

/// Background: the Widget goes at once, then the collector deletes its Deployment (and that its
/// ReplicaSet).
async fn widget_background(client: &Client, ns: &str) {
    let (seen, widget, deployment) =
        widget_cascade(client, ns, PropagationPolicy::Background).await;
    assert_eq!(seen, [finalizers("DELETED", &[])]);
    assert!(widget < deployment, "{widget} < {deployment}");
}

/// Foreground: the Widget is held by `foregroundDeletion` until its blocking Deployment is gone.
async fn widget_foreground(client: &Client, ns: &str) {
    let (seen, widget, deployment) =
        widget_cascade(client, ns, PropagationPolicy::Foreground).await;
    assert_eq!(
        seen,
        [
            finalizers("MODIFIED", &["foregroundDeletion"]),
            finalizers("DELETED", &["foregroundDeletion"]),
        ]
    );
    assert!(deployment < widget, "{deployment} < {widget}");
}

/// Orphan: the Deployment loses its owner reference and stays, with its ReplicaSet.
async fn widget_orphan(client: &Client, ns: &str) {
    let (seen, _, _) = widget_cascade(client, ns, PropagationPolicy::Orphan).await;
    assert_eq!(
        seen,
        [
            finalizers("MODIFIED", &["orphan"]),
            finalizers("DELETED", &["orphan"]),
        ]
    );
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), ns);
    let kept = deployments
        .get("web", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(kept.metadata.owner_references, None);
    let sets = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns);
    assert_eq!(
        sets.list(&ListOptions::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
}

#[tokio::test]
async fn a_custom_resource_owning_a_deployment_deleted_in_background() {
    let server = TestServer::start().await;
    widget_background(&server.client(), "bg").await;
}

#[tokio::test]
async fn a_custom_resource_owning_a_deployment_deleted_in_foreground() {
    let server = TestServer::start().await;
    widget_foreground(&server.client(), "fg").await;
}

#[tokio::test]
async fn a_custom_resource_owning_a_deployment_deleted_orphaning_it() {
    let server = TestServer::start().await;
    widget_orphan(&server.client(), "orphan").await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_custom_resource_owning_a_deployment_deleted_in_background_on_cluster() {
    on_cluster("widget-bg", |client, ns| async move {
        widget_background(&client, &ns).await
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_custom_resource_owning_a_deployment_deleted_in_foreground_on_cluster() {
    on_cluster("widget-fg", |client, ns| async move {
        widget_foreground(&client, &ns).await
    })
    .await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_custom_resource_owning_a_deployment_deleted_orphaning_it_on_cluster() {
    on_cluster("widget-orphan", |client, ns| async move {
        widget_orphan(&client, &ns).await
    })
    .await;
}
