//! `node-lifecycle-controller`: watches whether Nodes are alive and taints them by their
//! conditions. Mirrors `pkg/controller/nodelifecycle/node_lifecycle_controller.go` with
//! `pkg/controller/util/node/controller_utils.go`, and pairs with the test server's
//! TaintNodesByCondition admission (a new Node carries `node.kubernetes.io/not-ready:NoSchedule`
//! until this controller sees it Ready).
//!
//! # Why
//! Without it a simulated Node whose heartbeats stop stays Ready forever, and an operator cannot
//! test what happens to its Pods when a Node dies; nor does a new Node lose its not-ready taint.
//!
//! # What runs
//! - **NoSchedule tainting** (`doNoScheduleTaintingPass`), on every Node event: Ready False or
//!   Unknown, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable and
//!   `spec.unschedulable` each call for a `NoSchedule` taint (`taints.rs`), added or removed by
//!   patch; the beta OS and arch labels follow the stable ones (`reconcileNodeLabels`).
//! - **Health monitor** (`monitorNodeHealth`), every `monitor_period`: new Nodes get a
//!   `RegisteredNode` Event, gone ones `RemovingNode`; a Node whose Ready heartbeat and Lease
//!   have both been silent past the grace period gets its kubelet conditions set `Unknown`
//!   (`health.rs`); a Node leaving Ready gets a `NodeNotReady` Event and its Pods are marked not
//!   ready; a not-Ready Node waits in its zone's queue for a `NoExecute` taint (not-ready or
//!   unreachable, with `timeAdded`), a Ready one loses both.
//! - **NoExecute tainting** (`doNoExecuteTaintingPass`), every 100 ms: each zone's queue gives
//!   out Nodes at the zone's eviction rate (`zones.rs`); a fully disrupted cluster (no zone with
//!   a Ready Node) taints nothing and has its taints lifted.
//! - **Pods bound** to a Node seen not Ready are marked not ready (`processPod`).
//!
//! # Differences from v1.36
//! The health monitor looks at Nodes one after another (v1.36: 8 at a time); metrics are not
//! kept.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `writes`
//! - `health`, `taints`, `zones`

mod health;
pub(crate) mod taints;
mod writes;
mod zones;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod};
use kube_core::Selector;
use kubegen_cache::{HandlerFns, Lister};
use kubegen_client::Client;
use kubegen_runtime::EventType;
use parking_lot::Mutex;

use crate::Result;
use crate::context::{Context, Runner, stopped};
use crate::options::{Clock, NodeLifecycleOptions};
use crate::worker::{self, Next, Retries};
use crate::workload::events::EventSink;
use crate::workload::meta::{key_of, split_key};
use crate::workload::pod_index;

use health::{Grace, Health};
use taints::{NO_EXECUTE, NOT_READY, UNREACHABLE, template};
use zones::{RateLimitedQueue, ZoneState};

/// The namespace of the Nodes' Leases.
const LEASE_NAMESPACE: &str = "kube-node-lease";

/// How often the zones' queues are drained (`scheduler.NodeEvictionPeriod`).
const NO_EXECUTE_PERIOD: Duration = Duration::from_millis(100);

/// Tries of a Node's status write, and the pause between them (`NodeHealthUpdateRetry`,
/// `retrySleepTime`).
const HEALTH_TRIES: usize = 5;
const HEALTH_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// A Node with this label counts in no zone's disruption.
const EXCLUDE_DISRUPTION: &str = "node.kubernetes.io/exclude-disruption";

/// (stable label, beta label) pairs whose beta label follows the stable one.
const RECONCILED_LABELS: [(&str, &str); 2] = [
    ("kubernetes.io/os", "beta.kubernetes.io/os"),
    ("kubernetes.io/arch", "beta.kubernetes.io/arch"),
];

