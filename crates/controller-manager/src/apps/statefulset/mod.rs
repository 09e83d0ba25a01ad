//! The statefulset controller: Pods with stable names `<set>-<ordinal>`, their own claims from
//! `volumeClaimTemplates`, created and deleted in order (or in parallel), rolled onto new
//! templates recorded as ControllerRevisions.
//!
//! Mirrors `pkg/controller/statefulset/stateful_set.go` (v1.36): event handlers, `sync`,
//! `getPodsForStatefulSet`, `adoptOrphanRevisions`, the requeue after `minReadySeconds`.
//!
//! # One sync
//! ```mermaid
//! sequenceDiagram
//!     participant Q as workqueue
//!     participant S as sync
//!     participant API as API server
//!     Q->>S: ns/db
//!     S->>S: own writes seen by the informers? (consistency)
//!     S->>API: adopt orphan ControllerRevisions
//!     S->>API: adopt / release Pods named db-N
//!     S->>API: create the update revision if the template is new
//!     S->>API: create claims + Pods, delete condemned, roll one Pod (control.rs)
//!     S->>API: PUT status (replicas, ready, current/updated, revisions)
//! ```
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `control`
//! - `history`, `pod_control`
//! - `consistency`, `status`
//! - `identity`, `revision`

mod consistency;
mod control;
mod history;
mod identity;
mod pod_control;
mod revision;
mod status;

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::Client;
use kubegen_workqueue::RateLimitingQueue;

use crate::Result;
use crate::context::{Context, Runner};
use crate::worker::{self, Next, QueueLoop, Retries};
use crate::workload::events::EventSink;
use crate::workload::meta::{controller_of, fetch_latest, key_of, selector_of, selects, split_key};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::shared::register;
use consistency::Consistency;
use control::Control;
use history::History;
use identity::{is_member_of, spec};
use pod_control::PodControl;

/// How long a sync waiting for its own writes to reach the informers waits before looking
/// again (the informer's event for the write normally wakes it first).
const CONSISTENCY_RECHECK: Duration = Duration::from_secs(1);

/// Registers the statefulset controller on the manager's shared informers (StatefulSets, Pods,
/// PersistentVolumeClaims, ControllerRevisions); the runner works its queue with `workers`
/// workers (`--concurrent-statefulset-syncs`, 5) until the manager stops.
pub(crate) fn start(context: &Context, workers: usize) -> Runner {
    let loops = StatefulSetController::new(context).map(|controller| {
        let queue = controller.inner.queue.clone();
        vec![QueueLoop::new(
            queue,
            workers,
            Retries::Forever,
            move |key: String| {
                let c = controller.clone();
                async move { c.inner.sync(&key).await }
            },
        )]
    });
    worker::run("statefulset", context.stop.clone(), loops)
}

/// The StatefulSet controller; cheap to clone.
#[derive(Clone)]
struct StatefulSetController {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    sets: Lister<StatefulSet>,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    consistency: Arc<Consistency>,
    control: Control,
}

impl StatefulSetController {
    fn new(context: &Context) -> Result<Self> {
        let sets = context.factory.informer::<StatefulSet>();
        let pods = context.factory.informer::<Pod>();
        let claims = context.factory.informer::<PersistentVolumeClaim>();
        let revisions = context.factory.informer::<ControllerRevision>();
        let client = context.client.clone();
        let consistency = Arc::new(Consistency::default());
        let control = Control {
            pods: PodControl {
                client: client.clone(),
                pods: pods.lister(),
                claims: claims.lister(),
                events: EventSink::new(client.clone(), "statefulset-controller"),
                consistency: consistency.clone(),
            },
            history: History {
                client: client.clone(),
                revisions: revisions.lister(),
            },
        };
        let inner = Arc::new(Inner {
            client,
            sets: sets.lister(),
            pods: pods.lister(),
            queue: worker::queue("statefulset"),
            consistency,
            control,
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &sets,
            HandlerFns::new()
                .on_add(move |set: &Arc<StatefulSet>, _| a.queue.add(key_of(set.as_ref())))
                .on_update(move |_, set: &Arc<StatefulSet>| u.queue.add(key_of(set.as_ref())))
                .on_delete(move |gone: &DeletedObject<StatefulSet>| {
                    d.queue.add(key_of(gone.object().as_ref()))
                }),
        )?;
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &pods,
            HandlerFns::new()
                .on_add(move |pod: &Arc<Pod>, _| a.add_pod(pod))
                .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| u.update_pod(old, new))
                .on_delete(move |gone: &DeletedObject<Pod>| d.delete_pod(gone.object())),
        )?;
        pod_index::add_to(&pods)?;
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &claims,
            HandlerFns::new()
                .on_add(move |c: &Arc<PersistentVolumeClaim>, _| {
                    a.consistency.observed_claim(c, false)
                })
                .on_update(move |_, c: &Arc<PersistentVolumeClaim>| {
                    u.consistency.observed_claim(c, false)
                })
                .on_delete(move |gone: &DeletedObject<PersistentVolumeClaim>| {
                    d.consistency.observed_claim(gone.object(), true)
                }),
        )?;
        Ok(Self { inner })
    }
}

