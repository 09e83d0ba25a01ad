//! Reads from the informers, writes to the server: controller-runtime's delegating client
//! (`mgr.GetClient()`), over the [`crate::Manager`]'s one informer factory.
//!
//! # Why read from the cache
//! A reconcile that GETs what it needs from the API server costs a request per object per
//! reconcile; the informers already hold every object of the kinds the controller watches, kept
//! current by one watch. Reading them costs a map lookup and no API-server load. The price is
//! staleness: the cache may lag a write the reconcile just made, which is why reconciles must be
//! idempotent and writes carry `resourceVersion` (a stale write is a 409, retried).
//!
//! # Guarantees
//! - The first read of a kind nobody asked for yet creates its informer in the shared factory,
//!   starts it and waits (up to the manager's `cache_sync_timeout`) until it has synced, as
//!   controller-runtime's cache does; later reads of that kind never wait.
//! - Reads return the cached `Arc`: the same object the listers and handlers see.
//! - A list by fields ([`CachedClient::list_by_fields`]) is answered from indexes registered with
//!   [`CachedClient::index_field`] (controller-runtime's `mgr.GetFieldIndexer().IndexField` and
//!   `client.MatchingFields`); the rules are in [`crate::field_index`].

use std::sync::Arc;
use std::time::Duration;

use kube_core::Selector;
use kubegen_cache::{
    ClientListWatchSource, IndexFn, Indexers, InformerFactory, Lister, SharedIndexInformer, Synced,
    wait_for_cache_sync,
};
use kubegen_client::{ApiObject, Client, ResourceClient};

use crate::error::Error;
use crate::field_index::{self, MatchingFields};

/// Cache reads and server writes for any kind; cheap to clone. Get one from
/// [`crate::Manager::cached_client`].
#[derive(Clone)]
pub struct CachedClient {
    client: Client,
    factory: InformerFactory<ClientListWatchSource>,
    sync_timeout: Duration,
}

impl std::fmt::Debug for CachedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedClient")
            .field("sync_timeout", &self.sync_timeout)
            .finish_non_exhaustive()
    }
}

impl CachedClient {
    pub(crate) fn new(
        client: Client,
        factory: InformerFactory<ClientListWatchSource>,
        sync_timeout: Duration,
    ) -> CachedClient {
        CachedClient {
            client,
            factory,
            sync_timeout,
        }
    }

    /// The `K` named `name` in `namespace` (`None` for cluster-scoped kinds), from the cache.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when `K`'s informer is new and does not sync in time.
    pub async fn get<K: ApiObject>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<K>>, Error> {
        Ok(self.lister::<K>().await?.get(namespace, name))
    }

    /// Every `K` in `namespace` (`None`: all namespaces, or a cluster-scoped kind) matching
    /// `selector`, from the cache.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when `K`'s informer is new and does not sync in time.
    pub async fn list<K: ApiObject>(
        &self,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Result<Vec<Arc<K>>, Error> {
        let lister = self.lister::<K>().await?;
        Ok(match namespace {
            Some(namespace) => lister.namespaced(namespace).list(selector),
            None => lister.list(selector),
        })
    }

    /// Indexes `K` by `field` (a field path such as `spec.nodeName`), whose values `extract`
    /// computes, so that [`CachedClient::list_by_fields`] can select on it: controller-runtime's
    /// `mgr.GetFieldIndexer().IndexField(ctx, &K{}, field, extract)`. Register it before the
    /// first list that needs it, typically while setting up the controller; objects already
    /// cached are indexed at once.
    ///
    /// # Errors
    /// [`Error::IndexFieldFailed`] when `field` of `K` is already indexed.
    pub fn index_field<K, F>(&self, field: &str, extract: F) -> Result<(), Error>
    where
        K: ApiObject,
        F: Fn(&K) -> Vec<String> + Send + Sync + 'static,
    {
        let index: IndexFn<K> = Arc::new(move |obj: &K| {
            field_index::filed_values(obj.meta().namespace.as_deref(), extract(obj))
        });
        let indexers: Indexers<K> = [(field_index::index_name(field), index)]
            .into_iter()
            .collect();
        self.factory
            .informer::<K>()
            .add_indexers(indexers)
            .map_err(|source| Error::IndexFieldFailed {
                kind: K::kind(&()).into_owned(),
                field: field.to_owned(),
                source,
            })
    }

    /// Every `K` in `namespace` (`None`: all namespaces, or a cluster-scoped kind) whose fields
    /// match `fields` and whose labels match `labels`, from the cache: controller-runtime's
    /// `List(ctx, &list, client.InNamespace(ns), client.MatchingFields{..})`.
    ///
    /// # Errors
    /// [`Error::FieldNotIndexed`] for a field without an index (`metadata.name` and
    /// `metadata.namespace` need none); [`Error::CacheSyncFailed`] as for
    /// [`CachedClient::list`].
    pub async fn list_by_fields<K: ApiObject>(
        &self,
        namespace: Option<&str>,
        labels: &Selector,
        fields: &MatchingFields,
    ) -> Result<Vec<Arc<K>>, Error> {
        let informer = self.synced_informer::<K>().await?;
        field_index::select(
            &informer.indexer(),
            &K::kind(&()),
            namespace,
            fields,
            labels,
        )
    }

    /// A client for writing `K` in `namespace` (`None`: a cluster-scoped kind) to the server.
    pub fn writer<K: ApiObject>(&self, namespace: Option<&str>) -> ResourceClient<K> {
        match namespace {
            Some(namespace) => ResourceClient::namespaced(self.client.clone(), namespace),
            None => ResourceClient::cluster(self.client.clone()),
        }
    }

    /// The lister of `K`'s shared informer, started and synced first if it is new.
    async fn lister<K: ApiObject>(&self) -> Result<Lister<K>, Error> {
        Ok(self.synced_informer::<K>().await?.lister())
    }

    /// `K`'s shared informer, started and synced first if it is new.
    async fn synced_informer<K: ApiObject>(&self) -> Result<SharedIndexInformer<K>, Error> {
        let informer = self.factory.informer::<K>();
        if !informer.has_synced() {
            self.factory.start();
            let synced: [&dyn Synced; 1] = [&informer];
            wait_for_cache_sync(self.sync_timeout, &synced)
                .await
                .map_err(|source| Error::CacheSyncFailed { source })?;
        }
        Ok(informer)
    }
}
