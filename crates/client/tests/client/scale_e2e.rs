//! The Scale client against kubegen-testserver (always) and against a real cluster when
//! `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig (the `_on_cluster` variant is `#[ignore]`d;
//! `scripts/test.sh` runs it when the variable is set): Deployments, StatefulSets and
//! ReplicaSets through their typed clients, a custom resource with a scale subresource through
//! a client built at run time (where `apiextensions.k8s.io/v1` is served: not on v1.15), and the
//! errors the module doc of `scale.rs` lists.
//!
//! Each run works in a namespace `clientsurface-scale-<pid>` (and a CRD group
//! `clientsurface<pid>.example.com`), deleted afterwards whatever happened.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kubegen_client::{
    AnyObject, ApiResource, Client, Config, CreateOptions, DeleteOptions, DynamicObject,
    LoadOptions, Patch, PatchOptions, ResourceClient, UpdateOptions,
};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn scales_workloads_and_a_custom_resource_on_testserver() -> TestResult {
    let server = TestServer::start().await;
    scenario(server.client()).await
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn scales_workloads_and_a_custom_resource_on_cluster() -> TestResult {
    let path = std::env::var_os("KUBEGEN_E2E_KUBECONFIG")
        .ok_or("set KUBEGEN_E2E_KUBECONFIG to a kubeconfig to run this against a real cluster")?;
    let config = Config::load(&LoadOptions::default().kubeconfig_path(path)).await?;
    scenario(Client::new(config)?).await
}

async fn scenario(client: Client) -> TestResult {
    let id = std::process::id();
    let ns = format!("clientsurface-scale-{id}");
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}}))?;
    namespaces
        .create(&namespace, &CreateOptions::default())
        .await?;
    let outcome = steps(&client, &ns, id).await;
    let crds = ResourceClient::<CustomResourceDefinition>::cluster(client.clone());
    let _ = crds.delete(&crd_name(id), &DeleteOptions::default()).await;
    namespaces.delete(&ns, &DeleteOptions::default()).await?;
    outcome
}

fn labels(app: &str) -> Value {
    json!({"matchLabels": {"app": app}})
}

fn template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}})
}

async fn steps(client: &Client, ns: &str, id: u32) -> TestResult {
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": labels("web"), "template": template("web")}}))?;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), ns);
    deployments
        .create(&deployment, &CreateOptions::default())
        .await?;
    scales(&deployments, "web").await?;
    errors(client, &deployments, ns).await?;

    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": 1, "serviceName": "db", "selector": labels("db"), "template": template("db")}}))?;
    let sets = ResourceClient::<StatefulSet>::namespaced(client.clone(), ns);
    sets.create(&set, &CreateOptions::default()).await?;
    scales(&sets, "db").await?;

    let replica_set: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "rs"},
        "spec": {"replicas": 1, "selector": labels("rs"), "template": template("rs")}}))?;
    let replica_sets = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns);
    replica_sets
        .create(&replica_set, &CreateOptions::default())
        .await?;
    scales(&replica_sets, "rs").await?;

    custom_resource(client, ns, id).await
}

/// get, patch and update of one workload's Scale; the parent's spec follows.
async fn scales<K: AnyObject>(api: &ResourceClient<K>, name: &str) -> TestResult {
    let scale = api.get_scale(name).await?;
    assert_eq!(scale.metadata.name.as_deref(), Some(name));
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    let patch = Patch::Merge(json!({"spec": {"replicas": 3}}));
    let patched = api
        .patch_scale(name, &patch, &PatchOptions::default())
        .await?;
    assert_eq!(patched.spec.as_ref().and_then(|s| s.replicas), Some(3));
    // A real controller writes the parent's status meanwhile, which moves the resourceVersion
    // the Scale carries: read, change and write again on a conflict, as `kubectl scale` does.
    let mut attempts = 0;
    let updated = loop {
        let mut update = api.get_scale(name).await?;
        if let Some(spec) = update.spec.as_mut() {
            spec.replicas = Some(2);
        }
        match api.update_scale(&update, &UpdateOptions::default()).await {
            Err(err) if err.is_conflict() && attempts < 10 => attempts += 1,
            other => break other?,
        }
    };
    assert_eq!(updated.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let parent = serde_json::to_value(api.get(name, &Default::default()).await?)?;
    assert_eq!(
        parent["spec"]["replicas"],
        json!(2),
        "{name}'s spec follows its Scale"
    );
    // The Scale read before the patch is stale now.
    let err = api
        .update_scale(&scale, &UpdateOptions::default())
        .await
        .err()
        .ok_or("a stale resourceVersion was accepted")?;
    assert!(err.is_conflict(), "{err}");
    Ok(())
}

async fn errors(client: &Client, deployments: &ResourceClient<Deployment>, ns: &str) -> TestResult {
    let err = deployments
        .get_scale("missing")
        .await
        .err()
        .ok_or("missing found")?;
    assert!(err.is_not_found(), "{err}");
    let negative = Patch::Merge(json!({"spec": {"replicas": -1}}));
    let err = deployments
        .patch_scale("web", &negative, &PatchOptions::default())
        .await
        .err()
        .ok_or("negative replicas accepted")?;
    assert!(err.is_invalid(), "{err}");
    assert!(err.to_string().contains("spec.replicas"), "{err}");
    let config_maps = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    let config_map: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "plain"}}))?;
    config_maps
        .create(&config_map, &CreateOptions::default())
        .await?;
    let err = config_maps
        .get_scale("plain")
        .await
        .err()
        .ok_or("a ConfigMap scaled")?;
    assert!(err.is_not_found(), "{err}");
    Ok(())
}

fn crd_name(id: u32) -> String {
    format!("pools.clientsurface{id}.example.com")
}

/// A custom resource whose scale subresource maps `.spec.size`, through a run-time client.
async fn custom_resource(client: &Client, ns: &str, id: u32) -> TestResult {
    let group = format!("clientsurface{id}.example.com");
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": crd_name(id)},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "pools", "singular": "pool", "kind": "Pool", "listKind": "PoolList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                    "subresources": {"status": {}, "scale": {
                        "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size",
                        "labelSelectorPath": ".status.selector"}}}]}}))?;
    let crds = ResourceClient::<CustomResourceDefinition>::cluster(client.clone());
    match crds.create(&crd, &CreateOptions::default()).await {
        Err(err) if err.is_not_found() => {
            println!("skipping the custom resource: apiextensions.k8s.io/v1 is not served ({err})");
            return Ok(());
        }
        other => other?,
    };
    let resource = ApiResource {
        group: group.clone(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: "Pool".into(),
        plural: "pools".into(),
    };
    let pools = ResourceClient::<DynamicObject>::dynamic(client.clone(), &resource, Some(ns));
    let pool: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1"), "kind": "Pool",
        "metadata": {"name": "p"}, "spec": {"size": 1}}))?;
    // A real server serves the new resource a moment after the CRD is created.
    let mut created = pools.create(&pool, &CreateOptions::default()).await;
    for _ in 0..100 {
        match &created {
            Err(err) if err.is_not_found() => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                created = pools.create(&pool, &CreateOptions::default()).await;
            }
            _ => break,
        }
    }
    created?;
    let scale = pools.get_scale("p").await?;
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    let patch = Patch::Merge(json!({"spec": {"replicas": 4}}));
    pools
        .patch_scale("p", &patch, &PatchOptions::default())
        .await?;
    let stored = serde_json::to_value(pools.get("p", &Default::default()).await?)?;
    assert_eq!(stored["spec"]["size"], json!(4));
    Ok(())
}
