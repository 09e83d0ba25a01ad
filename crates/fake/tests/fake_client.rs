//! The fake client end to end through the real `ResourceClient`: recorded actions per verb,
//! reactors, seeding, and watch replay between List and Watch.

mod common;

use common::{Cluster, WhiteList, WhiteListStatus};
use k8s_openapi::api::apps::v1::Deployment;
use kube_core::WatchEvent;
use kubegen_client::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient, UpdateOptions,
};
use kubegen_fake::{Action, Error, FakeClient, StatusSubresource, Verb};

fn fake() -> FakeClient {
    let fake = FakeClient::new();
    fake.register::<WhiteList>(StatusSubresource::Enabled);
    let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    ok("seed namespace", fake.seed([namespace]));
    fake
}

fn whitelists(fake: &FakeClient, namespace: &str) -> ResourceClient<WhiteList> {
    ResourceClient::namespaced(fake.client(), namespace)
}

fn summary(actions: &[Action]) -> Vec<String> {
    actions.iter().map(ToString::to_string).collect()
}

/// Unwraps a client result, naming the failed step.
fn ok<T, E: std::fmt::Display>(step: &str, result: Result<T, E>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("{step} failed: {error}"),
    }
}

#[tokio::test]
async fn every_verb_is_recorded_with_its_target() {
    let fake = fake();
    let api = whitelists(&fake, "team-a");
    let created = ok(
        "create",
        api.create(
            &WhiteList::new("team-a", "wl", &["nginx:1.25"]),
            &CreateOptions::default(),
        )
        .await,
    );
    ok("get", api.get("wl", &GetOptions::default()).await);
    ok(
        "list",
        api.list(&ListOptions::default().labels("app=web")).await,
    );
    let watch = ok("watch", api.watch(&ListOptions::default()).await);
    drop(watch);
    ok(
        "update",
        api.update(&created, &UpdateOptions::default()).await,
    );
    let patch = Patch::Merge(serde_json::json!({"spec": {"images": ["redis:7"]}}));
    let mut patched = ok(
        "patch",
        api.patch("wl", &patch, &PatchOptions::default()).await,
    );
    patched.status = Some(WhiteListStatus { violations: 1 });
    ok(
        "update_status",
        api.update_status(&patched, &UpdateOptions::default()).await,
    );
    ok("delete", api.delete("wl", &DeleteOptions::default()).await);
    ok(
        "delete_collection",
        api.delete_collection(&DeleteOptions::default(), &ListOptions::default())
            .await,
    );

    let actions = fake.actions();
    assert_eq!(
        summary(&actions),
        [
            "create whitelists team-a",
            "get whitelists team-a/wl",
            "list whitelists team-a",
            "watch whitelists team-a",
            "update whitelists team-a/wl",
            "patch whitelists team-a/wl",
            "update whitelists/status team-a/wl",
            "delete whitelists team-a/wl",
            "delete-collection whitelists team-a",
        ]
    );
    assert!(
        actions
            .iter()
            .all(|a| a.group == "police.example.com" && a.version == "v1beta1")
    );
    assert_eq!(
        actions[0]
            .body
            .as_ref()
            .map(|b| b["spec"]["images"][0].clone()),
        Some("nginx:1.25".into())
    );
    assert_eq!(actions[2].query_param("labelSelector"), Some("app=web"));
    assert_eq!(
        actions[5].body,
        Some(serde_json::json!({"spec": {"images": ["redis:7"]}}))
    );
    assert_eq!(
        actions[5].patch_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(actions[6].subresource.as_deref(), Some("status"));
    assert_eq!(
        actions[6]
            .body
            .as_ref()
            .map(|b| b["status"]["violations"].clone()),
        Some(1.into())
    );
    fake.clear_actions();
    assert!(fake.actions().is_empty());
}

#[tokio::test]
async fn reactor_conflict_short_circuits_the_update() {
    let fake = fake();
    let api = whitelists(&fake, "team-a");
    let created = ok(
        "create",
        api.create(
            &WhiteList::new("team-a", "wl", &["nginx"]),
            &CreateOptions::default(),
        )
        .await,
    );
    fake.prepend_reactor("update", "whitelists", |action| {
        Some(Err(kubegen_fake::conflict(action)))
    });

    let mut changed = created.clone();
    changed.spec.images.push("redis".to_owned());
    let error = match api.update(&changed, &UpdateOptions::default()).await {
        Ok(_) => panic!("the reactor must answer with a conflict"),
        Err(error) => error,
    };
    assert!(error.is_conflict(), "{error}");
    let stored = ok("get", api.get("wl", &GetOptions::default()).await);
    assert_eq!(stored, created, "the server never saw the update");
    let verbs: Vec<Verb> = fake.actions().iter().map(|a| a.verb).collect();
    assert_eq!(verbs, [Verb::Create, Verb::Update, Verb::Get]);
}

#[tokio::test]
async fn newest_reactor_wins_and_declining_reactors_pass_through() {
    let fake = fake();
    let api = whitelists(&fake, "team-a");
    fake.prepend_reactor("get", "*", |action| {
        Some(Err(kubegen_fake::not_found(action)))
    });
    fake.prepend_reactor("get", "whitelists", |_| {
        Some(Ok(serde_json::to_value(WhiteList::new(
            "team-a",
            "from-reactor",
            &[],
        ))
        .unwrap_or_default()))
    });
    fake.prepend_reactor("*", "*", |_| None);
    let got = ok("get", api.get("anything", &GetOptions::default()).await);
    assert_eq!(got.metadata.name.as_deref(), Some("from-reactor"));
    let deployments = ResourceClient::<Deployment>::namespaced(fake.client(), "team-a");
    match deployments.get("web", &GetOptions::default()).await {
        Err(error) => assert!(error.is_not_found(), "{error}"),
        Ok(_) => panic!("the wildcard reactor answers gets of other resources"),
    }
}

#[tokio::test]
async fn watch_after_list_sees_objects_created_in_between() {
    let fake = fake();
    let api = whitelists(&fake, "team-a");
    ok(
        "create",
        api.create(
            &WhiteList::new("team-a", "before", &[]),
            &CreateOptions::default(),
        )
        .await,
    );
    let listed = ok("list", api.list(&ListOptions::default()).await);
    let resource_version = listed.metadata.resource_version.clone().unwrap_or_default();
    assert_eq!(listed.items.len(), 1);

    // The gap client-go's fake loses: changes after the List, before the Watch opens.
    ok(
        "create",
        api.create(
            &WhiteList::new("team-a", "between-1", &[]),
            &CreateOptions::default(),
        )
        .await,
    );
    ok(
        "create",
        api.create(
            &WhiteList::new("team-a", "between-2", &[]),
            &CreateOptions::default(),
        )
        .await,
    );

    let mut watch = ok(
        "watch",
        api.watch(&ListOptions::default().resource_version(resource_version))
            .await,
    );
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match watch.next().await {
            Some(Ok(WatchEvent::Added(wl))) => seen.push(wl.metadata.name.unwrap_or_default()),
            Some(Ok(WatchEvent::Bookmark(_))) => {}
            other => panic!("unexpected watch item: {other:?}"),
        }
    }
    assert_eq!(seen, ["between-1", "between-2"]);
}

