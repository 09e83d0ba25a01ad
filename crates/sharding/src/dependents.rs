//! Kinds that follow their controller owner's shard ([`Dependents::follow`]), so a replica
//! caches only its share of the objects its controller owns too (timebertt's sharder labels
//! "controlled resources" the same way). Label protocol only: a `shardSelector` hashes each
//! object's own UID, so server-side the dependents' informer keeps selecting all of them.
//!
//! A dependent is an object of the kind whose controller `ownerReference` names the sharded
//! kind; its ring key is its owner's ([`crate::ring_key`]), so it belongs to its owner's shard
//! and carries that shard's label. Other objects of the kind are never labelled and no shard's
//! informer holds them (an owned-kind informer only maps dependents to their owners).
//!
//! # Keeping an owner's reconcile from seeing part of its dependents
//! - The old shard gives its dependents away *before* the owner ([`Dependents::release`]), and
//!   not while a label write of one of them has not reached its cache.
//! - The new shard, before it labels an owner it gains, labels the owner's dependents from a
//!   consistent list (which sees every release older than the owner's). A dependent created
//!   later (by the owner's reconcile) is labelled by the shard that holds its owner, and only
//!   by it: replicas that briefly disagree on the ring never take each other's.
//! - A reconcile of an owner waits while a dependent of it is unlabelled in the cache, or
//!   labelled by this shard by a write its dependents' cache has not shown yet
//!   ([`Dependents::settling`]): the owner's and the dependents' informers are separate watches.
//!
//! The unlabelled objects of the kind are watched as metadata only (`PartialObjectMetadata`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::{PartialObjectMeta, Selector};
use kubegen_cache::{
    ClientListWatch, ClientListWatchSource, IndexFn, Indexers, InformerFactory, InformerOptions,
    ListSelectors, Lister, SharedIndexInformer,
};
use kubegen_client::{ApiObject, Client, GetOptions, ListOptions, ResourceClient};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::ReplicaConfig;
use crate::key::RingKey;
use crate::list_watch::ShardListWatch;
use crate::membership::shard_is_gone;
use crate::object::{holder, object_key, relabel, resource_version};
use crate::ring::HashRing;
use crate::selection::Filter;

/// The index of a dependent kind's caches by ring key.
const BY_RING_KEY: &str = "sharding.kubegen.dev/ring-key";

/// What the replica's passes ask of one dependent kind, whatever its type.
trait Kind: Send + Sync {
    fn start(&self);
    fn shutdown(&self);
    fn release<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool>;
    fn sweep<'a>(&'a self, ring: &'a HashRing, held: &'a HashSet<String>) -> BoxFuture<'a, ()>;
    fn claim_cached<'a>(&'a self, keys: &'a HashSet<String>) -> BoxFuture<'a, ()>;
    fn claim_listed<'a>(
        &'a self,
        keys: &'a HashSet<String>,
        members: &'a [&'a str],
    ) -> BoxFuture<'a, Option<HashSet<String>>>;
    fn settling(&self, key: &str) -> bool;
}

/// The kinds of a replica that follow its sharded kind; cheap to clone.
#[derive(Clone)]
pub struct Dependents {
    shared: Arc<Shared>,
}

struct Shared {
    config: ReplicaConfig,
    client: Client,
    filter: Arc<Filter>,
    leases: Lister<Lease>,
    /// `apiVersion` and `kind` of the sharded kind (the owners).
    owner: (String, String),
    kinds: Mutex<Vec<Arc<dyn Kind>>>,
}

impl Dependents {
    pub(crate) fn new(
        config: ReplicaConfig,
        client: Client,
        filter: Arc<Filter>,
        leases: Lister<Lease>,
        owner: (String, String),
    ) -> Dependents {
        let kinds = Mutex::new(Vec::new());
        let shared = Shared {
            config,
            client,
            filter,
            leases,
            owner,
            kinds,
        };
        Dependents {
            shared: Arc::new(shared),
        }
    }

