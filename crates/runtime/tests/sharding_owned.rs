//! Issue 25: owned kinds follow their owner's shard ([`ManagerOptions::shard_owned`]). Three
//! sharded managers reconcile ConfigMaps, each of which owns one Secret (created by the
//! reconcile, controller `ownerReference`). Checked: each replica's Secret informer holds exactly
//! the Secrets of its own ConfigMaps, labelled with its shard; after a replica shuts down the
//! survivors take its ConfigMaps and Secrets; and no reconcile ever ran without its Secret in
//! the replica's cache once the Secret existed on the server, except for a moment after the
//! replica created it itself (an owner's new shard waits for its dependents).
//!
//! Real time (membership reads Lease timestamps), 2 s Leases.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube_core::Selector;
use kubegen_cache::{FactoryOptions, Lister, SharedIndexInformer};
use kubegen_client::{
    Client, CreateOptions, GetOptions, ListOptions, Patch, PatchOptions, ResourceClient,
};
use kubegen_runtime::{Action, Context, Manager, ManagerOptions, Reconciler};
use kubegen_sharding::{HashRing, ReplicaConfig, Ring, RingKey};
use kubegen_testserver::{ServerOptions, TestServer};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

const OWNERS: usize = 24;
/// How long a replica's own new Secret may be missing from its cache.
const LAG: Duration = Duration::from_secs(1);
const RING: &str = "owned-test";

#[derive(Default)]
struct Log {
    /// (replica, owner, version) of every reconcile.
    reconciles: Mutex<Vec<(String, String, String)>>,
    /// Reconciles that ran while their Secret existed but was missing from the cache.
    blind: Mutex<Vec<String>>,
    /// Secret -> the replica that created it, and when.
    created: Mutex<HashMap<String, (String, Instant)>>,
}

struct Owner {
    replica: String,
    namespace: String,
    secrets: Lister<Secret>,
    client: Client,
    log: Arc<Log>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Failed(String);

impl Reconciler<ConfigMap> for Owner {
    type Error = Failed;

    async fn reconcile(&self, cm: Arc<ConfigMap>, _: &Context) -> Result<Action, Failed> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        let child = format!("{name}-child");
        let version = cm.data.as_ref().and_then(|d| d.get("v")).cloned();
        self.log.reconciles.lock().push((
            self.replica.clone(),
            name.clone(),
            version.unwrap_or_default(),
        ));
        let ns = self.namespace.as_str();
        if self.secrets.get(Some(ns), &child).is_some() {
            return Ok(Action::Done);
        }
        let secrets = ResourceClient::<Secret>::namespaced(self.client.clone(), ns);
        if secrets.get(&child, &GetOptions::default()).await.is_ok() {
            // A Secret this replica created a moment ago may not be in its cache yet (every
            // informer lags its own writes); one another replica made must be, and an old one.
            let created = self.log.created.lock().get(&child).cloned();
            let lagging = created.is_some_and(|(by, at)| by == self.replica && at.elapsed() < LAG);
            if !lagging {
                self.log
                    .blind
                    .lock()
                    .push(format!("{}: {child}", self.replica));
            }
            return Ok(Action::Done);
        }
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(child),
                owner_references: Some(vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name,
                    uid: cm.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        };
        match secrets.create(&secret, &CreateOptions::default()).await {
            Ok(made) => {
                let name = made.metadata.name.unwrap_or_default();
                let by = (self.replica.clone(), Instant::now());
                self.log.created.lock().insert(name, by);
                Ok(Action::Done)
            }
            Err(error) if error.is_already_exists() => Ok(Action::Done),
            Err(error) => Err(Failed(error.to_string())),
        }
    }
}

struct Running {
    name: String,
    secrets: SharedIndexInformer<Secret>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kubegen_runtime::Error>>,
}

fn start(client: &Client, ns: &str, replica: &str, log: &Arc<Log>) -> Running {
    let mut ring = ReplicaConfig::new(Ring::new(RING, ns), "");
    ring.lease_duration = Duration::from_secs(2);
    ring.renew_deadline = Duration::from_millis(1500);
    ring.retry_period = Duration::from_millis(300);
    ring.assign_period = Duration::from_millis(100);
    ring.namespace = Some(ns.to_owned());
    ring.selector = Some(format!("app={RING}"));
    let options = ManagerOptions::default()
        .identity(replica)
        .factory(FactoryOptions::default().namespace(ns.to_owned()))
        .shutdown_timeout(Duration::from_secs(5))
        .shard_owned::<Secret>()
        .sharding::<ConfigMap>(Some(ring));
    let mut manager = Manager::new(client.clone(), options);
    let owners = manager.factory().informer::<ConfigMap>();
    let secrets = manager.factory().informer::<Secret>();
    let controller = manager
        .controller("owner", &owners)
        .owns(&secrets)
        .build()
        .unwrap();
    let reconciler = Owner {
        replica: replica.to_owned(),
        namespace: ns.to_owned(),
        secrets: secrets.lister(),
        client: client.clone(),
        log: Arc::clone(log),
    };
    manager.add(controller, reconciler);
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(manager.run(async move {
        let _ = stopped.await;
    }));
    Running {
        name: replica.to_owned(),
        secrets,
        stop,
        task,
    }
}

