//! A DaemonSet's life as kubectl drives it: one Pod per simulated Node, placed by a
//! `matchFields` node affinity and bound by the scheduler; a new image rolled Node by Node
//! within `maxUnavailable` until `kubectl rollout status daemonset/agent` would report success;
//! Pods following a Node label and a `NoExecute` taint. Statuses, labels, revisions and Events
//! are what the real daemonset-controller produces with the same simulated Nodes.

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::{Node, Pod};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient,
};
use serde_json::json;

use crate::{Sim, events, eventually, eventually_equal, scenarios};

scenarios! {
    daemonset_rolling_update => daemon_set_rolls_out_and_updates_node_by_node,
        daemon_set_rolls_out_and_updates_node_by_node_on_cluster;
    daemonset_placement => daemon_pods_follow_node_labels_and_taints,
        daemon_pods_follow_node_labels_and_taints_on_cluster;
    daemonset_failed_pod => a_failed_daemon_pod_is_replaced,
        a_failed_daemon_pod_is_replaced_on_cluster;
    daemonset_on_delete => on_delete_replaces_only_deleted_pods,
        on_delete_replaces_only_deleted_pods_on_cluster;
    daemonset_surge => a_surge_starts_new_pods_before_deleting_old_ones,
        a_surge_starts_new_pods_before_deleting_old_ones_on_cluster;
}

fn daemon_set(sim: &Sim, image: &str, extra_selector: Option<(&str, &str)>) -> serde_json::Value {
    let mut node_selector = json!({"nodesim.kubegen.io/pool": sim.pool()});
    if let Some((k, v)) = extra_selector {
        node_selector[k] = json!(v);
    }
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "schedulerName": sim.scheduler,
                    "nodeSelector": node_selector,
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "agent", "image": image}]
                }
            }
        }
    })
}

async fn create(client: &Client, ns: &str, body: serde_json::Value) {
    let ds: DaemonSet = serde_json::from_value(body).unwrap();
    ResourceClient::<DaemonSet>::namespaced(client.clone(), ns)
        .create(&ds, &CreateOptions::default())
        .await
        .unwrap();
}

/// `(desired, current, ready, available, updated, misscheduled, unavailable, observedGeneration)`.
type Counts = (i32, i32, i32, i32, i32, i32, i32, i64);

async fn get(client: &Client, ns: &str) -> DaemonSet {
    ResourceClient::<DaemonSet>::namespaced(client.clone(), ns)
        .get("agent", &GetOptions::default())
        .await
        .unwrap()
}

fn counts(ds: &DaemonSet) -> Counts {
    let s = ds.status.clone().unwrap_or_default();
    (
        s.desired_number_scheduled,
        s.current_number_scheduled,
        s.number_ready,
        s.number_available.unwrap_or(0),
        s.updated_number_scheduled.unwrap_or(0),
        s.number_misscheduled,
        s.number_unavailable.unwrap_or(0),
        s.observed_generation.unwrap_or(0),
    )
}

/// What `kubectl rollout status daemonset/agent` decides (`DaemonSetStatusViewer`): done once
/// the generation is observed and every desired Node runs an updated, available Pod.
fn rolled_out(ds: &DaemonSet) -> bool {
    let s = ds.status.clone().unwrap_or_default();
    ds.metadata.generation <= s.observed_generation
        && s.updated_number_scheduled.unwrap_or(0) >= s.desired_number_scheduled
        && s.number_available.unwrap_or(0) >= s.desired_number_scheduled
}

async fn wait_for(client: &Client, ns: &str, want: Counts) -> DaemonSet {
    let mut last = None;
    let found = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            let ds = get(client, ns).await;
            if counts(&ds) == want {
                return ds;
            }
            last = Some(counts(&ds));
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    match found {
        Ok(ds) => ds,
        Err(_) => panic!(
            "timed out waiting for {want:?}; last {last:?}, pods {:?}, events {:#?}",
            pods(client, ns).await,
            events(client, ns).await
        ),
    }
}

