//! How a [`crate::Manager`] runs: [`ManagerOptions`], built with methods from any crate
//! (controller-runtime's `ctrl.Options`). A binary usually gets them from
//! [`crate::ManagerFlags::options`].

use std::net::SocketAddr;
use std::time::Duration;

use kubegen_cache::{FactoryOptions, StoreMode};
use kubegen_client::ApiObject;
use kubegen_leaderelection::LeaderElectionConfig;
use kubegen_sharding::ReplicaConfig;

use crate::sharding::{Follow, Sharding, follow};
use crate::webhook::WebhookOptions;

/// How a [`crate::Manager`] runs. Built with methods, from any crate:
/// `ManagerOptions::default().workers(4).leader_election(Some(lease))`.
#[derive(Clone)]
pub struct ManagerOptions {
    pub(crate) workers: usize,
    pub(crate) cache_sync_timeout: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) leader_election: Option<LeaderElectionConfig>,
    pub(crate) metrics_bind_address: Option<SocketAddr>,
    pub(crate) health_probe_bind_address: Option<SocketAddr>,
    pub(crate) identity: Option<String>,
    pub(crate) factory: FactoryOptions,
    pub(crate) webhook: Option<WebhookOptions>,
    pub(crate) sharding: Option<Sharding>,
    /// The kinds that follow the sharded kind's shards ([`ManagerOptions::shard_owned`]).
    pub(crate) shard_owned: Vec<Follow>,
}

impl Default for ManagerOptions {
    /// Two workers per controller, 2 minutes to sync, 30 seconds to drain, no leader election,
    /// no endpoints (a binary sets them from [`crate::ManagerFlags`]), all namespaces.
    fn default() -> Self {
        ManagerOptions {
            workers: 2,
            cache_sync_timeout: Duration::from_secs(120),
            shutdown_timeout: Duration::from_secs(30),
            leader_election: None,
            metrics_bind_address: None,
            health_probe_bind_address: None,
            identity: None,
            factory: FactoryOptions::default(),
            webhook: None,
            sharding: None,
            shard_owned: Vec::new(),
        }
    }
}

impl std::fmt::Debug for ManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The factory options hold closures: left out.
        f.debug_struct("ManagerOptions")
            .field("workers", &self.workers)
            .field("cache_sync_timeout", &self.cache_sync_timeout)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("leader_election", &self.leader_election)
            .field("metrics_bind_address", &self.metrics_bind_address)
            .field("health_probe_bind_address", &self.health_probe_bind_address)
            .field("identity", &self.identity)
            .field("webhook", &self.webhook)
            .field("sharding", &self.sharding)
            .finish_non_exhaustive()
    }
}

impl ManagerOptions {
    /// Serve the handlers added to [`crate::Manager::webhook_server`] as these options say; `None` (the
    /// default) serves no webhooks.
    pub fn webhook(mut self, options: Option<WebhookOptions>) -> Self {
        self.webhook = options;
        self
    }

    /// Parallel reconciles of each controller that does not set its own
    /// ([`crate::Builder::workers`]); at least 1.
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// How long to wait for the caches before giving up.
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
        self
    }

    /// How long in-flight reconciles may take to finish on shutdown.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Run the workers only while holding this Lease; `None` (the default) runs them always.
    /// The candidate's identity is the manager's ([`ManagerOptions::identity`]).
    pub fn leader_election(mut self, election: Option<LeaderElectionConfig>) -> Self {
        self.leader_election = election;
        self
    }

    /// Shard the objects of kind `K` across the replicas over `ring`, in place of leader
    /// election (which is then ignored); `None` (the default) does not shard. Every replica
    /// runs its controllers at once, on the objects labelled with its shard; the shard's name is
    /// the manager's identity ([`ManagerOptions::identity`], in a pod its name). See
    /// `sharding.rs` for what the manager does and what it does not shard.
    pub fn sharding<K>(mut self, ring: Option<ReplicaConfig>) -> Self
    where
        K: ApiObject,
        K::Scope: 'static,
    {
        self.sharding = ring.map(Sharding::new::<K>);
        self
    }

    /// With [`ManagerOptions::sharding`]: the objects of kind `C` that a controller of the
    /// sharded kind owns (their controller `ownerReference` names it) follow their owner's
    /// shard, so the factory's informer of `C` holds only this shard's (about 1/N of them) and a
    /// controller that `owns` `C` sees its own objects' dependents. Label protocol only: where
    /// the ring selects with `shardSelector`, the informer of `C` holds every object. Without
    /// sharding it does nothing.
    pub fn shard_owned<C: ApiObject>(mut self) -> Self {
        self.shard_owned.push(follow::<C>());
        self
    }

    /// Serve `/metrics` here; `None` (the default) serves no metrics endpoint.
    pub fn metrics_bind_address(mut self, addr: Option<SocketAddr>) -> Self {
        self.metrics_bind_address = addr;
        self
    }

    /// Serve `/healthz` and `/readyz` here; `None` (the default) serves no probes.
    pub fn health_probe_bind_address(mut self, addr: Option<SocketAddr>) -> Self {
        self.health_probe_bind_address = addr;
        self
    }

    /// The replica's name: the Lease holder's identity (with sharding: the shard's name, a
    /// label value of at most 63 characters) and Events' `reportingInstance`. Default: the
    /// host name (in a pod, its name) plus a per-process suffix; with sharding the host name
    /// alone (set it when several replicas share a host).
    pub fn identity(mut self, identity: &str) -> Self {
        self.identity = Some(identity.to_owned());
        self
    }

    /// Options of the shared informer factory (namespace, selectors, transform, resync). Its
    /// metrics are the manager's, whatever these say.
    pub fn factory(mut self, options: FactoryOptions) -> Self {
        self.factory = options;
        self
    }

    /// How the informers keep their objects: decoded (the default) or as bytes decoded on read,
    /// for a smaller cache at some cost per read (see `kubegen_cache::StoreMode`). Set it after
    /// [`factory`](Self::factory), which replaces the factory's options whole.
    pub fn store_mode(mut self, mode: StoreMode) -> Self {
        self.factory = self.factory.store_mode(mode);
        self
    }
}
