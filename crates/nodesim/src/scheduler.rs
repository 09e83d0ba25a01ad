//! The scheduler: binds each unscheduled Pod of `default-scheduler` to a Node that fits
//! ([`crate::fit`]), as kube-scheduler's scheduling cycle does (`pkg/scheduler/schedule_one.go`:
//! `schedulingCycle`, `bind`, `handleSchedulingFailure`), one Pod at a time.
//!
//! - Bound: `POST pods/{name}/binding`, then a `Normal Scheduled` Event
//!   `Successfully assigned ns/pod to node`. The Pod counts on its Node at once
//!   ([`NodeUsage`], the scheduler cache's `AssumePod`), so the next Pod sees its requests
//!   before the informer shows it bound.
//! - Fits nowhere: `PodScheduled=False`, reason `Unschedulable`, the fit error as message
//!   (a strategic merge patch of the condition, written only when it changes, as
//!   `updatePod` does), and a `Warning FailedScheduling` Event with the same message. The Pod
//!   is tried again when a Node appears or changes, when a Pod leaves, and every 5 min (the
//!   scheduler's `podMaxInUnschedulablePodsDuration`).
//! - Only the Pods that did not fit are tried again on those events (the scheduling queue's
//!   `unschedulablePods` and `MoveAllToActiveOrBackoffQueue`), not every Pod in the cache: with
//!   1,000 Nodes registering and 30,000 Pods, listing the Pods for each Node was a tenth of the
//!   process's time. A Pod whose attempt overlapped such an event is tried again at once, as
//!   the queue's `moveRequestCycle` sends it to the backoff queue rather than the unschedulable
//!   one.
//!
//! # Differences from kube-scheduler
//! Events are written as core/v1 Events (`source.component: default-scheduler`) through
//! kubegen-runtime's recorder; kube-scheduler writes `events.k8s.io/v1` Events (action
//! `Binding`/`Scheduling`), which the API server also serves as core/v1. No preemption,
//! no scheduling queue ordering by priority, no `nominatedNodeName`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::{sync::Arc, time::Duration};

use fnv::FnvHashMap;
use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister, SharedIndexInformer};
use kubegen_client::{Client, CreateOptions, Patch, PatchOptions, ResourceClient};
use kubegen_runtime::{EventType, Recorder};
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;
use serde_json::json;

use crate::error::{Error, Result, request};
use crate::fit::{Candidate, FitError, Requests, choose_among};
use crate::node::time;
use crate::usage::NodeUsage;
use crate::worker::{Next, key_of, queue};

/// The scheduler the API server names in Pods that name none.
const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// How long an unschedulable Pod waits before it is tried again without any event.
const RETRY_UNSCHEDULABLE: Duration = Duration::from_secs(300);

/// How long a Pod that did not fit waits when a Node or Pod event came during its attempt
/// (kube-scheduler's `podInitialBackoffDuration`).
const RETRY_AFTER_MOVE: Duration = Duration::from_secs(1);

/// `node` with what its Pods ask of it and what it has (read when it last changed).
fn candidate<'a>(
    node: &'a Node,
    usage: &NodeUsage,
    allocatable: &FnvHashMap<String, Requests>,
) -> Candidate<'a> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let free = allocatable
        .get(name)
        .copied()
        .unwrap_or_else(|| Requests::allocatable(node));
    Candidate {
        node,
        used: usage.used(name),
        free,
    }
}

/// Below this many Nodes, every Node is looked at for every Pod (`minFeasibleNodesToFind`).
const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;

/// The least share of the Nodes, in percent, a search looks for
/// (`minFeasibleNodesPercentageToFind`).
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;