/// `(node, revision hash, template generation, pinned node)` of each live Pod, by node.
async fn pods(client: &Client, ns: &str) -> Vec<(String, String, String, String)> {
    let list = kubegen_e2e_support::list_in::<Pod>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .map(|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
            let spec = p.spec.clone().unwrap_or_default();
            let pinned = spec
                .affinity
                .and_then(|a| a.node_affinity)
                .and_then(|a| a.required_during_scheduling_ignored_during_execution)
                .map(|s| serde_json::to_value(&s.node_selector_terms).unwrap())
                .and_then(|t| {
                    t[0]["matchFields"][0]["values"][0]
                        .as_str()
                        .map(String::from)
                })
                .unwrap_or_default();
            (
                spec.node_name.unwrap_or_default(),
                label("controller-revision-hash"),
                label("pod-template-generation"),
                pinned,
            )
        })
        .collect();
    out.sort();
    out
}

/// `(type, reason, message with the Pod name cut off, count)` of the DaemonSet's Events.
async fn daemon_events(client: &Client, ns: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = events(client, ns)
        .await
        .into_iter()
        .filter(|e| e.2 == "DaemonSet/agent")
        .flat_map(|(kind, reason, _, message, count)| {
            let message = message
                .split_once(": agent-")
                .map_or(message.clone(), |(head, _)| format!("{head}: agent-…"));
            (0..count).map(move |_| (kind.clone(), reason.clone(), message.clone()))
        })
        .collect();
    out.sort();
    out
}

fn event(reason: &str, message: &str) -> (String, String, String) {
    ("Normal".into(), reason.into(), message.into())
}

/// The reasons of the DaemonSet's Events in the order they were written.
async fn reasons_in_order(client: &Client, ns: &str) -> Vec<String> {
    let list = ResourceClient::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), ns)
        .list(&ListOptions::default())
        .await
        .unwrap();
    let mut rows: Vec<(u64, String)> = list
        .items
        .into_iter()
        .filter(|e| e.involved_object.kind.as_deref() == Some("DaemonSet"))
        .map(|e| {
            let rv = e.metadata.resource_version.unwrap_or_default();
            (rv.parse().unwrap_or(0), e.reason.unwrap_or_default())
        })
        .collect();
    rows.sort();
    rows.into_iter().map(|r| r.1).collect()
}

async fn revision_hashes(client: &Client, ns: &str) -> Vec<(i64, String)> {
    let list = kubegen_e2e_support::list_in::<ControllerRevision>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .map(|r| {
            let hash = r.metadata.labels.unwrap_or_default()["controller-revision-hash"].clone();
            (r.revision, hash)
        })
        .collect();
    out.sort();
    out
}

/// Two Nodes get one Pod each, pinned to them by `matchFields` and bound by the scheduler;
/// a new image replaces them one at a time (maxUnavailable 1) until the rollout is done.
async fn daemonset_rolling_update(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    create(&client, &ns, daemon_set(&sim, "agent:1", None)).await;
    let ds = wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;
    assert!(rolled_out(&ds));
    let strategy = serde_json::to_value(&ds.spec.as_ref().unwrap().update_strategy).unwrap();
    assert_eq!(
        strategy,
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    let first = revision_hashes(&client, &ns).await;
    assert_eq!(first.len(), 1);
    let hash = first[0].1.clone();
    let nodes = [format!("{}0", sim.nodes), format!("{}1", sim.nodes)];
    let on = |node: &str, hash: &str, generation: &str| {
        (
            node.to_string(),
            hash.to_string(),
            generation.to_string(),
            node.to_string(),
        )
    };
    assert_eq!(
        pods(&client, &ns).await,
        [on(&nodes[0], &hash, "1"), on(&nodes[1], &hash, "1")]
    );

    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}});
    ResourceClient::<DaemonSet>::namespaced(client.clone(), &ns)
        .patch("agent", &Patch::Merge(image), &PatchOptions::default())
        .await
        .unwrap();
    let ds = get(&client, &ns).await;
    assert_eq!(
        ds.metadata.annotations.unwrap()["deprecated.daemonset.template.generation"],
        "2"
    );
    let ds = wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 2)).await;
    assert!(rolled_out(&ds));
    let second = revision_hashes(&client, &ns).await;
    assert_eq!(second.len(), 2);
    assert_eq!((second[0].0, second[1].0), (1, 2));
    let new_hash = second[1].1.clone();
    assert_ne!(new_hash, hash);
    eventually("the old Pods to be gone", || async {
        let want = [on(&nodes[0], &new_hash, "2"), on(&nodes[1], &new_hash, "2")];
        (pods(&client, &ns).await == want).then_some(())
    })
    .await;
    let created = event("SuccessfulCreate", "Created pod: agent-…");
    let deleted = event("SuccessfulDelete", "Deleted pod: agent-…");
    let want = vec![
        created.clone(),
        created.clone(),
        created.clone(),
        created,
        deleted.clone(),
        deleted,
    ];
    let within = std::time::Duration::from_secs(10);
    eventually_equal("the DaemonSet's Events", within, &want, || {
        daemon_events(&client, &ns)
    })
    .await;
    let order = reasons_in_order(&client, &ns).await;
    assert_eq!(
        order[2], "SuccessfulDelete",
        "maxUnavailable 1: an old Pod goes before its replacement comes: {order:?}"
    );
}

