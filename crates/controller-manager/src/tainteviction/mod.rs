//! `taint-eviction-controller`: deletes the Pods bound to a Node with `NoExecute` taints they do
//! not tolerate, at once, or once the shortest `tolerationSeconds` of the tolerations that cover
//! them has passed. Mirrors `pkg/controller/tainteviction/taint_eviction.go` and its
//! `timed_workers.go`.
//!
//! # Why
//! With the node-lifecycle controller tainting silent Nodes `unreachable:NoExecute`, this is what
//! moves their Pods elsewhere: the Pod is deleted, and its Deployment's or Job's controller makes
//! a new one that the scheduler places on a live Node.
//!
//! # One eviction
//! A Node event records the Node's `NoExecute` taints and looks at each of its Pods; a Pod event
//! (bound, its tolerations changed, deleted) looks at that Pod. Each look plans the Pod's
//! deletion (`tolerations.rs`): now, after the shortest toleration (counted from the first plan,
//! as the real controller keeps a planned deletion's start), or never, which cancels a planned
//! one with a `TaintManagerEviction` "Cancelling deletion" Event. A planned deletion records
//! `TaintManagerEviction` "Marking for deletion", writes the `DisruptionTarget` condition
//! (`DeletionByTaintManager`) by strategic merge patch of the Pod's status, then deletes the Pod;
//! up to 5 tries.
//!
//! # Differences from v1.36
//! Node and Pod events are worked by separate workers, not by per-node shards in which Node
//! events go first.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `tolerations`

mod tolerations;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use k8s_openapi::jiff::Timestamp;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{Client, DeleteOptions, GetOptions, Patch, PatchOptions, ResourceClient};
use kubegen_runtime::EventType;
use parking_lot::Mutex;
use serde_json::json;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::error::request;
use crate::nodelifecycle::taints::{NO_EXECUTE, of};
use crate::worker::{self, Next, Retries};
use crate::workload::events::EventSink;
use crate::workload::meta::split_key;
use crate::workload::pod_index;
use crate::workload::shared::FIELD_MANAGER;

use tolerations::Stay;

/// Tries of one deletion, and the pause between them.
const DELETE_TRIES: usize = 5;
const DELETE_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// The `DisruptionTarget` condition's reason and message.
const REASON: &str = "DeletionByTaintManager";
const MESSAGE: &str = "Taint manager: deleting due to NoExecute taint";

/// Registers the Node and Pod handlers; the runner works both queues until the manager stops,
/// then cancels the planned deletions.
pub(crate) fn start(context: &Context) -> Runner {
    let nodes = context.factory.informer::<Node>();
    let pods = context.factory.informer::<Pod>();
    if let Err(e) = pod_index::add_node_name_to(&pods) {
        tracing::error!(error = %e, "the Pod informer refused the Node index");
    }
    let node_queue = worker::queue::<String>("taint_eviction_nodes");
    let pod_queue = worker::queue::<String>("taint_eviction_pods");
    let (on_add, on_update, on_delete) =
        (node_queue.clone(), node_queue.clone(), node_queue.clone());
    let _ = nodes.add_event_handler(
        HandlerFns::new()
            .on_add(move |node: &Arc<Node>, _| on_add.add(name_of(node)))
            .on_update(move |old: &Arc<Node>, node: &Arc<Node>| {
                if no_execute(of(old)) != no_execute(of(node)) {
                    on_update.add(name_of(node));
                }
            })
            .on_delete(move |gone: &DeletedObject<Node>| on_delete.add(name_of(gone.object()))),
    );
    let (on_add, on_update, on_delete) = (pod_queue.clone(), pod_queue.clone(), pod_queue.clone());
    let _ = pods.add_event_handler(
        HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| on_add.add(pod_item(pod)))
            .on_update(move |old: &Arc<Pod>, pod: &Arc<Pod>| {
                let same_node = node_of(old) == node_of(pod);
                let same_tolerations = old.spec.as_ref().map(|s| &s.tolerations)
                    == pod.spec.as_ref().map(|s| &s.tolerations);
                if !(same_node && same_tolerations) {
                    on_update.add(pod_item(pod));
                }
            })
            .on_delete(move |gone: &DeletedObject<Pod>| on_delete.add(pod_item(gone.object()))),
    );
    let controller = Arc::new(TaintEviction {
        client: context.client.clone(),
        nodes: nodes.lister(),
        pods: pods.lister(),
        events: EventSink::new(context.client.clone(), "taint-eviction-controller"),
        state: Mutex::new(State::default()),
    });
    let stop = context.stop.clone();
    Box::pin(async move {
        let node_workers = {
            let controller = Arc::clone(&controller);
            worker::spawn(node_queue, 1, Retries::Forever, move |name: String| {
                let controller = Arc::clone(&controller);
                async move { controller.handle_node(&name) }
            })
        };
        let pod_workers = {
            let controller = Arc::clone(&controller);
            worker::spawn(pod_queue, 1, Retries::Forever, move |item: String| {
                let controller = Arc::clone(&controller);
                async move { controller.handle_pod(&item) }
            })
        };
        stopped(stop).await;
        node_workers.stop().await;
        pod_workers.stop().await;
        controller.cancel_all();
    })
}

