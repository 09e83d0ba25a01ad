//! One soak run: set up, churn under faults, quiesce, compare.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::{
    ClientListWatch, InformerOptions, ListWatchErrorKind, ObjectKey, SharedIndexInformer,
    wait_for_cache_sync,
};
use kubegen_client::{Client, Config, CreateOptions, DeleteOptions, ListOptions, ResourceClient};
use kubegen_testserver::{Faults, TestServer};
use kubegen_workqueue::{NoopMetrics, Queue};
use tokio::time::Instant;

use crate::chaos::{self, ChaosStats};
use crate::churn::{self, ChurnStats};
use crate::memory;
use crate::recorder::{Recorder, RecordingHandler};
use crate::workers::{self, WorkStats};

const NAMESPACE: &str = "soak";
/// Objects deleted, and objects created, while the informer's watch hangs in the final partition.
const PARTITION_WRITES: usize = 20;

/// How long and how hard to soak.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// Churn (and fault) duration.
    pub duration: Duration,
    /// Distinct object names the driver writes.
    pub pool: usize,
    /// Concurrent churn drivers.
    pub drivers: usize,
    /// Workqueue workers.
    pub workers: usize,
}

impl SoakConfig {
    /// `KUBEGEN_SOAK_SECS` seconds (default 30), 2,000 names, 4 drivers, 4 workers.
    pub fn from_env() -> SoakConfig {
        let secs = std::env::var("KUBEGEN_SOAK_SECS")
            .ok()
            .and_then(|value| value.parse::<u64>().ok())
            .unwrap_or(30);
        SoakConfig {
            duration: Duration::from_secs(secs),
            pool: 2_000,
            drivers: 4,
            workers: 4,
        }
    }
}

/// Everything a soak observed; [`SoakReport::failures`] turns it into verdicts.
#[derive(Debug, Default)]
pub struct SoakReport {
    /// Objects on the server at the end.
    pub server_objects: usize,
    /// Differences between the server and the informer's indexer (first few).
    pub cache_mismatches: Vec<String>,
    /// Differences between the server and the handlers' view (first few).
    pub handler_mismatches: Vec<String>,
    /// Notification sequence violations (first few).
    pub anomalies: Vec<String>,
    /// Handler notifications: adds, updates, deletes, tombstones.
    pub notifications: [u64; 4],
    /// Churn: accepted writes, deletes, failed requests.
    pub churn: [u64; 3],
    /// Faults: watch drops, expiries, injected failures, latency spikes.
    pub faults: [u64; 4],
    /// List/watch errors the reflector reported: expired (410), other.
    pub reflector_errors: [u64; 2],
    /// Keys processed by workers, and times two workers held one key.
    pub processed: u64,
    /// Times a worker got a key another worker still held.
    pub overlaps: u64,
    /// Keys left in the queue or in flight after draining.
    pub undrained: usize,
    /// Panics in the process during the run.
    pub panics: u64,
    /// `(seconds, RSS MiB)` every second.
    pub rss: Vec<(f64, f64)>,
    /// Seconds from stopping the churn until cache and handlers matched the server.
    pub converged_after: Option<f64>,
    /// Seconds from the final partition (see `partition`) until they matched again.
    pub partition_converged_after: Option<f64>,
}

impl SoakReport {
    /// Every violated expectation, in words; empty means the soak passed.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let mut check = |ok: bool, what: String| {
            if !ok {
                failures.push(what);
            }
        };
        check(self.converged_after.is_some(), "never converged".to_owned());
        check(
            self.converged_after.is_none() || self.partition_converged_after.is_some(),
            "never converged after the final partition".to_owned(),
        );
        check(
            self.cache_mismatches.is_empty(),
            format!("cache != server: {:?}", self.cache_mismatches),
        );
        check(
            self.handler_mismatches.is_empty(),
            format!("handlers != server: {:?}", self.handler_mismatches),
        );
        check(
            self.anomalies.is_empty(),
            format!("notification anomalies: {:?}", self.anomalies),
        );
        check(
            self.overlaps == 0,
            format!("{} concurrent processings of one key", self.overlaps),
        );
        check(
            self.undrained == 0,
            format!("{} keys left in the workqueue", self.undrained),
        );
        check(self.panics == 0, format!("{} panics", self.panics));
        check(
            memory::bounded(&self.rss),
            format!("RSS kept growing: {:?}", self.rss),
        );
        check(self.churn[1] > 0, "the churn deleted nothing".to_owned());
        check(
            self.faults[0] > 0 && self.faults[1] > 0,
            "no watch drops or expiries injected".to_owned(),
        );
        check(
            self.reflector_errors[0] > 0,
            "the reflector never saw a 410".to_owned(),
        );
        failures
    }
}

