//! Tests of the controller's workers: what a worker does with each outcome of a reconcile
//! (virtual time).

use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::Indexer;
use kubegen_workqueue::{NoopMetrics, default_controller_rate_limiter};
use parking_lot::Mutex;

use super::*;

fn meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        ..ObjectMeta::default()
    }
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
