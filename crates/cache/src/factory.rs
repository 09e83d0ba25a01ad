//! One shared informer per resource type, created on demand.
//!
//! Mirrors client-go `informers/factory.go` (`sharedInformerFactory`), the generic part of it:
//! the generated `SharedInformerFactory` only adds typed accessors
//! (`f.police_v1beta1().white_lists()`) that call [`InformerFactory::informer`].
//!
//! # Why a factory?
//! Several parts of one controller often watch the same type. Each must get the *same*
//! informer, or the process would hold two caches and two watches. The factory is the registry
//! that makes "give me the Deployment informer" idempotent.
//!
//! # Differences from client-go
//! client-go's factory holds a `kubernetes.Interface` and builds each informer's ListWatch from
//! it. Ours is generic over a [`ListWatchSource`], so the cache core names no HTTP client: the
//! `client` feature's `ClientListWatchSource` (`client_adapter.rs`) is the one source over
//! kubegen-client, and tests plug in their own.

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    sync::Arc,
    time::Duration,
};

use futures_util::future::{BoxFuture, join_all};
use k8s_openapi::ClusterResourceScope;
use kube_core::{ObjectMeta, Resource};
use parking_lot::Mutex;

use crate::{
    error::Error,
    informer::{InformerOptions, SharedIndexInformer},
    list_watch::ListWatch,
    metrics::InformerMetrics,
    store_mode::StoreMode,
    sync::{Synced, wait_for_cache_sync},
    transform::Transform,
};

/// How an [`InformerFactory`] reaches the API server: builds the [`ListWatch`] of each type the
/// factory is asked for. Implemented over kubegen-client by `ClientListWatchSource` (feature
/// `client`).
pub trait ListWatchSource<K: Clone>: Send + Sync + 'static {
    /// What the informer of `K` lists and watches through.
    type ListWatch: ListWatch<K>;

    /// The list/watch of `K` in `namespace` (`None`: all namespaces, or `K` is cluster-scoped),
    /// every request restricted by `selectors`.
    fn list_watch(&self, namespace: Option<&str>, selectors: &ListSelectors) -> Self::ListWatch;
}

/// The label and field selectors every list and watch of an informer carries: the part of
/// client-go's `metav1.ListOptions` that a factory's `TweakListOptions` may set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListSelectors {
    /// `labelSelector`, e.g. `app=web,!canary`.
    pub label_selector: Option<String>,
    /// `fieldSelector`, e.g. `status.phase=Running`.
    pub field_selector: Option<String>,
}

/// Adjusts the selectors of every informer's lists and watches.
pub type TweakListOptions = Arc<dyn Fn(&mut ListSelectors) + Send + Sync>;

/// A transform for any type: rewrites the object's metadata before it is stored.
pub type MetaTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// How a factory builds its informers. Built with methods, from any crate:
/// `FactoryOptions::default().namespace("team-a").transform(Arc::new(strip_managed_fields))`.
#[derive(Clone, Default)]
pub struct FactoryOptions {
    /// Restrict namespaced types to one namespace (`None`: all namespaces). Cluster-scoped
    /// types ignore it.
    namespace: Option<String>,
    /// Applied to the selectors of every informer.
    tweak_list_options: Option<TweakListOptions>,
    /// Default resync period of every informer (`ZERO`: none).
    default_resync: Duration,
    /// Metadata transform for every type.
    transform: Option<MetaTransform>,
    /// Where every informer's `informer_*` series go (each labelled with its resource plural).
    metrics: InformerMetrics,
    /// How every informer stores its objects (see [`StoreMode`]).
    store_mode: StoreMode,
    /// Per-type resync periods, set with [`FactoryOptions::resync_for`].
    per_type_resync: HashMap<TypeId, Duration>,
    /// Per-type transforms (`Transform<K>` behind `Any`), set with [`FactoryOptions::transform_for`].
    per_type_transform: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Per-type selector tweaks, set with [`FactoryOptions::tweak_list_options_for`].
    per_type_tweak: HashMap<TypeId, TweakListOptions>,
}