impl fmt::Display for SoakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [adds, updates, deletes, tombstones] = self.notifications;
        let [writes, churn_deletes, churn_failures] = self.churn;
        let [drops, expiries, failures, spikes] = self.faults;
        writeln!(
            f,
            "soak: {} objects on the server at the end, converged after {:?} s, again {:?} s after the final partition",
            self.server_objects, self.converged_after, self.partition_converged_after
        )?;
        writeln!(
            f,
            "  churn: {writes} writes ({churn_deletes} deletes), {churn_failures} failed requests"
        )?;
        writeln!(
            f,
            "  faults: {drops} watch drops, {expiries} expiries (410), {failures} injected 429/500, {spikes} latency spikes"
        )?;
        writeln!(
            f,
            "  reflector errors: {} expired, {} other",
            self.reflector_errors[0], self.reflector_errors[1]
        )?;
        writeln!(
            f,
            "  handlers: {adds} adds, {updates} updates, {deletes} deletes, {tombstones} tombstones"
        )?;
        writeln!(
            f,
            "  workqueue: {} processed, {} overlaps, {} undrained",
            self.processed, self.overlaps, self.undrained
        )?;
        let rss: Vec<String> = self
            .rss
            .iter()
            .map(|(s, mib)| format!("{s:.0}s:{mib:.0}"))
            .collect();
        writeln!(f, "  RSS MiB over time: {}", rss.join(" "))
    }
}

