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
//!   `observed` already at the version does nothing.
//!
//! Real time, not virtual: shard membership reads the Leases' wall-clock timestamps. Lease
//! timings are shortened (2 s) so kills are noticed within the test's budget.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::HandlerFns;
use kubegen_client::{
    Client, Config, CreateOptions, DeleteOptions, ListOptions, LoadOptions, Patch, PatchOptions,
    ResourceClient,
};
use kubegen_sharding::{Refusal, Replica, ReplicaConfig, Ring};
use kubegen_testserver::TestServer;
use parking_lot::Mutex;
use rand::Rng;
use serde_json::json;
use tokio::sync::Notify;
use tokio::task::JoinSet;

const MAX_REPLICAS: usize = 5;

/// Where a scenario runs: a server, a namespace (objects and shard Leases), the shared log.
#[derive(Clone)]
struct World {
    client: Client,
    namespace: String,
    log: Arc<Log>,
}

/// What every replica records, shared by the test.
#[derive(Default)]
struct Log {
    /// Object name -> replica reconciling it now.
    in_flight: Mutex<HashMap<String, String>>,
    /// Two replicas on one object at once.
    violations: Mutex<Vec<String>>,
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
    let version = version_of(cm);
    // Every reconcile costs time, a no-op one too (it reads the world first), and outlasts a
    // handover's round trips: a handover that did not wait for it would let the new owner
    // start while this one still runs.
    let cost = rand::rng().random_range(0..100);
    tokio::time::sleep(Duration::from_millis(cost)).await;
    if annotation(cm, "observed").as_deref() != Some(version.as_str()) {
        let history = annotation(cm, "history").unwrap_or_default();
        let patch = json!({"metadata": {
            "resourceVersion": cm.metadata.resource_version,
            "annotations": {"observed": version, "history": format!("{history} {version}")},
        }});
        let api = ResourceClient::<ConfigMap>::namespaced(world.client.clone(), &world.namespace);
        // A conflict means the object changed: its newer version is reconciled next.
        let _ = api
            .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
            .await;
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

/// One replica: the sharding runtime plus a two-worker controller on its shard's informer.
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
    tasks.spawn(async move {
        // On every ring change, and as a resync every 300 ms, so reconciles are always running
        // when handovers happen.
        let mut changes = watcher.ring_changes();
        loop {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(Duration::from_millis(300)) => {}
            }
            for cm in watcher.informer().lister().list(&Default::default()) {
                requeue.add(key(&cm));
            }
        }
    });
    for _ in 0..2 {
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

/// Creates, updates and deletes objects; returns the expected final version of each survivor.
async fn workload(world: &World, objects: usize) -> BTreeMap<String, String> {
    let api = ResourceClient::<ConfigMap>::namespaced(world.client.clone(), &world.namespace);
    let mut live: BTreeMap<String, u32> = BTreeMap::new();
    let mut created = 0;
    while created < objects {
        let choice = rand::rng().random_range(0..10);
        if choice < 5 || live.is_empty() {
            let name = format!("obj-{created:05}");
            api.create(
                &configmap(&world.namespace, &name, 1),
                &CreateOptions::default(),
            )
            .await
            .unwrap();
            live.insert(name, 1);
            created += 1;
        } else if choice < 9 {
            let index = rand::rng().random_range(0..live.len());
            let (name, version) = live.iter_mut().nth(index).unwrap();
            *version += 1;
            let patch = json!({"data": {"v": version.to_string()}});
            api.patch(name, &Patch::Merge(patch), &PatchOptions::default())
                .await
                .unwrap();
        } else {
            let index = rand::rng().random_range(0..live.len());
            let name = live.keys().nth(index).cloned().unwrap();
            api.delete(&name, &DeleteOptions::default()).await.unwrap();
            live.remove(&name);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    live.into_iter().map(|(n, v)| (n, v.to_string())).collect()
}

/// Kills and starts replicas at random until `done` (at least two stay up).
async fn chaos(world: World, done: tokio::sync::watch::Receiver<bool>) -> Vec<JoinSet<()>> {
    let mut replicas: Vec<(String, JoinSet<()>)> = Vec::new();
    let mut started = 0;
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
        } else {
            let identity = format!("replica-{started}");
            started += 1;
            let tasks = spawn_replica(&world, &identity);
            replicas.push((identity, tasks));
        }
        let pause = rand::rng().random_range(300..1200);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    replicas.into_iter().map(|(_, tasks)| tasks).collect()
}

/// Waits until every object's last change is observed (or `patience` passes), then checks the
/// log and each object's history against `expected`.
async fn check(world: &World, expected: &BTreeMap<String, String>, patience: Duration) {
    let api = ResourceClient::<ConfigMap>::namespaced(world.client.clone(), &world.namespace);
    let deadline = tokio::time::Instant::now() + patience;
    let mut items = Vec::new();
    while tokio::time::Instant::now() < deadline {
        items = api
            .list(&ListOptions::default().labels("app=chaos"))
            .await
            .unwrap()
            .items;
        let pending = items
            .iter()
            .filter(|cm| annotation(cm, "observed").as_deref() != Some(version_of(cm).as_str()))
            .count();
        if pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(world.log.violations.lock().clone(), Vec::<String>::new());
    let survivors: BTreeMap<String, String> = items
        .iter()
        .map(|cm| (cm.metadata.name.clone().unwrap(), version_of(cm)))
        .collect();
    assert_eq!(&survivors, expected);
    for cm in &items {
        let name = cm.metadata.name.as_deref().unwrap();
        let history = annotation(cm, "history").unwrap_or_default();
        let versions: Vec<&str> = history.split_whitespace().collect();
        let final_version = version_of(cm);
        let times = versions.iter().filter(|v| **v == final_version).count();
        assert_eq!(
            times, 1,
            "{name}: last change v{final_version}, history {history:?}"
        );
        let mut distinct = versions.clone();
        distinct.dedup();
        assert_eq!(distinct, versions, "{name}: a version reconciled twice");
    }
}

/// 300 objects (not the 10k: the test stays under ~30 s on a 2-core CI machine).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_killed_and_added_at_random_never_share_an_object_and_drop_none() {
    let server = TestServer::start().await;
    let world = World {
        client: server.client(),
        namespace: "default".to_owned(),
        log: Arc::new(Log::default()),
    };
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let chaos_task = tokio::spawn(chaos(world.clone(), done_rx));
    let expected = workload(&world, 300).await;
    done_tx.send(true).unwrap();
    let _survivors = chaos_task.await.unwrap();
    check(&world, &expected, Duration::from_secs(30)).await;
}

/// The same controller sharded three ways on a real cluster (`KUBEGEN_E2E_KUBECONFIG`, an
/// administrator's), label protocol only (v1.36 serves no `shardSelector` by default), in a
/// namespace of its own that is deleted afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn sharded_three_ways_on_cluster() {
    let Some(path) = std::env::var_os("KUBEGEN_E2E_KUBECONFIG") else {
        eprintln!("skipped: KUBEGEN_E2E_KUBECONFIG is not set");
        return;
    };
    let mut load = LoadOptions::default();
    load.kubeconfig_path = Some(path.into());
    let client = Client::new(Config::load(&load).await.unwrap()).unwrap();
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let mut namespace = Namespace::default();
    namespace.metadata.generate_name = Some("kubegen-sharding-e2e-".to_owned());
    let created = namespaces
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap();
    let world = World {
        client: client.clone(),
        namespace: created.metadata.name.clone().unwrap(),
        log: Arc::new(Log::default()),
    };
    // Run the scenario on its own task so the namespace goes away whatever it asserts.
    let outcome = tokio::spawn(three_replicas(world.clone())).await;
    namespaces
        .delete(&world.namespace, &DeleteOptions::default())
        .await
        .unwrap();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

async fn three_replicas(world: World) {
    let replicas: Vec<JoinSet<()>> = (0..3)
        .map(|i| spawn_replica(&world, &format!("replica-{i}")))
        .collect();
    let expected = workload(&world, 90).await;
    check(&world, &expected, Duration::from_secs(60)).await;
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
