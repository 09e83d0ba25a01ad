//! A Deployment's life as kubectl drives it, with the outcomes and Events the real pair produces:
//! 3 replicas at 25%/25% stall with the new ReplicaSet at 1 and the old at 3 (surge 1,
//! unavailable 0); scaling to 5 ends at old 4 / new 3; rolling back makes the old ReplicaSet
//! revision 3 with `revision-history: 1`. Every scaling is a `ScalingReplicaSet` Event on the
//! Deployment, every Pod a `SuccessfulCreate` Event on its ReplicaSet.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kubegen_client::{Client, CreateOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use serde_json::json;

use crate::{event, eventually, scenarios, wait_for_events};

scenarios! {
    rollout_scenario => deployment_rollout_scale_and_rollback_match_the_real_pair,
        deployment_rollout_scale_and_rollback_on_cluster;
}

fn deployment(image: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        }
    })
}

/// `(revision, spec.replicas, status.replicas, revision-history)` of every ReplicaSet, by revision.
async fn replica_sets(client: &Client, ns: &str) -> Vec<(String, i32, i32, Option<String>)> {
    let list = kubegen_e2e_support::list_in::<ReplicaSet>(client, ns).await;
    let mut out: Vec<_> = list
        .iter()
        .map(|rs| {
            let a = rs.metadata.annotations.clone().unwrap_or_default();
            (
                a.get("deployment.kubernetes.io/revision")
                    .cloned()
                    .unwrap_or_default(),
                rs.spec.as_ref().unwrap().replicas.unwrap(),
                rs.status.as_ref().map_or(0, |s| s.replicas),
                a.get("deployment.kubernetes.io/revision-history").cloned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// `(replicas, updatedReplicas, unavailableReplicas, observedGeneration)` and the
/// `(type, status, reason)` of each condition, in order.
async fn deployment_status(
    client: &Client,
    ns: &str,
) -> ((i32, i32, i32, i64), Vec<(String, String, String)>) {
    let d = ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .get("web", &Default::default())
        .await
        .unwrap();
    let s = d.status.unwrap_or_default();
    let conditions = s
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason.unwrap_or_default()))
        .collect();
    let counts = (
        s.replicas.unwrap_or(0),
        s.updated_replicas.unwrap_or(0),
        s.unavailable_replicas.unwrap_or(0),
        s.observed_generation.unwrap_or(0),
    );
    (counts, conditions)
}

const UPDATED: &[&str] = &["ReplicaSetUpdated"];

fn conditions(progressing: &str) -> Vec<(String, String, String)> {
    vec![
        (
            "Available".into(),
            "False".into(),
            "MinimumReplicasUnavailable".into(),
        ),
        ("Progressing".into(), "True".into(), progressing.into()),
    ]
}

async fn wait_for(
    client: &Client,
    ns: &str,
    rss: Vec<(&str, i32, i32, Option<&str>)>,
    status: (i32, i32, i32, i64),
    reasons: &[&str],
) {
    let want: Vec<_> = rss
        .into_iter()
        .map(|(r, s, a, h)| (r.to_string(), s, a, h.map(String::from)))
        .collect();
    let what = format!("replica sets {want:?} and status {status:?}");
    eventually(&what, || async {
        let got = replica_sets(client, ns).await;
        let (counts, conds) = deployment_status(client, ns).await;
        let progressed = reasons.iter().any(|r| conds == conditions(r));
        (got == want && counts == status && progressed).then_some(())
    })
    .await;
}

async fn set_image(client: &Client, ns: &str, image: &str) {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}});
    ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .patch("web", &Patch::Strategic(patch), &PatchOptions::default())
        .await
        .unwrap();
}