impl FactoryOptions {
    /// Restricts namespaced types to `namespace` (`None`, the default: all namespaces).
    /// Cluster-scoped types ignore it.
    pub fn namespace(mut self, namespace: impl Into<Option<String>>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Adjusts the label and field selectors of every informer's lists and watches.
    pub fn tweak_list_options(mut self, tweak: TweakListOptions) -> Self {
        self.tweak_list_options = Some(tweak);
        self
    }

    /// Resync period of every informer (default `ZERO`: none).
    pub fn default_resync(mut self, period: Duration) -> Self {
        self.default_resync = period;
        self
    }

    /// Metadata transform for every type, e.g. `|m| m.managed_fields = None`.
    pub fn transform(mut self, transform: MetaTransform) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Where every informer's `informer_*` series go.
    pub fn metrics(mut self, metrics: InformerMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// How every informer stores its objects (default [`StoreMode::Decoded`]; see
    /// [`StoreMode::Bytes`] for the byte-backed store and when to pick it).
    pub fn store_mode(mut self, mode: StoreMode) -> Self {
        self.store_mode = mode;
        self
    }

    /// Resync period for the informer of `K`, overriding `default_resync`.
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.per_type_resync.insert(TypeId::of::<K>(), period);
        self
    }

    /// Adjusts the selectors of the informer of `K` only, after `tweak_list_options` (e.g. only
    /// the Secrets of one `type`, while every other kind is listed whole).
    pub fn tweak_list_options_for<K: 'static>(mut self, tweak: TweakListOptions) -> Self {
        self.per_type_tweak.insert(TypeId::of::<K>(), tweak);
        self
    }

    /// Transform for the informer of `K`; runs after the metadata `transform`.
    pub fn transform_for<K: 'static>(mut self, transform: Transform<K>) -> Self {
        self.per_type_transform
            .insert(TypeId::of::<K>(), Arc::new(transform));
        self
    }
}

/// How long [`InformerFactory::shutdown`] waits for the informers' tasks before aborting the
/// ones still running.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// What the factory needs from an informer without knowing its type.
trait ErasedInformer: Synced {
    fn start(&self);
    fn shutdown_and_wait(&self, timeout: Duration) -> BoxFuture<'_, Result<(), Error>>;
    fn as_any(&self) -> &dyn Any;
}

impl<K: Resource + Clone + Send + Sync + 'static> ErasedInformer for SharedIndexInformer<K> {
    fn start(&self) {
        SharedIndexInformer::start(self);
    }
    fn shutdown_and_wait(&self, timeout: Duration) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(SharedIndexInformer::shutdown_and_wait(self, timeout))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct Entry {
    informer: Arc<dyn ErasedInformer>,
    started: bool,
}

/// Creates and owns one [`SharedIndexInformer`] per resource type, listing and watching
/// through the [`ListWatchSource`] `S`. Cheap to clone.
///
/// # Guarantees
/// - `informer::<K>()` returns the same informer every time for a given `K`.
/// - `start()` starts only the informers requested so far and not yet started; call it again
///   after requesting more (client-go's rule).
/// - `wait_for_cache_sync` covers every informer requested, and fails fast on one that was
///   requested but not started.
/// - `shutdown()` stops every informer and returns once all their tasks have ended (reflectors,
///   resync timers, process loops, handler tasks), as client-go's `Shutdown` waits for its
///   goroutines; past [`SHUTDOWN_TIMEOUT`] it aborts the rest and logs their names.
pub struct InformerFactory<S> {
    inner: Arc<FactoryInner<S>>,
}

impl<S> Clone for InformerFactory<S> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct FactoryInner<S> {
    source: S,
    options: FactoryOptions,
    informers: Mutex<HashMap<InformerKey, Entry>>,
}

/// What identifies an informer of a factory: the type its cache holds and, for kinds known only
/// at run time (`DynamicObject`), the resource (`group/version/plural`); empty otherwise.
pub(crate) type InformerKey = (TypeId, String);

