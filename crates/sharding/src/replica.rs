//! One replica of a sharded controller: its shard Lease, its share of the objects, and the gate
//! every reconcile passes.
//!
//! # Guarantees
//! - A replica reconciles an object only through a [`WorkGuard`] from [`Replica::begin`], which it
//!   gets only while it holds its Lease, the ring it computes gives the object to it, no shard of
//!   the ring runs the other [`Selection`], and no other guard or handover for that object is
//!   running in this replica. With labels the object must also carry its shard label and no
//!   drain label; with `shardSelector` the other shards must have acknowledged (see
//!   `server_side.rs`, whose guarantees follow from the same gate).
//! - With labels, it gives an object away (removes its label) only while holding that object's
//!   slot, so after the reconcile in flight ends; the write carries the object's
//!   `resourceVersion`, so it cannot undo a change it has not seen. It then refuses every cached
//!   version up to the one it wrote.
//! - With labels, another replica takes an object only when it is unlabelled (released) or
//!   labelled with a shard whose Lease is expired or gone. A shard stops starting reconciles when
//!   its renew deadline passes, before its Lease can expire, as a leader does.
//!
//! Together: no object is reconciled by two replicas at once, and every object ends up with the
//! shard the ring gives it (labelled, or in its `shardSelector`), whose informer delivers it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Selector;
use kubegen_cache::{
    ClientListWatch, ClientListWatchSource, InformerFactory, InformerOptions, ListSelectors,
    SharedIndexInformer,
};
use kubegen_client::{ApiObject, Client, ListOptions, ResourceClient};
use kubegen_leaderelection::{LeaderCallbacks, LeaderElector, Leadership};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::acks::Acks;
use crate::config::{ReplicaConfig, Selection};
use crate::dependents::Dependents;
use crate::error::Error;
use crate::key::RingKey;
use crate::list_watch::{shard_list_watch, unassigned_informer};
use crate::object::{object_key, resource_version};
use crate::ring::{HashRing, hash};
use crate::selection::Filter;

/// Why [`Replica::begin`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The object is not (or no longer) this replica's: drop the key, its owner has it.
    NotMine,
    /// A reconcile or handover of this object is running here: try again shortly.
    Busy,
}

/// What one object's slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// A reconcile or a handover is running, of an object whose selector field hashes to this
    /// (a server-side shard acknowledges a ring only once none of those it gives away runs).
    Busy(u64),
    /// Given away by a write that produced this resourceVersion: older cached copies are stale.
    Released(u64),
}

pub(crate) struct Inner<K: ApiObject> {
    pub(crate) config: ReplicaConfig,
    pub(crate) client: Client,
    /// This shard's objects (labelled with it, or in its `shardSelector`).
    pub(crate) mine: SharedIndexInformer<K>,
    /// Whether `mine` is this replica's to start and stop (not a caller's shared informer).
    owns_informer: bool,
    /// Objects without a shard label (label protocol only; never started server-side).
    pub(crate) unassigned: SharedIndexInformer<K>,
    /// Labels or `shardSelector`, and the `shardSelector` of `mine`.
    pub(crate) filter: Arc<Filter>,
    /// Server-side: the acknowledgements of the ring.
    pub(crate) acks: Mutex<Acks>,
    /// Whether a live shard of the ring runs the other protocol (then nothing starts).
    pub(crate) mixed: AtomicBool,
    /// The kinds that follow this one's shards.
    pub(crate) dependents: Dependents,
    /// The ring's Leases.
    pub(crate) leases: SharedIndexInformer<Lease>,
    /// The ring as last computed.
    pub(crate) ring: watch::Sender<HashRing>,
    /// Whether this replica holds its Lease (and so may start work).
    pub(crate) active: AtomicBool,
    /// Per object (`namespace/name`): a running reconcile or handover, or the last release.
    slots: Mutex<HashMap<String, Slot>>,
}

/// A replica of a sharded controller; cheap to clone.
pub struct Replica<K: ApiObject> {
    pub(crate) inner: Arc<Inner<K>>,
}

impl<K: ApiObject> Clone for Replica<K> {
    fn clone(&self) -> Self {
        Replica {
            inner: Arc::clone(&self.inner),
        }
    }
}

/// Held while one reconcile of one object runs; dropping it ends the reconcile.
pub struct WorkGuard<K: ApiObject> {
    inner: Arc<Inner<K>>,
    key: String,
}