async fn patch_node(client: &Client, name: &str, patch: serde_json::Value) {
    ResourceClient::<Node>::cluster(client.clone())
        .patch(name, &Patch::Merge(patch), &PatchOptions::default())
        .await
        .unwrap();
}

/// Pods follow an extra `nodeSelector` label as it is put on and taken off the Nodes, and leave
/// a Node tainted `NoExecute`; a `NoSchedule` taint keeps the running Pod (and, as in v1.36,
/// leaves the status as it was).
async fn daemonset_placement(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let nodes = [format!("{}0", sim.nodes), format!("{}1", sim.nodes)];
    let label = "daemonset.kubegen.io/agent";
    create(
        &client,
        &ns,
        daemon_set(&sim, "agent:1", Some((label, "on"))),
    )
    .await;
    wait_for(&client, &ns, (0, 0, 0, 0, 0, 0, 0, 1)).await;
    patch_node(
        &client,
        &nodes[0],
        json!({"metadata": {"labels": {label: "on"}}}),
    )
    .await;
    wait_for(&client, &ns, (1, 1, 1, 1, 1, 0, 0, 1)).await;
    patch_node(
        &client,
        &nodes[1],
        json!({"metadata": {"labels": {label: "on"}}}),
    )
    .await;
    wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;

    patch_node(
        &client,
        &nodes[0],
        json!({"metadata": {"labels": {label: null}}}),
    )
    .await;
    wait_for(&client, &ns, (1, 1, 1, 1, 1, 0, 0, 1)).await;
    eventually("the Pod on the unlabelled Node to go", || async {
        let left: Vec<String> = pods(&client, &ns).await.into_iter().map(|p| p.0).collect();
        (left == [nodes[1].clone()]).then_some(())
    })
    .await;

    let taints = |effect: &str| json!({"spec": {"taints": [{"key": "daemonset.kubegen.io/drain", "effect": effect}]}});
    patch_node(&client, &nodes[1], taints("NoSchedule")).await;
    // A NoSchedule taint keeps the Pod. v1.36 does not even look again: a Node change only
    // wakes a DaemonSet that lacks a Pod there, must leave, or counts misscheduled Pods
    // (`syncNodeUpdate`), so the status keeps counting the Node until something else changes.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(counts(&get(&client, &ns).await), (1, 1, 1, 1, 1, 0, 0, 1));
    assert_eq!(pods(&client, &ns).await.len(), 1);
    patch_node(&client, &nodes[1], taints("NoExecute")).await;
    wait_for(&client, &ns, (0, 0, 0, 0, 0, 0, 0, 1)).await;
    patch_node(&client, &nodes[1], json!({"spec": {"taints": null}})).await;
    wait_for(&client, &ns, (1, 1, 1, 1, 1, 0, 0, 1)).await;
}

/// Names of the live Pods on `node`.
async fn pods_on(client: &Client, ns: &str, node: &str) -> Vec<String> {
    let list = kubegen_e2e_support::list_in::<Pod>(client, ns).await;
    list.into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
        .map(|p| p.metadata.name.unwrap_or_default())
        .collect()
}