/// Registers the Node and Pod handlers (and the Lease informer); the runner works the queues
/// and the periodic passes until the manager stops.
pub(crate) fn start(context: &Context) -> Runner {
    let nodes = context.factory.informer::<Node>();
    let pods = context.factory.informer::<Pod>();
    if let Err(e) = pod_index::add_node_name_to(&pods) {
        tracing::error!(error = %e, "the Pod informer refused the Node index");
    }
    let leases = context.factory.informer::<Lease>();
    let node_queue = worker::queue::<String>("node_lifecycle_controller");
    let pod_queue = worker::queue::<String>("node_lifecycle_controller_pods");
    let (on_add, on_update) = (node_queue.clone(), node_queue.clone());
    let _ = nodes.add_event_handler(
        HandlerFns::new()
            .on_add(move |node: &Arc<Node>, _| on_add.add(name_of(node)))
            .on_update(move |_, node: &Arc<Node>| on_update.add(name_of(node))),
    );
    let (on_add, on_update) = (pod_queue.clone(), pod_queue.clone());
    let _ = pods.add_event_handler(
        HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| {
                if newly_bound(None, pod) {
                    on_add.add(key_of(pod.as_ref()));
                }
            })
            .on_update(move |old: &Arc<Pod>, pod: &Arc<Pod>| {
                if newly_bound(Some(old), pod) {
                    on_update.add(key_of(pod.as_ref()));
                }
            }),
    );
    let controller = Arc::new(NodeLifecycle {
        client: context.client.clone(),
        nodes: nodes.lister(),
        pods: pods.lister(),
        leases: leases.lister(),
        events: EventSink::new(context.client.clone(), "node-controller"),
        options: context.options.node_lifecycle.clone(),
        // The system clock, not the manager's: a test shifting the cronjob controller's clock
        // by a minute must not make every Node look silent.
        clock: Clock::system(),
        state: Mutex::new(State::default()),
    });
    let stop = context.stop.clone();
    Box::pin(async move {
        // v1.36's `nodeUpdateWorkerSize` and `podUpdateWorkerSize`: 1,000 Nodes that register
        // together have their `not-ready` taints lifted 8 at a time.
        let taint_workers = {
            let controller = Arc::clone(&controller);
            worker::spawn(node_queue, 8, Retries::Forever, move |name: String| {
                let controller = Arc::clone(&controller);
                async move { controller.no_schedule_pass(&name).await }
            })
        };
        let pod_workers = {
            let controller = Arc::clone(&controller);
            worker::spawn(pod_queue, 4, Retries::Forever, move |key: String| {
                let controller = Arc::clone(&controller);
                async move { controller.process_pod(&key).await }
            })
        };
        let monitor = tokio::spawn(every(
            controller.options.monitor_period,
            stop.clone(),
            Arc::clone(&controller),
            |c| async move { c.monitor().await },
        ));
        let no_execute = tokio::spawn(every(
            NO_EXECUTE_PERIOD,
            stop.clone(),
            Arc::clone(&controller),
            |c| async move { c.no_execute_pass().await },
        ));
        stopped(stop).await;
        let _ = monitor.await;
        let _ = no_execute.await;
        taint_workers.stop().await;
        pod_workers.stop().await;
    })
}

/// Runs `pass` now and then `period` after each run ends (`wait.UntilWithContext`), until the
/// manager stops.
async fn every<F, Fut>(
    period: Duration,
    stop: tokio::sync::watch::Receiver<bool>,
    controller: Arc<NodeLifecycle>,
    pass: F,
) where
    F: Fn(Arc<NodeLifecycle>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    loop {
        pass(Arc::clone(&controller)).await;
        tokio::select! {
            () = stopped(stop.clone()) => return,
            () = tokio::time::sleep(period) => {}
        }
    }
}

fn name_of(node: &Node) -> String {
    node.metadata.name.clone().unwrap_or_default()
}