impl<K: ApiObject> Drop for WorkGuard<K> {
    fn drop(&mut self) {
        self.inner.slots.lock().remove(&self.key);
    }
}

impl<K: ApiObject> Replica<K> {
    /// A replica of `config.ring` talking through `client`, with an informer of its own;
    /// nothing runs until [`Replica::run`].
    ///
    /// # Errors
    /// [`Error::Identity`] for an empty identity; [`Error::Lease`] for bad timings.
    pub fn new(client: Client, config: ReplicaConfig) -> Result<Replica<K>, Error> {
        let filter = Replica::<K>::filter(&client, &config);
        let list_watch =
            shard_list_watch::<K>(&config, &client, &filter, None, &ListSelectors::default());
        let mut options = InformerOptions::default();
        options.name = format!("shard:{}", config.identity);
        let mine = SharedIndexInformer::new(list_watch, options);
        Replica::build(client, config, mine, filter, true)
    }

    /// A replica whose shard informer is `factory`'s informer of `K` (a controller manager's,
    /// which the caller starts and stops), created here: ask for `K`'s informer only after this,
    /// so that everything reading it sees only the shard. The factory's namespace and selectors
    /// apply as well as the ring's.
    ///
    /// # Errors
    /// As [`Replica::new`]; [`Error::InformerTaken`] when `factory` made its informer of `K`
    /// before.
    pub fn in_factory(
        client: Client,
        config: ReplicaConfig,
        factory: &InformerFactory<ClientListWatchSource>,
    ) -> Result<Replica<K>, Error> {
        let filter = Replica::<K>::filter(&client, &config);
        let mut made = false;
        let mine = factory.informer_with::<K, _>(|namespace, selectors| {
            made = true;
            shard_list_watch::<K>(&config, &client, &filter, namespace, selectors)
        });
        if !made {
            return Err(Error::InformerTaken {
                kind: K::kind(&()).into_owned(),
            });
        }
        Replica::build(client, config, mine, filter, false)
    }

    fn filter(client: &Client, config: &ReplicaConfig) -> Arc<Filter> {
        let collection = config
            .objects::<K>(client.clone())
            .collection_path()
            .to_owned();
        Arc::new(Filter::new(
            config.selection,
            client.clone(),
            collection,
            config.key.selector_field(),
        ))
    }

