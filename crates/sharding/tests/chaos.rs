//! The acceptance test of issue 25: replicas of one sharded controller in one process over the
//! test server, killed and added at random while objects are created, updated and deleted.
//!
//! Checked at the end:
//! - no object was ever reconciled by two replicas at once (a shared in-flight map, written at
//!   the start and cleared at the end of every reconcile, sees no second replica);
//! - every surviving object's last change was reconciled, exactly once after it happened: a
//!   reconcile counts when its conditional write of `observed=<version>` lands, and it appends
//!   the version to the object's `history` annotation in the same write, so the count is the
//!   server's and survives a replica killed right after writing. A replica that finds
//!   `observed` already at the version does nothing. The history must ascend strictly and end
//!   with the last version;
//! - every deleted object is accounted for too: its writer reads it and deletes exactly that
//!   version (a `resourceVersion` precondition), so its history at deletion is known; it must
//!   ascend strictly (no version reconciled twice) and never pass the last version.
//!
//! Two sizes, the same checks:
//! - 300 objects (~10 s), run by every `cargo test`. Every reconcile, a no-op too, takes up to
//!   100 ms and each replica re-enqueues its cache every 300 ms, so reconciles are always in
//!   flight when objects change hands: with a handover planted that does not wait for the
//!   reconcile in flight, 6 runs of 6 failed on a second replica starting.
//! - The 10k objects (~1.5 min on 2 cores), `#[ignore]`d so `cargo test` stays quick;
//!   `scripts/test.sh` runs it as a step of its own. Four writers at once, kills and starts
//!   every 1.5 to 4.5 s (each moves a share of 10k objects, so the work stays proportional to
//!   the objects), no-ops of at most 10 ms and a resync every 5 s (every ring change
//!   re-enqueues thousands of objects). Its strength is volume: ~80k writes, 25 to 50 kills and
//!   starts, and nothing may be dropped. A handed-over object reaches its new owner's workers
//!   seconds later there, long after any reconcile of it ended, so the planted handover bug
//!   above goes unnoticed at this size: the 300-object run is the one that catches it.
//!
//! Real time, not virtual: shard membership reads the Leases' wall-clock timestamps. Lease
//! timings are shortened (2 s) so kills are noticed within the test's budget.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Preconditions};
use kubegen_cache::{ClientListWatch, HandlerFns, InformerOptions, SharedIndexInformer};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient,
};
use kubegen_sharding::{Refusal, Replica, ReplicaConfig, Ring};
use kubegen_testserver::{ServerOptions, TestServer};
use parking_lot::Mutex;
use rand::Rng;
use serde_json::json;
use tokio::sync::Notify;
use tokio::task::JoinSet;

const MAX_REPLICAS: usize = 5;

/// Reconciles one replica runs at once (controller-runtime's `MaxConcurrentReconciles`).
const WORKERS: usize = 8;

/// How big a run is.
#[derive(Clone)]
struct Scale {
    /// Objects created in all.
    objects: usize,
    /// Tasks writing at once, each creating, updating and deleting objects of its own.
    writers: usize,
    /// Each writer's pause after each write.
    pause: Duration,
    /// Milliseconds between two kills or starts of a replica.
    chaos_pause: Range<u64>,
    /// How often each replica re-enqueues its whole cache (besides on every ring change).
    resync: Duration,
    /// The longest a reconcile that finds nothing to do takes, in ms (one with work takes up to
    /// 100 ms). Every ring change re-enqueues every cached object: at 10k objects, no-ops as
    /// long as real reconciles would keep the workers busy with nothing.
    no_op_ms: u64,
    /// How long the replicas get to catch up once the workload ended.
    patience: Duration,
}

/// Where a scenario runs: a server, a namespace (objects and shard Leases), the shared log.
#[derive(Clone)]
struct World {
    client: Client,
    namespace: String,
    log: Arc<Log>,
    scale: Arc<Scale>,
}

impl World {
    fn objects(&self) -> ResourceClient<ConfigMap> {
        ResourceClient::namespaced(self.client.clone(), &self.namespace)
    }
}

/// What every replica records, shared by the test.
#[derive(Default)]
struct Log {
    /// Object name -> replica reconciling it now.
    in_flight: Mutex<HashMap<String, String>>,
    /// Two replicas on one object at once.
    violations: Mutex<Vec<String>>,
    /// Reconciles started.
    reconciles: AtomicUsize,
    /// Reconciles whose write landed (as far as the replica saw).
    writes: AtomicUsize,
}