/// Runs one soak and reports what it saw. Panics only if the test server cannot be set up.
pub async fn run(config: &SoakConfig) -> SoakReport {
    let panics_before = memory::count_panics();
    let server = TestServer::start().await;
    let client = match server.url().parse() {
        Ok(url) => Client::new(Config::new(url)),
        Err(error) => panic!("test server URL: {error}"),
    };
    let client = match client {
        Ok(client) => client,
        Err(error) => panic!("client: {error}"),
    };
    create_namespace(&client).await;

    let queue = Queue::<String>::new("soak", Arc::new(NoopMetrics));
    let work = Arc::new(WorkStats::default());
    let worker_tasks = workers::start(&queue, config.workers, &work);
    let recorder = Recorder::new(queue.clone());
    let expired = Arc::new(AtomicU64::new(0));
    let other_errors = Arc::new(AtomicU64::new(0));
    let informer = informer(&client, &recorder, &expired, &other_errors);
    informer.start();
    if let Err(error) = wait_for_cache_sync(Duration::from_secs(30), &[&informer]).await {
        panic!("initial sync: {error}");
    }

    let stop = Arc::new(AtomicBool::new(false));
    let churn_stats = Arc::new(ChurnStats::default());
    let chaos_stats = Arc::new(ChaosStats::default());
    let sampler = tokio::spawn(memory::sample(Arc::clone(&stop)));
    let chaos_task = tokio::spawn(chaos::run(
        server.faults().clone(),
        Arc::clone(&churn_stats),
        Arc::clone(&stop),
        Arc::clone(&chaos_stats),
    ));
    let drivers: Vec<_> = (0..config.drivers)
        .map(|_| {
            let resources = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
            tokio::spawn(churn::run(
                resources,
                config.pool,
                Arc::clone(&stop),
                Arc::clone(&churn_stats),
            ))
        })
        .collect();

    tokio::time::sleep(config.duration).await;
    stop.store(true, Ordering::SeqCst);
    for driver in drivers {
        let _ = driver.await;
    }
    let _ = chaos_task.await;

    let mut report = SoakReport::default();
    let quiet = Instant::now();
    let truth = server_state(&client).await;
    report.server_objects = truth.len();
    converge(&informer, &recorder, &truth, &mut report, quiet).await;
    if let Some(first) = report.converged_after {
        partition(server.faults(), &client).await;
        let truth = server_state(&client).await;
        report.server_objects = truth.len();
        converge(&informer, &recorder, &truth, &mut report, Instant::now()).await;
        report.partition_converged_after = report.converged_after.replace(first);
    }
    report.undrained = drain(&queue, &work).await;

    queue.shut_down();
    if let Err(error) = informer.shutdown_and_wait(Duration::from_secs(30)).await {
        panic!("informer shutdown: {error}");
    }
    for task in worker_tasks {
        let _ = task.await;
    }
    report.rss = sampler.await.unwrap_or_default();
    report.anomalies = recorder.anomalies();
    report.notifications = [
        recorder.adds.load(Ordering::Relaxed),
        recorder.updates.load(Ordering::Relaxed),
        recorder.deletes.load(Ordering::Relaxed),
        recorder.tombstones.load(Ordering::Relaxed),
    ];
    report.churn = [
        churn_stats.writes.load(Ordering::Relaxed),
        churn_stats.deletes.load(Ordering::Relaxed),
        churn_stats.failures.load(Ordering::Relaxed),
    ];
    report.faults = [
        chaos_stats.watch_drops.load(Ordering::Relaxed),
        chaos_stats.expiries.load(Ordering::Relaxed),
        chaos_stats.failures.load(Ordering::Relaxed),
        chaos_stats.spikes.load(Ordering::Relaxed),
    ];
    report.reflector_errors = [
        expired.load(Ordering::Relaxed),
        other_errors.load(Ordering::Relaxed),
    ];
    report.processed = work.processed.load(Ordering::Relaxed);
    report.overlaps = work.overlaps.load(Ordering::Relaxed);
    report.panics = memory::count_panics() - panics_before;
    report
}

