//! The node-lifecycle controller's writes: taints added and removed by patch
//! (`controller.AddOrUpdateTaintOnNode`, `RemoveTaintOffNode`, `PatchNodeTaints` of
//! `pkg/controller/controller_utils.go`; `SwapNodeControllerTaint` of
//! `pkg/controller/util/node/controller_utils.go`), conditions written to the Node's status,
//! and Pods marked not ready (`MarkPodsNotReady`).

use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kubegen_client::{Client, GetOptions, Patch, PatchOptions, ResourceClient, UpdateOptions};
use kubegen_runtime::EventType;
use serde_json::{Value, json};

use super::taints;
use crate::Result;
use crate::error::request;
use crate::workload::events::EventSink;
use crate::workload::shared::FIELD_MANAGER;

/// Reads a Node as the taint helpers do: first from the API server's cache (`resourceVersion=0`).
async fn cached_node(client: &Client, name: &str) -> Result<Node> {
    ResourceClient::<Node>::cluster(client.clone())
        .get(name, &GetOptions::default().resource_version("0"))
        .await
        .map_err(request(format!("get node {name}")))
}

/// Replaces the Node's taints with `next` (a strategic merge patch of `spec.taints`, a list
/// without merge key, so replaced whole).
async fn patch_taints(client: &Client, name: &str, next: &[Taint]) -> Result<()> {
    let taints = match next.is_empty() {
        true => Value::Null,
        false => serde_json::to_value(next).map_err(|e| crate::Error::InvalidObject {
            object: format!("Node {name}"),
            reason: e.to_string(),
        })?,
    };
    patch_node(client, name, json!({"spec": {"taints": taints}}), "taints").await
}

/// Applies the strategic merge patch `body` to Node `name` as the controller; `what` names the
/// part patched in the error.
async fn patch_node(client: &Client, name: &str, body: Value, what: &str) -> Result<()> {
    ResourceClient::<Node>::cluster(client.clone())
        .patch(
            name,
            &Patch::Strategic(body),
            &PatchOptions::default().field_manager(FIELD_MANAGER),
        )
        .await
        .map(drop)
        .map_err(request(format!("patch {what} of node {name}")))
}

/// Adds `add` (stamped now) to Node `name`, then removes `remove` unless `node` shows none of
/// them (`SwapNodeControllerTaint`).
pub(crate) async fn swap_taints(
    client: &Client,
    node: &Node,
    add: &[Taint],
    remove: &[Taint],
    now: Timestamp,
) -> Result<()> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if !add.is_empty() {
        let current = cached_node(client, name).await?;
        if let Some(next) = taints::added(taints::of(&current), add, now) {
            patch_taints(client, name, &next).await?;
        }
    }
    remove_taints(client, node, remove).await
}

/// Removes `remove` from the Node, unless `node` (as last seen) shows none of them
/// (`RemoveTaintOffNode`).
pub(crate) async fn remove_taints(client: &Client, node: &Node, remove: &[Taint]) -> Result<()> {
    if !remove.iter().any(|t| taints::exists(taints::of(node), t)) {
        return Ok(());
    }
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let current = cached_node(client, name).await?;
    match taints::removed(taints::of(&current), remove) {
        Some(next) => patch_taints(client, name, &next).await,
        None => Ok(()),
    }
}

/// Adds or changes the Node's `labels` (`AddOrUpdateLabelsOnNode`).
pub(crate) async fn add_labels(
    client: &Client,
    name: &str,
    labels: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    patch_node(
        client,
        name,
        json!({"metadata": {"labels": labels}}),
        "labels",
    )
    .await
}

/// Writes `conditions` to the Node's status (`UpdateStatus` of the whole Node); the Node as
/// stored.
pub(crate) async fn update_conditions(
    client: &Client,
    node: &Node,
    conditions: Vec<NodeCondition>,
) -> Result<Node> {
    let mut next = node.clone();
    next.status.get_or_insert_default().conditions = Some(conditions);
    let name = node.metadata.name.as_deref().unwrap_or_default();
    ResourceClient::<Node>::cluster(client.clone())
        .update_status(
            &next,
            &UpdateOptions::default().field_manager(FIELD_MANAGER),
        )
        .await
        .map_err(request(format!("update status of node {name}")))
}

/// Sets the Ready condition of each of `pods` bound to `node_name` to False (its transition
/// time now, if it changes), each with a `NodeNotReady` Warning (`MarkPodsNotReady`). Every Pod
/// is tried; the first failure is returned.
pub(crate) async fn mark_pods_not_ready(
    client: &Client,
    events: &EventSink,
    pods: &[std::sync::Arc<Pod>],
    node_name: &str,
    now: Timestamp,
) -> Result<()> {
    let mut first_error = None;
    for pod in pods {
        if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) != Some(node_name) {
            continue;
        }
        let Some(next) = not_ready(pod, now) else {
            continue;
        };
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let api = ResourceClient::<Pod>::namespaced(client.clone(), namespace);
        match api
            .update_status(
                &next,
                &UpdateOptions::default().field_manager(FIELD_MANAGER),
            )
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                tracing::info!(pod = %format!("{namespace}/{name}"), error = %e, "failed to mark pod not ready");
                first_error.get_or_insert(request(format!(
                    "update status of pod {namespace}/{name}"
                ))(e));
            }
        }
        events.record(
            pod.as_ref(),
            EventType::Warning,
            "NodeNotReady",
            "Node is not ready".into(),
        );
    }
    first_error.map_or(Ok(()), Err)
}

/// The Pod with its Ready condition False, or `None` when it has no Ready condition or it is
/// False already (`UpdatePodCondition` reporting no change).
pub(crate) fn not_ready(pod: &Pod, now: Timestamp) -> Option<Pod> {
    let mut next = pod.clone();
    let conditions = next.status.as_mut()?.conditions.as_mut()?;
    let ready = conditions.iter_mut().find(|c| c.type_ == "Ready")?;
    if ready.status == "False" {
        return None;
    }
    ready.status = "False".into();
    ready.last_transition_time = Some(Time(now));
    Some(next)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};

    use super::*;

    fn pod(conditions: &[(&str, &str)]) -> Pod {
        Pod {
            status: Some(PodStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(t, s)| PodCondition {
                            type_: (*t).into(),
                            status: (*s).into(),
                            ..PodCondition::default()
                        })
                        .collect(),
                ),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    #[test]
    fn a_ready_pod_turns_not_ready_with_a_new_transition_time() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let next = not_ready(&pod(&[("PodScheduled", "True"), ("Ready", "True")]), now).unwrap();
        let conditions = next.status.unwrap().conditions.unwrap();
        assert_eq!(conditions[0].status, "True", "other conditions are kept");
        assert_eq!(conditions[1].status, "False");
        assert_eq!(conditions[1].last_transition_time, Some(Time(now)));
    }

    #[test]
    fn pods_already_not_ready_or_without_ready_are_left_alone() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        assert!(not_ready(&pod(&[("Ready", "False")]), now).is_none());
        assert!(not_ready(&pod(&[("PodScheduled", "True")]), now).is_none());
        assert!(not_ready(&Pod::default(), now).is_none());
    }
}