#[tokio::test]
async fn seeded_objects_keep_their_status_and_are_not_recorded() {
    // No namespace seeded: seeding creates team-a and default as needed.
    let fake = FakeClient::new();
    fake.register::<WhiteList>(StatusSubresource::Enabled);
    let mut with_status = WhiteList::new("team-a", "wl", &["nginx"]);
    with_status.status = Some(WhiteListStatus { violations: 3 });
    ok("seed", fake.seed([with_status]));
    let deployment: Deployment = ok(
        "parse",
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
        })),
    );
    ok("seed", fake.seed([deployment]));
    assert!(fake.actions().is_empty(), "seeding is not an action");

    let stored = ok(
        "get",
        whitelists(&fake, "team-a")
            .get("wl", &GetOptions::default())
            .await,
    );
    assert_eq!(stored.status, Some(WhiteListStatus { violations: 3 }));
    assert!(stored.metadata.resource_version.is_some() && stored.metadata.uid.is_some());
    let deployments = ResourceClient::<Deployment>::namespaced(fake.client(), "default");
    ok("get", deployments.get("web", &GetOptions::default()).await);
}

/// Plain `#[test]`: seeding needs no async runtime, so generated fake clientsets can seed in a
/// synchronous constructor.
#[test]
fn seeding_rejects_unserved_kinds_and_duplicates() {
    let fake = FakeClient::new();
    match fake.seed([WhiteList::new("team-a", "wl", &[])]) {
        Err(Error::SeedInvalid { reason }) => {
            assert!(reason.contains("register it first"), "{reason}")
        }
        other => panic!("unregistered kind must be rejected, got {other:?}"),
    }
    fake.register::<WhiteList>(StatusSubresource::Enabled);
    ok("seed", fake.seed([WhiteList::new("team-a", "wl", &[])]));
    match fake.seed([WhiteList::new("team-a", "wl", &[])]) {
        Err(Error::SeedRejected { code, .. }) => assert_eq!(code, 409),
        other => panic!("duplicate must be rejected, got {other:?}"),
    }
}

