//! What the rollout scenario does not reach, each checked on the real pair: cleanup beyond
//! `revisionHistoryLimit`, adoption and release of Pods, the Recreate strategy, pausing, the
//! progress deadline, and what a created Pod looks like without a scheduler or kubelet.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kubegen_client::{Client, CreateOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use serde_json::{Value, json};

use crate::{event, eventually, scenarios, wait_for_events};

scenarios! {
    history_limit => revision_history_limit_deletes_the_oldest_empty_replica_sets,
        revision_history_limit_deletes_the_oldest_empty_replica_sets_on_cluster;
    adoption => replica_set_adopts_matching_orphans_and_releases_pods_that_stop_matching,
        replica_set_adopts_matching_orphans_and_releases_pods_that_stop_matching_on_cluster;
    recreate => recreate_scales_the_old_replica_set_to_zero_before_the_new_one_starts,
        recreate_scales_the_old_replica_set_to_zero_before_the_new_one_starts_on_cluster;
    paused => a_paused_deployment_rolls_out_only_once_resumed,
        a_paused_deployment_rolls_out_only_once_resumed_on_cluster;
    deadline => a_stalled_rollout_exceeds_its_progress_deadline,
        a_stalled_rollout_exceeds_its_progress_deadline_on_cluster;
}

/// A Deployment `name` of `nginx:1.27` selecting `app: <name>`, with `spec` merged in.
async fn create_deployment(client: &Client, ns: &str, name: &str, spec: Value) {
    let mut object = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
            }
        }
    });
    if let (Some(base), Value::Object(extra)) = (object["spec"].as_object_mut(), spec) {
        base.extend(extra);
    }
    let object: Deployment = serde_json::from_value(object).unwrap();
    ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .create(&object, &CreateOptions::default())
        .await
        .unwrap();
}

async fn patch_deployment(client: &Client, ns: &str, name: &str, patch: Value) {
    ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .patch(name, &Patch::Strategic(patch), &PatchOptions::default())
        .await
        .unwrap();
}

fn image(image: &str) -> Value {
    json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}})
}

/// `(name, revision, spec.replicas, status.replicas)` of the ReplicaSets with `app: <app>`.
async fn replica_sets(client: &Client, ns: &str, app: &str) -> Vec<(String, String, i32, i32)> {
    let list = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListOptions::default().labels(format!("app={app}")))
        .await
        .unwrap();
    let mut out: Vec<_> = list
        .items
        .into_iter()
        .map(|rs| {
            let revision = rs
                .metadata
                .annotations
                .unwrap_or_default()
                .remove("deployment.kubernetes.io/revision")
                .unwrap_or_default();
            (
                rs.metadata.name.unwrap_or_default(),
                revision,
                rs.spec.and_then(|s| s.replicas).unwrap_or(1),
                rs.status.map_or(0, |s| s.replicas),
            )
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// Waits until the ReplicaSets of `app` have exactly these `(revision, spec, status)` replicas;
/// returns their names.
async fn wait_for_replica_sets(
    client: &Client,
    ns: &str,
    app: &str,
    want: &[(&str, i32, i32)],
) -> Vec<String> {
    eventually(&format!("replica sets of {app}: {want:?}"), || async {
        let got = replica_sets(client, ns, app).await;
        let shape: Vec<_> = got
            .iter()
            .map(|(_, r, s, a)| (r.as_str(), *s, *a))
            .collect();
        (shape == want).then(|| got.into_iter().map(|(n, ..)| n).collect())
    })
    .await
}

/// `(type, status, reason, message)` of the Deployment's conditions and its observed generation.
async fn conditions(client: &Client, ns: &str, name: &str) -> (Vec<[String; 4]>, i64) {
    let d = ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .get(name, &Default::default())
        .await
        .unwrap();
    let status = d.status.unwrap_or_default();
    let conditions = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            let (reason, message) = (c.reason.unwrap_or_default(), c.message.unwrap_or_default());
            [c.type_, c.status, reason, message]
        })
        .collect();
    (conditions, status.observed_generation.unwrap_or(0))
}