/// How many fitting Nodes a Pod's search stops at, out of `all`: kube-scheduler's
/// `numFeasibleNodesToFind` with the default `percentageOfNodesToScore` (adaptive: 50 % less
/// one point per 125 Nodes, at least 5 %, and never fewer than 100 Nodes). With 1,000 Nodes a
/// Pod is placed on the best of the first 420 that fit rather than of all 1,000.
fn feasible_to_find(all: usize) -> usize {
    if all < MIN_FEASIBLE_NODES_TO_FIND {
        return all;
    }
    let percentage = 50_usize
        .saturating_sub(all / 125)
        .max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    (all * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// The scheduler over the shared Pod and Node informers.
#[derive(Clone)]
pub(crate) struct Scheduler {
    inner: Arc<Inner>,
}

struct Inner {
    /// The `spec.schedulerName` this scheduler serves.
    name: String,
    client: Client,
    pods: Lister<Pod>,
    nodes: Lister<Node>,
    queue: RateLimitingQueue<String>,
    events: Recorder,
    /// What the Pods on each Node ask of it, bound ones and those just bound here.
    usage: Mutex<NodeUsage>,
    /// Each Node's allocatable resources, read when the Node is added or changes (the scheduler
    /// cache's `NodeInfo`), not for every Pod: with 1,000 Nodes that reading was most of a
    /// scheduling decision. FNV, as [`NodeUsage`]'s maps, for the same lookups.
    allocatable: Mutex<FnvHashMap<String, Requests>>,
    /// Where the next Pod's search for Nodes starts, in the listed Nodes.
    next_start: Mutex<usize>,
    /// The Pods that fit no Node at their last attempt, tried again on the next Node or Pod
    /// event (`unschedulablePods`).
    unschedulable: Mutex<HashSet<String>>,
    /// How many times those were queued again (`moveRequestCycle`): an attempt that fails after
    /// such a move may have missed the event that moved them, so it does not wait for the next.
    moves: AtomicU64,
}

impl Scheduler {
    /// Registers the scheduler's handlers on the shared informers.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when an informer refuses a handler.
    pub(crate) fn new(
        client: Client,
        name: &str,
        (pods, nodes): (&SharedIndexInformer<Pod>, &SharedIndexInformer<Node>),
    ) -> Result<Scheduler> {
        let inner = Arc::new(Inner {
            name: name.to_string(),
            events: Recorder::new(client.clone(), name, ""),
            client,
            pods: pods.lister(),
            nodes: nodes.lister(),
            queue: queue("scheduler"),
            usage: Mutex::new(NodeUsage::default()),
            allocatable: Mutex::new(FnvHashMap::default()),
            next_start: Mutex::new(0),
            unschedulable: Mutex::new(HashSet::new()),
            moves: AtomicU64::new(0),
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        let pod_handler = HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| a.pod_changed(None, pod))
            .on_update(move |old: &Arc<Pod>, pod: &Arc<Pod>| u.pod_changed(Some(old), pod))
            .on_delete(move |gone: &DeletedObject<Pod>| {
                let key = key_of(gone.object());
                d.unschedulable.lock().remove(&key);
                d.usage.lock().remove(&key);
                d.retry_pending();
            });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        let node_handler = HandlerFns::new()
            .on_add(move |node: &Arc<Node>, _| {
                a.remember(node);
                a.retry_pending();
            })
            .on_update(move |old: &Arc<Node>, node: &Arc<Node>| {
                u.remember(node);
                if node_changed_for_scheduling(old, node) {
                    u.retry_pending();
                }
            })
            .on_delete(move |gone: &DeletedObject<Node>| {
                let name = gone.object().metadata.name.as_deref().unwrap_or_default();
                d.allocatable.lock().remove(name);
            });
        pods.add_event_handler(pod_handler)
            .map_err(Error::CacheSyncFailed)?;
        nodes
            .add_event_handler(node_handler)
            .map_err(Error::CacheSyncFailed)?;
        Ok(Scheduler { inner })
    }

    /// The queue of Pods to schedule.
    pub(crate) fn queue(&self) -> RateLimitingQueue<String> {
        self.inner.queue.clone()
    }

    /// Schedules the Pod `key`, if it still waits for a Node.
    ///
    /// # Errors
    /// A failed binding or status write (retried with backoff).
    pub(crate) async fn sync(&self, key: &str) -> Result<Next> {
        let moves = self.inner.moves.load(Ordering::Acquire);
        let Some(pod) = self
            .inner
            .pods
            .get_by_key(key)
            .filter(|pod| wants_scheduling(pod, &self.inner.name))
        else {
            self.inner.unschedulable.lock().remove(key);
            return Ok(Next::Done);
        };
        let nodes = self.inner.nodes.list(&Selector::default());
        let chosen = {
            let usage = self.inner.usage.lock();
            let allocatable = self.inner.allocatable.lock();
            // The search starts where the last one stopped, so that the Nodes are looked at in
            // turn (`nextStartNodeIndex`).
            let mut next_start = self.inner.next_start.lock();
            let start = *next_start % nodes.len().max(1);
            let (before_start, from_start) = nodes.split_at(start);
            let order = from_start
                .iter()
                .chain(before_start)
                .map(|n| candidate(n, &usage, &allocatable));
            let (chosen, processed) = choose_among(&pod, order, feasible_to_find(nodes.len()));
            *next_start = (start + processed) % nodes.len().max(1);
            chosen
        };
        match chosen {
            Ok(node) => {
                self.inner.unschedulable.lock().remove(key);
                self.inner.bind(&pod, key, &node).await.map(|()| Next::Done)
            }
            Err(error) => {
                self.inner.unschedulable.lock().insert(key.to_string());
                self.inner.unschedulable(&pod, &error).await?;
                if self.inner.moves.load(Ordering::Acquire) != moves {
                    return Ok(Next::After(RETRY_AFTER_MOVE));
                }
                Ok(Next::After(RETRY_UNSCHEDULABLE))
            }
        }
    }
}

impl Inner {
    /// Queues a Pod that waits for a Node, unless only its status changed (the scheduler's own
    /// `PodScheduled` write must not schedule it again: the queue's `isPodUpdated`).
    fn pod_changed(&self, old: Option<&Arc<Pod>>, pod: &Arc<Pod>) {
        let key = key_of(pod);
        self.account(&key, pod);
        let relevant = old.is_none_or(|old| {
            !wants_scheduling(old, &self.name)
                || old.spec != pod.spec
                || old.metadata.labels != pod.metadata.labels
        });
        if wants_scheduling(pod, &self.name) && relevant {
            self.queue.add(key);
        }
    }

    /// Keeps `node`'s allocatable resources for the next decisions.
    fn remember(&self, node: &Node) {
        let name = node.metadata.name.clone().unwrap_or_default();
        self.allocatable
            .lock()
            .insert(name, Requests::allocatable(node));
    }

    /// Queues again the Pods that fit nowhere at their last attempt (a Node appeared or
    /// changed, a Pod left); those that still fit nowhere come back to the set.
    fn retry_pending(&self) {
        self.moves.fetch_add(1, Ordering::AcqRel);
        let waiting = std::mem::take(&mut *self.unschedulable.lock());
        for key in waiting {
            self.queue.add(key);
        }
    }

    /// Counts `pod` on its Node while it is bound and not finished (finished Pods ask nothing).
    fn account(&self, key: &str, pod: &Pod) {
        let Some(spec) = pod.spec.as_ref() else {
            return;
        };
        let node = spec.node_name.as_deref().unwrap_or_default();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        let mut usage = self.usage.lock();
        if node.is_empty() || matches!(phase, Some("Succeeded" | "Failed")) {
            usage.remove(key);
        } else {
            usage.place(key, node, Requests::of_pod(spec));
        }
    }

    async fn bind(&self, pod: &Pod, key: &str, node: &str) -> Result<()> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let binding = json!({
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": pod.metadata.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        });
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let answer: std::result::Result<serde_json::Value, _> = pods
            .create_subresource(name, "binding", &binding, &CreateOptions::default())
            .await;
        match answer {
            Ok(_) => {}
            // Bound meanwhile (by another scheduler, or a stale cache): nothing left to do.
            Err(e) if e.is_conflict() || e.is_not_found() => return Ok(()),
            Err(e) => return Err(request(format!("bind pod {key} to {node}"))(e)),
        }
        let requests = Requests::of_pod(pod.spec.as_ref().unwrap_or(&PodSpec::default()));
        // Assumed on its Node until the informer shows it bound (which places it again).
        self.usage.lock().place(key, node, requests);
        let message = format!("Successfully assigned {namespace}/{name} to {node}");
        self.record(pod, EventType::Normal, "Scheduled", message);
        Ok(())
    }

    async fn unschedulable(&self, pod: &Pod, error: &FitError) -> Result<()> {
        let message = error.message();
        self.record(pod, EventType::Warning, "FailedScheduling", message.clone());
        let current = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"));
        let unchanged = current.is_some_and(|c| {
            c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
                && c.message.as_deref() == Some(message.as_str())
        });
        if unchanged {
            return Ok(());
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let condition = json!({
            "type": "PodScheduled", "status": "False", "lastProbeTime": null,
            "lastTransitionTime": time(&Timestamp::now()), "reason": "Unschedulable", "message": message,
        });
        let patch = Patch::Strategic(json!({"status": {"conditions": [condition]}}));
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        match pods
            .patch_status(name, &patch, &PatchOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(request(format!(
                "mark pod {namespace}/{name} unschedulable"
            ))(e)),
        }
    }

    /// Records an Event about `pod` aside, so the scheduling cycle does not wait for it.
    fn record(&self, pod: &Pod, kind: EventType, reason: &'static str, message: String) {
        let (events, pod) = (self.events.clone(), pod.clone());
        tokio::spawn(async move {
            let now = Time(Timestamp::now());
            if let Err(e) = events.record(&pod, kind, reason, &message, &now).await {
                tracing::debug!(reason, error = %e, "could not record an Event");
            }
        });
    }
}

/// Whether a Node update may let a waiting Pod fit: its labels, spec (taints,
/// unschedulable) or allocatable changed, not a mere heartbeat.
fn node_changed_for_scheduling(old: &Node, node: &Node) -> bool {
    let allocatable = |n: &Node| n.status.as_ref().and_then(|s| s.allocatable.clone());
    old.metadata.labels != node.metadata.labels
        || old.spec != node.spec
        || allocatable(old) != allocatable(node)
}

/// Whether `pod` waits for the scheduler `name`: no Node, `name` in `spec.schedulerName` (none
/// named counts as `default-scheduler`), not being deleted, not finished, no scheduling gates.
pub(crate) fn wants_scheduling(pod: &Pod, name: &str) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    let unbound = spec.node_name.as_deref().unwrap_or_default().is_empty();
    let ours = spec.scheduler_name.as_deref().unwrap_or(DEFAULT_SCHEDULER) == name;
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let finished = matches!(phase, Some("Succeeded" | "Failed"));
    let gated = spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty());
    unbound && ours && !finished && !gated && pod.metadata.deletion_timestamp.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: serde_json::Value) -> Pod {
        let mut pod = json!({"metadata": {"name": "p", "namespace": "ns"},
                             "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        for (k, v) in spec.as_object().cloned().unwrap_or_default() {
            pod["spec"][k] = v;
        }
        serde_json::from_value(pod).unwrap()
    }

    #[test]
    fn heartbeats_do_not_retry_waiting_pods_but_new_taints_do() {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": "n"}, "spec": {},
            "status": {"allocatable": {"cpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]}})).unwrap();
        let mut beat = node.clone();
        beat.status.as_mut().unwrap().conditions = None;
        assert!(!node_changed_for_scheduling(&node, &beat));
        let mut tainted = node.clone();
        tainted.spec.as_mut().unwrap().unschedulable = Some(true);
        assert!(node_changed_for_scheduling(&node, &tainted));
        let mut grown = node.clone();
        grown.status.as_mut().unwrap().allocatable = None;
        assert!(node_changed_for_scheduling(&node, &grown));
    }

    #[test]
    fn only_unbound_pods_of_the_default_scheduler_are_scheduled() {
        assert!(wants_scheduling(&pod(json!({})), "default-scheduler"));
        assert!(!wants_scheduling(&pod(json!({})), "other"));
        assert!(wants_scheduling(
            &pod(json!({"schedulerName": "other"})),
            "other"
        ));
        let named = pod(json!({"schedulerName": "default-scheduler"}));
        assert!(wants_scheduling(&named, "default-scheduler"));
        assert!(!wants_scheduling(
            &pod(json!({"schedulerName": "other"})),
            "default-scheduler"
        ));
        assert!(!wants_scheduling(
            &pod(json!({"nodeName": "n"})),
            "default-scheduler"
        ));
        let gated = pod(json!({"schedulingGates": [{"name": "g"}]}));
        assert!(!wants_scheduling(&gated, "default-scheduler"));
        let mut deleting = pod(json!({}));
        deleting.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        assert!(!wants_scheduling(&deleting, "default-scheduler"));
        let mut done = pod(json!({}));
        done.status = Some(serde_json::from_value(json!({"phase": "Succeeded"})).unwrap());
        assert!(!wants_scheduling(&done, "default-scheduler"));
    }

    #[test]
    fn a_search_stops_at_the_share_of_nodes_kube_scheduler_scores() {
        // Every Node below 100; then 50 % less one point per 125 Nodes, at least 5 %, at
        // least 100 Nodes (numFeasibleNodesToFind with percentageOfNodesToScore unset).
        assert_eq!(feasible_to_find(0), 0);
        assert_eq!(feasible_to_find(99), 99);
        assert_eq!(feasible_to_find(100), 100);
        assert_eq!(feasible_to_find(300), 144);
        assert_eq!(feasible_to_find(1_000), 420);
        assert_eq!(feasible_to_find(5_000), 500);
        assert_eq!(feasible_to_find(10_000), 500);
    }
}