fn name_of(node: &Node) -> String {
    node.metadata.name.clone().unwrap_or_default()
}

fn node_of(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// A Pod queue item: its key and the Node it was bound to when the event came
/// (`podUpdateItem`), `|`-joined (neither names nor keys hold a `|`).
fn pod_item(pod: &Pod) -> String {
    format!("{}|{}", pod_key(pod), node_of(pod))
}

/// The `NoExecute` taints among `taints` (`getNoExecuteTaints`).
fn no_execute(taints: &[Taint]) -> Vec<Taint> {
    taints
        .iter()
        .filter(|t| t.effect == NO_EXECUTE)
        .cloned()
        .collect()
}

/// What to do with a Pod's deletion plan.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    /// Cancel any plan: the Pod may stay.
    Cancel,
    /// Keep the plan made earlier.
    Keep,
    /// Replace any plan with one started at `created`, firing at `fire_at`.
    Plan { created: Instant, fire_at: Instant },
}

/// The decision of `processPodOnNode` for a Pod that may `stay`, whose deletion was planned at
/// `planned` (if it was), at `now`: delete now when a taint is not tolerated; otherwise after the
/// shortest toleration, unless a plan made before `now` stands.
fn decide(stay: Stay, planned: Option<Instant>, now: Instant) -> Decision {
    match stay {
        Stay::Forever => Decision::Cancel,
        Stay::None => Decision::Plan {
            created: now,
            fire_at: now,
        },
        Stay::For(_) if planned.is_some_and(|created| created < now) => Decision::Keep,
        Stay::For(wait) => Decision::Plan {
            created: planned.unwrap_or(now),
            fire_at: now + wait,
        },
    }
}

/// A planned deletion (`TimedWorker`).
struct Planned {
    /// When it was first planned, which later plans keep.
    created: Instant,
    /// When it fires.
    fire_at: Instant,
    /// The timer; finished once the deletion runs.
    timer: JoinHandle<()>,
}

#[derive(Default)]
struct State {
    /// The `NoExecute` taints of each tainted Node (`taintedNodes`).
    tainted: BTreeMap<String, Vec<Taint>>,
    /// The planned deletions by Pod key (`taintEvictionQueue`).
    planned: BTreeMap<String, Planned>,
}

struct TaintEviction {
    client: Client,
    nodes: Lister<Node>,
    pods: Lister<Pod>,
    events: EventSink,
    state: Mutex<State>,
}

impl TaintEviction {
    /// Records a Node's `NoExecute` taints and looks at each of its Pods (`handleNodeUpdate`).
    fn handle_node(self: &Arc<Self>, name: &str) -> Result<Next> {
        let Some(node) = self.nodes.get(None, name) else {
            self.state.lock().tainted.remove(name);
            return Ok(Next::Done);
        };
        let taints = no_execute(of(&node));
        {
            let mut state = self.state.lock();
            match taints.is_empty() {
                true => state.tainted.remove(name),
                false => state.tainted.insert(name.to_owned(), taints.clone()),
            };
        }
        let pods = pod_index::pods_on(&self.pods, name);
        let now = Instant::now();
        for pod in pods {
            let tolerations = pod
                .spec
                .as_ref()
                .and_then(|s| s.tolerations.as_deref())
                .unwrap_or_default();
            self.plan(&pod_key(&pod), &taints, tolerations, now);
        }
        Ok(Next::Done)
    }