async fn wait_for_conditions(client: &Client, ns: &str, name: &str, want: (Vec<[&str; 4]>, i64)) {
    let want = (
        want.0
            .iter()
            .map(|c| c.map(String::from))
            .collect::<Vec<_>>(),
        want.1,
    );
    eventually(&format!("conditions {want:?}"), || async {
        (conditions(client, ns, name).await == want).then_some(())
    })
    .await;
}

const UNAVAILABLE: [&str; 4] = [
    "Available",
    "False",
    "MinimumReplicasUnavailable",
    "Deployment does not have minimum availability.",
];

/// With `revisionHistoryLimit: 1` and no replicas (so every rollout completes), four revisions
/// leave the newest two ReplicaSets.
async fn history_limit(client: Client, ns: String) {
    let ns = ns.as_str();
    let spec = json!({"replicas": 0, "revisionHistoryLimit": 1});
    create_deployment(&client, ns, "hist", spec).await;
    wait_for_replica_sets(&client, ns, "hist", &[("1", 0, 0)]).await;
    patch_deployment(&client, ns, "hist", image("nginx:1.27.1")).await;
    wait_for_replica_sets(&client, ns, "hist", &[("1", 0, 0), ("2", 0, 0)]).await;
    patch_deployment(&client, ns, "hist", image("nginx:1.27.2")).await;
    wait_for_replica_sets(&client, ns, "hist", &[("2", 0, 0), ("3", 0, 0)]).await;
    patch_deployment(&client, ns, "hist", image("nginx:1.27.3")).await;
    wait_for_replica_sets(&client, ns, "hist", &[("3", 0, 0), ("4", 0, 0)]).await;
    wait_for_events(&client, ns, Vec::new()).await;
}

/// An orphan Pod `app: adopt` that its ReplicaSet would rather keep than its own Pods.
fn orphan() -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "orphan",
            "labels": {"app": "adopt"},
            "annotations": {"controller.kubernetes.io/pod-deletion-cost": "100"}
        },
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap()
}

/// `(name, controller owner)` of every Pod.
async fn pods(client: &Client, ns: &str) -> Vec<(String, Option<String>)> {
    let list = kubegen_e2e_support::list_in::<Pod>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .map(|p| {
            let owner = p.metadata.owner_references.map(|refs| {
                let r = &refs[0];
                assert_eq!(
                    (r.controller, r.block_owner_deletion),
                    (Some(true), Some(true))
                );
                format!("{}/{}", r.kind, r.name)
            });
            let name = p.metadata.name.unwrap_or_default();
            (crate::generated_suffix_hidden(&name), owner)
        })
        .collect();
    out.sort();
    out
}

/// A ReplicaSet adopts a matching orphan, which counts toward its replicas: the surplus Pod
/// goes, the one with the lower deletion cost. A Pod relabelled out of the selector loses its
/// owner reference (no `ownerReferences` left) and is replaced.
///
/// The orphan comes after the ReplicaSet's own Pod: the other way round, whether the first sync
/// creates a Pod depends on whether the controller has seen the orphan yet (on the real pair too).
async fn adoption(client: Client, ns: String) {
    let ns = ns.as_str();
    let rs: ReplicaSet = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "adopter"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "adopt"}},
            "template": {
                "metadata": {"labels": {"app": "adopt"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))
    .unwrap();
    ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns)
        .create(&rs, &CreateOptions::default())
        .await
        .unwrap();
    let owned = |name: &str| (name.to_string(), Some("ReplicaSet/adopter".to_string()));
    eventually("the ReplicaSet's own Pod", || async {
        (pods(&client, ns).await == vec![owned("adopter-*")]).then_some(())
    })
    .await;
    let pod_client = ResourceClient::<Pod>::namespaced(client.clone(), ns);
    pod_client
        .create(&orphan(), &CreateOptions::default())
        .await
        .unwrap();
    eventually("the orphan adopted and the own Pod deleted", || async {
        (pods(&client, ns).await == vec![owned("orphan")]).then_some(())
    })
    .await;
    let relabel = json!({"metadata": {"labels": {"app": "gone"}}});
    pod_client
        .patch(
            "orphan",
            &Patch::Strategic(relabel),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    let replaced = vec![owned("adopter-*"), ("orphan".to_string(), None)];
    eventually("the orphan released and replaced", || async {
        (pods(&client, ns).await == replaced).then_some(())
    })
    .await;
    let pod = |reason: &str, verb: &str| {
        let message = format!("{verb} pod: adopter-*");
        event("Normal", reason, "ReplicaSet/adopter", &message)
    };
    let expected = vec![
        pod("SuccessfulCreate", "Created"),
        pod("SuccessfulDelete", "Deleted"),
        pod("SuccessfulCreate", "Created"),
    ];
    wait_for_events(&client, ns, expected).await;
}