fn version_of(cm: &ConfigMap) -> String {
    cm.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .cloned()
        .unwrap_or_default()
}

fn annotation(cm: &ConfigMap, key: &str) -> Option<String> {
    cm.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .cloned()
}

fn is_reconciled(cm: &ConfigMap) -> bool {
    annotation(cm, "observed").as_deref() == Some(version_of(cm).as_str())
}

async fn reconcile(world: &World, cm: &ConfigMap, identity: &str) {
    let log = &world.log;
    let name = cm.metadata.name.clone().unwrap_or_default();
    if let Some(other) = log
        .in_flight
        .lock()
        .insert(name.clone(), identity.to_owned())
    {
        log.violations.lock().push(format!(
            "{name}: {identity} started while {other} was reconciling"
        ));
    }
    log.reconciles.fetch_add(1, Ordering::Relaxed);
    // Every reconcile costs time, a no-op one too (it reads the world first), and outlasts a
    // handover's round trips: a handover that did not wait for it would let the new owner start
    // while this one still runs. The large run's no-ops cost less (`Scale::no_op_ms`).
    let done = is_reconciled(cm);
    let bound = if done { world.scale.no_op_ms } else { 100 };
    let cost = rand::rng().random_range(0..bound.max(1));
    tokio::time::sleep(Duration::from_millis(cost)).await;
    if !done {
        let version = version_of(cm);
        let history = annotation(cm, "history").unwrap_or_default();
        let patch = json!({"metadata": {
            "resourceVersion": cm.metadata.resource_version,
            "annotations": {"observed": version, "history": format!("{history} {version}")},
        }});
        // A conflict means the object changed: its newer version is reconciled next.
        let written = world
            .objects()
            .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
            .await;
        if written.is_ok() {
            log.writes.fetch_add(1, Ordering::Relaxed);
        }
    }
    log.in_flight.lock().remove(&name);
}

/// A work queue that holds a key once however often it is added (as client-go's workqueue).
#[derive(Default)]
struct Queue {
    keys: Mutex<(VecDeque<String>, HashSet<String>)>,
    ready: Notify,
}

impl Queue {
    fn add(&self, key: String) {
        let mut keys = self.keys.lock();
        if keys.1.insert(key.clone()) {
            keys.0.push_back(key);
            drop(keys);
            self.ready.notify_one();
        }
    }

    async fn next(&self) -> String {
        loop {
            let popped = {
                let mut keys = self.keys.lock();
                let key = keys.0.pop_front();
                if let Some(key) = &key {
                    keys.1.remove(key);
                }
                key
            };
            match popped {
                Some(key) => return key,
                None => self.ready.notified().await,
            }
        }
    }
}

/// One replica: the sharding runtime plus a controller with [`WORKERS`] workers on its shard's
/// informer.
fn spawn_replica(world: &World, identity: &str) -> JoinSet<()> {
    let mut config = ReplicaConfig::new(Ring::new(&world.namespace, &world.namespace), identity);
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_millis(1500);
    config.retry_period = Duration::from_millis(300);
    config.assign_period = Duration::from_millis(100);
    // Only the workload's objects: a real namespace holds others (kube-root-ca.crt).
    config.namespace = Some(world.namespace.clone());
    config.selector = Some("app=chaos".to_owned());
    let replica = Replica::<ConfigMap>::new(world.client.clone(), config).unwrap();
    let queue = Arc::new(Queue::default());
    let key = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
    let (add, update) = (Arc::clone(&queue), Arc::clone(&queue));
    replica
        .informer()
        .add_event_handler(
            HandlerFns::new()
                .on_add(move |cm: &Arc<ConfigMap>, _| add.add(key(cm)))
                .on_update(move |_, cm: &Arc<ConfigMap>| update.add(key(cm))),
        )
        .unwrap();
    let mut tasks = JoinSet::new();
    let runner = replica.clone();
    tasks.spawn(async move {
        let _ = runner.run(std::future::pending()).await;
    });
    let (watcher, requeue) = (replica.clone(), Arc::clone(&queue));
    let resync = world.scale.resync;
    tasks.spawn(async move {
        // On every ring change, and as a resync, so reconciles are running when handovers
        // happen.
        let mut changes = watcher.ring_changes();
        loop {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(resync) => {}
            }
            for cm in watcher.informer().lister().list(&Default::default()) {
                requeue.add(key(&cm));
            }
        }
    });
    for _ in 0..WORKERS {
        let (replica, queue, world) = (replica.clone(), Arc::clone(&queue), world.clone());
        let identity = identity.to_owned();
        tasks.spawn(async move {
            loop {
                let name = queue.next().await;
                let lister = replica.informer().lister();
                let Some(cm) = lister.get(Some(&world.namespace), &name) else {
                    continue;
                };
                match replica.begin(&cm) {
                    Ok(guard) => {
                        reconcile(&world, &cm, &identity).await;
                        drop(guard);
                    }
                    Err(Refusal::Busy) => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        queue.add(name);
                    }
                    Err(Refusal::NotMine) => {}
                }
            }
        });
    }
    tasks
}