/// A daemon Pod that fails (its status says `Failed`, as after an eviction) is deleted with a
/// `FailedDaemonPod` Warning and replaced on the same Node.
async fn daemonset_failed_pod(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    create(&client, &ns, daemon_set(&sim, "agent:1", None)).await;
    wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;
    let node = format!("{}0", sim.nodes);
    let failed = pods_on(&client, &ns, &node).await.remove(0);
    let status = json!({"status": {"phase": "Failed", "reason": "Evicted", "message": "test"}});
    ResourceClient::<Pod>::namespaced(client.clone(), &ns)
        .patch_status(&failed, &Patch::Merge(status), &PatchOptions::default())
        .await
        .unwrap();
    let replacement = eventually("a replacement Pod on the Node", || async {
        let now = pods_on(&client, &ns, &node).await;
        (now.len() == 1 && now[0] != failed).then(|| now[0].clone())
    })
    .await;
    assert_ne!(replacement, failed);
    wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;
    let warning = (
        "Warning".to_string(),
        "FailedDaemonPod".to_string(),
        format!("Found failed daemon pod {ns}/{failed} on node {node}, will try to kill it"),
    );
    eventually("the FailedDaemonPod Warning", || async {
        daemon_events(&client, &ns)
            .await
            .contains(&warning)
            .then_some(())
    })
    .await;
}

/// OnDelete: a new template replaces no Pod by itself; a deleted Pod comes back updated.
async fn daemonset_on_delete(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let mut body = daemon_set(&sim, "agent:1", None);
    body["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    create(&client, &ns, body).await;
    wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;
    let strategy =
        serde_json::to_value(&get(&client, &ns).await.spec.unwrap().update_strategy).unwrap();
    assert_eq!(
        strategy,
        json!({"type": "OnDelete"}),
        "no rollingUpdate defaulted for OnDelete"
    );
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}});
    ResourceClient::<DaemonSet>::namespaced(client.clone(), &ns)
        .patch("agent", &Patch::Merge(image), &PatchOptions::default())
        .await
        .unwrap();
    let ds = wait_for(&client, &ns, (2, 2, 2, 2, 0, 0, 0, 2)).await;
    assert!(!rolled_out(&ds));
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        counts(&get(&client, &ns).await),
        (2, 2, 2, 2, 0, 0, 0, 2),
        "nothing replaced"
    );
    let node = format!("{}1", sim.nodes);
    let old = pods_on(&client, &ns, &node).await.remove(0);
    ResourceClient::<Pod>::namespaced(client.clone(), &ns)
        .delete(&old, &DeleteOptions::default())
        .await
        .unwrap();
    wait_for(&client, &ns, (2, 2, 2, 2, 1, 0, 0, 2)).await;
    let generations: Vec<String> = pods(&client, &ns).await.into_iter().map(|p| p.2).collect();
    assert_eq!(generations, ["1", "2"]);
}

/// maxSurge 1, maxUnavailable 0: the updated Pod starts beside the old one, which goes only
/// once the updated one is available.
async fn daemonset_surge(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let mut body = daemon_set(&sim, "agent:1", None);
    body["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
    create(&client, &ns, body).await;
    wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 1)).await;
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}}});
    ResourceClient::<DaemonSet>::namespaced(client.clone(), &ns)
        .patch("agent", &Patch::Merge(image), &PatchOptions::default())
        .await
        .unwrap();
    let ds = wait_for(&client, &ns, (2, 2, 2, 2, 2, 0, 0, 2)).await;
    assert!(rolled_out(&ds));
    eventually("the old Pods to be gone", || async {
        let generations: Vec<String> = pods(&client, &ns).await.into_iter().map(|p| p.2).collect();
        (generations == ["2", "2"]).then_some(())
    })
    .await;
    let order = eventually("all six Events", || async {
        let order = reasons_in_order(&client, &ns).await;
        (order.len() == 6).then_some(order)
    })
    .await;
    assert_eq!(
        order[2], "SuccessfulCreate",
        "maxSurge 1: the first updated Pod comes before any old one goes: {order:?}"
    );
    let deletes = order.iter().filter(|r| *r == "SuccessfulDelete").count();
    assert_eq!(deletes, 2, "{order:?}");
}