    /// Looks at one Pod (`handlePodUpdate`): a deleted one loses its planned deletion.
    fn handle_pod(self: &Arc<Self>, item: &str) -> Result<Next> {
        let (key, node) = item.split_once('|').unwrap_or((item, ""));
        let (namespace, name) = split_key(key);
        let Some(pod) = self.pods.get(Some(namespace), name) else {
            self.cancel(key);
            return Ok(Next::Done);
        };
        if node_of(&pod) != node || node.is_empty() {
            return Ok(Next::Done);
        }
        let Some(taints) = self.state.lock().tainted.get(node).cloned() else {
            return Ok(Next::Done);
        };
        let tolerations = pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.as_deref())
            .unwrap_or_default();
        self.plan(key, &taints, tolerations, Instant::now());
        Ok(Next::Done)
    }

    /// Plans, moves or cancels the deletion of Pod `key` (`processPodOnNode`).
    fn plan(
        self: &Arc<Self>,
        key: &str,
        taints: &[Taint],
        tolerations: &[k8s_openapi::api::core::v1::Toleration],
        now: Instant,
    ) {
        if taints.is_empty() {
            self.cancel(key);
        }
        let planned = self.state.lock().planned.get(key).map(|p| p.created);
        match decide(tolerations::stay(taints, tolerations), planned, now) {
            Decision::Cancel => self.cancel(key),
            Decision::Keep => {}
            Decision::Plan { created, fire_at } => {
                self.cancel(key);
                self.add(key, created, fire_at);
            }
        }
    }

    /// Plans Pod `key`'s deletion at `fire_at` unless one is planned (`AddWork`).
    fn add(self: &Arc<Self>, key: &str, created: Instant, fire_at: Instant) {
        let mut state = self.state.lock();
        if state.planned.contains_key(key) {
            return;
        }
        let controller = Arc::clone(self);
        let owned = key.to_owned();
        let timer = tokio::spawn(async move {
            tokio::time::sleep_until(fire_at).await;
            let outcome = controller.evict(&owned).await;
            controller.state.lock().planned.remove(&owned);
            if let Err(e) = outcome {
                tracing::warn!(pod = owned, error = %e, "taint eviction failed");
            }
        });
        state.planned.insert(
            key.to_owned(),
            Planned {
                created,
                fire_at,
                timer,
            },
        );
    }

    /// Cancels Pod `key`'s planned deletion, with a "Cancelling deletion" Event when one was
    /// waiting (`cancelWorkWithEvent`).
    fn cancel(&self, key: &str) {
        let Some(planned) = self.state.lock().planned.remove(key) else {
            return;
        };
        // A deletion already under way is left to finish, as a fired timer's work is.
        let waiting = !planned.timer.is_finished() && planned.fire_at > Instant::now();
        if waiting {
            planned.timer.abort();
            self.pod_event(key, format!("Cancelling deletion of Pod {key}"));
        }
    }

    /// Stops every planned deletion (the manager is stopping).
    fn cancel_all(&self) {
        for (_, planned) in std::mem::take(&mut self.state.lock().planned) {
            planned.timer.abort();
        }
    }

    /// A `TaintManagerEviction` Event about Pod `key`, referenced without UID as the real
    /// controller references it.
    fn pod_event(&self, key: &str, message: String) {
        let (namespace, name) = split_key(key);
        let mut reference = Pod::default();
        reference.metadata.namespace = Some(namespace.to_owned());
        reference.metadata.name = Some(name.to_owned());
        self.events.record(
            &reference,
            EventType::Normal,
            "TaintManagerEviction",
            message,
        );
    }

    /// Deletes Pod `key` with its `DisruptionTarget` condition written first; up to 5 tries
    /// (`deletePodHandler`).
    async fn evict(&self, key: &str) -> Result<()> {
        self.pod_event(key, format!("Marking for deletion Pod {key}"));
        let mut outcome = Ok(());
        for _ in 0..DELETE_TRIES {
            outcome = self.mark_and_delete(key).await;
            if outcome.is_ok() {
                break;
            }
            tokio::time::sleep(DELETE_RETRY_PAUSE).await;
        }
        outcome
    }

    /// `addConditionAndDeletePod`.
    async fn mark_and_delete(&self, key: &str) -> Result<()> {
        let (namespace, name) = split_key(key);
        let api = ResourceClient::<Pod>::namespaced(self.client.clone(), namespace);
        let pod = api
            .get(name, &GetOptions::default())
            .await
            .map_err(request(format!("get pod {key}")))?;
        if let Some(patch) = disruption_patch(&pod, Timestamp::now()) {
            api.patch_status(
                name,
                &patch,
                &PatchOptions::default().field_manager(FIELD_MANAGER),
            )
            .await
            .map_err(request(format!("patch status of pod {key}")))?;
        }
        api.delete(name, &DeleteOptions::default())
            .await
            .map_err(request(format!("delete pod {key}")))
    }
}

/// The strategic merge patch that sets the Pod's `DisruptionTarget` condition (its transition
/// time now unless it was True already; `observedGeneration` the Pod's generation, as v1.36
/// tracks it), with the Pod's UID as precondition; `None` when the condition is there as is
/// (`UpdatePodCondition` reporting no change).
fn disruption_patch(pod: &Pod, now: Timestamp) -> Option<Patch> {
    let old = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "DisruptionTarget");
    let transition = match old {
        Some(old) if old.status == "True" => {
            if old.reason.as_deref() == Some(REASON) && old.message.as_deref() == Some(MESSAGE) {
                return None;
            }
            old.last_transition_time.clone()
        }
        _ => Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now)),
    };
    let mut condition = json!({
        "type": "DisruptionTarget",
        "status": "True",
        "reason": REASON,
        "message": MESSAGE,
        "lastTransitionTime": transition,
    });
    if let Some(generation) = pod.metadata.generation {
        condition["observedGeneration"] = json!(generation);
    }
    Some(Patch::Strategic(json!({
        "metadata": {"uid": pod.metadata.uid},
        "status": {"conditions": [condition]},
    })))
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