    /// Objects of kind `C` whose controller owner is of the sharded kind follow their owner's
    /// shard: with labels, `factory`'s informer of `C` (created here, so ask for it after this)
    /// holds only this shard's, and the replica labels them; server-side it holds every `C`.
    /// Call before the replica runs.
    pub fn follow<C: ApiObject>(
        &self,
        factory: &InformerFactory<ClientListWatchSource>,
    ) -> SharedIndexInformer<C> {
        let shared = &self.shared;
        let (config, client) = (&shared.config, &shared.client);
        let mine = factory.informer_with::<C, _>(|namespace, selectors: &ListSelectors| {
            let objects = match namespace.or(config.namespace.as_deref()) {
                Some(namespace) => ResourceClient::namespaced(client.clone(), namespace),
                None => ResourceClient::all_namespaces(client.clone()),
            };
            let mut base = ListOptions::default();
            base.label_selector.clone_from(&selectors.label_selector);
            base.field_selector.clone_from(&selectors.field_selector);
            ShardListWatch::following(objects, base, config, Arc::clone(&shared.filter))
        });
        let kind = Arc::new(Follower::<C>::new(shared, mine.clone()));
        shared.kinds.lock().push(kind);
        mine
    }

    fn kinds(&self) -> Vec<Arc<dyn Kind>> {
        self.shared.kinds.lock().clone()
    }

    /// Starts the informers of unlabelled objects (label protocol).
    pub(crate) fn start(&self) {
        self.kinds().iter().for_each(|k| k.start());
    }

    pub(crate) fn shutdown(&self) {
        self.kinds().iter().for_each(|k| k.shutdown());
    }

    /// Gives away this shard's dependents with ring key `key`; true when none is left here.
    pub(crate) async fn release(&self, key: &str) -> bool {
        for kind in self.kinds() {
            if !kind.release(key).await {
                return false;
            }
        }
        true
    }

    /// Gives away this shard's dependents the ring gives elsewhere whose owner is not `held`.
    pub(crate) async fn sweep(&self, ring: &HashRing, held: &HashSet<String>) {
        for kind in self.kinds() {
            kind.sweep(ring, held).await;
        }
    }

    /// Labels the unlabelled dependents in the cache whose owners this shard holds (their
    /// ring keys are `held`): those its reconciles just created.
    pub(crate) async fn claim_cached(&self, held: &HashSet<String>) {
        for kind in self.kinds() {
            kind.claim_cached(held).await;
        }
    }

    /// Labels, from a consistent list, the dependents of the owners this shard is about to
    /// take (their ring keys are `gained`) that are unlabelled or held by a shard outside
    /// `members` whose Lease is gone; the ring keys of those that could not be labelled (their
    /// owners must wait), None when a list failed (every owner must wait).
    pub(crate) async fn claim_listed(
        &self,
        gained: &HashSet<String>,
        members: &[&str],
    ) -> Option<HashSet<String>> {
        let mut failed = HashSet::new();
        for kind in self.kinds() {
            failed.extend(kind.claim_listed(gained, members).await?);
        }
        Some(failed)
    }

    /// Whether dependents of ring key `key` may be missing from this shard's caches.
    pub(crate) fn settling(&self, key: &str) -> bool {
        self.kinds().iter().any(|k| k.settling(key))
    }
}

/// The ring key of `meta` when it is a dependent: its controller is of the kind `owner`
/// names (`apiVersion`, `kind`).
fn dependent_key(owner: &(String, String), key: RingKey, meta: &ObjectMeta) -> Option<String> {
    let (api_version, kind) = owner;
    let controller = meta.owner_references.iter().flatten();
    let mut controller = controller.filter(|r| r.controller == Some(true));
    controller
        .any(|r| r.api_version == *api_version && r.kind == *kind)
        .then(|| key.of(meta))
}

/// A label write to this shard that the dependents' cache has not shown yet.
#[derive(Clone, Debug)]
struct Written {
    /// The object's ring key.
    key: String,
    /// The resourceVersion the write produced.
    rv: u64,
    /// When it was written.
    at: Instant,
}