/// Create, set image, scale, roll back: the outcomes the real pair produces.
async fn rollout_scenario(client: Client, ns: String) {
    let ns = ns.as_str();
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), ns);
    let object: Deployment = serde_json::from_value(deployment("nginx:1.25")).unwrap();
    deployments
        .create(&object, &CreateOptions::default())
        .await
        .unwrap();
    wait_for(&client, ns, vec![("1", 3, 3, None)], (3, 3, 3, 1), UPDATED).await;

    let rs = kubegen_e2e_support::list_in::<ReplicaSet>(&client, ns)
        .await
        .remove(0);
    let name = rs.metadata.name.clone().unwrap();
    let hash = &rs.metadata.labels.as_ref().unwrap()["pod-template-hash"];
    assert_eq!(name, format!("web-{hash}"));
    let annotations = rs.metadata.annotations.clone().unwrap();
    let expected: BTreeMap<String, String> = [
        ("desired-replicas", "3"),
        ("max-replicas", "4"),
        ("revision", "1"),
    ]
    .iter()
    .map(|(k, v)| (format!("deployment.kubernetes.io/{k}"), v.to_string()))
    .collect();
    assert_eq!(annotations, expected);
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Deployment", Some(true), Some(true))
    );
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), ns)
        .list(&ListOptions::default().labels(format!("pod-template-hash={hash}")))
        .await
        .unwrap();
    assert_eq!(pods.items.len(), 3);
    for pod in &pods.items {
        assert_eq!(
            pod.metadata.generate_name.as_deref(),
            Some(format!("{name}-").as_str())
        );
        assert_eq!(
            pod.metadata.owner_references.as_ref().unwrap()[0].name,
            name
        );
    }

    set_image(&client, ns, "nginx:1.26").await;
    wait_for(
        &client,
        ns,
        vec![("1", 3, 3, None), ("2", 1, 1, None)],
        (4, 1, 4, 2),
        // Right after a new ReplicaSet is created the reason depends on timing, on the real pair
        // too: whether the sync retrying its conflicting status write already sees the new Pod.
        &["ReplicaSetUpdated", "NewReplicaSetCreated"],
    )
    .await;
    let second = eventually("the second ReplicaSet", || async {
        let list = kubegen_e2e_support::list_in::<ReplicaSet>(&client, ns).await;
        list.into_iter()
            .filter_map(|rs| rs.metadata.name)
            .find(|n| *n != name)
    })
    .await;
    let scaled = |message: String| event("Normal", "ScalingReplicaSet", "Deployment/web", &message);
    let created = |rs: &str| {
        let message = format!("Created pod: {rs}-*");
        event(
            "Normal",
            "SuccessfulCreate",
            &format!("ReplicaSet/{rs}"),
            &message,
        )
    };
    let mut expected = vec![
        scaled(format!("Scaled up replica set {name} from 0 to 3")),
        created(&name),
        created(&name),
        created(&name),
        scaled(format!("Scaled up replica set {second} from 0 to 1")),
        created(&second),
    ];
    wait_for_events(&client, ns, expected.clone()).await;

    let scale = json!({"spec": {"replicas": 5}});
    deployments
        .patch("web", &Patch::Merge(scale), &PatchOptions::default())
        .await
        .unwrap();
    wait_for(
        &client,
        ns,
        vec![("1", 4, 4, None), ("2", 3, 3, None)],
        (7, 3, 7, 3),
        UPDATED,
    )
    .await;
    // Proportional scaling first grows both to the new maximum of 7 (3 → 5, 1 → 2); the rolling
    // update then moves one replica from the old to the new ReplicaSet, deleting an old Pod.
    let deleted = event(
        "Normal",
        "SuccessfulDelete",
        &format!("ReplicaSet/{name}"),
        &format!("Deleted pod: {name}-*"),
    );
    expected.extend([
        scaled(format!("Scaled up replica set {name} from 3 to 5")),
        created(&name),
        created(&name),
        scaled(format!("Scaled up replica set {second} from 1 to 2")),
        created(&second),
        scaled(format!("Scaled down replica set {name} from 5 to 4")),
        deleted,
        scaled(format!("Scaled up replica set {second} from 2 to 3")),
        created(&second),
    ]);
    wait_for_events(&client, ns, expected.clone()).await;

    set_image(&client, ns, "nginx:1.25").await;
    wait_for(
        &client,
        ns,
        vec![("2", 3, 3, None), ("3", 4, 4, Some("1"))],
        (7, 4, 7, 4),
        UPDATED,
    )
    .await;
    // Rolling back moves no replicas: no more Events.
    wait_for_events(&client, ns, expected).await;
}