impl<S> InformerFactory<S> {
    /// A factory whose informers list and watch through `source`.
    pub fn new(source: S, options: FactoryOptions) -> Self {
        let inner = FactoryInner {
            source,
            options,
            informers: Mutex::new(HashMap::new()),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The shared informer for `K`, created on first request.
    pub fn informer<K>(&self) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
        K::Scope: 'static,
        S: ListWatchSource<K>,
    {
        self.shared(
            TypeId::of::<K>(),
            K::plural(&()).into_owned(),
            |source, namespace, selectors| source.list_watch(namespace, selectors),
        )
    }

    /// The shared informer for `K`, created on first request over the list-watch `make` builds
    /// from the factory's namespace and selectors, in place of the source's: for a kind whose
    /// requests carry more than fixed selectors (a sharded controller's informer follows its
    /// shard). Later [`informer`](Self::informer) calls for `K` return this informer; when `K`'s
    /// informer exists already, that one is returned and `make` is not called.
    pub fn informer_with<K, L>(
        &self,
        make: impl FnOnce(Option<&str>, &ListSelectors) -> L,
    ) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
        K::Scope: 'static,
        L: ListWatch<K>,
    {
        self.shared(
            TypeId::of::<K>(),
            K::plural(&()).into_owned(),
            |_, namespace, selectors| make(namespace, selectors),
        )
    }

    /// The informer registered under `key`, or a new one named `name` over the list-watch that
    /// `list_watch` makes from the source, the scope and the selectors.
    ///
    /// `key` identifies the informer (one per key); per-type options (resync, transform) are
    /// looked up by `K`, the type the cache holds.
    pub(crate) fn shared<K, L>(
        &self,
        key: TypeId,
        name: String,
        list_watch: impl FnOnce(&S, Option<&str>, &ListSelectors) -> L,
    ) -> SharedIndexInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
        K::Scope: 'static,
        L: ListWatch<K>,
    {
        let namespaced = TypeId::of::<K::Scope>() != TypeId::of::<ClusterResourceScope>();
        self.shared_keyed((key, String::new()), name, namespaced, list_watch)
    }

    /// [`shared`](Self::shared) for any `K`, the key completed by a resource name (the informers
    /// of kinds known only at run time share one `TypeId`) and the scope given.
    pub(crate) fn shared_keyed<K, L>(
        &self,
        key: InformerKey,
        name: String,
        namespaced: bool,
        list_watch: impl FnOnce(&S, Option<&str>, &ListSelectors) -> L,
    ) -> SharedIndexInformer<K>
    where
        K: Resource + Clone + Send + Sync + 'static,
        L: ListWatch<K>,
    {
        let mut informers = self.inner.informers.lock();
        let existing = informers.get(&key);
        if let Some(informer) =
            existing.and_then(|e| e.informer.as_any().downcast_ref::<SharedIndexInformer<K>>())
        {
            return informer.clone();
        }
        let options = &self.inner.options;
        let namespace = options.namespace.as_deref().filter(|_| namespaced);
        let mut selectors = ListSelectors::default();
        if let Some(tweak) = &options.tweak_list_options {
            tweak(&mut selectors);
        }
        if let Some(tweak) = options.per_type_tweak.get(&TypeId::of::<K>()) {
            tweak(&mut selectors);
        }
        let list_watch = list_watch(&self.inner.source, namespace, &selectors);
        let informer = SharedIndexInformer::new(list_watch, self.informer_options::<K>(name));
        let entry = Entry {
            informer: Arc::new(informer.clone()),
            started: false,
        };
        informers.insert(key, entry);
        informer
    }

    /// The options of a new informer of `K`: the factory's, with `K`'s resync and transform.
    fn informer_options<K: Resource + 'static>(&self, name: String) -> InformerOptions<K> {
        let options = &self.inner.options;
        let id = TypeId::of::<K>();
        let mut informer_options = InformerOptions {
            name,
            resync: options
                .per_type_resync
                .get(&id)
                .copied()
                .unwrap_or(options.default_resync),
            metrics: options.metrics.clone(),
            store_mode: options.store_mode,
            ..InformerOptions::default()
        };
        informer_options.transform = combined_transform::<K>(
            options.transform.clone(),
            options
                .per_type_transform
                .get(&id)
                .and_then(|t| t.downcast_ref::<Transform<K>>().cloned()),
        );
        informer_options
    }

    /// Starts every informer requested so far that is not running yet. Needs a tokio runtime.
    pub fn start(&self) {
        for entry in self.inner.informers.lock().values_mut() {
            if !entry.started {
                entry.informer.start();
                entry.started = true;
            }
        }
    }

    /// Waits until every informer requested so far has synced.
    ///
    /// # Errors
    /// - [`Error::NotStarted`] if an informer was requested after the last `start()`: it would
    ///   never sync (client-go silently skips it; here it is reported, since it is a bug).
    /// - [`Error::SyncTimeout`] naming the informers still syncing after `timeout`.
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> Result<(), Error> {
        let requested: Vec<Arc<dyn ErasedInformer>> = {
            let informers = self.inner.informers.lock();
            informers
                .values()
                .map(|e| Arc::clone(&e.informer))
                .collect()
        };
        let synced: Vec<&dyn Synced> = requested
            .iter()
            .map(|i| i.as_ref() as &dyn Synced)
            .collect();
        wait_for_cache_sync(timeout, &synced).await
    }

    /// Shuts down every informer and waits, at most [`SHUTDOWN_TIMEOUT`], until every task
    /// they spawned has ended; tasks still running then are aborted and named in an error log.
    /// The factory can still hand out (dead) informers afterwards.
    pub async fn shutdown(&self) {
        let informers: Vec<Arc<dyn ErasedInformer>> = {
            let informers = self.inner.informers.lock();
            informers
                .values()
                .map(|e| Arc::clone(&e.informer))
                .collect()
        };
        let waits = informers
            .iter()
            .map(|informer| informer.shutdown_and_wait(SHUTDOWN_TIMEOUT));
        for result in join_all(waits).await {
            if let Err(err) = result {
                tracing::error!(%err, "informer shutdown incomplete");
            }
        }
    }
}

fn combined_transform<K: Resource + 'static>(
    meta: Option<MetaTransform>,
    typed: Option<Transform<K>>,
) -> Option<Transform<K>> {
    match (meta, typed) {
        (None, typed) => typed,
        (Some(meta), None) => Some(Arc::new(move |mut obj: K| {
            meta(obj.meta_mut());
            obj
        })),
        (Some(meta), Some(typed)) => Some(Arc::new(move |mut obj: K| {
            meta(obj.meta_mut());
            typed(obj)
        })),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube_core::{ObjectList, WatchEvent};

    use super::*;
    use crate::list_watch::{
        EventStream, ListRequest, ListWatchError, ListWatchErrorKind, WatchRequest,
    };

    /// What the factory asked its source for: (kind, namespace, selectors).
    type Asked = Arc<StdMutex<Vec<(String, Option<String>, ListSelectors)>>>;

    /// A source that records each request; its list/watches are never started here.
    struct Recorder(Asked);

    impl<K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static> ListWatchSource<K>
        for Recorder
    {
        type ListWatch = Offline;

        fn list_watch(&self, namespace: Option<&str>, selectors: &ListSelectors) -> Offline {
            let entry = (
                K::kind(&()).into_owned(),
                namespace.map(str::to_owned),
                selectors.clone(),
            );
            self.0.lock().unwrap().push(entry);
            Offline
        }
    }

    /// A list/watch whose server is always unreachable.
    struct Offline;

    fn unreachable() -> ListWatchError {
        ListWatchError::new(ListWatchErrorKind::Unavailable, "offline")
    }

    impl<K: Clone + Send + Sync + 'static> ListWatch<K> for Offline {
        type Watch = Offline;

        async fn list(&self, _: &ListRequest) -> Result<ObjectList<K>, ListWatchError> {
            Err(unreachable())
        }

        async fn watch(&self, _: &WatchRequest) -> Result<Offline, ListWatchError> {
            Err(unreachable())
        }
    }

    impl<K> EventStream<K> for Offline {
        async fn next_event(&mut self) -> Option<Result<WatchEvent<K>, ListWatchError>> {
            None
        }
    }

    #[test]
    fn source_is_asked_once_per_type_with_the_selectors_and_no_namespace_for_cluster_scoped_types()
    {
        let asked = Asked::default();
        let tweak: TweakListOptions = Arc::new(|s: &mut ListSelectors| {
            s.label_selector = Some("app=web".to_owned());
        });
        let options = FactoryOptions::default()
            .namespace("team-a".to_owned())
            .tweak_list_options(tweak);
        let factory = InformerFactory::new(Recorder(Arc::clone(&asked)), options);

        factory.informer::<ConfigMap>();
        factory.informer::<ConfigMap>();
        factory.informer::<Namespace>();

        let selectors = ListSelectors {
            label_selector: Some("app=web".to_owned()),
            field_selector: None,
        };
        assert_eq!(
            *asked.lock().unwrap(),
            vec![
                (
                    "ConfigMap".to_owned(),
                    Some("team-a".to_owned()),
                    selectors.clone()
                ),
                ("Namespace".to_owned(), None, selectors),
            ]
        );
    }

    #[test]
    fn a_per_type_tweak_adjusts_only_its_type_after_the_global_one() {
        let asked = Asked::default();
        let global: TweakListOptions = Arc::new(|s: &mut ListSelectors| {
            s.label_selector = Some("app=web".to_owned());
        });
        let shard: TweakListOptions = Arc::new(|s: &mut ListSelectors| {
            let base = s.label_selector.take().unwrap_or_default();
            s.label_selector = Some(format!("{base},shard=a"));
        });
        let options = FactoryOptions::default()
            .tweak_list_options(global)
            .tweak_list_options_for::<ConfigMap>(shard);
        let factory = InformerFactory::new(Recorder(Arc::clone(&asked)), options);

        factory.informer::<ConfigMap>();
        factory.informer::<Namespace>();

        let selectors = |label: &str| ListSelectors {
            label_selector: Some(label.to_owned()),
            field_selector: None,
        };
        assert_eq!(
            *asked.lock().unwrap(),
            vec![
                ("ConfigMap".to_owned(), None, selectors("app=web,shard=a")),
                ("Namespace".to_owned(), None, selectors("app=web")),
            ]
        );
    }
    #[test]
    fn informer_with_builds_the_kinds_informer_from_the_factorys_scope_and_is_then_shared() {
        let asked = Asked::default();
        let tweak: TweakListOptions = Arc::new(|s: &mut ListSelectors| {
            s.label_selector = Some("app=web".to_owned());
        });
        let options = FactoryOptions::default()
            .namespace("team-a".to_owned())
            .tweak_list_options(tweak);
        let factory = InformerFactory::new(Recorder(Arc::clone(&asked)), options);
        let made = Asked::default();
        let record = Arc::clone(&made);
        let own = factory.informer_with::<ConfigMap, _>(move |namespace, selectors| {
            let entry = (
                "own".to_owned(),
                namespace.map(str::to_owned),
                selectors.clone(),
            );
            record.lock().unwrap().push(entry);
            Offline
        });
        let shared = factory.informer::<ConfigMap>();
        let again = factory.informer_with::<ConfigMap, Offline>(|_, _| unreachable!("exists"));

        assert!(
            asked.lock().unwrap().is_empty(),
            "the source was never asked"
        );
        let selectors = ListSelectors {
            label_selector: Some("app=web".to_owned()),
            field_selector: None,
        };
        assert_eq!(
            *made.lock().unwrap(),
            vec![("own".to_owned(), Some("team-a".to_owned()), selectors)]
        );
        assert_eq!((own.name(), again.name()), (shared.name(), shared.name()));
    }
}
