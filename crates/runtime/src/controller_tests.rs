//! Tests of the controller: which events enqueue which keys (informers over the fake client,
//! so events really flow through list, watch and the handlers), and what a worker does with
//! each outcome of a reconcile (virtual time).

use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubegen_cache::{ClientListWatchSource, FactoryOptions, Indexer, InformerFactory};
use kubegen_client::{CreateOptions, ResourceClient};
use kubegen_fake::FakeClient;
use kubegen_workqueue::default_controller_rate_limiter;
use parking_lot::Mutex;

use super::*;

fn meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        ..ObjectMeta::default()
    }
}

fn owner(kind: &str, name: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller: Some(controller),
        ..OwnerReference::default()
    }
}

fn secret(name: &str, owners: Vec<OwnerReference>) -> Secret {
    let mut metadata = meta("ns", name);
    metadata.owner_references = Some(owners);
    Secret {
        metadata,
        ..Secret::default()
    }
}

#[test]
fn an_owned_object_maps_to_its_controller_owner_of_the_primary_kind_only() {
    let key = |owners| owner_key::<ConfigMap, Secret>(&secret("s", owners), Grouping::Object);
    assert_eq!(
        key(vec![owner("ConfigMap", "cm", true)]),
        Some(ObjectKey::new(Some("ns"), "cm"))
    );
    assert_eq!(
        key(vec![owner("ConfigMap", "cm", false)]),
        None,
        "not the controller"
    );
    assert_eq!(
        key(vec![owner("Deployment", "d", true)]),
        None,
        "another kind"
    );
    assert_eq!(key(Vec::new()), None);
    let grouped = owner_key::<ConfigMap, Secret>(
        &secret("s", vec![owner("ConfigMap", "cm", true)]),
        Grouping::Namespace,
    );
    assert_eq!(grouped, Some(ObjectKey::new(None, "ns")));
}

async fn create<K: kubegen_client::ApiObject>(client: &kubegen_client::Client, object: K) {
    ResourceClient::<K>::namespaced(client.clone(), "ns")
        .create(&object, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
}

/// Takes every queued key, waiting up to 5 s for at least `at_least` of them.
async fn take(queue: &RateLimitingQueue<ObjectKey>, at_least: usize) -> Vec<String> {
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
    keys.sort();
    keys
}

#[tokio::test]
async fn primaries_owned_and_watched_objects_enqueue_their_keys() {
    let fake = FakeClient::new();
    let client = fake.client();
    let namespace = k8s_openapi::api::core::v1::Namespace {
        metadata: ObjectMeta {
            name: Some("ns".into()),
            ..ObjectMeta::default()
        },
        ..Default::default()
    };
    ResourceClient::cluster(client.clone())
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("namespace: {e}"));
    let factory = InformerFactory::new(
        ClientListWatchSource::new(client.clone()),
        FactoryOptions::default(),
    );
    let (configmaps, secrets) = (
        factory.informer::<ConfigMap>(),
        factory.informer::<Secret>(),
    );
    let controller = Controller::builder("test", &configmaps)
        .owns(&secrets)
        .watches(&secrets, |secret: &Secret| {
            let name = secret.metadata.name.as_deref().unwrap_or_default();
            vec![ObjectKey::new(Some("watched"), name)]
        })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    factory.start();
    controller
        .wait_for_sync(Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    create(
        &client,
        ConfigMap {
            metadata: meta("ns", "cm"),
            ..ConfigMap::default()
        },
    )
    .await;
    assert_eq!(take(controller.queue(), 1).await, ["ns/cm"]);
    create(
        &client,
        secret("owned", vec![owner("ConfigMap", "cm", true)]),
    )
    .await;
    assert_eq!(
        take(controller.queue(), 2).await,
        ["ns/cm", "watched/owned"]
    );
    create(&client, secret("free", Vec::new())).await;
    assert_eq!(take(controller.queue(), 1).await, ["watched/free"]);
    factory.shutdown().await;
}

/// A reconciler that answers from a script and records the keys it saw.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<Result<Action, std::fmt::Error>>>,
    seen: Mutex<Vec<(String, u32)>>,
    calls: AtomicUsize,
}

