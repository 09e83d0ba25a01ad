//! The deployment and replicaset controllers against the in-process test server, and the same
//! scenario against a real v1.36 cluster with its kube-controller-manager (`_on_cluster`), whose
//! captured sequence the expectations come from: 3 replicas at 25%/25% stall with the new
//! ReplicaSet at 1 and the old at 3 (surge 1, unavailable 0); scaling to 5 ends at old 4 / new
//! 3; rolling back makes the old ReplicaSet revision 3 with `revision-history: 1`.

#![allow(clippy::unwrap_used)]

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, ListOptions, Patch, PatchOptions, ResourceClient,
};
use kubegen_controller_manager::apps::{AppsOptions, run};
use serde_json::json;

/// Polls `check` until it returns `Some`, for at most 20 s.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..200 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
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
    let list = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListOptions::default())
        .await
        .unwrap();
    let mut out: Vec<_> = list
        .items
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
) {
    let want: Vec<_> = rss
        .into_iter()
        .map(|(r, s, a, h)| (r.to_string(), s, a, h.map(String::from)))
        .collect();
    let what = format!("replica sets {want:?} and status {status:?}");
    eventually(&what, || async {
        let got = replica_sets(client, ns).await;
        let (counts, conds) = deployment_status(client, ns).await;
        (got == want && counts == status && conds == conditions("ReplicaSetUpdated")).then_some(())
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
async fn rollout_scenario(client: Client, ns: &str) {
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), ns);
    let object: Deployment = serde_json::from_value(deployment("nginx:1.25")).unwrap();
    deployments
        .create(&object, &CreateOptions::default())
        .await
        .unwrap();
    wait_for(&client, ns, vec![("1", 3, 3, None)], (3, 3, 3, 1)).await;

    let rs = ResourceClient::<ReplicaSet>::namespaced(client.clone(), ns)
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
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
    )
    .await;

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
    )
    .await;

    set_image(&client, ns, "nginx:1.25").await;
    wait_for(
        &client,
        ns,
        vec![("2", 3, 3, None), ("3", 4, 4, Some("1"))],
        (7, 4, 7, 4),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_rollout_scale_and_rollback_match_the_real_pair() {
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controllers = tokio::spawn(run(client.clone(), AppsOptions::default(), async {
        let _ = stopped.await;
    }));
    rollout_scenario(client, "default").await;
    stop.send(()).unwrap();
    controllers.await.unwrap().unwrap();
}

/// The same scenario on the cluster `KUBEGEN_E2E_KUBECONFIG` names, driven by its own
/// kube-controller-manager, in a namespace of its own that it deletes afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
async fn deployment_rollout_scale_and_rollback_on_cluster() {
    let Some(path) = std::env::var_os("KUBEGEN_E2E_KUBECONFIG") else {
        eprintln!("skipped: KUBEGEN_E2E_KUBECONFIG is not set");
        return;
    };
    let options = kubegen_client::LoadOptions::default().kubeconfig_path(path);
    let client = Client::new(Config::load(&options).await.unwrap()).unwrap();
    let ns = format!("apps-e2e-{}", std::process::id());
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let mut object = Namespace::default();
    object.metadata.name = Some(ns.clone());
    namespaces
        .create(&object, &CreateOptions::default())
        .await
        .unwrap();
    rollout_scenario(client, &ns).await;
    namespaces
        .delete(&ns, &DeleteOptions::default())
        .await
        .unwrap();
}