impl Inner {
    /// The set a controller reference names, if cached with the same UID (`resolveControllerRef`).
    fn resolve(&self, pod: &Pod) -> Option<Arc<StatefulSet>> {
        let r = controller_of(pod)?;
        if r.kind != "StatefulSet" {
            return None;
        }
        let namespace = pod.metadata.namespace.as_deref();
        self.sets
            .get(namespace, &r.name)
            .filter(|s| s.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    /// Sets whose selector matches an orphan Pod (`getStatefulSetsForPod`).
    fn selecting(&self, pod: &Pod) -> Vec<Arc<StatefulSet>> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        self.sets
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|set| {
                let selector = selector_of(set.as_ref(), Some(&spec(set).selector))
                    .ok()
                    .flatten();
                selects(selector.as_ref(), pod.metadata.labels.as_ref())
            })
            .collect()
    }

    fn enqueue_all(&self, sets: Vec<Arc<StatefulSet>>) {
        for set in sets {
            self.queue.add(key_of(set.as_ref()));
        }
    }

    fn add_pod(&self, pod: &Arc<Pod>) {
        self.consistency.observed_pod(pod, false);
        if pod.metadata.deletion_timestamp.is_some() {
            return self.delete_pod(pod);
        }
        match controller_of(pod.as_ref()) {
            Some(_) => self.enqueue_all(self.resolve(pod).into_iter().collect()),
            None => self.enqueue_all(self.selecting(pod)),
        }
    }

    fn update_pod(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        self.consistency.observed_pod(new, false);
        let (old_ref, new_ref) = (controller_of(old.as_ref()), controller_of(new.as_ref()));
        let ref_changed = old_ref != new_ref;
        if ref_changed && old_ref.is_some() {
            self.enqueue_all(self.resolve(old).into_iter().collect());
        }
        if new_ref.is_some() {
            let Some(set) = self.resolve(new) else {
                return;
            };
            let min_ready = spec(&set).min_ready_seconds.unwrap_or(0);
            if !crate::workload::pods::is_ready(old)
                && crate::workload::pods::is_ready(new)
                && min_ready > 0
            {
                let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
                self.queue.add_after(key_of(set.as_ref()), after);
            }
            self.queue.add(key_of(set.as_ref()));
            return;
        }
        if old.metadata.labels != new.metadata.labels || ref_changed {
            self.enqueue_all(self.selecting(new));
        }
    }

    fn delete_pod(&self, pod: &Arc<Pod>) {
        self.consistency.observed_pod(pod, true);
        self.enqueue_all(self.resolve(pod).into_iter().collect());
    }

    /// `sync`: one StatefulSet.
    async fn sync(&self, key: &str) -> Result<Next> {
        if !self.consistency.ready(key) {
            return Ok(Next::After(CONSISTENCY_RECHECK));
        }
        let (namespace, name) = split_key(key);
        let Some(set) = self.sets.get(Some(namespace), name) else {
            self.consistency.clear(key);
            return Ok(Next::Done);
        };
        let selector = match selector_of(set.as_ref(), Some(&spec(&set).selector)) {
            Ok(selector) => selector,
            Err(e) => {
                tracing::warn!(set = key, error = %e, "invalid StatefulSet selector");
                return Ok(Next::Done);
            }
        };
        let revisions = self.control.history.list(&set, selector.as_ref());
        if revisions.iter().any(|r| controller_of(r).is_none()) {
            let fresh = fetch_latest(&self.client, set.as_ref()).await?;
            if fresh.metadata.uid != set.metadata.uid || fresh.metadata.deletion_timestamp.is_some()
            {
                return Err(crate::Error::InvalidObject {
                    object: crate::workload::meta::describe(set.as_ref()),
                    reason: "can't adopt ControllerRevisions: gone or being deleted".into(),
                });
            }
            self.control.history.adopt_orphans(&set, &revisions).await?;
        }
        let candidates: Vec<_> = pod_index::pods_of(&self.pods, set.as_ref(), Orphans::Included)
            .into_iter()
            .filter(|p| is_member_of(&set, p))
            .collect();
        let fresh = || fetch_latest(&self.client, set.as_ref());
        let pods = crate::workload::controller_ref::claim(
            &self.client,
            set.as_ref(),
            selector.as_ref(),
            candidates,
            fresh,
        )
        .await?;
        let now = Timestamp::now();
        let status = self.control.update(&set, &pods, now).await?;
        let min_ready = spec(&set).min_ready_seconds.unwrap_or(0);
        if min_ready > 0
            && status.ready_replicas
                != Some(status.available_replicas.unwrap_or(0)).filter(|n| *n != 0)
        {
            let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
            return Ok(Next::After(after));
        }
        Ok(Next::Done)
    }
}
