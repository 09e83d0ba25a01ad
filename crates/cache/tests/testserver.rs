//! The informer against the in-process API server: real HTTP, real paging, real watches, and
//! injected faults. Real time (sockets), so every wait is "until condition, at most N seconds".
#![allow(clippy::unwrap_used)]

use std::{
    collections::BTreeMap,
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use futures_util::future::join_all;
use k8s_openapi::{
    api::core::v1::ConfigMap,
    apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta},
};
use kubegen_cache::{
    ClientListWatch, ClientListWatchSource, DeletedObject, EventHandler, FactoryOptions,
    HandlerFns, InformerFactory, InformerOptions, ListRequest, ListSelectors, ListWatch,
    ListWatchError, ListWatchErrorKind, MetadataLister, SharedIndexInformer, StoreMode,
    WatchRequest, WireBytes, WireCodec, WireItem, wait_for_cache_sync,
};
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, ListOptions, ObjectList, ResourceClient,
    UpdateOptions,
};
use kubegen_testserver::{Failure, RequestMatch, ServerOptions, TestServer};
use parking_lot::Mutex;

/// Runs one test once per store mode: `per_store_mode! { #[tokio::test] async fn name(mode)
/// { .. } }` defines the module `name` with the tests `decoded` and `bytes`. The byte-backed
/// run keeps no decoded objects, so every read and every update decodes.
macro_rules! per_store_mode {
    ($(#[$attr:meta])+ async fn $name:ident($mode:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($mode: StoreMode) $body

            $(#[$attr])+
            async fn decoded() {
                run(StoreMode::Decoded).await;
            }

            $(#[$attr])+
            async fn bytes() {
                run(StoreMode::Bytes { decoded_cache: 0 }).await;
            }
        }
    };
}

/// Counts the reflector's calls and remembers each list's resourceVersion.
struct Counting<L> {
    inner: L,
    list_rvs: Arc<Mutex<Vec<String>>>,
    /// Watches the server answered (the stream is open on the server once its response is in).
    watches: Arc<AtomicUsize>,
    /// Lists that handed out wire items (bytes and metadata, nothing decoded in full).
    wire_lists: Arc<AtomicUsize>,
}

impl<L> Counting<L> {
    fn new(inner: L) -> Self {
        Self {
            inner,
            list_rvs: Arc::default(),
            watches: Arc::default(),
            wire_lists: Arc::default(),
        }
    }
}

impl<L: ListWatch<ConfigMap>> ListWatch<ConfigMap> for Counting<L> {
    type Watch = L::Watch;

    fn list(
        &self,
        req: &ListRequest,
    ) -> impl Future<Output = Result<ObjectList<ConfigMap>, ListWatchError>> + Send {
        if req.continue_token.is_none() {
            self.list_rvs.lock().push(req.resource_version.clone());
        }
        self.inner.list(req)
    }

    fn list_each_with_bytes(
        &self,
        req: &ListRequest,
        each: impl FnMut(ConfigMap, Option<WireBytes>) + Send,
    ) -> impl Future<Output = Result<ObjectList<ConfigMap>, ListWatchError>> + Send {
        if req.continue_token.is_none() {
            self.list_rvs.lock().push(req.resource_version.clone());
        }
        self.inner.list_each_with_bytes(req, each)
    }

    fn hands_out_wire_items(&self) -> bool {
        self.inner.hands_out_wire_items()
    }

    fn list_each_wire(
        &self,
        req: &ListRequest,
        each: impl FnMut(WireItem) + Send,
    ) -> impl Future<Output = Result<ListMeta, ListWatchError>> + Send {
        if req.continue_token.is_none() {
            self.list_rvs.lock().push(req.resource_version.clone());
        }
        self.wire_lists.fetch_add(1, Ordering::SeqCst);
        self.inner.list_each_wire(req, each)
    }

    fn watch(
        &self,
        req: &WatchRequest,
    ) -> impl Future<Output = Result<Self::Watch, ListWatchError>> + Send {
        let opened = self.inner.watch(req);
        let watches = Arc::clone(&self.watches);
        async move {
            let watch = opened.await;
            if watch.is_ok() {
                watches.fetch_add(1, Ordering::SeqCst);
            }
            watch
        }
    }

    fn serves_streaming_lists(&self) -> impl Future<Output = Option<bool>> + Send {
        self.inner.serves_streaming_lists()
    }

    fn wire_codec(&self) -> Option<WireCodec<ConfigMap>> {
        self.inner.wire_codec()
    }
}

/// Counts notifications.
#[derive(Default)]
struct Counts {
    adds: AtomicUsize,
    updates: AtomicUsize,
    deletes: AtomicUsize,
    tombstones: Mutex<Vec<String>>,
}

impl EventHandler<ConfigMap> for Counts {
    fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
        self.adds.fetch_add(1, Ordering::SeqCst);
    }
    fn on_update(&self, _: &Arc<ConfigMap>, _: &Arc<ConfigMap>) {
        self.updates.fetch_add(1, Ordering::SeqCst);
    }
    fn on_delete(&self, obj: &DeletedObject<ConfigMap>) {
        self.deletes.fetch_add(1, Ordering::SeqCst);
        if let DeletedObject::Tombstone { key, .. } = obj {
            self.tombstones.lock().push(key.to_string());
        }
    }
}

struct Harness {
    server: TestServer,
    configmaps: ResourceClient<ConfigMap>,
    informer: SharedIndexInformer<ConfigMap>,
    list_rvs: Arc<Mutex<Vec<String>>>,
    watches: Arc<AtomicUsize>,
    counts: Arc<Counts>,
    errors: Arc<Mutex<Vec<ListWatchErrorKind>>>,
}

impl Harness {
    async fn start(
        server_options: ServerOptions,
        streaming: bool,
        seed: usize,
        mode: StoreMode,
    ) -> Harness {
        let server = TestServer::start_with(server_options).await;
        let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
        let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
        for chunk in (0..seed).collect::<Vec<_>>().chunks(100) {
            let names: Vec<String> = chunk.iter().map(|i| format!("cm-{i:05}")).collect();
            join_all(names.iter().map(|name| create(&configmaps, name))).await;
        }
        let errors = Arc::new(Mutex::new(Vec::new()));
        let list_watch = Counting::new(ClientListWatch::new(
            ResourceClient::all_namespaces(client),
            ListOptions::default(),
        ));
        let list_rvs = Arc::clone(&list_watch.list_rvs);
        let watches = Arc::clone(&list_watch.watches);
        let sink = Arc::clone(&errors);
        let mut options = InformerOptions::default();
        options.store_mode = mode;
        options.streaming_list = streaming;
        options.streaming_timeout = Duration::from_secs(2);
        options.watch_error_handler = Some(Arc::new(move |e: &ListWatchError| {
            sink.lock().push(e.kind())
        }));
        let informer = SharedIndexInformer::new(list_watch, options);
        let counts = Arc::new(Counts::default());
        let registration = informer.add_event_handler(Arc::clone(&counts)).unwrap();
        informer.start();
        // The informer syncs when the list is stored; the handler when it has seen all of it.
        wait_for_cache_sync(Duration::from_secs(60), &[&informer, &registration])
            .await
            .unwrap();
        // The list is in; the watch after it may still be on its way. Faults injected from here
        // on (dropped or throttled watches) must meet an open watch.
        eventually("the watch after the list", 10, || {
            watches.load(Ordering::SeqCst) > 0
        })
        .await;
        Harness {
            server,
            configmaps,
            informer,
            list_rvs,
            watches,
            counts,
            errors,
        }
    }

    fn lists(&self) -> usize {
        self.list_rvs.lock().len()
    }

    /// The cache as `key -> resourceVersion`.
    fn cache(&self) -> BTreeMap<String, String> {
        self.informer
            .indexer()
            .list()
            .iter()
            .map(|o| (key(o), rv(o)))
            .collect()
    }

    /// The server's state as `key -> resourceVersion`.
    async fn server_state(&self) -> BTreeMap<String, String> {
        let list = self.configmaps.list(&ListOptions::default()).await.unwrap();
        list.items.iter().map(|o| (key(o), rv(o))).collect()
    }
}

fn key(o: &ConfigMap) -> String {
    format!(
        "{}/{}",
        o.metadata.namespace.as_deref().unwrap_or_default(),
        o.metadata.name.as_deref().unwrap_or_default()
    )
}

fn rv(o: &ConfigMap) -> String {
    o.metadata.resource_version.clone().unwrap_or_default()
}

async fn create(cms: &ResourceClient<ConfigMap>, name: &str) -> ConfigMap {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), "0".to_owned())])),
        ..ConfigMap::default()
    };
    cms.create(&cm, &CreateOptions::default()).await.unwrap()
}

