//! The daemonset controller: one Pod per qualifying Node, replaced when its template changes
//! (RollingUpdate within `maxUnavailable`/`maxSurge`, or OnDelete), each template kept as a
//! ControllerRevision.
//!
//! Mirrors `pkg/controller/daemon/daemon_controller.go` (v1.36): event handlers, the node-update
//! queue, `syncDaemonSet`, `updateDaemonSet` and `updateDaemonSetStatus`; the rules are in the
//! modules below.
//!
//! # One sync
//! ```mermaid
//! sequenceDiagram
//!     participant Q as workqueue
//!     participant S as sync
//!     participant API as API server
//!     Q->>S: ns/agent
//!     S->>API: adopt / release ControllerRevisions, create the current one (history.rs)
//!     S->>S: own creates and deletes all seen? (expectations)
//!     S->>API: adopt / release Pods
//!     S->>API: create Pods on Nodes that need one, delete misplaced and failed ones (manage.rs)
//!     S->>API: delete old Pods within maxUnavailable / create surge Pods (rolling.rs)
//!     S->>API: delete revisions beyond revisionHistoryLimit
//!     S->>API: PUT status (desired, current, ready, available, updated, misscheduled)
//! ```
//!
//! # Differences from v1.36
//! - The `controller-revision-hash` values differ from a real cluster's for the same template
//!   (see `crate::workload::hash`); so do revision names.
//! - The namespace node selector (`scheduler.alpha.kubernetes.io/node-selector`), which
//!   kube-controller-manager consults only when built with a namespace lister (OpenShift), is
//!   not consulted.
//! - v1.36's stale-cache guard (`StaleControllerConsistencyDaemonSet`) is not modelled; the
//!   expectations guard the same writes.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `history`, `manage`, `pod_control`, `rolling`, `status`
//! - `daemon`
//! - `backoff`, `placement`

mod backoff;
mod daemon;
#[cfg(test)]
mod fixtures;
mod history;
mod manage;
mod placement;
mod pod_control;
mod rolling;
mod status;

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{Client, GetOptions, ResourceClient, UpdateOptions};
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;

use crate::context::{Context, Runner};
use crate::worker::{self, Next, QueueLoop, Retries};
use crate::workload::events::EventSink;
use crate::workload::expectations::Expectations;
use crate::workload::meta::{
    controller_of, describe, fetch_latest, key_of, selector_of, selects, split_key,
};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::pods::is_ready;
use crate::workload::shared::{FIELD_MANAGER, register};
use crate::workload::versioned::Field;
use crate::{Result, error::request};
use backoff::Backoff;
use daemon::{Daemon, REVISION_LABEL};
use history::History;
use pod_control::PodControl;
use status::Counts;

/// Registers the daemonset controller on the manager's shared informers (DaemonSets, Pods,
/// Nodes, ControllerRevisions); the runner works its DaemonSet queue and its Node queue with
/// `workers` workers each (`--concurrent-daemonset-syncs`, 2) until the manager stops.
pub(crate) fn start(context: &Context, workers: usize) -> Runner {
    let loops = DaemonSetController::new(context).map(|controller| {
        let (sets, nodes) = (controller.clone(), controller.clone());
        vec![
            QueueLoop::new(
                controller.queue.clone(),
                workers,
                Retries::Forever,
                move |key: String| {
                    let c = sets.clone();
                    async move { c.sync(&key).await }
                },
            ),
            QueueLoop::new(
                controller.node_queue.clone(),
                workers,
                Retries::Forever,
                move |node: String| {
                    let c = nodes.clone();
                    async move {
                        c.sync_node(&node);
                        Ok(Next::Done)
                    }
                },
            ),
        ]
    });
    worker::run("daemonset", context.stop.clone(), loops)
}

/// The DaemonSet controller's state, shared by its handlers and workers.
struct DaemonSetController {
    client: Client,
    sets: Lister<DaemonSet>,
    pods: Lister<Pod>,
    nodes: Lister<Node>,
    queue: RateLimitingQueue<String>,
    /// Node names whose label or taint change may concern some DaemonSet.
    node_queue: RateLimitingQueue<String>,
    expectations: Arc<Expectations>,
    /// Per DaemonSet generation and Node: when a failed Pod may be replaced again.
    backoff: Mutex<Backoff>,
    events: EventSink,
    history: History,
    pod_control: PodControl,
}