fn configmap(namespace: &str, name: &str, version: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([("app".to_owned(), "chaos".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), version.to_string())])),
        ..ConfigMap::default()
    }
}

/// What the writers did.
#[derive(Default)]
struct Written {
    /// Survivors: name -> last version.
    live: BTreeMap<String, String>,
    /// Deleted objects as last read before their deletion.
    deleted: Vec<ConfigMap>,
    updates: usize,
}

/// Creates `creates` objects named `<prefix>-<n>`, and updates and deletes them at random.
async fn writer(world: World, prefix: String, creates: usize, pause: Duration) -> Written {
    let api = world.objects();
    let mut live: Vec<(String, u32)> = Vec::new();
    let mut written = Written::default();
    while live.len() + written.deleted.len() < creates {
        let choice = rand::rng().random_range(0..10);
        if choice < 5 || live.is_empty() {
            let name = format!("{prefix}-{:05}", live.len() + written.deleted.len());
            let cm = configmap(&world.namespace, &name, 1);
            api.create(&cm, &CreateOptions::default()).await.unwrap();
            live.push((name, 1));
        } else if choice < 9 {
            let index = rand::rng().random_range(0..live.len());
            let (name, version) = &mut live[index];
            *version += 1;
            let patch = json!({"data": {"v": version.to_string()}});
            api.patch(name, &Patch::Merge(patch), &PatchOptions::default())
                .await
                .unwrap();
            written.updates += 1;
        } else {
            let index = rand::rng().random_range(0..live.len());
            let (name, _) = live.swap_remove(index);
            written.deleted.push(delete_as_read(&api, &name).await);
        }
        tokio::time::sleep(pause).await;
    }
    written.live = live
        .into_iter()
        .map(|(name, version)| (name, version.to_string()))
        .collect();
    written
}

/// Reads `name` and deletes exactly the version read (retrying when a reconcile wrote in
/// between); returns that version.
async fn delete_as_read(api: &ResourceClient<ConfigMap>, name: &str) -> ConfigMap {
    loop {
        let cm = api.get(name, &GetOptions::default()).await.unwrap();
        let read = Preconditions {
            resource_version: cm.metadata.resource_version.clone(),
            uid: None,
        };
        match api
            .delete(name, &DeleteOptions::default().preconditions(read))
            .await
        {
            Ok(()) => return cm,
            Err(error) if error.is_conflict() => {}
            Err(error) => panic!("deleting {name}: {error}"),
        }
    }
}

/// The writers of `scale`, at once.
async fn workload(world: &World) -> Written {
    let scale = &world.scale;
    let mut writers = JoinSet::new();
    for w in 0..scale.writers {
        let creates =
            scale.objects / scale.writers + usize::from(w < scale.objects % scale.writers);
        writers.spawn(writer(
            world.clone(),
            format!("obj-{w}"),
            creates,
            scale.pause,
        ));
    }
    let mut all = Written::default();
    while let Some(done) = writers.join_next().await {
        let done = done.unwrap();
        all.live.extend(done.live);
        all.deleted.extend(done.deleted);
        all.updates += done.updates;
    }
    all
}

/// Replicas started and killed by [`chaos`].
struct Churn {
    started: usize,
    killed: usize,
    /// The replicas still running.
    running: Vec<JoinSet<()>>,
}

