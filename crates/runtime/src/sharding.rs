//! Sharding in place of leader election ([`crate::ManagerOptions::sharding`]): every replica
//! runs its controllers at once, each on its own share of the sharded kind's objects, split by
//! a `kubegen-sharding` ring (issue 25; the model is timebertt/kubernetes-controller-sharding,
//! without its external sharder).
//!
//! What the manager does with a ring (the rest of the runtime is unchanged):
//! - The shared informer factory's informer of the sharded kind is the shard's
//!   ([`Replica::in_factory`]): it lists and watches only this replica's objects, by shard
//!   label or, where the server serves KEP-5866, by `shardSelector` ([`ReplicaConfig::selection`];
//!   by default the replica asks the server), and everything reading it (controllers, listers,
//!   the [`crate::CachedClient`]) sees only them. An object that leaves the shard (its label
//!   moved, or the ring moved its arc) leaves the cache, its delete event enqueues its key, and
//!   the worker finds nothing to do: objects that leave the shard drop out of the queue.
//! - The shard [`Replica`] (its Lease, the ring, the assignment passes) runs beside the
//!   controllers, in place of the leader elector.
//! - Every reconcile of the sharded kind passes [`Replica::begin`] in the worker loop: an object
//!   the ring now gives elsewhere (its label not yet moved) is dropped from the queue, one whose
//!   handover is in flight is retried shortly. On every change of the ring the controller
//!   re-enqueues its cached objects, since an object can become this replica's again without
//!   changing.
//! - On shutdown the controllers drain first, then the shard Lease is released, so the other
//!   replicas adopt its objects at once. A lost shard Lease stops the controllers and ends
//!   [`crate::Manager::run`] with [`Error::ShardLost`]: the process restarts as a fresh shard.
//!
//! # Scope and gaps
//! - One kind per ring (the one named in `sharding::<K>`), one ring per manager. Controllers of
//!   other primary kinds in a sharded manager run on every replica (a warning says so).
//! - Owned kinds named with [`crate::ManagerOptions::shard_owned`] follow their owner's shard
//!   (label protocol; see `kubegen-sharding`'s `dependents.rs`): the factory's informer of such
//!   a kind holds only this shard's dependents, which the replica labels with their controller
//!   owner's shard, as timebertt's sharder labels controlled objects. Server-side
//!   (`shardSelector` hashes each object's own UID) and for every other owned or watched kind,
//!   the informers stay unsharded, so each replica caches all of them. Their events enqueue
//!   their owner, which only the owner's shard reconciles, so this costs memory, not
//!   correctness.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kube_core::Selector;
use kubegen_cache::{ClientListWatchSource, InformerFactory};
use kubegen_client::{ApiObject, Client};
use kubegen_sharding::{Dependents, HashRing, Refusal, Replica, ReplicaConfig, RingKey};
use tokio::sync::watch;

use crate::error::Error;
use crate::metrics::ProcessMetrics;
use crate::stop::Stop;

/// How often the `controller_sharding_*` gauges are refreshed.
const REPORT_PERIOD: Duration = Duration::from_secs(1);

/// What a controller's workers need of the shard replica: permission per reconcile.
pub(crate) trait Gate<K>: Send + Sync {
    /// [`Replica::begin`]; the guard ends the reconcile when dropped.
    fn begin(&self, object: &K) -> Result<Box<dyn Send>, Refusal>;
    /// Changes of the ring.
    fn ring_changes(&self) -> watch::Receiver<HashRing>;
    /// What the ring hashes.
    fn key(&self) -> RingKey;
}

impl<K: ApiObject> Gate<K> for Replica<K> {
    fn begin(&self, object: &K) -> Result<Box<dyn Send>, Refusal> {
        Replica::begin(self, object).map(|guard| Box::new(guard) as Box<dyn Send>)
    }

    fn ring_changes(&self) -> watch::Receiver<HashRing> {
        Replica::ring_changes(self)
    }

    fn key(&self) -> RingKey {
        self.config().key
    }
}

/// The shard replica as the manager runs it, whatever its kind.
pub(crate) trait Shard: Send + Sync {
    /// The gate for controllers of the sharded kind `K`: an `Arc<dyn Gate<K>>`, boxed.
    fn gate(&self) -> Box<dyn Any>;
    /// Runs the replica until `until` resolves or its Lease is lost.
    fn run(
        &self,
        until: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), kubegen_sharding::Error>>;
    /// Records this replica's view in the `controller_sharding_*` gauges.
    fn report(&self, metrics: &ProcessMetrics);
    /// The kinds that follow the sharded kind's shards.
    fn dependents(&self) -> &Dependents;
    /// This replica's name on the ring, and the ring's changes.
    fn ring(&self) -> (String, watch::Receiver<HashRing>);
}

