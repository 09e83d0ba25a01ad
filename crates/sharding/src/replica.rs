//! One replica of a sharded controller: its shard Lease, its share of the objects, and the gate
//! every reconcile passes.
//!
//! # Guarantees
//! - A replica reconciles an object only through a [`WorkGuard`] from [`Replica::begin`], which it
//!   gets only while it holds its Lease, the object carries its shard label and no drain label,
//!   the ring it computes gives the object to it, and no other guard or handover for that object
//!   is running in this replica.
//! - It gives an object away (removes its label) only while holding that object's slot, so after
//!   the reconcile in flight ends; the write carries the object's `resourceVersion`, so it cannot
//!   undo a change it has not seen. It then refuses every cached version up to the one it wrote.
//! - Another replica takes an object only when it is unlabelled (released) or labelled with a
//!   shard whose Lease is expired or gone. A shard stops starting reconciles when its renew
//!   deadline passes, before its Lease can expire, as a leader does.
//!
//! Together: no object is reconciled by two replicas at once, and every object ends up labelled
//! with the shard the ring gives it, whose informer then delivers it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Selector;
use kubegen_cache::{ClientListWatch, InformerOptions, SharedIndexInformer};
use kubegen_client::{ApiObject, Client, ListOptions, ResourceClient};
use kubegen_leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, Leadership};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::error::Error;
use crate::key::RingKey;
use crate::labels::Ring;
use crate::ring::HashRing;

/// How a replica takes part in its ring.
#[derive(Clone, Debug)]
pub struct ReplicaConfig {
    /// The ring and where its Leases live.
    pub ring: Ring,
    /// This replica's shard name: its Lease's name and its label value (e.g. the Pod name).
    pub identity: String,
    /// Shard Lease duration (leader election's `LeaseDuration`).
    pub lease_duration: Duration,
    /// Stop starting reconciles when the Lease could not be renewed for this long.
    pub renew_deadline: Duration,
    /// Lease renewal interval.
    pub retry_period: Duration,
    /// How often the ring is recomputed and objects are assigned, handed over and adopted.
    pub assign_period: Duration,
    /// Shard only the objects in this namespace (None: every namespace, or a cluster-scoped kind).
    pub namespace: Option<String>,
    /// Shard only the objects matching this label selector (e.g. `app.kubernetes.io/managed-by=x`);
    /// None shards every object of the kind in scope. Objects outside it are never labelled.
    pub selector: Option<String>,
    /// What the ring hashes for an object.
    pub key: RingKey,
}

impl ReplicaConfig {
    /// The shard `identity` of `ring`, with leader election's default timings.
    pub fn new(ring: Ring, identity: &str) -> ReplicaConfig {
        ReplicaConfig {
            ring,
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            assign_period: Duration::from_secs(1),
            namespace: None,
            selector: None,
            key: RingKey::Object,
        }
    }

    /// The label selector of the objects this replica holds: what its informer (or a
    /// factory informer handed to [`Replica::with_informer`]) must list and watch.
    pub fn shard_selector(&self) -> String {
        self.scoped(self.ring.selector_for(&self.identity))
    }

    /// `selector` restricted to the objects this ring shards.
    pub(crate) fn scoped(&self, selector: String) -> String {
        match &self.selector {
            Some(extra) => format!("{selector},{extra}"),
            None => selector,
        }
    }

    /// A client for the kind in this ring's scope.
    pub(crate) fn objects<K: ApiObject>(&self, client: Client) -> ResourceClient<K> {
        match &self.namespace {
            Some(namespace) => ResourceClient::namespaced(client, namespace),
            None => ResourceClient::all_namespaces(client),
        }
    }

    fn lease_config(&self) -> LeaderElectionConfig {
        let mut config =
            LeaderElectionConfig::new(&self.ring.lease_namespace, &self.identity, &self.identity);
        config.lease_duration = self.lease_duration;
        config.renew_deadline = self.renew_deadline;
        config.retry_period = self.retry_period;
        config.release_on_cancel = true;
        config.lease_labels = self.ring.lease_labels();
        config
    }
}

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
    /// A reconcile or a handover is running.
    Busy,
    /// Given away by a write that produced this resourceVersion: older cached copies are stale.
    Released(u64),
}