impl Reconciler<ConfigMap> for Scripted {
    type Error = std::fmt::Error;

    async fn reconcile(
        &self,
        object: Arc<ConfigMap>,
        context: &Context,
    ) -> Result<Action, Self::Error> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let name = object.metadata.name.clone().unwrap_or_default();
        self.seen.lock().push((name, context.failures()));
        let mut answers = self.answers.lock();
        if answers.is_empty() {
            Ok(Action::Done)
        } else {
            answers.remove(0)
        }
    }
}

/// A worker over a hand-filled cache holding `ns/cm`.
fn worker(reconciler: Arc<Scripted>) -> Worker<ConfigMap, Scripted> {
    let indexer = Indexer::new();
    let object = ConfigMap {
        metadata: meta("ns", "cm"),
        ..ConfigMap::default()
    };
    indexer.insert(ObjectKey::of(&object), Arc::new(object));
    Worker {
        queue: RateLimitingQueue::new(
            "test",
            default_controller_rate_limiter(),
            Arc::new(NoopMetrics),
        ),
        primary: Lister::new(indexer),
        grouping: Grouping::Object,
        metrics: Metrics::default(),
        recorder: None,
        reconciler,
        gate: None,
    }
}

async fn calls_reach(reconciler: &Scripted, n: usize) {
    while reconciler.calls.load(Ordering::SeqCst) < n {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn requeue_after_reconciles_again_after_the_delay() {
    let reconciler = Arc::new(Scripted::default());
    reconciler
        .answers
        .lock()
        .push(Ok(Action::RequeueAfter(Duration::from_secs(30))));
    let worker = worker(Arc::clone(&reconciler));
    let queue = worker.queue.clone();
    queue.add(ObjectKey::new(Some("ns"), "cm"));
    let task = tokio::spawn(worker.run());
    calls_reach(&reconciler, 1).await;
    let first = tokio::time::Instant::now();
    calls_reach(&reconciler, 2).await;
    assert_eq!(first.elapsed(), Duration::from_secs(30));
    queue.shut_down();
    let _ = task.await;
    assert_eq!(
        *reconciler.seen.lock(),
        [("cm".into(), 0), ("cm".into(), 0)]
    );
}

#[tokio::test(start_paused = true)]
async fn errors_requeue_with_backoff_and_count_the_failures() {
    let reconciler = Arc::new(Scripted::default());
    reconciler
        .answers
        .lock()
        .extend([Err(std::fmt::Error), Err(std::fmt::Error)]);
    let worker = worker(Arc::clone(&reconciler));
    let (queue, metrics) = (worker.queue.clone(), worker.metrics.clone());
    let key = ObjectKey::new(Some("ns"), "cm");
    queue.add(key.clone());
    let task = tokio::spawn(worker.run());
    calls_reach(&reconciler, 3).await;
    // The default limiter's per-item backoff: 5 ms, then 10 ms; the success forgets the key.
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(queue.num_requeues(&key), 0, "forgotten after the success");
    queue.shut_down();
    let _ = task.await;
    let failures: Vec<u32> = reconciler.seen.lock().iter().map(|(_, f)| *f).collect();
    assert_eq!(failures, [0, 1, 2]);
    assert_eq!(metrics.reconciles_finished(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_key_whose_object_is_gone_is_not_reconciled() {
    let reconciler = Arc::new(Scripted::default());
    let worker = worker(Arc::clone(&reconciler));
    let (queue, metrics) = (worker.queue.clone(), worker.metrics.clone());
    queue.add(ObjectKey::new(Some("ns"), "deleted"));
    queue.add(ObjectKey::new(Some("ns"), "cm"));
    let task = tokio::spawn(worker.run());
    calls_reach(&reconciler, 1).await;
    while metrics.reconciles_finished() < 2 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    queue.shut_down();
    let _ = task.await;
    assert_eq!(*reconciler.seen.lock(), [("cm".into(), 0)]);
}