async fn bump(client: &Client, ns: &str, version: u32) {
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    for i in 0..OWNERS {
        let patch = json!({"data": {"v": version.to_string()}});
        api.patch(
            &format!("owner-{i:02}"),
            &Patch::Merge(patch),
            &PatchOptions::default(),
        )
        .await
        .unwrap();
    }
}

/// Waits until each replica caches exactly the Secrets of the owners the ring gives it, all of
/// them labelled with its shard.
async fn secrets_follow_their_owners(client: &Client, ns: &str, running: &[Running]) {
    let ring = HashRing::new(running.iter().map(|r| r.name.as_str()));
    let label = Ring::new(RING, ns).shard_label();
    let secrets = ResourceClient::<Secret>::namespaced(client.clone(), ns);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let listed = secrets.list(&ListOptions::default()).await.unwrap().items;
        let children: Vec<&Secret> = listed
            .iter()
            .filter(|s| s.metadata.owner_references.is_some())
            .collect();
        let mut wrong = Vec::new();
        for replica in running {
            let cached: BTreeSet<String> = replica
                .secrets
                .lister()
                .list(&Selector::default())
                .iter()
                .filter_map(|s| s.metadata.name.clone())
                .collect();
            let expected: BTreeSet<String> = children
                .iter()
                .filter(|s| {
                    ring.owner(&RingKey::Object.of(&s.metadata)) == Some(replica.name.as_str())
                })
                .filter(|s| {
                    let labels = s.metadata.labels.as_ref();
                    labels.and_then(|l| l.get(&label)) == Some(&replica.name)
                })
                .filter_map(|s| s.metadata.name.clone())
                .collect();
            let owned = children
                .iter()
                .filter(|s| {
                    ring.owner(&RingKey::Object.of(&s.metadata)) == Some(replica.name.as_str())
                })
                .count();
            if cached != expected || expected.len() != owned {
                wrong.push(format!(
                    "{}: caches {cached:?}, owns {owned}, labelled {expected:?}",
                    replica.name
                ));
            }
        }
        if children.len() == OWNERS && wrong.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} children; {wrong:?}",
            children.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until every owner's `version` was reconciled, by the replica the ring gives it.
async fn reconciled_by_owner(log: &Log, ns: &str, version: u32, members: &[&str]) {
    let ring = HashRing::new(members);
    let version = version.to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let by: BTreeMap<String, BTreeSet<String>> = log
            .reconciles
            .lock()
            .iter()
            .filter(|(_, _, v)| *v == version)
            .fold(BTreeMap::new(), |mut by, (replica, name, _)| {
                by.entry(name.clone()).or_default().insert(replica.clone());
                by
            });
        if by.len() == OWNERS {
            for (name, replicas) in &by {
                let owner = ring.owner(&format!("{ns}/{name}")).unwrap();
                assert_eq!(
                    replicas,
                    &BTreeSet::from([owner.to_owned()]),
                    "{name} v{version}"
                );
            }
            return;
        }
        let missing: Vec<String> = (0..OWNERS)
            .map(|i| format!("owner-{i:02}"))
            .filter(|name| !by.contains_key(name))
            .collect();
        assert!(
            tokio::time::Instant::now() < deadline,
            "v{version} never reconciled: {missing:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The scenario in namespace `ns` of whatever server `client` talks to.
async fn scenario(client: Client, ns: String) {
    let ns = ns.as_str();
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns);
    for i in 0..OWNERS {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("owner-{i:02}")),
                labels: Some(BTreeMap::from([("app".to_owned(), RING.to_owned())])),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("v".to_owned(), "0".to_owned())])),
            ..ConfigMap::default()
        };
        api.create(&cm, &CreateOptions::default()).await.unwrap();
    }
    let log = Arc::new(Log::default());
    let names = ["replica-a", "replica-b", "replica-c"];
    let mut running: Vec<Running> = names.iter().map(|n| start(&client, ns, n, &log)).collect();
    secrets_follow_their_owners(&client, ns, &running).await;
    bump(&client, ns, 1).await;
    reconciled_by_owner(&log, ns, 1, &names).await;

    let b = running.remove(1);
    b.stop.send(()).unwrap();
    b.task.await.unwrap().unwrap();
    let survivors = ["replica-a", "replica-c"];
    secrets_follow_their_owners(&client, ns, &running).await;
    bump(&client, ns, 2).await;
    reconciled_by_owner(&log, ns, 2, &survivors).await;
    assert_eq!(log.blind.lock().clone(), Vec::<String>::new());
    for replica in running {
        replica.stop.send(()).unwrap();
        replica.task.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_secrets_follow_their_configmaps_shard_and_move_with_them() {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    scenario(server.client(), "default".to_owned()).await;
}

/// The same on a real cluster (`KUBEGEN_E2E_KUBECONFIG`, an administrator's; labels, as v1.36
/// serves no `shardSelector` by default), in a namespace of its own that is deleted afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn owned_secrets_follow_their_configmaps_shard_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    kubegen_e2e_support::in_scratch_namespace(&client, "kubegen-sharded-owned-e2e-", scenario)
        .await;
}
