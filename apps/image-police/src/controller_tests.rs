//! Tests of the event wiring: which informer events put which keys on the queue. Informers run
//! against the generated fake clientset (an in-process API server), so events really flow
//! through list, watch and the handlers.

use std::time::Duration;

use kubegen_cache::FactoryOptions;
use kubegen_client::{GetOptions, UpdateOptions};
use kubegen_clientset::fake::Clientset as FakeClientset;
use kubegen_informers::SharedInformerFactory;
use kubegen_listers::apps::v1::DeploymentLister;
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_runtime::metrics::Metrics;
use serde_json::{Value, json};

use std::sync::Arc;

use super::*;
use crate::metrics::PoliceMetrics;
use crate::namespaces::ProtectedNamespaces;
use crate::reconcile::Reconciler;
use crate::writer::Writer;
use kubegen_runtime::Recorder;

fn whitelist(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "police.example.com/v1beta1", "kind": "WhiteList",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"images": [{"name": "nginx", "tags": ["1"]}]},
    })
}

fn deployment(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}},
    })
}

struct Wiring {
    clientset: FakeClientset,
    factory: SharedInformerFactory,
    controller: Controller<WhiteList>,
    reconciler: Arc<Reconciler>,
    metrics: Metrics,
}

impl Wiring {
    async fn start(objects: Vec<Value>) -> Wiring {
        let clientset = FakeClientset::new(objects).unwrap_or_else(|e| panic!("seed: {e}"));
        let factory =
            SharedInformerFactory::new(clientset.fake().client(), FactoryOptions::default());
        let (whitelists, deployments) = (
            factory.police_v1beta1().white_lists(),
            factory.apps_v1().deployments(),
        );
        let reconciler = Reconciler {
            whitelists: WhiteListLister::new(whitelists.informer().lister()),
            deployments: DeploymentLister::new(deployments.informer().lister()),
            writer: Writer::new((*clientset).clone()),
            protected: ProtectedNamespaces::new("image-police", false),
            events: Recorder::new(
                clientset.fake().client(),
                crate::reconcile::COMPONENT,
                "test",
            ),
            metrics: PoliceMetrics::default(),
        };
        let builder = Controller::builder(NAME, &whitelists.informer());
        let controller = build(builder, &whitelists.informer(), &deployments.informer())
            .unwrap_or_else(|e| panic!("{e}"));
        let metrics = controller.metrics().clone();
        factory.start();
        controller
            .wait_for_sync(Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Wiring {
            clientset,
            factory,
            controller,
            reconciler: Arc::new(reconciler),
            metrics,
        }
    }

    /// Takes every queued key (in order), waiting up to 5 s for at least `at_least` of them.
    async fn take(&self, at_least: usize) -> Vec<String> {
        let queue = self.controller.queue();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while queue.len() < at_least && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut keys = Vec::new();
        while !queue.is_empty() {
            if let Some(key) = queue.get().await {
                queue.done(&key);
                keys.push(key.as_str().to_owned());
            }
        }
        keys
    }

    async fn touch_whitelist(&self, namespace: &str, name: &str, spec_change: bool) {
        let client = self.clientset.police_v1beta1().white_lists(namespace);
        let mut list = client
            .get(name, &GetOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if spec_change {
            list.spec.images[0].tags.push("2".into());
            client
                .update(&list, &UpdateOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        } else {
            list.status = Some(Default::default());
            list.status.get_or_insert_default().violations_handled = Some(7);
            client
                .update_status(&list, &UpdateOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[tokio::test]
async fn initial_list_enqueues_every_namespace_with_a_whitelist_once() {
    let wiring = Wiring::start(vec![
        whitelist("a", "one"),
        whitelist("a", "two"),
        whitelist("b", "three"),
    ])
    .await;
    let mut keys = wiring.take(2).await;
    keys.sort();
    assert_eq!(keys, vec!["a", "b"]);
    wiring.factory.shutdown().await;
}

impl Wiring {
    async fn create_deployment(&self, namespace: &str, name: &str) {
        let deployments = self.clientset.apps_v1().deployments(namespace);
        let object =
            serde_json::from_value(deployment(namespace, name)).unwrap_or_else(|e| panic!("{e}"));
        deployments
            .create(&object, &Default::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[tokio::test]
async fn deployment_events_enqueue_their_namespace_only_if_it_has_a_whitelist() {
    let wiring = Wiring::start(vec![
        whitelist("team", "x"),
        whitelist("team", "y"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "unpoliced"}}),
    ])
    .await;
    wiring.take(1).await;
    wiring.create_deployment("unpoliced", "web").await;
    // Same informer, in order: once the second Deployment's namespace is queued, the first
    // Deployment's event has been handled too.
    wiring.create_deployment("team", "web").await;
    assert_eq!(wiring.take(1).await, vec!["team"]);
    wiring.factory.shutdown().await;
}

#[tokio::test]
async fn a_deleted_deployment_enqueues_its_policed_namespace() {
    let wiring = Wiring::start(vec![whitelist("team", "x"), deployment("team", "web")]).await;
    wiring.take(1).await;
    wiring
        .clientset
        .apps_v1()
        .deployments("team")
        .delete("web", &Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wiring.take(1).await, vec!["team"]);
    wiring.factory.shutdown().await;
}

#[tokio::test]
async fn every_whitelist_event_enqueues_its_namespace() {
    let wiring = Wiring::start(vec![whitelist("team", "x"), whitelist("team", "y")]).await;
    assert_eq!(wiring.take(1).await, vec!["team"]);
    let client = wiring.clientset.police_v1beta1().white_lists("team");
    let added = serde_json::from_value(whitelist("team", "z")).unwrap_or_else(|e| panic!("{e}"));
    client
        .create(&added, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wiring.take(1).await, vec!["team"], "added");
    wiring.touch_whitelist("team", "x", true).await;
    assert_eq!(wiring.take(1).await, vec!["team"], "spec updated");
    client
        .delete("y", &Default::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wiring.take(1).await, vec!["team"], "deleted");
    wiring.factory.shutdown().await;
}

#[tokio::test]
async fn status_writes_do_not_enqueue_but_spec_changes_do() {
    let wiring = Wiring::start(vec![whitelist("quiet", "wl"), whitelist("barrier", "wl")]).await;
    wiring.take(2).await;
    wiring.touch_whitelist("quiet", "wl", false).await;
    // Same informer, same handler, in order: once the barrier's spec change is queued, the status
    // write before it has been handled too.
    wiring.touch_whitelist("barrier", "wl", true).await;
    assert_eq!(wiring.take(1).await, vec!["barrier"]);
    wiring.touch_whitelist("quiet", "wl", true).await;
    assert_eq!(wiring.take(1).await, vec!["quiet"]);
    wiring.factory.shutdown().await;
}

#[tokio::test]
async fn workers_drain_and_stop_when_asked() {
    let wiring = Wiring::start(vec![whitelist("team", "wl")]).await;
    let metrics = wiring.metrics.clone();
    let stop = async {
        while metrics.reconciles_finished() < 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let drained = wiring
        .controller
        .run(
            Arc::clone(&wiring.reconciler),
            2,
            stop,
            Duration::from_secs(5),
        )
        .await;
    assert!(drained);
    assert!(wiring.controller.queue().is_shutting_down());
    assert_eq!(metrics.in_flight(), 0);
    wiring.factory.shutdown().await;
}

#[tokio::test]
async fn a_panicking_reconcile_is_retried_and_the_worker_survives() {
    let wiring = Wiring::start(vec![whitelist("team", "wl")]).await;
    let panicked = std::sync::atomic::AtomicBool::new(false);
    wiring
        .clientset
        .fake()
        .prepend_reactor("update", "whitelists/status", move |_| {
            assert!(
                panicked.swap(true, std::sync::atomic::Ordering::SeqCst),
                "injected panic"
            );
            None
        });
    let metrics = wiring.metrics.clone();
    let stop = async {
        while metrics.reconciles_finished() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let run = wiring.controller.run(
        Arc::clone(&wiring.reconciler),
        1,
        stop,
        Duration::from_secs(5),
    );
    let drained = tokio::time::timeout(Duration::from_secs(10), run).await;
    assert_eq!(drained, Ok(true), "the only worker died with the panic");
    let stored = wiring
        .clientset
        .police_v1beta1()
        .white_lists("team")
        .get("wl", &GetOptions::default())
        .await;
    let status = stored
        .unwrap_or_else(|e| panic!("{e}"))
        .status
        .unwrap_or_default();
    assert_eq!(
        status.violations_handled,
        Some(0),
        "the retry wrote the status"
    );
    wiring.factory.shutdown().await;
}
