use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{CreateOptions, ListOptions, ResourceClient};
use kubegen_testserver::TestServer;

use super::*;
use crate::webhook::WebhookOptions;
use crate::{Action, Context, OnError};

/// Counts reconciles; fails every one when `fail` is set, with the policy `policy`.
struct Counting {
    reconciles: AtomicUsize,
    fail: bool,
    policy: OnError,
}

impl Counting {
    fn new(fail: bool, policy: OnError) -> Arc<Counting> {
        Arc::new(Counting {
            reconciles: AtomicUsize::new(0),
            fail,
            policy,
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the spec names a region that does not exist")]
struct NoSuchRegion;

impl Reconciler<ConfigMap> for Counting {
    type Error = NoSuchRegion;

    async fn reconcile(&self, _: Arc<ConfigMap>, _: &Context) -> Result<Action, NoSuchRegion> {
        self.reconciles.fetch_add(1, Ordering::SeqCst);
        if self.fail {
            Err(NoSuchRegion)
        } else {
            Ok(Action::Done)
        }
    }

    fn on_error(&self, _: &NoSuchRegion, _: &Context) -> OnError {
        self.policy
    }
}

async fn create_configmaps(server: &TestServer, names: &[&str]) {
    let configmaps = ResourceClient::<ConfigMap>::namespaced(server.client(), "default");
    for name in names {
        let configmap = ConfigMap {
            metadata: ObjectMeta {
                name: Some((*name).to_owned()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        configmaps
            .create(&configmap, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Resolves once `done` holds, polling every 10 ms.
async fn when(done: impl Fn() -> bool + Send + 'static) {
    while !done() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn scraped(metrics: &ProcessMetrics, family: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let text = metrics.encode();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .unwrap_or_else(|e| panic!("{e}"));
    scrape
        .samples
        .into_iter()
        .find(|s| s.metric == family && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .and_then(|s| match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Untyped(v)
            | prometheus_parse::Value::Gauge(v) => Some(v),
            _ => None,
        })
}

#[tokio::test]
async fn two_controllers_share_one_list_and_watch_and_count_under_their_own_names() {
    let server = TestServer::start().await;
    create_configmaps(&server, &["a", "b"]).await;
    let mut manager = Manager::new(server.client(), ManagerOptions::default());
    let configmaps = manager.factory().informer::<ConfigMap>();
    let (first, second) = (
        Counting::new(false, OnError::Backoff),
        Counting::new(false, OnError::Backoff),
    );
    for (name, reconciler) in [("first", &first), ("second", &second)] {
        let controller = manager
            .controller(name, &configmaps)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        manager.add(controller, Arc::clone(reconciler));
    }
    let metrics = manager.metrics().clone();
    let (a, b) = (Arc::clone(&first), Arc::clone(&second));
    let shutdown = when(move || {
        a.reconciles.load(Ordering::SeqCst) >= 2 && b.reconciles.load(Ordering::SeqCst) >= 2
    });
    let run = tokio::time::timeout(Duration::from_secs(20), manager.run(shutdown)).await;
    assert!(matches!(run, Ok(Ok(()))), "{run:?}");

    let one_informer = [("informer", "configmaps")];
    assert_eq!(
        scraped(&metrics, "informer_lists_total", &one_informer),
        Some(1.0)
    );
    assert_eq!(
        scraped(&metrics, "informer_watches_total", &one_informer),
        Some(1.0)
    );
    for name in ["first", "second"] {
        let labels = [("controller", name), ("result", "success")];
        let reconciled = scraped(&metrics, "controller_runtime_reconcile_total", &labels);
        assert_eq!(reconciled, Some(2.0), "{name}");
        let workers = scraped(
            &metrics,
            "controller_runtime_max_concurrent_reconciles",
            &[("controller", name)],
        );
        assert_eq!(workers, Some(2.0), "{name}");
        let depth = scraped(&metrics, "workqueue_depth", &[("name", name)]);
        assert_eq!(depth, Some(0.0), "{name} has a queue of its own");
    }
}

#[tokio::test]
async fn a_terminal_error_is_not_retried_but_recorded_as_an_event_and_counted() {
    let server = TestServer::start().await;
    create_configmaps(&server, &["bad-region"]).await;
    let mut manager = Manager::new(server.client(), ManagerOptions::default());
    let configmaps = manager.factory().informer::<ConfigMap>();
    let terminal = Counting::new(true, OnError::Terminal);
    let controller = manager
        .controller("regions", &configmaps)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let metrics = controller.metrics().clone();
    manager.add(controller, Arc::clone(&terminal));
    // Long enough for several backoff retries (5 ms, 10 ms, 20 ms, ...) had it been retried.
    let counted = metrics.clone();
    let shutdown = async move {
        when(move || counted.terminal_errors() == 1).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let run = tokio::time::timeout(Duration::from_secs(20), manager.run(shutdown)).await;
    assert!(matches!(run, Ok(Ok(()))), "{run:?}");

    assert_eq!(terminal.reconciles.load(Ordering::SeqCst), 1, "not retried");
    assert_eq!(metrics.terminal_errors(), 1);
    assert_eq!(metrics.reconciles("error"), 1);
    let events = ResourceClient::<Event>::namespaced(server.client(), "default")
        .list(&ListOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let recorded: Vec<(&str, &str)> = events
        .items
        .iter()
        .map(|e| {
            let reason = e.reason.as_deref().unwrap_or_default();
            (reason, e.message.as_deref().unwrap_or_default())
        })
        .collect();
    assert_eq!(
        recorded,
        [(
            "ReconcileError",
            "not retried: the spec names a region that does not exist"
        )]
    );
    assert_eq!(events.items[0].type_.as_deref(), Some("Warning"));
    assert_eq!(
        events.items[0].involved_object.name.as_deref(),
        Some("bad-region")
    );
}

#[tokio::test]
async fn requeue_after_an_error_retries_after_the_given_delay() {
    let server = TestServer::start().await;
    create_configmaps(&server, &["flaky"]).await;
    let mut manager = Manager::new(server.client(), ManagerOptions::default());
    let configmaps = manager.factory().informer::<ConfigMap>();
    let later = Counting::new(true, OnError::RequeueAfter(Duration::from_millis(300)));
    let controller = manager
        .controller("flaky", &configmaps)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    manager.add(controller, Arc::clone(&later));
    let watched = Arc::clone(&later);
    let started = std::time::Instant::now();
    let shutdown = when(move || watched.reconciles.load(Ordering::SeqCst) >= 2);
    let run = tokio::time::timeout(Duration::from_secs(20), manager.run(shutdown)).await;
    assert!(matches!(run, Ok(Ok(()))), "{run:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

/// A reconcile that takes 300 ms, and says when it finished.
struct Slow {
    started: AtomicBool,
    finished: AtomicBool,
}

impl Reconciler<ConfigMap> for Slow {
    type Error = NoSuchRegion;

    async fn reconcile(&self, _: Arc<ConfigMap>, _: &Context) -> Result<Action, NoSuchRegion> {
        self.started.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.finished.store(true, Ordering::SeqCst);
        Ok(Action::Done)
    }
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_stops_the_manager_after_in_flight_reconciles_finish() {
    use tokio::signal::unix::{SignalKind, signal};
    // This test's own listener makes SIGTERM harmless to the test process before anything
    // sends it (the default action would kill it).
    let _guard = signal(SignalKind::terminate()).unwrap_or_else(|e| panic!("{e}"));
    let server = TestServer::start().await;
    create_configmaps(&server, &["slow"]).await;
    let mut manager = Manager::new(server.client(), ManagerOptions::default());
    let configmaps = manager.factory().informer::<ConfigMap>();
    let slow = Arc::new(Slow {
        started: AtomicBool::new(false),
        finished: AtomicBool::new(false),
    });
    let controller = manager
        .controller("slow", &configmaps)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    manager.add(controller, Arc::clone(&slow));
    let health = manager.health().clone();
    let running = tokio::spawn(manager.run(crate::shutdown_signal()));
    when({
        let slow = Arc::clone(&slow);
        move || slow.started.load(Ordering::SeqCst)
    })
    .await;
    assert!(health.is_ready());
    // Until the manager's own listener is installed a SIGTERM goes to ours: send until it stops.
    let pid = std::process::id().to_string();
    let stopped = async {
        while !running.is_finished() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let waited = tokio::time::timeout(Duration::from_secs(20), stopped).await;
    assert!(waited.is_ok(), "SIGTERM did not stop the manager");
    let result = running.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(result, Ok(())), "{result:?}");
    assert!(
        slow.finished.load(Ordering::SeqCst),
        "the in-flight reconcile was drained"
    );
    assert!(!health.is_ready(), "not ready after shutdown");
}

#[tokio::test]
async fn the_cached_client_reads_from_an_informer_it_starts_on_first_use() {
    let server = TestServer::start().await;
    create_configmaps(&server, &["a", "b"]).await;
    let manager = Manager::new(server.client(), ManagerOptions::default());
    let cached = manager.cached_client();
    let a = cached.get::<ConfigMap>(Some("default"), "a").await;
    let a = a.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        a.and_then(|a| a.metadata.name.clone()).as_deref(),
        Some("a")
    );
    let all = cached
        .list::<ConfigMap>(Some("default"), &kube_core::Selector::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut names: Vec<String> = all.iter().filter_map(|c| c.metadata.name.clone()).collect();
    names.sort();
    assert!(
        names.starts_with(&["a".to_owned(), "b".to_owned()]),
        "{names:?}"
    );
    assert!(
        Arc::ptr_eq(
            &cached
                .get::<ConfigMap>(Some("default"), "b")
                .await
                .ok()
                .flatten()
                .unwrap_or_default(),
            &manager
                .factory()
                .informer::<ConfigMap>()
                .lister()
                .get(Some("default"), "b")
                .unwrap_or_default(),
        ),
        "the cache's object, shared with the factory's informer"
    );
    let writer = cached.writer::<ConfigMap>(Some("default"));
    writer
        .delete("a", &kubegen_client::DeleteOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    when({
        let cached = cached.clone();
        move || {
            futures_util::FutureExt::now_or_never(cached.get::<ConfigMap>(Some("default"), "a"))
                .is_some_and(|read| read.is_ok_and(|found| found.is_none()))
        }
    })
    .await;
    manager.factory().shutdown().await;
}

#[tokio::test]
async fn the_manager_serves_probes_and_metrics_on_its_addresses() {
    let free = || {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    };
    let (health_addr, metrics_addr) = (free(), free());
    let server = TestServer::start().await;
    let options = ManagerOptions::default()
        .health_probe_bind_address(Some(health_addr))
        .metrics_bind_address(Some(metrics_addr));
    let mut manager = Manager::new(server.client(), options);
    let configmaps = manager.factory().informer::<ConfigMap>();
    let controller = manager
        .controller("probed", &configmaps)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    manager.add(controller, Counting::new(false, OnError::Backoff));
    let health = manager.health().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.run(async {
        let _ = stopped.await;
    }));
    when(move || health.is_ready()).await;
    let get = |addr: std::net::SocketAddr, path: &'static str| async move {
        let client = kubegen_client::Client::new(kubegen_client::Config::new(
            format!("http://{addr}")
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let request = http::Request::get(path)
            .body(bytes::Bytes::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut response = client
            .send(request)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let body = response
            .body_mut()
            .collect_limited(1 << 20)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&body).into_owned()
    };
    assert_eq!(get(health_addr, "/readyz").await, "ok\n");
    assert_eq!(get(health_addr, "/healthz").await, "ok\n");
    let scrape = get(metrics_addr, "/metrics").await;
    assert!(
        scrape.contains("controller_runtime_max_concurrent_reconciles{controller=\"probed\"} 2"),
        "{scrape}"
    );
    let _ = stop.send(());
    let result = running.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(result, Ok(())), "{result:?}");
}

/// Allows every ConfigMap.
struct AllowAll;

impl crate::webhook::Validator<ConfigMap> for AllowAll {
    async fn validate(
        &self,
        _: &crate::webhook::Admission<'_, ConfigMap>,
    ) -> Result<crate::webhook::Warnings, crate::webhook::Denial> {
        Ok(Vec::new())
    }
}

/// A manager with one ConfigMap controller and a webhook on `addr` (self-signed into `dir`).
fn manager_with_webhook(server: &TestServer, addr: SocketAddr, dir: &std::path::Path) -> Manager {
    let bootstrap = crate::webhook::SelfSigned {
        dns_names: vec!["localhost".to_owned()],
        ..crate::webhook::SelfSigned::default()
    };
    let webhook = WebhookOptions::default()
        .bind_address(addr)
        .cert_dir(dir)
        .self_signed(Some(bootstrap));
    let mut manager = Manager::new(
        server.client(),
        ManagerOptions::default().webhook(Some(webhook)),
    );
    manager
        .webhook_server()
        .add_validator::<ConfigMap>("/validate", AllowAll);
    let configmaps = manager.factory().informer::<ConfigMap>();
    let controller = manager
        .controller("hooked", &configmaps)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    manager.add(controller, Counting::new(false, OnError::Backoff));
    manager
}

/// Whether a TLS handshake with the server at `addr` succeeds, trusting the CA in `dir`.
async fn handshake(addr: SocketAddr, dir: &std::path::Path) -> bool {
    use rustls_pki_types::pem::PemObject as _;
    let ca = rustls_pki_types::CertificateDer::from_pem_file(dir.join("ca.crt"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap_or_else(|e| panic!("{e}"));
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap_or_else(|e| panic!("{e}"))
    .with_root_certificates(roots)
    .with_no_client_auth();
    let Ok(tcp) = tokio::net::TcpStream::connect(addr).await else {
        return false;
    };
    let name =
        rustls_pki_types::ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .is_ok()
}

#[tokio::test]
async fn readyz_fails_until_the_webhook_server_listens_then_passes() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // The webhook port is taken: the manager cannot serve its webhooks, so it never gets ready.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = taken.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let manager = manager_with_webhook(&server, addr, dir.path());
    let health = manager.health().clone();
    let result = manager.run(std::future::pending()).await;
    assert!(
        matches!(&result, Err(Error::BindFailed { addr: a, .. }) if *a == addr),
        "{result:?}"
    );
    assert!(!health.is_ready());

    drop(taken);
    let manager = manager_with_webhook(&server, addr, dir.path());
    let health = manager.health().clone();
    let probes = Endpoints::health(health.clone());
    assert_eq!(
        probes.respond("/readyz").2,
        "informer caches not synced (or shutting down)\n"
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.run(async {
        let _ = stopped.await;
    }));
    let ready = health.clone();
    when(move || ready.is_ready()).await;
    assert_eq!(probes.respond("/readyz").2, "ok\n");
    assert!(
        handshake(addr, dir.path()).await,
        "ready, but the webhook does not answer"
    );
    let _ = stop.send(());
    let result = running.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(result, Ok(())), "{result:?}");
    // The manager stopped serving: its webhook check fails whatever the caches say.
    health.set_ready(true);
    let serving = health.clone();
    when(move || serving.check_ready().is_err()).await;
    assert_eq!(probes.respond("/readyz").2, "webhook server not ready\n");
    assert!(!handshake(addr, dir.path()).await);
}
