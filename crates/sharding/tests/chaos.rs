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

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::HandlerFns;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, ListOptions, Patch, PatchOptions, ResourceClient,
};
use kubegen_sharding::{Refusal, Replica, ReplicaConfig, Ring};
use kubegen_testserver::TestServer;
use parking_lot::Mutex;
use rand::Rng;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

const NAMESPACE: &str = "default";
const OBJECTS: usize = 300;
const MAX_REPLICAS: usize = 5;

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

async fn reconcile(client: &Client, cm: &ConfigMap, identity: &str, log: &Log) {
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
        let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
        // A conflict means the object changed: its newer version is reconciled next.
        let _ = api
            .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
            .await;
    }
    log.in_flight.lock().remove(&name);
}

/// One replica: the sharding runtime plus a two-worker controller on its shard's informer.
fn spawn_replica(client: &Client, identity: &str, log: &Arc<Log>) -> JoinSet<()> {
    let mut config = ReplicaConfig::new(Ring::new("chaos", NAMESPACE), identity);
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_millis(1500);
    config.retry_period = Duration::from_millis(300);
    config.assign_period = Duration::from_millis(100);
    let replica = Replica::<ConfigMap>::new(client.clone(), config).unwrap();
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let key = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
    let (add, update) = (tx.clone(), tx.clone());
    replica
        .informer()
        .add_event_handler(
            HandlerFns::new()
                .on_add(move |cm: &Arc<ConfigMap>, _| drop(add.send(key(cm))))
                .on_update(move |_, cm: &Arc<ConfigMap>| drop(update.send(key(cm)))),
        )
        .unwrap();
    let mut tasks = JoinSet::new();
    let runner = replica.clone();
    tasks.spawn(async move {
        let _ = runner.run(std::future::pending()).await;
    });
    let (watcher, requeue) = (replica.clone(), tx.clone());
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
                let _ = requeue.send(key(&cm));
            }
        }
    });
    for _ in 0..2 {
        let (replica, rx, tx, client, log) = (
            replica.clone(),
            Arc::clone(&rx),
            tx.clone(),
            client.clone(),
            Arc::clone(log),
        );
        let identity = identity.to_owned();
        tasks.spawn(async move {
            loop {
                let Some(name) = rx.lock().await.recv().await else {
                    return;
                };
                let lister = replica.informer().lister();
                let Some(cm) = lister.get(Some(NAMESPACE), &name) else {
                    continue;
                };
                match replica.begin(&cm) {
                    Ok(guard) => {
                        reconcile(&client, &cm, &identity, &log).await;
                        drop(guard);
                    }
                    Err(Refusal::Busy) => {
                        let tx = tx.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            let _ = tx.send(name);
                        });
                    }
                    Err(Refusal::NotMine) => {}
                }
            }
        });
    }
    tasks
}

fn configmap(name: &str, version: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), version.to_string())])),
        ..ConfigMap::default()
    }
}

/// Creates, updates and deletes objects; returns the expected final version of each survivor.
async fn workload(client: Client) -> BTreeMap<String, String> {
    let api = ResourceClient::<ConfigMap>::namespaced(client, NAMESPACE);
    let mut live: BTreeMap<String, u32> = BTreeMap::new();
    let mut created = 0;
    while created < OBJECTS {
        let choice = rand::rng().random_range(0..10);
        if choice < 5 || live.is_empty() {
            let name = format!("obj-{created:05}");
            api.create(&configmap(&name, 1), &CreateOptions::default())
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
async fn chaos(
    client: Client,
    log: Arc<Log>,
    done: tokio::sync::watch::Receiver<bool>,
) -> Vec<JoinSet<()>> {
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
            log.in_flight.lock().retain(|_, who| *who != identity);
        } else {
            let identity = format!("replica-{started}");
            started += 1;
            let tasks = spawn_replica(&client, &identity, &log);
            replicas.push((identity, tasks));
        }
        let pause = rand::rng().random_range(300..1200);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    replicas.into_iter().map(|(_, tasks)| tasks).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_killed_and_added_at_random_never_share_an_object_and_drop_none() {
    let server = TestServer::start().await;
    let client = server.client();
    let log = Arc::new(Log::default());
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let chaos_task = tokio::spawn(chaos(client.clone(), Arc::clone(&log), done_rx));
    let expected = workload(client.clone()).await;
    done_tx.send(true).unwrap();
    let _survivors = chaos_task.await.unwrap();

    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut items = Vec::new();
    while tokio::time::Instant::now() < deadline {
        items = api.list(&ListOptions::default()).await.unwrap().items;
        let pending = items
            .iter()
            .filter(|cm| annotation(cm, "observed").as_deref() != Some(version_of(cm).as_str()))
            .count();
        if pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(log.violations.lock().clone(), Vec::<String>::new());
    let survivors: BTreeMap<String, String> = items
        .iter()
        .map(|cm| (cm.metadata.name.clone().unwrap(), version_of(cm)))
        .collect();
    assert_eq!(survivors, expected);
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
