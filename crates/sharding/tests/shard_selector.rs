//! Server-side sharding end to end (issue 25, item 2a): replicas over a test server that serves
//! KEP-5866 (`ServerOptions::sharded_list_and_watch`) pick `shardSelector` by themselves, list and
//! watch only their arcs of the ring, and hand objects over by acknowledging rings on their
//! Leases; replicas over a server without the gate, or one that rejects the selector, fall back
//! to labels.
//!
//! The churn test mirrors `chaos.rs` (its harness is its own: `chaos.rs` is that test's): replicas
//! join and leave at random while objects are created, updated and deleted; at the end no
//! object was reconciled by two replicas at once, every object's last change was reconciled
//! exactly once, nothing was written on an object but the reconciles' own annotations, and each
//! replica's cache holds exactly its share. Real time (membership reads Lease timestamps), 2 s
//! Leases.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::HandlerFns;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, ListOptions, Patch, PatchOptions, ResourceClient,
};
use kubegen_sharding::{HashRing, Refusal, Replica, ReplicaConfig, Ring, Selection, hash};
use kubegen_testserver::{Failure, RequestMatch, ServerOptions, TestServer};
use parking_lot::Mutex;
use rand::Rng;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

const NAMESPACE: &str = "default";

async fn server(sharded: bool) -> TestServer {
    let mut options = ServerOptions::default();
    options.sharded_list_and_watch = sharded;
    options.controller_manager = false;
    TestServer::start_with(options).await
}

fn config(identity: &str) -> ReplicaConfig {
    in_namespace(identity, NAMESPACE)
}

fn in_namespace(identity: &str, namespace: &str) -> ReplicaConfig {
    let mut config = ReplicaConfig::new(Ring::new("churn", namespace), identity);
    config.lease_duration = Duration::from_secs(2);
    config.renew_deadline = Duration::from_millis(1500);
    config.retry_period = Duration::from_millis(300);
    config.assign_period = Duration::from_millis(100);
    config.namespace = Some(namespace.to_owned());
    config.selector = Some("app=churn".to_owned());
    config
}

fn configmap(name: &str, version: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("app".to_owned(), "churn".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), version.to_string())])),
        ..ConfigMap::default()
    }
}

fn field(cm: &ConfigMap, data: bool, key: &str) -> Option<String> {
    let map = if data {
        cm.data.as_ref()
    } else {
        cm.metadata.annotations.as_ref()
    };
    map.and_then(|m| m.get(key)).cloned()
}

/// Object name -> replica reconciling it now, and every overlap seen.
#[derive(Default)]
struct Log {
    in_flight: Mutex<HashMap<String, String>>,
    violations: Mutex<Vec<String>>,
}

/// One reconcile: marks the object `observed=<v>` and appends `v` to its `history`, in one
/// conditional write, after a random delay that outlasts handover round trips.
async fn reconcile(api: &ResourceClient<ConfigMap>, log: &Log, cm: &ConfigMap, identity: &str) {
    let name = cm.metadata.name.clone().unwrap_or_default();
    if let Some(other) = log.in_flight.lock().insert(name.clone(), identity.into()) {
        let overlap = format!("{name}: {identity} started while {other} was reconciling");
        log.violations.lock().push(overlap);
    }
    let cost = rand::rng().random_range(0..100);
    tokio::time::sleep(Duration::from_millis(cost)).await;
    let version = field(cm, true, "v").unwrap_or_default();
    if field(cm, false, "observed").as_deref() != Some(version.as_str()) {
        let history = field(cm, false, "history").unwrap_or_default();
        let patch = json!({"metadata": {
            "resourceVersion": cm.metadata.resource_version,
            "annotations": {"observed": version, "history": format!("{history} {version}")},
        }});
        let _ = api
            .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
            .await;
    }
    log.in_flight.lock().remove(&name);
}

