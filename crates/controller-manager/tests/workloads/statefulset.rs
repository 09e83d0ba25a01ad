//! A StatefulSet's life as kubectl drives it: three Pods created one after another, each with its
//! claim; a new image rolled out from the highest ordinal down; a Parallel set whose update stops
//! at its partition and which then scales down. Statuses, revisions and Events are what the real
//! statefulset-controller produces with the same simulated Nodes.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kubegen_client::{Client, CreateOptions, GetOptions, Patch, PatchOptions, ResourceClient};
use serde_json::json;

use crate::{Sim, events, eventually, eventually_equal, scenarios};

scenarios! {
    ordered_rollout => ordered_rollout_and_update_match_the_real_controller,
        ordered_rollout_and_update_on_cluster;
    parallel_partition => parallel_set_stops_at_its_partition_and_scales_down,
        parallel_set_stops_at_its_partition_and_scales_down_on_cluster;
}

fn stateful_set(sim: &Sim, policy: &str, image: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "schedulerName": sim.scheduler,
                    "nodeSelector": {"nodesim.kubegen.io/pool": sim.pool()},
                    "containers": [{"name": "db", "image": image}]
                }
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }]
        }
    })
}

async fn create(client: &Client, ns: &str, body: serde_json::Value) {
    let set: StatefulSet = serde_json::from_value(body).unwrap();
    ResourceClient::<StatefulSet>::namespaced(client.clone(), ns)
        .create(&set, &CreateOptions::default())
        .await
        .unwrap();
}

async fn patch(client: &Client, ns: &str, body: serde_json::Value) {
    ResourceClient::<StatefulSet>::namespaced(client.clone(), ns)
        .patch("db", &Patch::Merge(body), &PatchOptions::default())
        .await
        .unwrap();
}

/// `(replicas, ready, current, updated, available, observedGeneration, current == update)`.
type Counts = (i32, i32, i32, i32, i32, i64, bool);

async fn status(client: &Client, ns: &str) -> (Counts, String, String) {
    let set = ResourceClient::<StatefulSet>::namespaced(client.clone(), ns)
        .get("db", &GetOptions::default())
        .await
        .unwrap();
    let s = set.status.unwrap_or_default();
    let (current, update) = (
        s.current_revision.clone().unwrap_or_default(),
        s.update_revision.clone().unwrap_or_default(),
    );
    let counts = (
        s.replicas,
        s.ready_replicas.unwrap_or(0),
        s.current_replicas.unwrap_or(0),
        s.updated_replicas.unwrap_or(0),
        s.available_replicas.unwrap_or(0),
        s.observed_generation.unwrap_or(0),
        current == update,
    );
    (counts, current, update)
}

async fn wait_for_status(client: &Client, ns: &str, want: Counts) -> (String, String) {
    let mut last = None;
    let found = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            let (counts, current, update) = status(client, ns).await;
            if counts == want {
                return (current, update);
            }
            last = Some(counts);
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    let Ok(found) = found else {
        let seen = events(client, ns).await;
        let pods = pods(client, ns).await;
        panic!(
            "timed out waiting for status {want:?}; last {last:?}, pods {pods:?}, events {seen:#?}"
        );
    };
    found
}

/// `(name, pod-name label, pod-index label, revision label)` of every Pod, by name.
async fn pods(client: &Client, ns: &str) -> Vec<(String, String, String, String)> {
    let list = kubegen_e2e_support::list_in::<Pod>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let labels = p.metadata.labels.unwrap_or_default();
            let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
            (
                p.metadata.name.unwrap_or_default(),
                label("statefulset.kubernetes.io/pod-name"),
                label("apps.kubernetes.io/pod-index"),
                label("controller-revision-hash"),
            )
        })
        .collect();
    out.sort();
    out
}

async fn claims(client: &Client, ns: &str) -> Vec<(String, String)> {
    let list = kubegen_e2e_support::list_in::<PersistentVolumeClaim>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .map(|c| {
            let phase = c.status.and_then(|s| s.phase).unwrap_or_default();
            (c.metadata.name.unwrap_or_default(), phase)
        })
        .collect();
    out.sort();
    out
}

async fn revision_count(client: &Client, ns: &str) -> usize {
    kubegen_e2e_support::list_in::<ControllerRevision>(client, ns)
        .await
        .len()
}

fn expected_pods(names: &[(&str, &str)]) -> Vec<(String, String, String, String)> {
    names
        .iter()
        .map(|(pod, revision)| {
            let index = pod.rsplit('-').next().unwrap_or_default();
            (
                pod.to_string(),
                pod.to_string(),
                index.to_string(),
                revision.to_string(),
            )
        })
        .collect()
}

type EventRow = (String, String, String, String, i32);

fn normal(reason: &str, message: &str, count: i32) -> EventRow {
    (
        "Normal".into(),
        reason.into(),
        "StatefulSet/db".into(),
        message.into(),
        count,
    )
}