/// Kills and starts replicas at random until `done` (at least two stay up).
async fn chaos(world: World, done: tokio::sync::watch::Receiver<bool>) -> Churn {
    let mut replicas: Vec<(String, JoinSet<()>)> = Vec::new();
    let (mut started, mut killed) = (0, 0);
    while !*done.borrow() {
        let kill =
            replicas.len() >= MAX_REPLICAS || (replicas.len() > 2 && rand::rng().random_bool(0.5));
        if kill {
            let index = rand::rng().random_range(0..replicas.len());
            let (identity, mut tasks) = replicas.remove(index);
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
            // The process is gone: whatever it was doing stopped with it.
            world.log.in_flight.lock().retain(|_, who| *who != identity);
            killed += 1;
        } else {
            let identity = format!("replica-{started}");
            started += 1;
            let tasks = spawn_replica(&world, &identity);
            replicas.push((identity, tasks));
        }
        let pause = rand::rng().random_range(world.scale.chaos_pause.clone());
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    Churn {
        started,
        killed,
        running: replicas.into_iter().map(|(_, tasks)| tasks).collect(),
    }
}

/// Resolves once every object in the namespace has its last change observed, or `patience`
/// passed. Waits on an informer, not by listing again and again: a list of 10k objects is work.
async fn caught_up(world: &World, patience: Duration) {
    let informer = SharedIndexInformer::new(
        ClientListWatch::new(world.objects(), ListOptions::default().labels("app=chaos")),
        InformerOptions::default(),
    );
    informer.start();
    let lister = informer.lister();
    let _ = tokio::time::timeout(patience, async {
        while !informer.has_synced()
            || !lister
                .list(&Default::default())
                .iter()
                .all(|cm| is_reconciled(cm))
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    informer.shutdown();
}

/// Waits until the replicas caught up (or `patience` passes), then checks the log and each
/// object's history against what the writers did.
async fn check(world: &World, written: &Written, patience: Duration) {
    caught_up(world, patience).await;
    none(
        "reconciles alongside another replica's",
        &world.log.violations.lock(),
    );
    let items = world
        .objects()
        .list(&ListOptions::default().labels("app=chaos"))
        .await
        .unwrap()
        .items;
    let survivors: BTreeMap<String, String> = items
        .iter()
        .map(|cm| (cm.metadata.name.clone().unwrap(), version_of(cm)))
        .collect();
    let mut wrong: Vec<String> = written
        .live
        .iter()
        .filter(|(name, version)| survivors.get(*name) != Some(version))
        .map(|(name, version)| {
            format!(
                "{name}: v{version} written, found {:?}",
                survivors.get(name)
            )
        })
        .collect();
    let unexpected = survivors
        .keys()
        .filter(|name| !written.live.contains_key(*name));
    wrong.extend(unexpected.map(|name| format!("{name}: deleted, found")));
    none("objects not as written", &wrong);
    let live_faults = items.iter().filter_map(|cm| history_fault(cm, true));
    let deleted_faults = written
        .deleted
        .iter()
        .filter_map(|cm| history_fault(cm, false));
    let faults: Vec<String> = live_faults.chain(deleted_faults).collect();
    none("objects whose history is wrong", &faults);
}

/// Fails naming how many `what` there are and the first few, unless there are none.
fn none(what: &str, found: &[String]) {
    let first: Vec<&String> = found.iter().take(10).collect();
    assert!(
        found.is_empty(),
        "{} {what}, first: {first:#?}",
        found.len()
    );
}

/// What is wrong with `cm`'s history, if anything. It must ascend strictly (a version twice is
/// a change reconciled twice); a survivor's must end with its last version; a deleted object's
/// (as read right before its deletion) must not pass its last version.
fn history_fault(cm: &ConfigMap, survivor: bool) -> Option<String> {
    let history = annotation(cm, "history").unwrap_or_default();
    let versions: Vec<u32> = history
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let last: u32 = version_of(cm).parse().unwrap();
    let ascending = versions.windows(2).all(|pair| pair[0] < pair[1]);
    let ends_well = if survivor {
        versions.last() == Some(&last)
    } else {
        versions.last().is_none_or(|v| *v <= last)
    };
    let fate = if survivor { "last changed" } else { "deleted" };
    let name = cm.metadata.name.as_deref().unwrap();
    (!ascending || !ends_well).then(|| format!("{name}: {fate} at v{last}, reconciled {history:?}"))
}

/// Runs `scale` on a fresh test server, checks it, and prints what it did.
async fn run(scale: Scale) {
    let mut options = ServerOptions::default();
    // The sharded controller is all that runs: kube-controller-manager's controllers would
    // watch and cache every ConfigMap too, work the test does not look at.
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let world = World {
        client: server.client(),
        namespace: "default".to_owned(),
        log: Arc::new(Log::default()),
        scale: Arc::new(scale),
    };
    let scale = &world.scale;
    let began = Instant::now();
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let chaos_task = tokio::spawn(chaos(world.clone(), done_rx));
    let written = workload(&world).await;
    let workload_took = began.elapsed();
    done_tx.send(true).unwrap();
    let churn = chaos_task.await.unwrap();
    check(&world, &written, scale.patience).await;
    let log = &world.log;
    eprintln!(
        "chaos: {} objects ({} updates, {} deletes, {} writers) in {:.1?}; replicas: {} started, \
         {} killed; reconciles: {}, {} of them wrote; server writes: {}; caught up and checked \
         {:.1?} later",
        scale.objects,
        written.updates,
        written.deleted.len(),
        scale.writers,
        workload_took,
        churn.started,
        churn.killed,
        log.reconciles.load(Ordering::Relaxed),
        log.writes.load(Ordering::Relaxed),
        server.api().resource_version(),
        began.elapsed() - workload_took,
    );
    drop(churn.running);
}

/// 300 objects, one writer: the size every `cargo test` runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_killed_and_added_at_random_never_share_an_object_and_drop_none() {
    run(Scale {
        objects: 300,
        writers: 1,
        pause: Duration::from_millis(10),
        chaos_pause: 300..1200,
        resync: Duration::from_millis(300),
        no_op_ms: 100,
        patience: Duration::from_secs(30),
    })
    .await;
}

/// The 10k objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes long: scripts/test.sh runs it as a step of its own"]
async fn ten_thousand_objects_under_chaos() {
    run(Scale {
        objects: 10_000,
        writers: 4,
        pause: Duration::from_millis(10),
        chaos_pause: 1500..4500,
        resync: Duration::from_secs(5),
        no_op_ms: 10,
        patience: Duration::from_secs(120),
    })
    .await;
}

/// The same controller sharded three ways on a real cluster (`KUBEGEN_E2E_KUBECONFIG`, an
/// administrator's), label protocol only (v1.36 serves no `shardSelector` by default), in a
/// namespace of its own that is deleted afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn sharded_three_ways_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    kubegen_e2e_support::in_scratch_namespace(
        &client,
        "kubegen-sharding-e2e-",
        |client, namespace| {
            three_replicas(World {
                client,
                namespace,
                log: Arc::new(Log::default()),
                scale: Arc::new(Scale {
                    objects: 90,
                    writers: 1,
                    pause: Duration::from_millis(10),
                    // Nothing is killed here.
                    chaos_pause: 0..1,
                    resync: Duration::from_millis(300),
                    no_op_ms: 100,
                    patience: Duration::from_secs(60),
                }),
            })
        },
    )
    .await;
}