/// A replica with a two-worker controller; its tasks end when the set is dropped.
fn spawn_replica(
    client: &Client,
    log: &Arc<Log>,
    identity: &str,
) -> (Replica<ConfigMap>, JoinSet<()>) {
    let replica = Replica::<ConfigMap>::new(client.clone(), config(identity)).unwrap();
    let (queue, keys) = mpsc::unbounded_channel::<String>();
    let keys = Arc::new(tokio::sync::Mutex::new(keys));
    let name = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
    let (add, update) = (queue.clone(), queue.clone());
    let handlers = HandlerFns::new()
        .on_add(move |cm: &Arc<ConfigMap>, _| drop(add.send(name(cm))))
        .on_update(move |_, cm: &Arc<ConfigMap>| drop(update.send(name(cm))));
    replica.informer().add_event_handler(handlers).unwrap();
    let mut tasks = JoinSet::new();
    let runner = replica.clone();
    tasks.spawn(async move {
        let _ = runner.run(std::future::pending()).await;
    });
    let (resync, requeue) = (replica.clone(), queue.clone());
    tasks.spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            for cm in resync.informer().lister().list(&Default::default()) {
                let _ = requeue.send(name(&cm));
            }
        }
    });
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    for _ in 0..2 {
        let (replica, keys, queue, api) = (
            replica.clone(),
            Arc::clone(&keys),
            queue.clone(),
            api.clone(),
        );
        let (log, identity) = (Arc::clone(log), identity.to_owned());
        tasks.spawn(async move {
            loop {
                let Some(key) = keys.lock().await.recv().await else {
                    return;
                };
                let Some(cm) = replica.informer().lister().get(Some(NAMESPACE), &key) else {
                    continue;
                };
                match replica.begin(&cm) {
                    Ok(guard) => {
                        reconcile(&api, &log, &cm, &identity).await;
                        drop(guard);
                    }
                    Err(Refusal::Busy) => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let _ = queue.send(key);
                    }
                    Err(Refusal::NotMine) => {}
                }
            }
        });
    }
    (replica, tasks)
}