/// How long a label write may go unseen before the object is read to check it still exists:
/// a dependent deleted right after its label write never shows in the cache.
const UNSEEN: Duration = Duration::from_secs(10);

/// One dependent kind `C`.
struct Follower<C: ApiObject> {
    shared: Arc<Shared>,
    /// This shard's objects of `C` (the factory's informer).
    mine: SharedIndexInformer<C>,
    /// Metadata of the unlabelled objects of `C`.
    unassigned: SharedIndexInformer<PartialObjectMeta<C>>,
    /// Label writes to this shard that `mine` has not shown yet, by object key.
    written: Mutex<HashMap<String, Written>>,
}

impl<C: ApiObject> Follower<C> {
    fn new(shared: &Arc<Shared>, mine: SharedIndexInformer<C>) -> Follower<C> {
        let config = &shared.config;
        let objects = match config.namespace.as_deref() {
            Some(namespace) => {
                ResourceClient::metadata_namespaced(shared.client.clone(), namespace)
            }
            None => ResourceClient::metadata_all_namespaces(shared.client.clone()),
        };
        let selector = ListOptions::default().labels(config.ring.unassigned_selector());
        let mut options = InformerOptions::default();
        options.name = format!("unassigned {}:{}", C::plural(&()), config.identity);
        let unassigned = SharedIndexInformer::new(ClientListWatch::new(objects, selector), options);
        let follower = Follower {
            shared: Arc::clone(shared),
            mine,
            unassigned,
            written: Mutex::default(),
        };
        follower.index();
        follower
    }

    /// Indexes both caches' dependents by ring key.
    fn index(&self) {
        let (owner, key) = (self.shared.owner.clone(), self.shared.config.key);
        let of = move |meta: &ObjectMeta| dependent_key(&owner, key, meta).into_iter().collect();
        let by_key = of.clone();
        let mine: Indexers<C> = HashMap::from([(
            BY_RING_KEY.to_owned(),
            Arc::new(move |c: &C| by_key(c.meta())) as IndexFn<C>,
        )]);
        let unassigned: Indexers<PartialObjectMeta<C>> = HashMap::from([(
            BY_RING_KEY.to_owned(),
            Arc::new(move |c: &PartialObjectMeta<C>| of(&c.metadata)) as IndexFn<_>,
        )]);
        let indexed = self.mine.add_indexers(mine);
        if let Err(error) = indexed.and_then(|()| self.unassigned.add_indexers(unassigned)) {
            tracing::warn!(kind = %C::kind(&()), %error, "cannot index the dependents' caches");
        }
    }

    /// Whether a label write of an object with ring key `key` has not reached `mine` yet;
    /// forgets those that have (the cache holds their version or a later one).
    fn unseen(&self, key: &str) -> bool {
        let mine = self.mine.lister();
        let mut written = self.written.lock();
        written.retain(|object, w| {
            let cached = mine.get_by_key(object.trim_start_matches('/'));
            w.key != key || cached.is_none_or(|c| resource_version(c.meta()) < w.rv)
        });
        written.values().any(|w| w.key == key)
    }

    /// Labels the `C` with `meta` for this shard, remembering the write until `mine` shows it.
    async fn claim(&self, meta: &ObjectMeta, key: &str) -> bool {
        let shared = &self.shared;
        let me = shared.config.identity.as_str();
        let Some(rv) = relabel::<C>(&shared.client, &shared.config, meta, Some(me)).await else {
            return false;
        };
        let entry = Written {
            key: key.to_owned(),
            rv,
            at: Instant::now(),
        };
        self.written.lock().insert(object_key(meta), entry);
        true
    }