fn node_name_of(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// Whether `pod` was just bound to a Node (`podUpdated`).
fn newly_bound(old: Option<&Pod>, pod: &Pod) -> bool {
    let node = node_name_of(pod);
    !node.is_empty() && old.is_none_or(|old| node_name_of(old) != node)
}

/// The Ready condition of a Node.
fn ready_of(node: &Node) -> Option<&NodeCondition> {
    health::condition(health::conditions_of(node), "Ready")
}

/// What the periodic passes keep between runs.
#[derive(Default)]
struct State {
    /// The Nodes seen, by name (`knownNodeSet`).
    known: BTreeMap<String, Arc<Node>>,
    /// What was seen of each Node's health (`nodeHealthMap`).
    health: BTreeMap<String, Health>,
    /// Each zone's state.
    zone_states: BTreeMap<String, ZoneState>,
    /// Each zone's queue of Nodes waiting for a `NoExecute` taint (`zoneNoExecuteTainter`).
    tainters: BTreeMap<String, RateLimitedQueue>,
    /// Nodes whose Pods could not all be marked not ready (`nodesToRetry`).
    retry: BTreeSet<String>,
}

/// The controller: its listers, its writer of Events, its settings and its state.
struct NodeLifecycle {
    client: Client,
    nodes: Lister<Node>,
    pods: Lister<Pod>,
    leases: Lister<Lease>,
    events: EventSink,
    options: NodeLifecycleOptions,
    clock: Clock,
    state: Mutex<State>,
}

impl NodeLifecycle {
    /// Brings the Node's condition `NoSchedule` taints and beta labels in line
    /// (`doNoScheduleTaintingPass`, `reconcileNodeLabels`). Failures are logged, not retried,
    /// as the real controller's.
    async fn no_schedule_pass(&self, name: &str) -> Result<Next> {
        let Some(node) = self.nodes.get(None, name) else {
            return Ok(Next::Done);
        };
        let (add, remove) = taints::diff(
            &taints::wanted_no_schedule(&node),
            &taints::owned_no_schedule(&node),
        );
        if !(add.is_empty() && remove.is_empty())
            && let Err(e) =
                writes::swap_taints(&self.client, &node, &add, &remove, self.clock.now()).await
        {
            tracing::warn!(node = name, error = %e, "failed to taint NoSchedule on node");
        }
        let labels = labels_to_reconcile(&node);
        if !labels.is_empty()
            && let Err(e) = writes::add_labels(&self.client, name, &labels).await
        {
            tracing::warn!(node = name, error = %e, "failed to reconcile labels of node");
        }
        Ok(Next::Done)
    }

    /// Marks a Pod just bound to a Node not ready when that Node is seen not Ready
    /// (`processPod`).
    async fn process_pod(&self, key: &str) -> Result<Next> {
        let (namespace, name) = split_key(key);
        let Some(pod) = self.pods.get(Some(namespace), name) else {
            return Ok(Next::Done);
        };
        let node_name = node_name_of(&pod).to_owned();
        let seen = self.state.lock().health.get(&node_name).cloned();
        let Some(seen) = seen else {
            return Ok(Next::Done);
        };
        if self.nodes.get(None, &node_name).is_none() {
            return Ok(Next::After(Duration::from_secs(1)));
        }
        let Some(ready) = seen.ready else {
            return Ok(Next::Done);
        };
        if ready.status != "True" {
            writes::mark_pods_not_ready(
                &self.client,
                &self.events,
                &[pod],
                &node_name,
                self.clock.now(),
            )
            .await?;
        }
        Ok(Next::Done)
    }

    /// One health pass over every Node (`monitorNodeHealth`).
    async fn monitor(&self) {
        let nodes = self.nodes.list(&Selector::default());
        let (added, deleted) = self.classify(&nodes);
        for node in &added {
            let name = name_of(node);
            self.node_event(
                node,
                "RegisteredNode",
                &format!("Registered Node {name} in Controller"),
            );
            self.mark_reachable(node).await;
        }
        for node in &deleted {
            let name = name_of(node);
            self.node_event(
                node,
                "RemovingNode",
                &format!("Removing Node {name} from Controller"),
            );
        }
        let mut zone_ready: BTreeMap<String, Vec<Option<bool>>> = BTreeMap::new();
        for node in &nodes {
            let name = name_of(node);
            let Some((observed, current)) = self.update_health(node).await else {
                continue;
            };
            let excluded = node
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(EXCLUDE_DISRUPTION));
            if !excluded {
                let ready = current.as_ref().map(|c| c.status == "True");
                zone_ready
                    .entry(zones::zone_key(node))
                    .or_default()
                    .push(ready);
            }
            let Some(current) = current else {
                self.state.lock().retry.remove(&name);
                continue;
            };
            self.taint_by_readiness(node, &current).await;
            let needs_retry = self.state.lock().retry.contains(&name);
            let left_ready = current.status != "True" && observed.status == "True";
            if left_ready {
                self.node_event(
                    node,
                    "NodeNotReady",
                    &format!("Node {name} status is now: NodeNotReady"),
                );
            }
            if left_ready || (needs_retry && observed.status != "True") {
                let pods = self.pods_on(&name);
                let now = self.clock.now();
                if let Err(e) =
                    writes::mark_pods_not_ready(&self.client, &self.events, &pods, &name, now).await
                {
                    tracing::warn!(node = name, error = %e, "unable to mark all pods NotReady on node; queuing for retry");
                    self.state.lock().retry.insert(name);
                    continue;
                }
            }
            self.state.lock().retry.remove(&name);
        }
        self.handle_disruption(&zone_ready, &nodes).await;
    }

    /// New and gone Nodes since the last pass (`classifyNodes`), remembered or forgotten, each
    /// new zone given its queue (`addPodEvictorForNewZone`).
    fn classify(&self, nodes: &[Arc<Node>]) -> (Vec<Arc<Node>>, Vec<Arc<Node>>) {
        let mut state = self.state.lock();
        let now = Instant::now();
        let rate = self.options.eviction_rate;
        let mut added = Vec::new();
        for node in nodes {
            let zone = zones::zone_key(node);
            if !state.zone_states.contains_key(&zone) {
                state.zone_states.insert(zone.clone(), ZoneState::Initial);
                state
                    .tainters
                    .insert(zone, RateLimitedQueue::new(rate, now));
            }
            if let std::collections::btree_map::Entry::Vacant(entry) =
                state.known.entry(name_of(node))
            {
                entry.insert(Arc::clone(node));
                added.push(Arc::clone(node));
            }
        }
        let present: BTreeSet<String> = nodes.iter().map(|n| name_of(n)).collect();
        let gone: Vec<String> = state
            .known
            .keys()
            .filter(|name| !present.contains(*name))
            .cloned()
            .collect();
        let deleted = gone
            .iter()
            .filter_map(|name| state.known.remove(name))
            .collect();
        (added, deleted)
    }

    /// Records an Event about a Node, in the shape `RecordNodeEvent` gives it.
    fn node_event(&self, node: &Node, reason: &str, message: &str) {
        let name = name_of(node);
        let message = match reason {
            "NodeNotReady" => message.to_owned(),
            _ => format!("Node {name} event: {message}"),
        };
        let reference = Node {
            metadata: kube_core::ObjectMeta {
                name: Some(name),
                uid: node.metadata.uid.clone(),
                ..Default::default()
            },
            ..Node::default()
        };
        self.events
            .record(&reference, EventType::Normal, reason, message);
    }

    /// The Pods bound to Node `name`.
    fn pods_on(&self, name: &str) -> Vec<Arc<Pod>> {
        pod_index::pods_on(&self.pods, name)
    }

    /// The Lease's `renewTime` of Node `name`.
    fn lease_renewed(&self, name: &str) -> Option<k8s_openapi::jiff::Timestamp> {
        let lease = self.leases.get(Some(LEASE_NAMESPACE), name)?;
        lease.spec.as_ref()?.renew_time.as_ref().map(|t| t.0)
    }

    /// Looks at a Node's health and writes its conditions when they turn `Unknown`, up to 5
    /// tries with the Node read again between them (`tryUpdateNodeHealth` in its retry loop).
    /// The Ready condition as observed and as it is now; `None` when every try failed.
    async fn update_health(&self, node: &Node) -> Option<(NodeCondition, Option<NodeCondition>)> {
        let grace = Grace {
            monitor: self.options.monitor_grace_period,
            startup: self.options.startup_grace_period,
        };
        let name = name_of(node);
        let mut node = node.clone();
        for attempt in 0..HEALTH_TRIES {
            let lease = self.lease_renewed(&name);
            let now = self.clock.now();
            let verdict = {
                let mut state = self.state.lock();
                let verdict = health::judge(&node, state.health.get(&name), lease, now, grace);
                state.health.insert(name.clone(), verdict.health.clone());
                verdict
            };
            let Some(conditions) = verdict.write.clone() else {
                return Some((verdict.observed, verdict.current));
            };
            match writes::update_conditions(&self.client, &node, conditions).await {
                Ok(_) => {
                    let remembered = health::written(&verdict, lease, self.clock.now());
                    self.state.lock().health.insert(name.clone(), remembered);
                    return Some((verdict.observed, verdict.current));
                }
                Err(e) => {
                    tracing::warn!(node = name, attempt, error = %e, "error updating node");
                }
            }
            tokio::time::sleep(HEALTH_RETRY_PAUSE).await;
            match kubegen_client::ResourceClient::<Node>::cluster(self.client.clone())
                .get(&name, &kubegen_client::GetOptions::default())
                .await
            {
                Ok(fresh) => node = fresh,
                Err(e) => {
                    tracing::warn!(node = name, error = %e, "failed while getting a node to retry updating its health");
                    return None;
                }
            }
        }
        tracing::warn!(
            node = name,
            "update health of node failed; no pods will be evicted"
        );
        None
    }

    /// Queues a not-Ready Node for its `NoExecute` taint, swaps a wrong one at once, or lifts
    /// both from a Ready Node (`processTaintBaseEviction`).
    async fn taint_by_readiness(&self, node: &Node, ready: &NodeCondition) {
        let (wanted, opposite) = match ready.status.as_str() {
            "False" => (NOT_READY, UNREACHABLE),
            "Unknown" => (UNREACHABLE, NOT_READY),
            _ => {
                self.mark_reachable(node).await;
                return;
            }
        };
        let wanted = template(wanted, NO_EXECUTE);
        let opposite = template(opposite, NO_EXECUTE);
        let current = taints::of(node);
        if taints::exists(current, &opposite) {
            let now = self.clock.now();
            if let Err(e) =
                writes::swap_taints(&self.client, node, &[wanted], &[opposite], now).await
            {
                tracing::warn!(node = %name_of(node), error = %e, "failed to swap NoExecute taints; will try again in the next cycle");
            }
            return;
        }
        let mut state = self.state.lock();
        let zone = zones::zone_key(node);
        let name = name_of(node);
        if let Some(queue) = state.tainters.get_mut(&zone) {
            if !taints::exists(current, &wanted) {
                queue.remove(&name);
            }
            queue.add(
                &name,
                node.metadata.uid.as_deref().unwrap_or_default(),
                Instant::now(),
            );
        }
    }

    /// Lifts both `NoExecute` taints and takes the Node out of its zone's queue
    /// (`markNodeAsReachable`).
    async fn mark_reachable(&self, node: &Node) {
        for key in [UNREACHABLE, NOT_READY] {
            if let Err(e) =
                writes::remove_taints(&self.client, node, &[template(key, NO_EXECUTE)]).await
            {
                tracing::warn!(node = %name_of(node), error = %e, "failed to remove taint from node");
                return;
            }
        }
        let zone = zones::zone_key(node);
        if let Some(queue) = self.state.lock().tainters.get_mut(&zone) {
            queue.remove(&name_of(node));
        }
    }

    /// Taints the Nodes each zone's queue gives out now (`doNoExecuteTaintingPass`).
    async fn no_execute_pass(&self) {
        let due: Vec<(String, zones::Waiting)> = {
            let mut state = self.state.lock();
            let now = Instant::now();
            state
                .tainters
                .iter_mut()
                .flat_map(|(zone, queue)| {
                    queue
                        .take_due(now)
                        .into_iter()
                        .map(|w| (zone.clone(), w))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        for (zone, waiting) in due {
            let Some(node) = self.nodes.get(None, &waiting.name) else {
                continue;
            };
            let Some(ready) = ready_of(&node) else {
                self.retry_taint(&zone, waiting, Duration::from_millis(50));
                continue;
            };
            let (wanted, opposite) = match ready.status.as_str() {
                "False" => (NOT_READY, UNREACHABLE),
                "Unknown" => (UNREACHABLE, NOT_READY),
                _ => continue,
            };
            let add = [template(wanted, NO_EXECUTE)];
            let remove = [template(opposite, NO_EXECUTE)];
            let now = self.clock.now();
            if let Err(e) = writes::swap_taints(&self.client, &node, &add, &remove, now).await {
                tracing::warn!(node = waiting.name, error = %e, "failed to taint NoExecute on node");
                self.retry_taint(&zone, waiting, Duration::ZERO);
            }
        }
    }

    fn retry_taint(&self, zone: &str, waiting: zones::Waiting, wait: Duration) {
        if let Some(queue) = self.state.lock().tainters.get_mut(zone) {
            queue.retry(waiting, wait, Instant::now());
        }
    }

    /// Moves the zones to their new states and their queues to the matching rates; when every
    /// zone is fully disrupted, stops all tainting and lifts the `NoExecute` taints
    /// (`handleDisruption`).
    async fn handle_disruption(
        &self,
        zone_ready: &BTreeMap<String, Vec<Option<bool>>>,
        nodes: &[Arc<Node>],
    ) {
        let threshold = self.options.unhealthy_zone_threshold;
        let new_states: BTreeMap<&String, ZoneState> = zone_ready
            .iter()
            .map(|(zone, ready)| (zone, zones::zone_state(ready, threshold).1))
            .collect();
        let all_are_fully_disrupted = new_states.values().all(|s| *s == ZoneState::FullDisruption);
        let all_were_fully_disrupted = {
            let mut state = self.state.lock();
            for zone in zone_ready.keys() {
                state
                    .zone_states
                    .entry(zone.clone())
                    .or_insert(ZoneState::Initial);
            }
            state
                .zone_states
                .retain(|zone, _| zone_ready.contains_key(zone));
            state
                .zone_states
                .values()
                .all(|s| *s == ZoneState::FullDisruption)
        };
        if all_are_fully_disrupted && all_were_fully_disrupted {
            return;
        }
        let rate_of = |zone: &String, state: ZoneState| {
            zones::zone_rate(
                state,
                zone_ready.get(zone).map_or(0, Vec::len),
                (
                    self.options.eviction_rate,
                    self.options.secondary_eviction_rate,
                ),
                self.options.large_cluster_size_threshold,
            )
        };
        if all_are_fully_disrupted {
            tracing::info!("all nodes are not ready; entering master disruption mode");
            for node in nodes {
                self.mark_reachable(node).await;
            }
            let mut state = self.state.lock();
            let now = Instant::now();
            for queue in state.tainters.values_mut() {
                queue.set_rate(0.0, now);
            }
            for zone_state in state.zone_states.values_mut() {
                *zone_state = ZoneState::FullDisruption;
            }
            return;
        }
        let mut state = self.state.lock();
        let now = Instant::now();
        if all_were_fully_disrupted {
            tracing::info!("some nodes are ready; exiting master disruption mode");
            let stamp = self.clock.now();
            for health in state.health.values_mut() {
                health.probe = stamp;
                health.ready_transition = stamp;
            }
        }
        let zones: Vec<String> = state.zone_states.keys().cloned().collect();
        for zone in zones {
            let new_state = new_states.get(&zone).copied().unwrap_or(ZoneState::Normal);
            if !all_were_fully_disrupted && state.zone_states.get(&zone) == Some(&new_state) {
                continue;
            }
            let rate = rate_of(&zone, new_state);
            if let Some(queue) = state.tainters.get_mut(&zone) {
                queue.set_rate(rate, now);
            }
            state.zone_states.insert(zone, new_state);
        }
    }
}

/// The beta labels to set so that they follow the stable OS and arch labels.
fn labels_to_reconcile(node: &Node) -> BTreeMap<String, String> {
    let Some(labels) = node.metadata.labels.as_ref() else {
        return BTreeMap::new();
    };
    RECONCILED_LABELS
        .iter()
        .filter_map(|(stable, beta)| {
            let value = labels.get(*stable)?;
            (labels.get(*beta) != Some(value)).then(|| ((*beta).to_owned(), value.clone()))
        })
        .collect()
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