/// Creates, updates and deletes `objects` objects' worth of changes; the survivors' versions.
async fn workload(api: &ResourceClient<ConfigMap>, objects: usize) -> BTreeMap<String, String> {
    let mut live: BTreeMap<String, u32> = BTreeMap::new();
    let mut created = 0;
    while created < objects {
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

/// Starts and kills replicas at random until `done` (at least two stay up); the survivors.
async fn churn(
    client: Client,
    log: Arc<Log>,
    done: tokio::sync::watch::Receiver<bool>,
) -> Vec<(String, Replica<ConfigMap>, JoinSet<()>)> {
    let mut replicas: Vec<(String, Replica<ConfigMap>, JoinSet<()>)> = Vec::new();
    let mut started = 0;
    while !*done.borrow() {
        if replicas.len() >= 4 || (replicas.len() > 2 && rand::rng().random_bool(0.5)) {
            let index = rand::rng().random_range(0..replicas.len());
            let (identity, _, mut tasks) = replicas.remove(index);
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
            // The process is gone: whatever it was doing stopped with it.
            log.in_flight.lock().retain(|_, who| *who != identity);
        } else {
            let identity = format!("replica-{started}");
            started += 1;
            let (replica, tasks) = spawn_replica(&client, &log, &identity);
            replicas.push((identity, replica, tasks));
        }
        let pause = rand::rng().random_range(300..1200);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    replicas
}

/// Waits until every object's last change is observed, then checks the log and histories.
async fn check(api: &ResourceClient<ConfigMap>, log: &Log, expected: &BTreeMap<String, String>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    let mut items = Vec::new();
    while tokio::time::Instant::now() < deadline {
        items = api
            .list(&ListOptions::default().labels("app=churn"))
            .await
            .unwrap()
            .items;
        let pending = items
            .iter()
            .filter(|cm| field(cm, false, "observed") != field(cm, true, "v"))
            .count();
        if pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(log.violations.lock().clone(), Vec::<String>::new());
    let survivors: BTreeMap<String, String> = items
        .iter()
        .map(|cm| {
            (
                cm.metadata.name.clone().unwrap(),
                field(cm, true, "v").unwrap(),
            )
        })
        .collect();
    assert_eq!(&survivors, expected);
    for cm in &items {
        let history = field(cm, false, "history").unwrap_or_default();
        let versions: Vec<&str> = history.split_whitespace().collect();
        let last = field(cm, true, "v").unwrap();
        let times = versions.iter().filter(|v| **v == last).count();
        let name = cm.metadata.name.as_deref().unwrap();
        assert_eq!(times, 1, "{name}: last change v{last}, history {history:?}");
        let mut distinct = versions.clone();
        distinct.dedup();
        assert_eq!(distinct, versions, "{name}: a version reconciled twice");
        let labels: Vec<&String> = cm
            .metadata
            .labels
            .iter()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            labels,
            ["app"],
            "{name}: server-side sharding labels nothing"
        );
    }
}

/// Waits until each replica's cache holds exactly the objects the ring gives it by UID hash.
async fn caches_hold_their_shares(
    replicas: &[(String, Replica<ConfigMap>, JoinSet<()>)],
    api: &ResourceClient<ConfigMap>,
) {
    let everything = api
        .list(&ListOptions::default().labels("app=churn"))
        .await
        .unwrap()
        .items;
    let ring = HashRing::new(replicas.iter().map(|(identity, _, _)| identity.as_str()));
    let names = |items: Vec<Arc<ConfigMap>>| -> BTreeSet<String> {
        items
            .iter()
            .filter_map(|cm| cm.metadata.name.clone())
            .collect()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    for (identity, replica, _) in replicas {
        let share: BTreeSet<String> = everything
            .iter()
            .filter(|cm| {
                let uid = cm.metadata.uid.as_deref().unwrap();
                ring.owner_of_hash(hash(uid)) == Some(identity.as_str())
            })
            .filter_map(|cm| cm.metadata.name.clone())
            .collect();
        let mut cached = names(replica.informer().lister().list(&Default::default()));
        while cached != share && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cached = names(replica.informer().lister().list(&Default::default()));
        }
        assert_eq!(
            replica.selection(),
            Some(Selection::ShardSelector),
            "{identity}"
        );
        assert_eq!(cached, share, "{identity} caches exactly its share");
    }
}

/// 200 objects while replicas come and go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_joining_and_leaving_over_shard_selector_never_share_an_object_and_drop_none() {
    let server = server(true).await;
    let client = server.client();
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    let log = Arc::new(Log::default());
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let churning = tokio::spawn(churn(client.clone(), Arc::clone(&log), done_rx));
    let expected = workload(&api, 200).await;
    done_tx.send(true).unwrap();
    let survivors = churning.await.unwrap();
    check(&api, &log, &expected).await;
    caches_hold_their_shares(&survivors, &api).await;
}

/// Starts one replica with `Auto` in `namespace` and returns what it chose, once it chose.
async fn chosen(client: Client, namespace: &str) -> Selection {
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    api.create(&configmap("one", 1), &CreateOptions::default())
        .await
        .unwrap();
    let replica = Replica::<ConfigMap>::new(client, in_namespace("only", namespace)).unwrap();
    let runner = replica.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(async move { runner.run(async move { drop(stopped.await) }).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while replica.selection().is_none() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let selection = replica.selection().unwrap();
    // Whichever way, the replica then gets the object into its cache.
    while replica
        .informer()
        .lister()
        .list(&Default::default())
        .is_empty()
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        replica.informer().lister().list(&Default::default()).len(),
        1
    );
    stop.send(()).unwrap();
    run.await.unwrap().unwrap();
    selection
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_picks_shard_selector_where_the_server_serves_it() {
    let server = server(true).await;
    assert_eq!(
        chosen(server.client(), NAMESPACE).await,
        Selection::ShardSelector
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_picks_labels_on_a_server_without_the_gate() {
    let server = server(false).await;
    assert_eq!(chosen(server.client(), NAMESPACE).await, Selection::Labels);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_picks_labels_on_a_server_that_rejects_the_selector_but_asks_again_when_busy() {
    let server = server(true).await;
    let lists = RequestMatch::any().verb("list").resource("configmaps");
    // A 503 says nothing about the selector: asked again. A 500 is the gate's rejection.
    server
        .faults()
        .fail_next(1, lists.clone(), Failure::ServiceUnavailable);
    server.faults().fail_next(1, lists, Failure::InternalError);
    assert_eq!(chosen(server.client(), NAMESPACE).await, Selection::Labels);
}

/// A real v1.36 server (`KUBEGEN_E2E_KUBECONFIG`, an administrator's) has the alpha gate off
/// and ignores `shardSelector`: `Auto` picks labels, in a namespace of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn auto_picks_labels_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    let selection = kubegen_e2e_support::in_scratch_namespace(
        &client,
        "kubegen-shard-selector-e2e-",
        |client, namespace| async move { chosen(client, &namespace).await },
    )
    .await;
    assert_eq!(selection, Selection::Labels);
}

/// A factory that made its informer of the sharded kind already would hand every reader every
/// shard's objects: refused.
#[tokio::test]
async fn a_factory_whose_informer_of_the_kind_exists_cannot_hold_the_shard() {
    let server = server(false).await;
    let source = kubegen_cache::ClientListWatchSource::new(server.client());
    let factory = kubegen_cache::InformerFactory::new(source, Default::default());
    let _early = factory.informer::<ConfigMap>();
    let refused = Replica::<ConfigMap>::in_factory(server.client(), config("only"), &factory);
    assert_eq!(
        refused.err().map(|e| e.to_string()).as_deref(),
        Some(
            "the factory's informer of ConfigMap was made before the shard replica: it would see every shard"
        )
    );
    let fresh = kubegen_cache::InformerFactory::new(
        kubegen_cache::ClientListWatchSource::new(server.client()),
        Default::default(),
    );
    assert!(Replica::<ConfigMap>::in_factory(server.client(), config("only"), &fresh).is_ok());
}