pub(crate) struct Inner<K: ApiObject> {
    pub(crate) config: ReplicaConfig,
    pub(crate) client: Client,
    /// Objects labelled with this shard.
    pub(crate) mine: SharedIndexInformer<K>,
    /// Whether `mine` is this replica's to start and stop (not a caller's shared informer).
    owns_informer: bool,
    /// Objects without a shard label.
    pub(crate) unassigned: SharedIndexInformer<K>,
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

/// An informer of the objects in `config`'s scope matching `selector` (already scoped).
fn informer_for<K: ApiObject>(
    config: &ReplicaConfig,
    client: &Client,
    selector: String,
    name: &str,
) -> SharedIndexInformer<K> {
    let objects = config.objects::<K>(client.clone());
    let mut options = InformerOptions::default();
    options.name = format!("{name}:{}", config.identity);
    SharedIndexInformer::new(
        ClientListWatch::new(objects, ListOptions::default().labels(selector)),
        options,
    )
}

/// `namespace/name` of an object.
pub(crate) fn object_key(meta: &ObjectMeta) -> String {
    let namespace = meta.namespace.as_deref().unwrap_or("");
    format!("{namespace}/{}", meta.name.as_deref().unwrap_or(""))
}

/// The object's resourceVersion as a number (0 when absent or not a number).
pub(crate) fn resource_version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl<K: ApiObject> Replica<K> {
    /// A replica of `config.ring` talking through `client`; nothing runs until [`Replica::run`].
    ///
    /// # Errors
    /// [`Error::Identity`] for an empty identity; [`Error::Lease`] for bad timings.
    pub fn new(client: Client, config: ReplicaConfig) -> Result<Replica<K>, Error> {
        let mine = informer_for(&config, &client, config.shard_selector(), "shard");
        Replica::build(client, config, mine, true)
    }

    /// A replica whose shard objects come from `informer`, which the caller starts and stops
    /// (a controller manager's shared informer) and which must select exactly
    /// [`ReplicaConfig::shard_selector`] in [`ReplicaConfig::namespace`].
    ///
    /// # Errors
    /// As [`Replica::new`].
    pub fn with_informer(
        client: Client,
        config: ReplicaConfig,
        informer: SharedIndexInformer<K>,
    ) -> Result<Replica<K>, Error> {
        Replica::build(client, config, informer, false)
    }

    fn build(
        client: Client,
        config: ReplicaConfig,
        mine: SharedIndexInformer<K>,
        owns_informer: bool,
    ) -> Result<Replica<K>, Error> {
        if config.identity.is_empty() || config.identity.len() > 63 {
            return Err(Error::Identity {
                identity: config.identity.clone(),
                why: "must be 1 to 63 characters (a label value)",
            });
        }
        config.lease_config().validate()?;
        let unassigned = informer_for(
            &config,
            &client,
            config.scoped(config.ring.unassigned_selector()),
            "unassigned",
        );
        let lease_client =
            ResourceClient::<Lease>::namespaced(client.clone(), &config.ring.lease_namespace);
        let leases = SharedIndexInformer::new(
            ClientListWatch::new(
                lease_client,
                ListOptions::default().labels(config.ring.lease_selector()),
            ),
            InformerOptions::default(),
        );
        Ok(Replica {
            inner: Arc::new(Inner {
                config,
                client,
                mine,
                owns_informer,
                unassigned,
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

    /// Starts a reconcile of `object` (as read from [`Replica::informer`]'s cache).
    ///
    /// # Errors
    /// [`Refusal::NotMine`] when the object is not this replica's to work on now;
    /// [`Refusal::Busy`] when a reconcile or handover of it is already running here, or (with
    /// [`RingKey::Namespace`]) while objects of its namespace are still unassigned.
    pub fn begin(&self, object: &K) -> Result<WorkGuard<K>, Refusal> {
        let meta = object.meta();
        if !self.inner.owns(meta) {
            return Err(Refusal::NotMine);
        }
        if self.inner.group_incomplete(meta) {
            return Err(Refusal::Busy);
        }
        let key = object_key(meta);
        let mut slots = self.inner.slots.lock();
        match slots.get(&key) {
            Some(Slot::Busy) => return Err(Refusal::Busy),
            Some(Slot::Released(rv)) if resource_version(meta) <= *rv => {
                return Err(Refusal::NotMine);
            }
            _ => {}
        }
        slots.insert(key.clone(), Slot::Busy);
        Ok(WorkGuard {
            inner: Arc::clone(&self.inner),
            key,
        })
    }

    /// Runs the replica until `shutdown` resolves or its Lease is lost: informers, the shard
    /// Lease, and the assignment passes. On shutdown it stops starting reconciles, waits for the
    /// running ones, and releases its Lease, so the others adopt its objects at once.
    ///
    /// # Errors
    /// [`Error::Lease`] if the Lease's elector cannot start.
    pub async fn run(&self, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
        let inner = &self.inner;
        let _stop = Stopper(inner);
        if inner.owns_informer {
            inner.mine.start();
        }
        inner.unassigned.start();
        inner.leases.start();
        let elector = LeaderElector::new(inner.client.clone(), inner.config.lease_config())?;
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
        inner.leases.shutdown();
    }
}

impl<K: ApiObject> Inner<K> {
    /// Whether `meta` is this replica's to work on (Lease held, labelled, ring agrees, no drain).
    pub(crate) fn owns(&self, meta: &ObjectMeta) -> bool {
        if !self.active.load(Ordering::Acquire) {
            return false;
        }
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

    /// Takes `key`'s slot for a handover of the object at `rv`; false when busy or released.
    pub(crate) fn claim_for_handover(&self, key: &str, rv: u64) -> bool {
        let mut slots = self.slots.lock();
        match slots.get(key) {
            Some(Slot::Busy) => false,
            Some(Slot::Released(released)) if rv <= *released => false,
            _ => {
                slots.insert(key.to_owned(), Slot::Busy);
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
            .retain(|key, slot| *slot == Slot::Busy || still_cached(key));
    }

    /// Resolves once no reconcile or handover runs.
    async fn wait_idle(&self) {
        while self.slots.lock().values().any(|s| *s == Slot::Busy) {
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