impl DaemonSetController {
    fn new(context: &Context) -> Result<Arc<Self>> {
        let sets = context.factory.informer::<DaemonSet>();
        let pods = context.factory.informer::<Pod>();
        let nodes = context.factory.informer::<Node>();
        let revisions = context.factory.informer::<ControllerRevision>();
        pod_index::add_to(&pods)?;
        pod_index::add_node_name_to(&pods)?;
        let client = context.client.clone();
        let events = EventSink::new(client.clone(), "daemonset-controller");
        let expectations = Arc::new(Expectations::default());
        let this = Arc::new(DaemonSetController {
            client: client.clone(),
            sets: sets.lister(),
            pods: pods.lister(),
            nodes: nodes.lister(),
            queue: worker::queue("daemonset"),
            node_queue: worker::queue("daemonset-node-updates"),
            expectations: expectations.clone(),
            backoff: Mutex::new(Backoff::default()),
            events: events.clone(),
            history: History {
                client: client.clone(),
                revisions: revisions.lister(),
            },
            pod_control: PodControl {
                client,
                events,
                expectations,
            },
        });
        let (a, u, d) = (this.clone(), this.clone(), this.clone());
        register(
            &sets,
            HandlerFns::new()
                .on_add(move |ds: &Arc<DaemonSet>, _| a.queue.add(key_of(ds.as_ref())))
                .on_update(move |old: &Arc<DaemonSet>, ds: &Arc<DaemonSet>| {
                    if old.metadata.uid != ds.metadata.uid {
                        u.expectations.delete(&key_of(old.as_ref()));
                    }
                    u.queue.add(key_of(ds.as_ref()));
                })
                .on_delete(move |gone: &DeletedObject<DaemonSet>| {
                    let key = key_of(gone.object().as_ref());
                    d.expectations.delete(&key);
                    d.queue.add(key);
                }),
        )?;
        let (a, u, d) = (this.clone(), this.clone(), this.clone());
        register(
            &pods,
            HandlerFns::new()
                .on_add(move |pod: &Arc<Pod>, _| a.add_pod(pod))
                .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| u.update_pod(old, new))
                .on_delete(move |gone: &DeletedObject<Pod>| d.delete_pod(gone.object())),
        )?;
        let (a, u) = (this.clone(), this.clone());
        register(
            &nodes,
            HandlerFns::new()
                .on_add(move |node: &Arc<Node>, _| {
                    a.node_queue
                        .add(node.metadata.name.clone().unwrap_or_default())
                })
                .on_update(move |old: &Arc<Node>, new: &Arc<Node>| {
                    let taints = |n: &Node| n.spec.as_ref().and_then(|s| s.taints.clone());
                    if old.metadata.labels != new.metadata.labels || taints(old) != taints(new) {
                        u.node_queue
                            .add(new.metadata.name.clone().unwrap_or_default());
                    }
                }),
        )?;
        let (a, u, d) = (this.clone(), this.clone(), this.clone());
        register(
            &revisions,
            HandlerFns::new()
                .on_add(move |r: &Arc<ControllerRevision>, _| a.revision_changed(None, r))
                .on_update(
                    move |old: &Arc<ControllerRevision>, new: &Arc<ControllerRevision>| {
                        u.revision_changed(Some(old), new)
                    },
                )
                .on_delete(move |gone: &DeletedObject<ControllerRevision>| {
                    let owner = d.resolve(gone.object().as_ref());
                    d.enqueue_all(owner.into_iter().collect());
                }),
        )?;
        Ok(this)
    }

    /// The DaemonSet a controller reference names, if cached with the same UID
    /// (`resolveControllerRef`).
    fn resolve<K: kube_core::Resource>(&self, obj: &K) -> Option<Arc<DaemonSet>> {
        let r = controller_of(obj)?;
        if r.kind != "DaemonSet" {
            return None;
        }
        self.sets
            .get(obj.meta().namespace.as_deref(), &r.name)
            .filter(|ds| ds.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    /// DaemonSets whose selector matches `labels` in `namespace` (`GetPodDaemonSets`).
    fn selecting(
        &self,
        namespace: Option<&str>,
        labels: Option<&std::collections::BTreeMap<String, String>>,
    ) -> Vec<Arc<DaemonSet>> {
        self.sets
            .namespaced(namespace.unwrap_or_default())
            .list(&Selector::default())
            .into_iter()
            .filter(|ds| {
                let selector = ds.spec.value().map(|s| &s.selector);
                let selector = selector_of(ds.as_ref(), selector).ok().flatten();
                selects(selector.as_ref(), labels)
            })
            .collect()
    }

    fn enqueue_all(&self, sets: Vec<Arc<DaemonSet>>) {
        for ds in sets {
            self.queue.add(key_of(ds.as_ref()));
        }
    }

    fn revision_changed(
        &self,
        old: Option<&Arc<ControllerRevision>>,
        new: &Arc<ControllerRevision>,
    ) {
        if let Some(old) = old {
            if old.metadata.resource_version == new.metadata.resource_version {
                return;
            }
            if controller_of(old.as_ref()) != controller_of(new.as_ref()) {
                self.enqueue_all(self.resolve(old.as_ref()).into_iter().collect());
            }
        } else if new.metadata.deletion_timestamp.is_some() {
            self.enqueue_all(self.resolve(new.as_ref()).into_iter().collect());
            return;
        }
        if controller_of(new.as_ref()).is_some() {
            self.enqueue_all(self.resolve(new.as_ref()).into_iter().collect());
            return;
        }
        let changed = old.is_none_or(|o| {
            o.metadata.labels != new.metadata.labels || controller_of(o.as_ref()).is_some()
        });
        if changed {
            let ns = new.metadata.namespace.as_deref();
            self.enqueue_all(self.selecting(ns, new.metadata.labels.as_ref()));
        }
    }

    fn add_pod(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp.is_some() {
            return self.delete_pod(pod);
        }
        if controller_of(pod.as_ref()).is_some() {
            if let Some(ds) = self.resolve(pod.as_ref()) {
                self.expectations.creation_observed(&key_of(ds.as_ref()));
                self.queue.add(key_of(ds.as_ref()));
            }
            return;
        }
        let ns = pod.metadata.namespace.as_deref();
        self.enqueue_all(self.selecting(ns, pod.metadata.labels.as_ref()));
    }

    fn update_pod(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        if new.metadata.deletion_timestamp.is_some() {
            return self.delete_pod(new);
        }
        let (old_ref, new_ref) = (controller_of(old.as_ref()), controller_of(new.as_ref()));
        let ref_changed = old_ref != new_ref;
        if ref_changed && old_ref.is_some() {
            self.enqueue_all(self.resolve(old.as_ref()).into_iter().collect());
        }
        if new_ref.is_some() {
            let Some(ds) = self.resolve(new.as_ref()) else {
                return;
            };
            self.queue.add(key_of(ds.as_ref()));
            let min_ready = ds
                .spec
                .value()
                .and_then(|s| s.min_ready_seconds)
                .unwrap_or(0);
            if !is_ready(old) && is_ready(new) && min_ready > 0 {
                let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0) + 1);
                self.queue.add_after(key_of(ds.as_ref()), after);
            }
            return;
        }
        if old.metadata.labels != new.metadata.labels || ref_changed {
            let ns = new.metadata.namespace.as_deref();
            self.enqueue_all(self.selecting(ns, new.metadata.labels.as_ref()));
        }
    }

    fn delete_pod(&self, pod: &Arc<Pod>) {
        let Some(ds) = self.resolve(pod.as_ref()) else {
            return;
        };
        let key = key_of(ds.as_ref());
        self.expectations
            .deletion_observed(&key, &key_of(pod.as_ref()));
        self.queue.add(key);
    }

    /// Enqueues every DaemonSet whose Pod is missing from, or misplaced on, the Node `name`
    /// (`syncNodeUpdate`).
    fn sync_node(&self, name: &str) {
        let Some(node) = self.nodes.get(None, name) else {
            return;
        };
        let on_node = pod_index::pods_on(&self.pods, name);
        for ds in self.sets.list(&Selector::default()) {
            let Ok(daemon) = Daemon::new(&ds, String::new()) else {
                continue;
            };
            let fit = daemon.fit(&node);
            let uid = ds.metadata.uid.as_deref();
            let scheduled = on_node.iter().any(|p| {
                controller_of(p.as_ref())
                    .is_some_and(|r| r.kind == "DaemonSet" && Some(r.uid.as_str()) == uid)
                    && p.metadata.namespace == ds.metadata.namespace
            });
            let misscheduled = ds
                .status
                .as_ref()
                .is_some_and(|s| s.number_misscheduled > 0);
            if (fit.should_run && !scheduled) || (scheduled && (!fit.may_stay || misscheduled)) {
                self.queue.add(key_of(ds.as_ref()));
            }
        }
    }

    /// `syncDaemonSet`: one DaemonSet.
    async fn sync(&self, key: &str) -> Result<Next> {
        let (namespace, name) = split_key(key);
        let Some(ds) = self.sets.get(Some(namespace), name) else {
            self.expectations.delete(key);
            return Ok(Next::Done);
        };
        let nodes = self.nodes.list(&Selector::default());
        let selector = ds.spec.value().map(|s| &s.selector);
        let everything = selector.is_some_and(|s| {
            s.match_labels.as_ref().is_none_or(|l| l.is_empty())
                && s.match_expressions.as_ref().is_none_or(|e| e.is_empty())
        });
        if everything {
            self.events.record(
                ds.as_ref(),
                EventType::Warning,
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.".into(),
            );
            return Ok(Next::Done);
        }
        if ds.metadata.deletion_timestamp.is_some() {
            return Ok(Next::Done);
        }
        let selector = selector_of(ds.as_ref(), selector)?;
        let revisions = self
            .history
            .controlled(&ds, selector.as_ref(), || {
                fetch_latest(&self.client, ds.as_ref())
            })
            .await?;
        let pods = self.claimed_pods(&ds, selector.as_ref()).await?;
        let (current, old) = self.history.construct(&ds, revisions, &pods).await?;
        let hash = current
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(REVISION_LABEL))
            .cloned()
            .unwrap_or_default();
        let daemon = Daemon::new(&ds, hash)?;
        if !self.expectations.satisfied(key) {
            return self.update_status(&daemon, &nodes, &pods, false).await;
        }
        let updated = self
            .update(&daemon, key, &nodes, selector.as_ref(), old)
            .await;
        let pods = self.claimed_pods(&ds, selector.as_ref()).await?;
        let status = self.update_status(&daemon, &nodes, &pods, true).await;
        updated.and(status)
    }

    /// `updateDaemonSet`: manage, roll, clean up history.
    async fn update(
        &self,
        daemon: &Daemon<'_>,
        key: &str,
        nodes: &[Arc<Node>],
        selector: Option<&Selector>,
        old: Vec<ControllerRevision>,
    ) -> Result<()> {
        let pods = self.claimed_pods(daemon.ds, selector).await?;
        let by_node = manage::by_node(&pods, false);
        let now = (tokio::time::Instant::now(), Timestamp::now());
        let plan = manage::plan(daemon, nodes, &by_node, &mut self.backoff.lock(), now);
        for (kind, reason, message) in &plan.events {
            self.events
                .record(daemon.ds, *kind, reason, message.clone());
        }
        if let Some(after) = plan.retry_after {
            self.queue.add_after(key_of(daemon.ds), after);
        }
        self.pod_control
            .sync_nodes(daemon, key, &plan.delete, &plan.create_on)
            .await?;
        if self.expectations.satisfied(key) && daemon.rolls() {
            let pods = self.claimed_pods(daemon.ds, selector).await?;
            let step = rolling::step(daemon, nodes, &manage::by_node(&pods, false), now.1);
            self.pod_control
                .sync_nodes(daemon, key, &step.delete, &step.create_on)
                .await?;
        }
        let pods = self.claimed_pods(daemon.ds, selector).await?;
        self.history.cleanup(daemon.ds, old, &pods).await
    }

    /// The Pods `ds` controls after adopting orphans and releasing strays (`getDaemonPods`).
    async fn claimed_pods(
        &self,
        ds: &DaemonSet,
        selector: Option<&Selector>,
    ) -> Result<Vec<Arc<Pod>>> {
        let candidates = pod_index::pods_of(&self.pods, ds, Orphans::Included);
        crate::workload::controller_ref::claim(&self.client, ds, selector, candidates, || {
            fetch_latest(&self.client, ds)
        })
        .await
    }

    /// `updateDaemonSetStatus`: counts and writes the status unless unchanged; one retry after
    /// a failed write with a fresh GET (`StatusUpdateRetries = 1`).
    async fn update_status(
        &self,
        daemon: &Daemon<'_>,
        nodes: &[Arc<Node>],
        pods: &[Arc<Pod>],
        observe: bool,
    ) -> Result<Next> {
        let ds = daemon.ds;
        let counts = Counts::of(
            daemon,
            nodes,
            &manage::by_node(pods, false),
            Timestamp::now(),
        );
        let generation = ds.metadata.generation;
        let old = ds.status.clone().unwrap_or_default();
        if !counts.written(&old, generation) {
            let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
            let api: ResourceClient<DaemonSet> =
                ResourceClient::namespaced(self.client.clone(), ns);
            let options = UpdateOptions::default().field_manager(FIELD_MANAGER);
            let action = || format!("update status of {}", describe(ds));
            let mut next = ds.clone();
            counts.apply(
                next.status.get_or_insert_with(Default::default),
                generation,
                observe,
            );
            if api.update_status(&next, &options).await.is_err() {
                let name = ds.metadata.name.as_deref().unwrap_or_default();
                let mut fresh = api
                    .get(name, &GetOptions::default())
                    .await
                    .map_err(request(action()))?;
                counts.apply(
                    fresh.status.get_or_insert_with(Default::default),
                    generation,
                    observe,
                );
                api.update_status(&fresh, &options)
                    .await
                    .map_err(request(action()))?;
            }
        }
        let min_ready = daemon.min_ready_seconds();
        if min_ready > 0 && counts.ready != counts.available {
            let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
            return Ok(Next::After(after));
        }
        Ok(Next::Done)
    }
}