#[tokio::test]
async fn cluster_scoped_kinds_are_served_without_a_namespace() {
    let fake = FakeClient::new();
    fake.register::<Cluster>(StatusSubresource::Disabled);
    ok("seed", fake.seed([Cluster::new("prod")]));
    let clusters = ResourceClient::<Cluster>::cluster(fake.client());
    ok(
        "create",
        clusters
            .create(&Cluster::new("staging"), &CreateOptions::default())
            .await,
    );
    let listed = ok("list", clusters.list(&ListOptions::default()).await);
    let mut names: Vec<String> = listed
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    names.sort();
    assert_eq!(names, ["prod", "staging"]);
    assert_eq!(
        summary(&fake.actions()),
        ["create clusters", "list clusters"]
    );
    assert!(fake.actions().iter().all(|a| a.namespace.is_none()));
}

#[tokio::test]
async fn reactor_can_fail_a_watch_with_410_gone() {
    let fake = fake();
    fake.prepend_reactor("watch", "whitelists", |_| {
        let expired =
            kube_core::Status::failure("too old resource version: 1 (5)", "Expired").with_code(410);
        Some(Err(expired.boxed()))
    });
    match whitelists(&fake, "team-a")
        .watch(&ListOptions::default().resource_version("1"))
        .await
    {
        Err(error) => assert!(error.is_gone(), "{error}"),
        Ok(_) => panic!("the reactor must fail the watch"),
    }
    assert_eq!(fake.actions().last().map(|a| a.verb), Some(Verb::Watch));
    assert_eq!(
        fake.actions()
            .last()
            .and_then(|a| a.query_param("resourceVersion")),
        Some("1")
    );
}

#[tokio::test]
async fn server_side_apply_runs_the_test_servers_field_manager() {
    let fake = fake();
    let api: ResourceClient<Deployment> = ResourceClient::namespaced(fake.client(), "team-a");
    let config = |image: &str| {
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}})
    };
    let created = ok(
        "apply-create",
        api.apply("web", &config("nginx:1"), &ApplyOptions::new("owner"))
            .await,
    );
    let entries = created.metadata.managed_fields.unwrap_or_default();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].manager.as_deref(), Some("owner"));
    assert_eq!(entries[0].operation.as_deref(), Some("Apply"));
    let conflict = api
        .apply("web", &config("nginx:2"), &ApplyOptions::new("intruder"))
        .await
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        conflict.as_deref(),
        Some(
            "PATCH /apis/apps/v1/namespaces/team-a/deployments/web?fieldManager=intruder: Apply failed with 1 conflict: conflict with \"owner\": .spec.template.spec.containers[name=\"app\"].image (Conflict, 409)"
        )
    );
    let forced = ok(
        "forced apply",
        api.apply(
            "web",
            &config("nginx:2"),
            &ApplyOptions::new("intruder").force(true),
        )
        .await,
    );
    let image = forced
        .spec
        .and_then(|s| s.template.spec)
        .map(|s| s.containers[0].image.clone());
    assert_eq!(image, Some(Some("nginx:2".to_string())));
    let patches: Vec<Option<String>> = fake
        .actions()
        .iter()
        .filter(|a| a.verb == Verb::Patch)
        .map(|a| a.patch_type.clone())
        .collect();
    assert_eq!(
        patches,
        vec![Some("application/apply-patch+yaml".to_string()); 3]
    );
}