impl<K: ApiObject> Shard for Replica<K> {
    fn gate(&self) -> Box<dyn Any> {
        Box::new(Arc::new(self.clone()) as Arc<dyn Gate<K>>)
    }

    fn run(
        &self,
        until: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), kubegen_sharding::Error>> {
        Box::pin(Replica::run(self, until))
    }

    fn report(&self, metrics: &ProcessMetrics) {
        let objects = self.informer().lister().list(&Selector::default()).len();
        let members = self.ring().members().len();
        metrics.set_shard(&self.config().ring.name, self.is_active(), members, objects);
    }

    fn dependents(&self) -> &Dependents {
        Replica::dependents(self)
    }

    fn ring(&self) -> (String, watch::Receiver<HashRing>) {
        (self.config().identity.clone(), Replica::ring_changes(self))
    }
}

/// Makes the replica of the sharded kind over the manager's client and factory.
type MakeShard = Arc<
    dyn Fn(
            &Client,
            ReplicaConfig,
            &InformerFactory<ClientListWatchSource>,
        ) -> Result<Box<dyn Shard>, kubegen_sharding::Error>
        + Send
        + Sync,
>;

/// Makes the factory's informer of one owned kind follow the shards (see [`Dependents`]).
pub(crate) type Follow =
    Arc<dyn Fn(&Dependents, &InformerFactory<ClientListWatchSource>) + Send + Sync>;

/// The [`Follow`] of kind `C`.
pub(crate) fn follow<C: ApiObject>() -> Follow {
    Arc::new(|dependents, factory| {
        dependents.follow::<C>(factory);
    })
}

/// [`crate::ManagerOptions::sharding`]'s ring with what it needs of the sharded kind.
#[derive(Clone)]
pub(crate) struct Sharding {
    /// The ring, its scope and timings; the identity is filled in by the manager.
    pub(crate) config: ReplicaConfig,
    /// The sharded kind, for logs.
    pub(crate) kind: String,
    make: MakeShard,
}

impl std::fmt::Debug for Sharding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharding")
            .field("config", &self.config)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Sharding {
    /// Shards the kind `K` over `config`'s ring.
    pub(crate) fn new<K>(config: ReplicaConfig) -> Sharding
    where
        K: ApiObject,
        K::Scope: 'static,
    {
        let make: MakeShard = Arc::new(|client: &Client, config, factory: &InformerFactory<_>| {
            let replica = Replica::<K>::in_factory(client.clone(), config, factory)?;
            Ok(Box::new(replica) as Box<dyn Shard>)
        });
        Sharding {
            config,
            kind: K::kind(&()).into_owned(),
            make,
        }
    }

    /// The replica; `factory`'s informer of the sharded kind becomes its shard's, and those of
    /// the `owned` kinds follow it.
    pub(crate) fn replica(
        &self,
        client: &Client,
        factory: &InformerFactory<ClientListWatchSource>,
        owned: &[Follow],
    ) -> Result<Box<dyn Shard>, Error> {
        let shard = (self.make)(client, self.config.clone(), factory).map_err(|source| {
            Error::ShardingFailed {
                ring: self.config.ring.name.clone(),
                source,
            }
        })?;
        owned
            .iter()
            .for_each(|follow| follow(shard.dependents(), factory));
        Ok(shard)
    }
}

/// Runs the controllers (`controllers(until)` runs them until `until` and drains them) beside
/// the shard replica, until `stop` or until the shard Lease is lost; the Lease is released
/// after the controllers drained.
pub(crate) async fn work<F: Future<Output = ()>>(
    shard: &dyn Shard,
    ring: &str,
    metrics: &ProcessMetrics,
    stop: &Stop,
    controllers: impl FnOnce(Stop) -> F,
) -> Result<(), Error> {
    let (until, drained, ended) = (Stop::new(), Stop::new(), Stop::new());
    let release = drained.clone();
    let replica = async {
        let outcome = shard
            .run(Box::pin(async move { release.wait().await }))
            .await;
        ended.trigger();
        outcome
    };
    let work = async {
        let end = async {
            tokio::select! {
                () = stop.wait() => {}
                () = ended.wait() => tracing::warn!(ring, "shard lease lost; stopping workers"),
            }
            until.trigger();
        };
        tokio::join!(controllers(until.clone()), end);
        drained.trigger();
    };
    let report = async {
        let mut tick = tokio::time::interval(REPORT_PERIOD);
        loop {
            tokio::select! {
                _ = tick.tick() => shard.report(metrics),
                () = ended.wait() => break,
            }
        }
        shard.report(metrics);
    };
    let (outcome, (), ()) = tokio::join!(replica, work, report);
    outcome.map_err(|source| Error::ShardingFailed {
        ring: ring.to_owned(),
        source,
    })?;
    if stop.is_triggered() {
        Ok(())
    } else {
        Err(Error::ShardLost {
            ring: ring.to_owned(),
        })
    }
}