async fn wait_for_events(client: &Client, ns: &str, mut want: Vec<EventRow>) {
    want.sort();
    let within = std::time::Duration::from_secs(30);
    eventually_equal("the StatefulSet's Events", within, &want, || async {
        repeated_deletes_as_wanted(events(client, ns).await, &want)
    })
    .await;
}

/// The StatefulSet controller keeps no expectations of its deletes (v1.36's does not either): a
/// sync that starts before the Pod informer has seen a Pod's deletion deletes it again, one
/// more `SuccessfulDelete`. How often that happens is timing, so a delete row seen more often
/// than wanted counts as wanted; seen less often, it still differs.
fn repeated_deletes_as_wanted(mut seen: Vec<EventRow>, want: &[EventRow]) -> Vec<EventRow> {
    for row in &mut seen {
        let wanted = want
            .iter()
            .find(|w| w.1 == "SuccessfulDelete" && (&w.1, &w.2, &w.3) == (&row.1, &row.2, &row.3));
        if let Some(wanted) = wanted {
            row.4 = row.4.min(wanted.4);
        }
    }
    seen
}

fn created(ordinals: &[u32], pod_count: i32) -> Vec<EventRow> {
    ordinals
        .iter()
        .flat_map(|i| {
            [
                normal(
                    "SuccessfulCreate",
                    &format!("Create Claim data-db-{i} Pod db-{i} in StatefulSet db success"),
                    1,
                ),
                normal(
                    "SuccessfulCreate",
                    &format!("Create Pod db-{i} in StatefulSet db successful"),
                    pod_count,
                ),
            ]
        })
        .collect()
}

/// OrderedReady: 3 Pods become ready one by one with their claims (left Pending: no
/// provisioner), then a new image rolls from db-2 down to db-0.
async fn ordered_rollout(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    create(&client, &ns, stateful_set(&sim, "OrderedReady", "nginx:1")).await;
    let (first, _) = wait_for_status(&client, &ns, (3, 3, 3, 3, 3, 1, true)).await;
    assert!(first.starts_with("db-"), "{first}");
    assert_eq!(
        pods(&client, &ns).await,
        expected_pods(&[("db-0", &first), ("db-1", &first), ("db-2", &first)])
    );
    let pending = |n: &str| (n.to_string(), "Pending".to_string());
    assert_eq!(
        claims(&client, &ns).await,
        vec![
            pending("data-db-0"),
            pending("data-db-1"),
            pending("data-db-2")
        ]
    );
    wait_for_events(&client, &ns, created(&[0, 1, 2], 1)).await;

    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "db", "image": "nginx:2"}]}}}});
    patch(&client, &ns, image).await;
    let (second, _) = wait_for_status(&client, &ns, (3, 3, 3, 3, 3, 2, true)).await;
    assert_ne!(second, first);
    assert_eq!(
        pods(&client, &ns).await,
        expected_pods(&[("db-0", &second), ("db-1", &second), ("db-2", &second)])
    );
    assert_eq!(revision_count(&client, &ns).await, 2);
    let mut want = created(&[0, 1, 2], 2);
    for i in 0..3 {
        want.push(normal(
            "SuccessfulDelete",
            &format!("Delete Pod db-{i} in StatefulSet db successful"),
            1,
        ));
    }
    wait_for_events(&client, &ns, want).await;
}

/// Parallel with partition 2: all 3 Pods at once, an update reaches db-2 only; scaling to 1
/// deletes db-2 and db-1 together.
async fn parallel_partition(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let mut body = stateful_set(&sim, "Parallel", "nginx:1");
    body["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}});
    create(&client, &ns, body).await;
    let (first, _) = wait_for_status(&client, &ns, (3, 3, 3, 3, 3, 1, true)).await;
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "db", "image": "nginx:2"}]}}}});
    patch(&client, &ns, image).await;
    let (current, update) = wait_for_status(&client, &ns, (3, 3, 2, 1, 3, 2, false)).await;
    assert_eq!(current, first);
    assert_eq!(
        pods(&client, &ns).await,
        expected_pods(&[("db-0", &first), ("db-1", &first), ("db-2", &update)])
    );
    patch(&client, &ns, json!({"spec": {"replicas": 1}})).await;
    wait_for_status(&client, &ns, (1, 1, 1, 0, 1, 3, false)).await;
    eventually("db-1 and db-2 to be gone", || async {
        (pods(&client, &ns).await == expected_pods(&[("db-0", &first)])).then_some(())
    })
    .await;
    let mut want = created(&[0, 1], 1);
    want.push(normal(
        "SuccessfulCreate",
        "Create Claim data-db-2 Pod db-2 in StatefulSet db success",
        1,
    ));
    want.push(normal(
        "SuccessfulCreate",
        "Create Pod db-2 in StatefulSet db successful",
        2,
    ));
    for i in [1, 2] {
        let count = if i == 2 { 2 } else { 1 };
        want.push(normal(
            "SuccessfulDelete",
            &format!("Delete Pod db-{i} in StatefulSet db successful"),
            count,
        ));
    }
    wait_for_events(&client, &ns, want).await;
}