/// Recreate: the old ReplicaSet goes to 0 and its Pods are deleted before the new one is
/// created at full size.
async fn recreate(client: Client, ns: String) {
    let ns = ns.as_str();
    let spec = json!({"replicas": 2, "strategy": {"type": "Recreate"}});
    create_deployment(&client, ns, "recr", spec).await;
    let first = wait_for_replica_sets(&client, ns, "recr", &[("1", 2, 2)]).await;
    patch_deployment(&client, ns, "recr", image("nginx:1.27.3")).await;
    let names = wait_for_replica_sets(&client, ns, "recr", &[("1", 0, 0), ("2", 2, 2)]).await;
    let (old, new) = (&first[0], &names[1]);
    let scaled = |m: String| event("Normal", "ScalingReplicaSet", "Deployment/recr", &m);
    let pod = |reason: &str, verb: &str, rs: &str| {
        let message = format!("{verb} pod: {rs}-*");
        event("Normal", reason, &format!("ReplicaSet/{rs}"), &message)
    };
    let expected = vec![
        scaled(format!("Scaled up replica set {old} from 0 to 2")),
        pod("SuccessfulCreate", "Created", old),
        pod("SuccessfulCreate", "Created", old),
        scaled(format!("Scaled down replica set {old} from 2 to 0")),
        pod("SuccessfulDelete", "Deleted", old),
        pod("SuccessfulDelete", "Deleted", old),
        scaled(format!("Scaled up replica set {new} from 0 to 2")),
        pod("SuccessfulCreate", "Created", new),
        pod("SuccessfulCreate", "Created", new),
    ];
    wait_for_events(&client, ns, expected).await;
}

/// A Deployment created paused gets no ReplicaSet and a `DeploymentPaused` condition; resuming
/// rolls it out.
async fn paused(client: Client, ns: String) {
    let ns = ns.as_str();
    create_deployment(
        &client,
        ns,
        "paused",
        json!({"replicas": 2, "paused": true}),
    )
    .await;
    let paused = [
        "Progressing",
        "Unknown",
        "DeploymentPaused",
        "Deployment is paused",
    ];
    wait_for_conditions(&client, ns, "paused", (vec![paused, UNAVAILABLE], 1)).await;
    assert_eq!(replica_sets(&client, ns, "paused").await, Vec::new());
    patch_deployment(&client, ns, "paused", json!({"spec": {"paused": false}})).await;
    let names = wait_for_replica_sets(&client, ns, "paused", &[("1", 2, 2)]).await;
    let message = format!("ReplicaSet {:?} is progressing.", names[0]);
    let progressing = ["Progressing", "True", "ReplicaSetUpdated", message.as_str()];
    wait_for_conditions(&client, ns, "paused", (vec![UNAVAILABLE, progressing], 2)).await;
}

/// Without a kubelet no Pod becomes available: after `progressDeadlineSeconds` the rollout is
/// reported as timed out.
async fn deadline(client: Client, ns: String) {
    let ns = ns.as_str();
    create_deployment(
        &client,
        ns,
        "dl",
        json!({"replicas": 1, "progressDeadlineSeconds": 1}),
    )
    .await;
    let names = wait_for_replica_sets(&client, ns, "dl", &[("1", 1, 1)]).await;
    let message = format!("ReplicaSet {:?} has timed out progressing.", names[0]);
    let exceeded = [
        "Progressing",
        "False",
        "ProgressDeadlineExceeded",
        message.as_str(),
    ];
    wait_for_conditions(&client, ns, "dl", (vec![UNAVAILABLE, exceeded], 1)).await;
}
