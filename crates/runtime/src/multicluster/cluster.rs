//! One engaged member cluster as controllers see it: its name, its client, its informer factory
//! (the cache reader), its Event recorder, and its state. The counterpart of controller-runtime's
//! `cluster.Cluster` (`pkg/cluster`: `GetClient`, `GetCache`, `GetEventRecorderFor`), which
//! multicluster-runtime hands to reconcilers through `mgr.GetCluster(ctx, req.ClusterName)`.
//!
//! # Why a handle, not a lookup
//! multicluster-runtime's reconciler asks the manager for the cluster by name on every request,
//! and must handle "no such cluster" when it was disengaged in between. Here the request carries
//! the [`Cluster`] itself (see `request.rs`): a reconcile that started on a cluster finishes on
//! the same client and cache even if the cluster is disengaged meanwhile (its writes then fail
//! with a transport error, counted as a failed reconcile of a cluster nobody retries).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kubegen_cache::{ClientListWatchSource, InformerFactory, SharedIndexInformer};
use kubegen_client::Client;
use parking_lot::Mutex;

use crate::builder::Builder;
use crate::cached::CachedClient;
use crate::controller::Controller;
use crate::events::Recorder;
use crate::metrics::ProcessMetrics;
use crate::reconcile::Object;

/// How an engaged cluster is doing, as `/readyz` and the `multicluster_runtime_cluster_ready`
/// gauge report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterState {
    /// Engaged; its controllers' caches have not synced yet.
    Syncing,
    /// Answers, and every controller's caches synced.
    Ready,
    /// Did not answer the last probe: its controllers keep their queues and informers (which
    /// retry with backoff on their own), the other clusters are not affected.
    Unreachable {
        /// When the first failed probe in a row was sent.
        since: Instant,
        /// Why the last probe failed.
        reason: String,
    },
}

/// An engaged member cluster: what a controller of the fleet works with. Cheap to clone.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    client: Client,
    factory: InformerFactory<ClientListWatchSource>,
    hub: InformerFactory<ClientListWatchSource>,
    recorder: Recorder,
    metrics: ProcessMetrics,
    sync_timeout: Duration,
    state: Mutex<ClusterState>,
    /// True from engage until the fleet disengages the cluster; never true again after.
    engaged: AtomicBool,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("name", &self.inner.name)
            .field("state", &*self.inner.state.lock())
            .finish_non_exhaustive()
    }
}

/// What [`Cluster::new`] needs besides the member's client.
pub(crate) struct ClusterParts {
    pub(crate) hub: InformerFactory<ClientListWatchSource>,
    pub(crate) metrics: ProcessMetrics,
    pub(crate) sync_timeout: Duration,
    pub(crate) component: String,
    pub(crate) identity: String,
    pub(crate) factory: kubegen_cache::FactoryOptions,
}

impl Cluster {
    /// The member `name` reached by `client`, with informers of its own (not yet started).
    pub(crate) fn new(name: &str, client: Client, parts: ClusterParts) -> Cluster {
        let factory =
            InformerFactory::new(ClientListWatchSource::new(client.clone()), parts.factory);
        let recorder = Recorder::new(client.clone(), &parts.component, &parts.identity);
        Cluster {
            inner: Arc::new(Inner {
                name: name.to_owned(),
                client,
                factory,
                hub: parts.hub,
                recorder,
                metrics: parts.metrics,
                sync_timeout: parts.sync_timeout,
                state: Mutex::new(ClusterState::Syncing),
                engaged: AtomicBool::new(true),
            }),
        }
    }

    /// The cluster's name, as its provider gave it.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The client of this cluster (writes, and reads the cache does not cover).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// This cluster's informer factory: its informers start when the cluster is engaged and
    /// end their watches when it is disengaged. Wrap it in a generated `SharedInformerFactory`
    /// for typed accessors.
    pub fn factory(&self) -> &InformerFactory<ClientListWatchSource> {
        &self.inner.factory
    }

    /// The hub's informer factory (the manager's own): a controller of this cluster may take its
    /// primary kind, or a watched kind, from the hub, so that a hub object enqueues work in
    /// every member.
    pub fn hub(&self) -> &InformerFactory<ClientListWatchSource> {
        &self.inner.hub
    }

    /// Reads from this cluster's informers, writes to this cluster.
    pub fn cached_client(&self) -> CachedClient {
        CachedClient::new(
            self.inner.client.clone(),
            self.inner.factory.clone(),
            self.inner.sync_timeout,
        )
    }

    /// Records Events in this cluster (on objects of this cluster).
    pub fn recorder(&self) -> &Recorder {
        &self.inner.recorder
    }

    /// Whether the fleet still engages this cluster. Once false, no reconcile of it starts
    /// (one already running finishes); a re-engaged cluster of the same name is a new handle.
    pub fn is_engaged(&self) -> bool {
        self.inner.engaged.load(Ordering::Acquire)
    }

    /// Marks the cluster disengaged (see [`Cluster::is_engaged`]).
    pub(crate) fn mark_disengaged(&self) {
        self.inner.engaged.store(false, Ordering::Release);
    }

    /// How the cluster is doing.
    pub fn state(&self) -> ClusterState {
        self.inner.state.lock().clone()
    }

    /// A builder for the controller `name` of this cluster, whose primary objects come from
    /// `primary` (an informer of [`Cluster::factory`], or of [`Cluster::hub`]): with the
    /// manager's metrics under the controller's name and this cluster's recorder.
    pub fn controller<K: Object>(
        &self,
        name: &str,
        primary: &SharedIndexInformer<K>,
    ) -> Builder<K> {
        Controller::builder(name, primary)
            .metrics(&self.inner.metrics)
            .recorder(self.inner.recorder.clone())
    }

    /// Sets the state; returns whether it changed between ready and not ready.
    pub(crate) fn set_state(&self, state: ClusterState) -> bool {
        let mut current = self.inner.state.lock();
        let was_ready = *current == ClusterState::Ready;
        let now_ready = state == ClusterState::Ready;
        // Keep the start of an outage when it goes on.
        if let (ClusterState::Unreachable { since, .. }, ClusterState::Unreachable { reason, .. }) =
            (&*current, &state)
        {
            *current = ClusterState::Unreachable {
                since: *since,
                reason: reason.clone(),
            };
        } else {
            *current = state;
        }
        was_ready != now_ready
    }
}