fn informer(
    client: &Client,
    recorder: &Arc<Recorder>,
    expired: &Arc<AtomicU64>,
    other_errors: &Arc<AtomicU64>,
) -> SharedIndexInformer<ConfigMap> {
    let resources = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    let mut options = InformerOptions::<ConfigMap>::default();
    options.name = "soak-configmaps".to_owned();
    let (expired, other_errors) = (Arc::clone(expired), Arc::clone(other_errors));
    options.watch_error_handler = Some(Arc::new(move |error| {
        let counter = if error.kind() == ListWatchErrorKind::Expired {
            &expired
        } else {
            &other_errors
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let informer = SharedIndexInformer::new(
        ClientListWatch::new(resources, ListOptions::default()),
        options,
    );
    if let Err(error) = informer.add_event_handler(RecordingHandler(Arc::clone(recorder))) {
        panic!("registering the handler: {error}");
    }
    informer
}

async fn create_namespace(client: &Client) {
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    if let Err(error) = namespaces
        .create(&namespace, &CreateOptions::default())
        .await
    {
        panic!("creating namespace {NAMESPACE}: {error}");
    }
}

/// key -> resourceVersion of everything the server holds, read after the faults were cleared.
async fn server_state(client: &Client) -> HashMap<String, String> {
    let resources = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    for _ in 0..50 {
        if let Ok(list) = resources.list(&ListOptions::default()).await {
            return list
                .items
                .iter()
                .map(|item| (ObjectKey::of(item).as_str().to_owned(), rv(item)))
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot list the server's state after the faults were cleared");
}

fn rv(object: &ConfigMap) -> String {
    object.metadata.resource_version.clone().unwrap_or_default()
}

/// The one fault the schedule cannot promise to land: a 410 the informer must see. During the
/// churn the reflector is often backing off from injected errors when history is compacted, and a
/// relist at a saved resourceVersion is served "not older than" it, never 410. Here the informer
/// has just converged, so it is watching: its watch hangs while objects are deleted and created,
/// history is compacted past them, and the watch ends. The re-watch from the last version the
/// informer saw gets 410, the relist must tombstone the deleted objects and add the new ones.
async fn partition(faults: &Faults, client: &Client) {
    let resources = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    // A watch that ends within a second of opening, without events, counts as a failure and is
    // retried after the reflector's backoff, still near its 30 s cap after the chaos: let the
    // current watch age first, so the partition, not the backoff, is what is measured.
    tokio::time::sleep(Duration::from_secs(2)).await;
    faults.stall_watches(true);
    let existing = resources
        .list(&ListOptions::default())
        .await
        .map(|list| list.items)
        .unwrap_or_default();
    for item in existing.iter().take(PARTITION_WRITES) {
        let name = item.metadata.name.clone().unwrap_or_default();
        let _ = resources.delete(&name, &DeleteOptions::default()).await;
    }
    for i in 0..PARTITION_WRITES {
        let created = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("partition-{i}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let _ = resources.create(&created, &CreateOptions::default()).await;
    }
    faults.expire_history();
    faults.drop_watches();
    faults.stall_watches(false);
}

/// Waits up to 120 s for the indexer and the handlers to match `truth`; records what still differs.
/// Generous on purpose: a reflector that met errors just before the faults stopped may sit in its
/// backoff (capped at 30 s, plus jitter) before it relists.
async fn converge(
    informer: &SharedIndexInformer<ConfigMap>,
    recorder: &Recorder,
    truth: &HashMap<String, String>,
    report: &mut SoakReport,
    quiet: Instant,
) {
    let deadline = quiet + Duration::from_secs(120);
    loop {
        let cache: HashMap<String, String> = informer
            .indexer()
            .list()
            .iter()
            .map(|item| (ObjectKey::of(item.as_ref()).as_str().to_owned(), rv(item)))
            .collect();
        report.cache_mismatches = diff(truth, &cache);
        report.handler_mismatches = diff(truth, &recorder.view());
        if report.cache_mismatches.is_empty() && report.handler_mismatches.is_empty() {
            report.converged_after = Some(quiet.elapsed().as_secs_f64());
            return;
        }
        if Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The first ten keys whose resourceVersion differs (or that only one side has).
fn diff(truth: &HashMap<String, String>, seen: &HashMap<String, String>) -> Vec<String> {
    let keys: BTreeSet<&String> = truth.keys().chain(seen.keys()).collect();
    keys.into_iter()
        .filter(|key| truth.get(*key) != seen.get(*key))
        .take(10)
        .map(|key| {
            format!(
                "{key}: server {:?}, seen {:?}",
                truth.get(key),
                seen.get(key)
            )
        })
        .collect()
}

/// Waits up to 30 s for the queue to empty and the workers to go idle; returns what is left.
async fn drain(queue: &Queue<String>, work: &WorkStats) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = queue.len() + work.in_flight();
        if left == 0 || Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lists_keys_that_differ_or_are_missing_on_either_side() {
        let truth = HashMap::from([
            ("a".to_owned(), "1".to_owned()),
            ("b".to_owned(), "2".to_owned()),
        ]);
        let seen = HashMap::from([
            ("b".to_owned(), "3".to_owned()),
            ("c".to_owned(), "4".to_owned()),
        ]);
        let differences = diff(&truth, &seen);
        assert_eq!(differences.len(), 3);
        assert!(differences[0].starts_with("a: server Some(\"1\"), seen None"));
    }

    #[test]
    fn report_with_no_activity_fails_the_fault_and_churn_checks() {
        let report = SoakReport {
            converged_after: Some(0.1),
            ..SoakReport::default()
        };
        let failures = report.failures();
        assert!(failures.iter().any(|f| f.contains("deleted nothing")));
        assert!(failures.iter().any(|f| f.contains("never saw a 410")));
    }
}