async fn three_replicas(world: World) {
    let replicas: Vec<JoinSet<()>> = (0..3)
        .map(|i| spawn_replica(&world, &format!("replica-{i}")))
        .collect();
    let expected = workload(&world).await;
    check(&world, &expected, world.scale.patience).await;
    // The ring settles once every replica's Lease is seen; then the shares spread out by
    // handovers, which must not reconcile anything again.
    let label = Ring::new(&world.namespace, &world.namespace).shard_label();
    let everywhere = ResourceClient::<ConfigMap>::all_namespaces(world.client.clone());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut labelled = Vec::new();
    let mut shards = HashSet::new();
    while shards.len() < 3 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        labelled = everywhere
            .list(&ListOptions::default().labels(label.clone()))
            .await
            .unwrap()
            .items;
        shards = labelled
            .iter()
            .filter_map(|cm| cm.metadata.labels.as_ref()?.get(&label).cloned())
            .collect();
    }
    assert_eq!(shards.len(), 3, "every replica holds a share: {shards:?}");
    let outside = labelled
        .iter()
        .filter(|cm| cm.metadata.namespace.as_deref() != Some(world.namespace.as_str()))
        .count();
    assert_eq!(outside, 0, "objects outside the ring's scope were labelled");
    check(&world, &expected, Duration::from_secs(30)).await;
    drop(replicas);
}
