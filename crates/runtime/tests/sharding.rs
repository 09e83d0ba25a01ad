//! Issue 25 item 5: three sharded managers (replicas) in one process, one reconciler, one ring
//! scoped to the test's namespace and label. Every change of every object is reconciled by
//! exactly one replica, the one the ring gives it to; after a replica shuts down, its objects
//! are reconciled by the survivors.
//!
//! Real time, not virtual: shard membership reads the Leases' wall-clock timestamps (timings
//! shortened to 2 s).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Selector;
use kubegen_cache::{FactoryOptions, SharedIndexInformer};
use kubegen_client::{Client, CreateOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use kubegen_runtime::{Action, Context, Manager, ManagerOptions, ProcessMetrics, Reconciler};
use kubegen_sharding::{HashRing, ReplicaConfig, Ring, RingKey, Selection, hash};
use kubegen_testserver::{ServerOptions, TestServer};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const OBJECTS: usize = 30;
const RING: &str = "shard-test";

/// Every reconcile: (replica, object, version of the object it saw).
type Log = Arc<Mutex<Vec<(String, String, String)>>>;

struct Recording {
    replica: String,
    log: Log,
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

impl Reconciler<ConfigMap> for Recording {
    type Error = Never;

    async fn reconcile(&self, cm: Arc<ConfigMap>, _: &Context) -> Result<Action, Never> {
        let version = cm.data.as_ref().and_then(|d| d.get("v")).cloned();
        let name = cm.metadata.name.clone().unwrap_or_default();
        self.log
            .lock()
            .push((self.replica.clone(), name, version.unwrap_or_default()));
        Ok(Action::Done)
    }
}

/// A running replica: its manager's task and its shutdown trigger.
struct Running {
    name: String,
    /// The manager's shared informer of ConfigMaps.
    informer: SharedIndexInformer<ConfigMap>,
    metrics: ProcessMetrics,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kubegen_runtime::Error>>,
}

fn start(client: &Client, namespace: &str, replica: &str, log: &Log) -> Running {
    let mut ring = ReplicaConfig::new(Ring::new(RING, namespace), "");
    ring.lease_duration = Duration::from_secs(2);
    ring.renew_deadline = Duration::from_millis(1500);
    ring.retry_period = Duration::from_millis(300);
    ring.assign_period = Duration::from_millis(100);
    ring.namespace = Some(namespace.to_owned());
    ring.selector = Some(format!("app={RING}"));
    ring.key = RingKey::Object;
    let options = ManagerOptions::default()
        .identity(replica)
        .factory(FactoryOptions::default().namespace(namespace.to_owned()))
        .shutdown_timeout(Duration::from_secs(5))
        .sharding::<ConfigMap>(Some(ring));
    let mut manager = Manager::new(client.clone(), options);
    let informer = manager.factory().informer::<ConfigMap>();
    let controller = manager.controller("recorder", &informer).build().unwrap();
    manager.add(
        controller,
        Recording {
            replica: replica.to_owned(),
            log: Arc::clone(log),
        },
    );
    let (stop, stopped) = oneshot::channel();
    let metrics = manager.metrics().clone();
    let task = tokio::spawn(manager.run(async move {
        let _ = stopped.await;
    }));
    Running {
        name: replica.to_owned(),
        informer,
        metrics,
        stop,
        task,
    }
}

fn objects(client: &Client, namespace: &str) -> ResourceClient<ConfigMap> {
    ResourceClient::namespaced(client.clone(), namespace)
}

/// Sets every object's `v` to `version`.
async fn bump(client: &Client, namespace: &str, version: u32) {
    let api = objects(client, namespace);
    for i in 0..OBJECTS {
        let patch = json!({"data": {"v": version.to_string()}});
        api.patch(
            &format!("obj-{i:03}"),
            &Patch::Merge(patch),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    }
}

/// Waits until every object is labelled with the shard `members`' ring gives it.
async fn settled(client: &Client, namespace: &str, members: &[&str]) {
    let ring = HashRing::new(members);
    let label = Ring::new(RING, namespace).shard_label();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let list = objects(client, namespace)
            .list(&ListOptions::default().labels(format!("app={RING}")))
            .await
            .unwrap();
        let wrong: Vec<String> = list
            .items
            .iter()
            .filter(|cm| {
                let shard = cm.metadata.labels.as_ref().and_then(|l| l.get(&label));
                shard.map(String::as_str) != ring.owner(&RingKey::Object.of(&cm.metadata))
            })
            .filter_map(|cm| cm.metadata.name.clone())
            .collect();
        if wrong.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not assigned as the ring {members:?} says: {wrong:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The shard `members`' ring gives each sharded object: by `namespace/name` with labels, by
/// UID hash with `shardSelector`.
async fn owners(
    client: &Client,
    namespace: &str,
    members: &[&str],
    selection: Selection,
) -> BTreeMap<String, String> {
    let ring = HashRing::new(members);
    let list = objects(client, namespace)
        .list(&ListOptions::default().labels(format!("app={RING}")))
        .await
        .unwrap();
    let owner = |cm: &ConfigMap| match selection {
        Selection::ShardSelector => {
            ring.owner_of_hash(hash(cm.metadata.uid.as_deref().unwrap_or_default()))
        }
        _ => ring.owner(&RingKey::Object.of(&cm.metadata)),
    };
    list.items
        .iter()
        .map(|cm| {
            let name = cm.metadata.name.clone().unwrap_or_default();
            (name, owner(cm).unwrap_or_default().to_owned())
        })
        .collect()
}

/// Waits until each replica's shared informer caches exactly the objects the ring gives it
/// (`owners`), and its `controller_sharding_*` gauges say so.
async fn caches_hold_their_shares(running: &[Running], owners: &BTreeMap<String, String>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    for replica in running {
        let expected: BTreeSet<String> = owners
            .iter()
            .filter(|(_, owner)| **owner == replica.name)
            .map(|(name, _)| name.clone())
            .collect();
        let gauges = [
            format!(
                "controller_sharding_shard_objects{{ring=\"{RING}\"}} {}",
                expected.len()
            ),
            format!(
                "controller_sharding_ring_members{{ring=\"{RING}\"}} {}",
                running.len()
            ),
            format!("controller_sharding_shard_member{{ring=\"{RING}\"}} 1"),
        ];
        loop {
            let cached: BTreeSet<String> = replica
                .informer
                .lister()
                .list(&Selector::default())
                .iter()
                .filter_map(|cm| cm.metadata.name.clone())
                .collect();
            let text = replica.metrics.encode();
            let missing: Vec<&String> = gauges
                .iter()
                .filter(|g| !text.contains(g.as_str()))
                .collect();
            if cached == expected && missing.is_empty() {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{}: caches {cached:?}, owns {expected:?}; gauges missing {missing:?}",
                replica.name
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Waits until every object's `version` was reconciled, then checks that each was reconciled
/// exactly once, by its owner.
async fn reconciled_once_by_owner(log: &Log, version: u32, owners: &BTreeMap<String, String>) {
    let version = version.to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let names: BTreeSet<String> = log
            .lock()
            .iter()
            .filter(|(_, _, v)| *v == version)
            .map(|(_, name, _)| name.clone())
            .collect();
        if names.len() == OBJECTS {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "v{version}: only {} of {OBJECTS} reconciled",
            names.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Let late duplicates show up, if any.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut by_object: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, replica) in log
        .lock()
        .iter()
        .filter(|(_, _, v)| *v == version)
        .map(|(r, n, _)| (n.clone(), r.clone()))
    {
        by_object.entry(name).or_default().push(replica);
    }
    assert_eq!(by_object.len(), OBJECTS);
    for (name, replicas) in &by_object {
        assert_eq!(replicas, &vec![owners[name].clone()], "{name} v{version}");
    }
}

/// The scenario, on whatever server `client` talks to, in `namespace`; the replicas must end up
/// selecting their objects the `selection` way.
async fn scenario(client: Client, namespace: String, selection: Selection) {
    let api = objects(&client, &namespace);
    for i in 0..OBJECTS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("obj-{i:03}")),
                labels: Some(BTreeMap::from([("app".to_owned(), RING.to_owned())])),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("v".to_owned(), "0".to_owned())])),
            ..ConfigMap::default()
        };
        api.create(&cm, &CreateOptions::default()).await.unwrap();
    }
    // An object outside the ring's selector is never labelled.
    let outsider = ConfigMap {
        metadata: ObjectMeta {
            name: Some("outsider".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    api.create(&outsider, &CreateOptions::default())
        .await
        .unwrap();
    let log = Log::default();
    let names = ["replica-a", "replica-b", "replica-c"];
    let mut running: Vec<Running> = names
        .iter()
        .map(|name| start(&client, &namespace, name, &log))
        .collect();
    let owners_of = owners(&client, &namespace, &names, selection).await;
    if selection == Selection::Labels {
        settled(&client, &namespace, &names).await;
    }
    caches_hold_their_shares(&running, &owners_of).await;
    bump(&client, &namespace, 1).await;
    reconciled_once_by_owner(&log, 1, &owners_of).await;
    let owned_by_b = log
        .lock()
        .iter()
        .filter(|(r, _, v)| r == "replica-b" && v == "1")
        .count();
    assert!(owned_by_b > 0, "replica-b holds a share");

    let b = running.remove(1);
    b.stop.send(()).unwrap();
    b.task.await.unwrap().unwrap();
    let survivors = ["replica-a", "replica-c"];
    let owners_of = owners(&client, &namespace, &survivors, selection).await;
    if selection == Selection::Labels {
        settled(&client, &namespace, &survivors).await;
    }
    caches_hold_their_shares(&running, &owners_of).await;
    bump(&client, &namespace, 2).await;
    reconciled_once_by_owner(&log, 2, &owners_of).await;

    let outsider = api.get("outsider", &Default::default()).await.unwrap();
    assert_eq!(
        outsider.metadata.labels, None,
        "outside the ring's selector"
    );
    for replica in running {
        replica.stop.send(()).unwrap();
        replica.task.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sharded_managers_split_the_objects_and_survivors_take_over() {
    let server = TestServer::start().await;
    scenario(server.client(), "default".to_owned(), Selection::Labels).await;
}

/// The same over a server that serves KEP-5866: the replicas find out by themselves, split the
/// objects by UID hash, and label none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sharded_managers_over_shard_selector_split_by_uid() {
    let mut options = ServerOptions::default();
    options.sharded_list_and_watch = true;
    let server = TestServer::start_with(options).await;
    scenario(
        server.client(),
        "default".to_owned(),
        Selection::ShardSelector,
    )
    .await;
    let api = objects(&server.client(), "default");
    let labelled = api
        .list(&ListOptions::default().labels(Ring::new(RING, "default").shard_label()))
        .await
        .unwrap();
    assert_eq!(labelled.items.len(), 0, "nothing labelled");
}

/// The same on a real cluster (`KUBEGEN_E2E_KUBECONFIG`, an administrator's), in a namespace of
/// its own (the ring is scoped to it) that is deleted afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn three_sharded_managers_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    kubegen_e2e_support::in_scratch_namespace(
        &client,
        "kubegen-sharded-manager-e2e-",
        |client, namespace| scenario(client, namespace, Selection::Labels),
    )
    .await;
}

/// A controller judging whole namespaces on a ring that hashes objects would split a namespace
/// between replicas: refused when it is built.
#[tokio::test]
async fn a_namespace_grouped_controller_needs_a_namespace_keyed_ring() {
    let server = TestServer::start().await;
    let sharded = |key: RingKey| {
        let mut ring = ReplicaConfig::new(Ring::new(RING, "default"), "");
        ring.key = key;
        let options = ManagerOptions::default()
            .identity("replica-a")
            .sharding::<ConfigMap>(Some(ring));
        Manager::new(server.client(), options)
    };
    let by_object = sharded(RingKey::Object);
    let informer = by_object.factory().informer::<ConfigMap>();
    let error = by_object
        .controller("judge", &informer)
        .group_by_namespace()
        .build()
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some(
            "controller \"judge\" groups by namespace but its ring does not shard by namespace (RingKey::Namespace)"
        )
    );
    let by_namespace = sharded(RingKey::Namespace);
    let informer = by_namespace.factory().informer::<ConfigMap>();
    let built = by_namespace
        .controller("judge", &informer)
        .group_by_namespace()
        .build();
    assert!(built.is_ok());
}