/// Polls `cond` every 20 ms for at most `secs` seconds.
async fn eventually(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_sync_of_thousands_of_objects_across_pages(mode) {
    let h = Harness::start(ServerOptions::default(), false, 2500, mode).await;
    assert_eq!(h.informer.indexer().len(), 2500);
    assert_eq!(h.counts.adds.load(Ordering::SeqCst), 2500);
    assert_eq!(*h.list_rvs.lock(), ["0"], "one paged list");
    assert_eq!(h.cache(), h.server_state().await);
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_watch_is_resumed_without_relist(mode) {
    let h = Harness::start(ServerOptions::default(), false, 10, mode).await;
    let watches = h.watches.load(Ordering::SeqCst);
    h.server.faults().drop_watches();
    eventually("re-watch", 10, || {
        h.watches.load(Ordering::SeqCst) > watches
    })
    .await;
    create(&h.configmaps, "after-drop").await;
    eventually("new object cached", 10, || {
        h.informer
            .lister()
            .get(Some("default"), "after-drop")
            .is_some()
    })
    .await;
    assert_eq!(h.lists(), 1, "no relist after a clean close");
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_history_relists_with_tombstones_for_objects_deleted_while_away(mode) {
    let h = Harness::start(ServerOptions::default(), false, 20, mode).await;
    h.server.faults().stall_watches(true);
    for i in 0..5 {
        h.configmaps
            .delete(&format!("cm-{i:05}"), &DeleteOptions::default())
            .await
            .unwrap();
    }
    h.server.faults().expire_history();
    h.server.faults().drop_watches();
    h.server.faults().stall_watches(false);
    eventually("relist", 20, || h.lists() >= 2).await;
    eventually("tombstones", 10, || h.counts.tombstones.lock().len() == 5).await;
    // client-go's rule: the watch's 410 does not make the relist a consistent read; the list
    // at the last synced version (no limit: "not older than") is served as the watch cache would.
    let list_rvs = h.list_rvs.lock().clone();
    assert_eq!(list_rvs.len(), 2, "no further list at \"\": {list_rvs:?}");
    assert_eq!(list_rvs[0], "0");
    assert!(
        list_rvs[1].parse::<u64>().is_ok_and(|rv| rv > 0),
        "relist at the last synced version: {list_rvs:?}"
    );
    let mut tombstones = h.counts.tombstones.lock().clone();
    tombstones.sort();
    assert_eq!(
        tombstones,
        (0..5)
            .map(|i| format!("default/cm-{i:05}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(h.cache(), h.server_state().await);
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_requests_backs_off_then_rewatches(mode) {
    // No controller-manager: the injected 429s must reach this informer's watches only.
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = Harness::start(options, false, 3, mode).await;
    let faults = h.server.faults();
    // The client retries a 429 itself (5 times); the 6th reaches the reflector, which backs off.
    let throttled = Failure::TooManyRequests {
        retry_after_seconds: 0,
    };
    faults.fail_next(7, RequestMatch::any().verb("watch"), throttled);
    let started = tokio::time::Instant::now();
    faults.drop_watches();
    create(&h.configmaps, "after-throttle").await;
    let cached = || {
        h.informer
            .lister()
            .get(Some("default"), "after-throttle")
            .is_some()
    };
    eventually("recovered", 20, cached).await;
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "backed off at least 800 ms"
    );
    // (A watch dropped within 1 s of opening also counts as a failure: "closed at once".)
    let throttles = h
        .errors
        .lock()
        .iter()
        .filter(|k| **k == ListWatchErrorKind::TooManyRequests)
        .count();
    assert_eq!(throttles, 1);
    assert_eq!(h.lists(), 1, "429 re-watches, it does not relist");
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_list_reaches_the_watch_error_handler_with_the_servers_status(mode) {
    let server = TestServer::start().await;
    let denied = Failure::Forbidden { user: "nobody" };
    server.faults().fail_next(
        1,
        RequestMatch::any().verb("list").resource("configmaps"),
        denied,
    );
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    let seen: Arc<Mutex<Vec<ListWatchError>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let metrics = kubegen_cache::InformerMetrics::default();
    let mut options = InformerOptions::default();
    options.name = "configmaps".into();
    options.metrics = metrics.clone();
    options.store_mode = mode;
    // The fault is on the list: list first.
    options.streaming_list = false;
    options.watch_error_handler = Some(Arc::new(move |e: &ListWatchError| {
        sink.lock().push(e.clone())
    }));
    let list_watch = ClientListWatch::new(
        ResourceClient::<ConfigMap>::all_namespaces(client),
        ListOptions::default(),
    );
    let informer = SharedIndexInformer::new(list_watch, options);
    informer.start();
    // The reflector backs off and lists again; the fault was for one request only.
    wait_for_cache_sync(Duration::from_secs(30), &[&informer])
        .await
        .unwrap();
    let seen = seen.lock().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let err = &seen[0];
    // The message as a real v1.15 server words an RBAC denial (checked with the `nobody` token).
    let message = "configmaps is forbidden: User \"nobody\" cannot list resource \"configmaps\" \
                   in API group \"\" at the cluster scope";
    let status = err.status().expect("the server's Status is kept");
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (403, "Forbidden", message)
    );
    assert_eq!(
        status.details.as_ref().map(|d| d.kind.as_str()),
        Some("configmaps")
    );
    let source = std::error::Error::source(err).expect("the client error is the source");
    let client_error = source
        .downcast_ref::<kubegen_client::Error>()
        .expect("typed source");
    assert!(client_error.is_forbidden());
    let chain = format!("{err:#}");
    assert_eq!(chain.matches(message).count(), 1, "message once: {chain}");
    assert!(
        chain.starts_with("request failed: GET /api/v1/configmaps?"),
        "{chain}"
    );
    // ...and the metrics count it by the server's reason and code.
    let mut registry = prometheus_client::registry::Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let errors: Vec<_> = scrape
        .samples
        .iter()
        .filter(|s| s.metric == "informer_list_watch_errors_total")
        .map(|s| {
            let label = |k| s.labels.get(k).unwrap_or_default().to_owned();
            let value = match s.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => v,
                ref other => panic!("{other:?}"),
            };
            (
                label("informer"),
                label("step"),
                label("reason"),
                label("code"),
                value,
            )
        })
        .collect();
    assert_eq!(
        errors,
        [(
            "configmaps".to_owned(),
            "list".to_owned(),
            "Forbidden".to_owned(),
            "403".to_owned(),
            1.0
        )]
    );
    informer
        .shutdown_and_wait(Duration::from_secs(5))
        .await
        .unwrap();
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_is_used_when_the_server_supports_it(mode) {
    let h = Harness::start(ServerOptions::default(), true, 600, mode).await;
    assert_eq!(h.lists(), 0, "no LIST at all");
    assert_eq!(h.informer.indexer().len(), 600);
    create(&h.configmaps, "later").await;
    eventually("watch continues", 10, || h.informer.indexer().len() == 601).await;
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_list_falls_back_when_the_server_does_not_support_it(mode) {
    let mut options = ServerOptions::default();
    options.streaming_list = false;
    let h = Harness::start(options, true, 600, mode).await;
    assert_eq!(h.lists(), 1, "fell back to one paged list");
    assert_eq!(h.cache(), h.server_state().await);
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_equals_server_after_random_churn(mode) {
    let h = Harness::start(ServerOptions::default(), false, 50, mode).await;
    let mut live: Vec<String> = (0..50).map(|i| format!("cm-{i:05}")).collect();
    let mut next = 0;
    for step in 0..400 {
        let choice = rand::random_range(0..10);
        if choice < 3 || live.is_empty() {
            let name = format!("new-{next}");
            next += 1;
            create(&h.configmaps, &name).await;
            live.push(name);
        } else if choice < 7 {
            let name = &live[rand::random_range(0..live.len())];
            let mut cm = h.configmaps.get(name, &Default::default()).await.unwrap();
            cm.data = Some(BTreeMap::from([("v".to_owned(), step.to_string())]));
            h.configmaps
                .update(&cm, &UpdateOptions::default())
                .await
                .unwrap();
        } else {
            let name = live.swap_remove(rand::random_range(0..live.len()));
            h.configmaps
                .delete(&name, &DeleteOptions::default())
                .await
                .unwrap();
        }
        if step % 97 == 0 {
            h.server.faults().drop_watches();
        }
        if step == 250 {
            h.server.faults().expire_history();
            h.server.faults().drop_watches();
        }
    }
    let want = h.server_state().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while h.cache() != want {
        assert!(
            tokio::time::Instant::now() < deadline,
            "cache never converged"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        h.counts.adds.load(Ordering::SeqCst) - h.counts.deletes.load(Ordering::SeqCst),
        want.len()
    );
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_shares_informers_and_starts_only_requested_ones(mode) {
    use k8s_openapi::api::core::v1::Secret;

    let server = TestServer::start().await;
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    create(&configmaps, "selected").await;
    let mut other = create(&configmaps, "other").await;
    other.metadata.labels = Some(BTreeMap::from([("skip".to_owned(), "yes".to_owned())]));
    configmaps
        .update(&other, &UpdateOptions::default())
        .await
        .unwrap();

    let options = FactoryOptions::default()
        .store_mode(mode)
        .namespace("default".to_owned())
        .tweak_list_options(Arc::new(|s: &mut ListSelectors| {
            s.label_selector = Some("!skip".into())
        }))
        .transform(Arc::new(|m: &mut ObjectMeta| m.managed_fields = None));
    let factory = InformerFactory::new(
        ClientListWatchSource::new(client),
        options.resync_for::<ConfigMap>(Duration::from_secs(30)),
    );
    let first = factory.informer::<ConfigMap>();
    let second = factory.informer::<ConfigMap>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(
        first.has_synced() && second.has_synced(),
        "one shared informer"
    );
    assert_eq!(
        second.indexer().list_keys().len(),
        1,
        "label selector applied"
    );
    assert!(first.lister().get(Some("default"), "selected").is_some());

    let late = factory.informer::<Secret>();
    assert!(
        !late.has_started(),
        "requested after start(): not started until start() again"
    );
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(late.has_synced());
    let handler = Arc::new(Counts::default());
    first.add_event_handler(Arc::clone(&handler)).unwrap();
    let guard = Arc::clone(&handler);
    let secrets = HandlerFns::<Secret>::new().on_add(move |_, _| {
        let _held = &guard;
    });
    late.add_event_handler(secrets).unwrap();
    factory.shutdown().await;
    // Both handler tasks ended (they held the other references) before shutdown returned.
    assert_eq!(Arc::strong_count(&handler), 1);
}
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_informer_caches_partial_object_metadata_and_follows_changes(mode) {
    let server = TestServer::start().await;
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    metadata_informer_scenario(client, "default", mode).await;
}
}

// The same scenario on the real API server `KUBEGEN_E2E_KUBECONFIG` names, in a namespace of its
// own that it empties and deletes afterwards.
per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn metadata_informer_caches_partial_object_metadata_on_cluster(mode) {
    let client = kubegen_e2e_support::cluster_client().await;
    kubegen_e2e_support::in_scratch_namespace(
        &client,
        "metadata-e2e-",
        |client, namespace| async move {
            metadata_informer_scenario(client.clone(), &namespace, mode).await;
            // Emptied here: without a controller-manager (1.15) nobody else would.
            ResourceClient::<ConfigMap>::namespaced(client, &namespace)
                .delete_collection(&DeleteOptions::default(), &ListOptions::default())
                .await
                .unwrap();
        },
    )
    .await;
}
}

/// A metadata-only informer of ConfigMaps in `namespace` syncs the server's PartialObjectMetadata
/// and follows adds, label updates and deletes.
async fn metadata_informer_scenario(client: Client, namespace: &str, mode: StoreMode) {
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    for name in ["a", "b"] {
        create(&configmaps, name).await;
    }
    let options = FactoryOptions::default()
        .namespace(namespace.to_owned())
        .store_mode(mode);
    let factory = InformerFactory::new(ClientListWatchSource::new(client), options);
    let metadata = factory.metadata_informer_for::<ConfigMap>();
    let lister: MetadataLister<ConfigMap> = metadata.lister();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();

    let ns = Some(namespace);
    let cached = lister.get(ns, "a").unwrap();
    let types = cached.types.clone().unwrap_or_default();
    assert_eq!(
        (types.kind.as_str(), types.api_version.as_str()),
        ("PartialObjectMetadata", "meta.k8s.io/v1"),
        "the server converted the list"
    );
    let mut c = create(&configmaps, "c").await;
    eventually("the watch added c", 10, || lister.get(ns, "c").is_some()).await;
    c.metadata.labels = Some(BTreeMap::from([("tier".to_owned(), "web".to_owned())]));
    configmaps
        .update(&c, &UpdateOptions::default())
        .await
        .unwrap();
    eventually("the watch updated c's labels", 10, || {
        lister
            .get(ns, "c")
            .is_some_and(|m| m.metadata.labels == c.metadata.labels)
    })
    .await;
    configmaps
        .delete("a", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the watch deleted a", 10, || lister.get(ns, "a").is_none()).await;
    let mut names: Vec<String> = lister
        .list(&Default::default())
        .iter()
        .map(|m| m.metadata.name.clone().unwrap_or_default())
        // A real cluster's controller-manager puts its CA bundle in every namespace.
        .filter(|name| name != "kube-root-ca.crt")
        .collect();
    names.sort();
    assert_eq!(names, ["b", "c"]);
    factory.shutdown().await;
}

per_store_mode! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_objects_equal_what_a_get_returns(mode) {
    let h = Harness::start(ServerOptions::default(), false, 3, mode).await;
    let updated = {
        let mut cm = h.configmaps.get("cm-00001", &Default::default()).await.unwrap();
        cm.data = Some(BTreeMap::from([("v".to_owned(), "1".to_owned())]));
        h.configmaps.update(&cm, &UpdateOptions::default()).await.unwrap()
    };
    let lister = h.informer.lister();
    eventually("update cached", 10, || {
        lister.get(Some("default"), "cm-00001").is_some_and(|o| rv(&o) == rv(&updated))
    })
    .await;
    for name in ["cm-00000", "cm-00001", "cm-00002"] {
        let fetched = h.configmaps.get(name, &Default::default()).await.unwrap();
        let cached = lister.try_get(Some("default"), name).unwrap().unwrap();
        assert!(cached.metadata.managed_fields.is_some(), "{name}: managedFields kept");
        assert_eq!(*cached, fetched, "{name}");
    }
}
}

/// A byte-backed informer reads only each object's head (name, namespace, resourceVersion,
/// labels) on arrival when nothing needs the decoded object, and decodes it on arrival when a
/// custom index function does; either way reads, label selections and index lookups follow the
/// server, by list and by watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_store_reads_heads_on_arrival_unless_a_custom_index_needs_the_object() {
    let server = TestServer::start_with(ServerOptions::default()).await;
    let client = Client::new(Config::new(server.url().parse().unwrap())).unwrap();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
    for name in ["a", "b", "c"] {
        create(&configmaps, name).await;
    }
    for (indexed, wire) in [(false, true), (true, false)] {
        let list_watch = Counting::new(ClientListWatch::new(
            ResourceClient::all_namespaces(client.clone()),
            ListOptions::default(),
        ));
        let wire_lists = Arc::clone(&list_watch.wire_lists);
        let mut options = InformerOptions::default();
        options.store_mode = StoreMode::Bytes { decoded_cache: 0 };
        options.streaming_list = false;
        let informer = SharedIndexInformer::new(list_watch, options);
        if indexed {
            let by_value: kubegen_cache::IndexFn<ConfigMap> = Arc::new(|cm: &ConfigMap| {
                cm.data.iter().flatten().map(|(_, v)| v.clone()).collect()
            });
            informer
                .add_indexers([("value".to_owned(), by_value)].into())
                .unwrap();
        }
        informer.start();
        wait_for_cache_sync(Duration::from_secs(30), &[&informer])
            .await
            .unwrap();
        assert_eq!(
            wire_lists.load(Ordering::SeqCst) > 0,
            wire,
            "indexed: {indexed}"
        );
        let mut cm = configmaps.get("b", &Default::default()).await.unwrap();
        cm.metadata.labels = Some(BTreeMap::from([("tier".to_owned(), "front".to_owned())]));
        cm.data = Some(BTreeMap::from([("v".to_owned(), format!("{indexed}"))]));
        let updated = configmaps
            .update(&cm, &UpdateOptions::default())
            .await
            .unwrap();
        let lister = informer.lister();
        eventually("update cached", 10, || {
            lister
                .get(Some("default"), "b")
                .is_some_and(|o| rv(&o) == rv(&updated))
        })
        .await;
        for name in ["a", "b", "c"] {
            let fetched = configmaps.get(name, &Default::default()).await.unwrap();
            let cached = lister.try_get(Some("default"), name).unwrap().unwrap();
            assert_eq!(*cached, fetched, "{name}, indexed: {indexed}");
        }
        let front: kube_core::Selector = [("tier", "front")].into_iter().collect();
        let fronts: Vec<String> = lister.list(&front).iter().map(|o| key(o)).collect();
        assert_eq!(fronts, ["default/b"], "indexed: {indexed}");
        if indexed {
            let found = informer.indexer().by_index("value", "true").unwrap();
            assert_eq!(
                found.iter().map(|o| key(o)).collect::<Vec<_>>(),
                ["default/b"]
            );
        }
        informer.shutdown();
    }
}