    fn build(
        client: Client,
        config: ReplicaConfig,
        mine: SharedIndexInformer<K>,
        filter: Arc<Filter>,
        owns_informer: bool,
    ) -> Result<Replica<K>, Error> {
        if config.identity.is_empty() || config.identity.len() > 63 {
            return Err(Error::Identity {
                identity: config.identity.clone(),
                why: "must be 1 to 63 characters (a label value)",
            });
        }
        config.lease_config(Selection::Labels).validate()?;
        let unassigned = unassigned_informer(&config, &client);
        let lease_client =
            ResourceClient::<Lease>::namespaced(client.clone(), &config.ring.lease_namespace);
        let leases = SharedIndexInformer::new(
            ClientListWatch::new(
                lease_client,
                ListOptions::default().labels(config.ring.lease_selector()),
            ),
            InformerOptions::default(),
        );
        let owner = (K::api_version(&()).into_owned(), K::kind(&()).into_owned());
        let dependents = Dependents::new(
            config.clone(),
            client.clone(),
            Arc::clone(&filter),
            leases.lister(),
            owner,
        );
        Ok(Replica {
            inner: Arc::new(Inner {
                config,
                client,
                mine,
                owns_informer,
                unassigned,
                filter,
                acks: Mutex::new(Acks::default()),
                mixed: AtomicBool::new(false),
                dependents,
                leases,
                ring: watch::Sender::new(HashRing::default()),
                active: AtomicBool::new(false),
                slots: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The ring, scope and timings this replica runs with.
    pub fn config(&self) -> &ReplicaConfig {
        &self.inner.config
    }

    /// This replica's shard name.
    pub fn identity(&self) -> &str {
        &self.inner.config.identity
    }

    /// The informer of this shard's objects: register the controller's handlers here.
    pub fn informer(&self) -> &SharedIndexInformer<K> {
        &self.inner.mine
    }

    /// The ring as this replica computed it last.
    pub fn ring(&self) -> HashRing {
        self.inner.ring.borrow().clone()
    }

    /// Changes of the ring (and so of this replica's share): re-enqueue the cached objects on
    /// each, since an object can become this replica's again without changing itself.
    pub fn ring_changes(&self) -> watch::Receiver<HashRing> {
        self.inner.ring.subscribe()
    }

    /// Whether this replica holds its shard Lease.
    pub fn is_active(&self) -> bool {
        self.inner.active.load(Ordering::Acquire)
    }

    /// The kinds whose objects follow their controller owner's shard (objects of this kind):
    /// [`Dependents::follow`] for each kind the controller owns, before [`Replica::run`].
    pub fn dependents(&self) -> &Dependents {
        &self.inner.dependents
    }

    /// How this replica selects its objects, once decided (at the first list of its informer
    /// or when it runs): [`Selection::Labels`] or [`Selection::ShardSelector`].
    pub fn selection(&self) -> Option<Selection> {
        self.inner.filter.decided()
    }

    /// Starts a reconcile of `object` (as read from [`Replica::informer`]'s cache).
    ///
    /// # Errors
    /// [`Refusal::NotMine`] when the object is not this replica's to work on now;
    /// [`Refusal::Busy`] when a reconcile or handover of it is already running here, while a
    /// shard of the ring runs the other [`Selection`], with labels (and [`RingKey::Namespace`])
    /// while objects of its namespace are still unassigned, and server-side while the shards
    /// that had it have not acknowledged the ring yet.
    pub fn begin(&self, object: &K) -> Result<WorkGuard<K>, Refusal> {
        let inner = &self.inner;
        if !inner.active.load(Ordering::Acquire) {
            return Err(Refusal::NotMine);
        }
        if inner.mixed.load(Ordering::Acquire) {
            return Err(Refusal::Busy);
        }
        let meta = object.meta();
        let key = object_key(meta);
        let mut slots = inner.slots.lock();
        // Under the slots' lock: a server-side pass changes the ring, then reads the slots.
        if inner.filter.server_side() {
            inner.server_side_gate(inner.hash_of(meta))?;
        } else {
            inner.label_gate(meta, slots.get(&key))?;
        }
        if let Some(Slot::Busy(_)) = slots.get(&key) {
            return Err(Refusal::Busy);
        }
        slots.insert(key.clone(), Slot::Busy(inner.hash_of(meta)));
        Ok(WorkGuard {
            inner: Arc::clone(inner),
            key,
        })
    }

    /// Runs the replica until `shutdown` resolves or its Lease is lost: informers, the
    /// selection (asking the server, for [`Selection::Auto`]), the shard Lease, and the
    /// assignment passes. On shutdown it stops starting reconciles, waits for the running ones,
    /// and releases its Lease, so the others take its objects at once.
    ///
    /// # Errors
    /// [`Error::Lease`] if the Lease's elector cannot start.
    pub async fn run(&self, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
        let inner = &self.inner;
        let _stop = Stopper(inner);
        if inner.owns_informer {
            inner.mine.start();
        }
        inner.leases.start();
        tokio::pin!(shutdown);
        tokio::select! {
            selection = inner.filter.decide() => self.run_as(selection, shutdown).await,
            () = &mut shutdown => Ok(()),
        }
    }

    /// [`Replica::run`] once the selection is known.
    async fn run_as(
        &self,
        selection: Selection,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), Error> {
        let inner = &self.inner;
        if selection == Selection::Labels {
            inner.unassigned.start();
        }
        inner.dependents.start();
        let elector =
            LeaderElector::new(inner.client.clone(), inner.config.lease_config(selection))?;
        let callbacks = Callbacks {
            inner: Arc::clone(inner),
        };
        let drained = async {
            shutdown.await;
            inner.active.store(false, Ordering::Release);
            inner.wait_idle().await;
        };
        let outcome = elector.run(callbacks, drained).await;
        outcome.map(|_| ()).map_err(Error::from)
    }
}

/// Stops what [`Replica::run`] started however `run` ends: returned, failed, or dropped by its
/// caller (an aborted task, as when the process dies). Started informers run on tasks of their
/// own, so without this a dropped `run` would leave them listing and watching.
struct Stopper<'a, K: ApiObject>(&'a Inner<K>);

impl<K: ApiObject> Drop for Stopper<'_, K> {
    fn drop(&mut self) {
        let inner = self.0;
        inner.active.store(false, Ordering::Release);
        if inner.owns_informer {
            inner.mine.shutdown();
        }
        inner.unassigned.shutdown();
        inner.dependents.shutdown();
        inner.leases.shutdown();
    }
}

impl<K: ApiObject> Inner<K> {
    /// The hash of the object's `shardSelector` field (what a server-side ring places).
    pub(crate) fn hash_of(&self, meta: &ObjectMeta) -> u64 {
        hash(self.filter.field().of(meta))
    }

    /// The label protocol's part of [`Replica::begin`], given the object's slot.
    fn label_gate(&self, meta: &ObjectMeta, slot: Option<&Slot>) -> Result<(), Refusal> {
        if !self.owns(meta) {
            return Err(Refusal::NotMine);
        }
        if self.group_incomplete(meta) || self.dependents.settling(&self.config.key.of(meta)) {
            return Err(Refusal::Busy);
        }
        match slot {
            Some(Slot::Released(rv)) if resource_version(meta) <= *rv => Err(Refusal::NotMine),
            _ => Ok(()),
        }
    }

    /// Whether `meta` is this replica's to work on by labels (labelled, ring agrees, no drain).
    fn owns(&self, meta: &ObjectMeta) -> bool {
        let labels = meta.labels.as_ref();
        let shard = labels.and_then(|l| l.get(&self.config.ring.shard_label()));
        let draining = labels.is_some_and(|l| l.contains_key(&self.config.ring.drain_label()));
        let me = self.config.identity.as_str();
        shard.map(String::as_str) == Some(me)
            && !draining
            && self.ring.borrow().owner(&self.config.key.of(meta)) == Some(me)
    }

    /// With [`RingKey::Namespace`]: whether objects of `meta`'s namespace are still unassigned
    /// (just created, or let go by their old shard), so this shard's cache does not hold the
    /// whole namespace yet and a reconcile judging it would see part of it.
    fn group_incomplete(&self, meta: &ObjectMeta) -> bool {
        let Some(namespace) = meta.namespace.as_deref() else {
            return false;
        };
        self.config.key == RingKey::Namespace
            && !self
                .unassigned
                .lister()
                .namespaced(namespace)
                .list(&Selector::default())
                .is_empty()
    }

    /// Takes the slot of the object with `meta` for a handover; false when busy, or released at
    /// or after its version.
    pub(crate) fn claim_for_handover(&self, meta: &ObjectMeta) -> bool {
        let mut slots = self.slots.lock();
        match slots.get(&object_key(meta)) {
            Some(Slot::Busy(_)) => false,
            Some(Slot::Released(released)) if resource_version(meta) <= *released => false,
            _ => {
                slots.insert(object_key(meta), Slot::Busy(self.hash_of(meta)));
                true
            }
        }
    }

    /// Ends a handover: released at `rv`, or (None) not done, slot free again.
    pub(crate) fn finish_handover(&self, key: &str, released_at: Option<u64>) {
        let mut slots = self.slots.lock();
        match released_at {
            Some(rv) => slots.insert(key.to_owned(), Slot::Released(rv)),
            None => slots.remove(key),
        };
    }

    /// Forgets releases of objects that left this shard's cache (they will not come back stale).
    pub(crate) fn forget_released(&self, still_cached: impl Fn(&str) -> bool) {
        self.slots
            .lock()
            .retain(|key, slot| matches!(slot, Slot::Busy(_)) || still_cached(key));
    }

    /// The hashes of the objects whose reconcile or handover runs.
    pub(crate) fn busy_hashes(&self) -> Vec<u64> {
        let slots = self.slots.lock();
        let busy = slots.values().filter_map(|slot| match slot {
            Slot::Busy(h) => Some(*h),
            Slot::Released(_) => None,
        });
        busy.collect()
    }

    /// Resolves once no reconcile or handover runs.
    async fn wait_idle(&self) {
        while !self.busy_hashes().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The shard Lease's callbacks: hold the Lease, run the assignment passes.
struct Callbacks<K: ApiObject> {
    inner: Arc<Inner<K>>,
}

impl<K: ApiObject> LeaderCallbacks for Callbacks<K> {
    fn started_leading(&self, leadership: Leadership) {
        self.inner.active.store(true, Ordering::Release);
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            tokio::select! {
                () = leadership.lost() => {}
                () = Arc::clone(&inner).assign_loop() => {}
            }
            inner.active.store(false, Ordering::Release);
        });
    }

    fn stopped_leading(&self) {
        self.inner.active.store(false, Ordering::Release);
    }
}