    /// Forgets label writes unseen for [`UNSEEN`] whose object is gone or no longer this
    /// shard's.
    async fn forget_lost(&self) {
        let shared = &self.shared;
        let old: Vec<String> = {
            let written = self.written.lock();
            let old = written.iter().filter(|(_, w)| w.at.elapsed() > UNSEEN);
            old.map(|(object, _)| object.clone()).collect()
        };
        for object in old {
            let (namespace, name) = object.split_once('/').unwrap_or(("", &object));
            let objects = match namespace {
                "" => {
                    ResourceClient::<PartialObjectMeta<C>>::metadata_cluster(shared.client.clone())
                }
                ns => ResourceClient::metadata_namespaced(shared.client.clone(), ns),
            };
            let lost = match objects.get(name, &GetOptions::default()).await {
                Ok(current) => holder(&shared.config, &current.metadata) != shared.config.identity,
                Err(error) => error.is_not_found(),
            };
            if lost {
                self.written.lock().remove(&object);
            }
        }
    }

    /// The metadata of the `C`s in scope matching `selector`, from a consistent read.
    async fn listed(&self, selector: String) -> Option<Vec<ObjectMeta>> {
        let shared = &self.shared;
        let objects = match shared.config.namespace.as_deref() {
            Some(ns) => ResourceClient::<PartialObjectMeta<C>>::metadata_namespaced(
                shared.client.clone(),
                ns,
            ),
            None => ResourceClient::metadata_all_namespaces(shared.client.clone()),
        };
        match objects.list(&ListOptions::default().labels(selector)).await {
            Ok(list) => Some(list.items.into_iter().map(|p| p.metadata).collect()),
            Err(error) => {
                tracing::warn!(shard = %shared.config.identity, %error, "listing dependents failed");
                None
            }
        }
    }
}

impl<C: ApiObject> Kind for Follower<C> {
    fn start(&self) {
        if !self.shared.filter.server_side() {
            self.unassigned.start();
        }
    }

    fn shutdown(&self) {
        self.unassigned.shutdown();
    }

    fn release<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            if self.unseen(key) {
                return false;
            }
            let shared = &self.shared;
            let mut released = true;
            for object in self.mine.lister().by_index(BY_RING_KEY, key) {
                let meta = object.meta();
                released &= relabel::<C>(&shared.client, &shared.config, meta, None)
                    .await
                    .is_some();
            }
            released
        })
    }

    fn sweep<'a>(&'a self, ring: &'a HashRing, held: &'a HashSet<String>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let shared = &self.shared;
            let me = Some(shared.config.identity.as_str());
            for object in self.mine.lister().list(&Selector::default()) {
                let key = shared.config.key.of(object.meta());
                if ring.owner(&key) != me && !held.contains(&key) {
                    relabel::<C>(&shared.client, &shared.config, object.meta(), None).await;
                }
            }
        })
    }

    fn claim_cached<'a>(&'a self, held: &'a HashSet<String>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.forget_lost().await;
            for object in self.unassigned.lister().list(&Selector::default()) {
                let key =
                    dependent_key(&self.shared.owner, self.shared.config.key, &object.metadata);
                if let Some(key) = key.filter(|k| held.contains(k)) {
                    self.claim(&object.metadata, &key).await;
                }
            }
        })
    }

    fn claim_listed<'a>(
        &'a self,
        gained: &'a HashSet<String>,
        members: &'a [&'a str],
    ) -> BoxFuture<'a, Option<HashSet<String>>> {
        Box::pin(async move {
            let shared = &self.shared;
            let labels = &shared.config.ring;
            let mut failed = HashSet::new();
            let unassigned = self.listed(labels.unassigned_selector()).await?;
            let orphans = self.listed(labels.orphaned_selector(members)).await?;
            for meta in unassigned.iter().chain(&orphans) {
                let key = dependent_key(&shared.owner, shared.config.key, meta);
                let Some(key) = key.filter(|k| gained.contains(k)) else {
                    continue;
                };
                let holder = holder(&shared.config, meta);
                let free = holder.is_empty()
                    || shard_is_gone(&shared.client, &shared.config, &shared.leases, &holder).await;
                if free && !self.claim(meta, &key).await {
                    failed.insert(key);
                }
            }
            Some(failed)
        })
    }

    fn settling(&self, key: &str) -> bool {
        self.unseen(key)
            || !self
                .unassigned
                .lister()
                .by_index(BY_RING_KEY, key)
                .is_empty()
    }
}
