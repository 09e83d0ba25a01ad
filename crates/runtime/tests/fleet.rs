//! Issue 36: one manager over a fleet of in-process servers. A hub with Cluster API kubeconfig
//! Secrets for its members; the fleet engages each member, reconciles in it with that member's
//! client, disengages it when its Secret goes (no reconcile for it after that, no task left
//! behind), re-engages it when its Secret's credentials change, and keeps reconciling the others
//! when one member stops answering, which `/readyz` and the metrics report per cluster.
//!
//! Real time, not virtual: the servers and the probes run on sockets.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::ObjectKey;
use kubegen_client::{CreateOptions, DeleteOptions, ResourceClient, UpdateOptions};
use kubegen_leaderelection::LeaderElectionConfig;
use kubegen_runtime::multicluster::{
    AccessConfig, ClusterContext, ClusterProfile, ClusterProfileOptions, ClusterProfiles, Fleet,
    FleetOptions, FleetReconciler, KubeconfigFiles, KubeconfigSecrets, Provider, SecretOptions,
};
use kubegen_runtime::{Action, Context, Manager, ManagerOptions, Reconciler};
use kubegen_sharding::{HashRing, ReplicaConfig, Ring, Selection};
use kubegen_testserver::{TestFleet, kubeconfig_secret};
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Every reconcile: (cluster, object name).
type Log = Arc<Mutex<Vec<(String, String)>>>;

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// Records each reconcile, and checks it was handed the cluster's own client: the object it
/// reconciles must be readable there.
struct Recording(Log);

impl FleetReconciler<ConfigMap> for Recording {
    type Error = kubegen_client::Error;

    async fn reconcile(
        &self,
        cm: Arc<ConfigMap>,
        request: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        let client =
            ResourceClient::<ConfigMap>::namespaced(request.cluster().client().clone(), "default");
        client.get(&name, &Default::default()).await?;
        let cached = request.cluster().cached_client();
        assert!(
            cached
                .get::<ConfigMap>(Some("default"), &name)
                .await
                .unwrap()
                .is_some()
        );
        self.0
            .lock()
            .push((request.cluster_name().to_owned(), name));
        Ok(Action::Done)
    }
}

/// A manager on the fleet's hub running a fleet over its kubeconfig Secrets in `default`.
struct Running {
    fleet: Fleet,
    manager_health: kubegen_runtime::Health,
    metrics: kubegen_runtime::ProcessMetrics,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kubegen_runtime::Error>>,
}

fn start(
    fleet_servers: &TestFleet,
    log: &Log,
    extra: impl FnOnce(&mut Manager, &Fleet),
) -> Running {
    let options = ManagerOptions::default().shutdown_timeout(Duration::from_secs(2));
    start_with(fleet_servers, log, options, extra)
}

fn start_with(
    fleet_servers: &TestFleet,
    log: &Log,
    options: ManagerOptions,
    extra: impl FnOnce(&mut Manager, &Fleet),
) -> Running {
    let hub = fleet_servers.hub().client();
    let secrets = KubeconfigSecrets::new(hub, SecretOptions::cluster_api("default"));
    start_over(fleet_servers, log, options, secrets, extra)
}

/// A manager on the fleet's hub running a fleet over the clusters `provider` reports.
fn start_over(
    fleet_servers: &TestFleet,
    log: &Log,
    options: ManagerOptions,
    provider: impl Provider,
    extra: impl FnOnce(&mut Manager, &Fleet),
) -> Running {
    let hub = fleet_servers.hub().client();
    let mut manager = Manager::new(hub, options);
    let fleet = Fleet::new(
        &manager,
        FleetOptions::default()
            .probe_period(Duration::from_millis(100))
            .probe_timeout(Duration::from_millis(300)),
    );
    fleet.add_provider(provider);
    let log = Arc::clone(log);
    fleet.add_controller(
        "copies",
        |cluster| cluster.controller("copies", &cluster.factory().informer::<ConfigMap>()),
        Recording(log),
    );
    extra(&mut manager, &fleet);
    fleet.attach(&mut manager);
    let (stop, stopped) = oneshot::channel::<()>();
    let (manager_health, metrics) = (manager.health().clone(), manager.metrics().clone());
    let task = tokio::spawn(manager.run(async move {
        let _ = stopped.await;
    }));
    Running {
        fleet,
        manager_health,
        metrics,
        stop,
        task,
    }
}

impl Running {
    async fn shutdown(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

/// Polls `check` every 20 ms for up to 10 s.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

async fn create_in(fleet: &TestFleet, member: usize, name: &str) {
    let client =
        ResourceClient::<ConfigMap>::namespaced(fleet.member(member).unwrap().client(), "default");
    client
        .create(&config_map(name), &CreateOptions::default())
        .await
        .unwrap();
}

fn reconciled(log: &Log, cluster: &str, name: &str) -> usize {
    log.lock()
        .iter()
        .filter(|(c, n)| c == cluster && n == name)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_engage_each_member_and_a_deleted_secret_disengages_it() {
    let servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    eventually("three members engaged", || {
        running.fleet.clusters().len() == 3
    })
    .await;
    assert_eq!(
        running.fleet.clusters(),
        ["member-0", "member-1", "member-2"]
    );
    for member in 0..3 {
        create_in(&servers, member, &format!("cm-{member}")).await;
    }
    eventually("each member's object reconciled in that member", || {
        (0..3).all(|m| reconciled(&log, &TestFleet::member_name(m), &format!("cm-{m}")) >= 1)
    })
    .await;
    // Objects are reconciled in their own cluster only.
    assert_eq!(reconciled(&log, "member-0", "cm-1"), 0);

    let secrets = ResourceClient::<Secret>::namespaced(servers.hub().client(), "default");
    secrets
        .delete("member-1-kubeconfig", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("member-1 disengaged", || {
        running.fleet.clusters() == ["member-0", "member-2"]
    })
    .await;
    let before = log.lock().len();
    create_in(&servers, 1, "after-disengage").await;
    create_in(&servers, 0, "still-engaged").await;
    eventually("member-0 still reconciled", || {
        reconciled(&log, "member-0", "still-engaged") == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(reconciled(&log, "member-1", "after-disengage"), 0);
    assert!(log.lock()[before..].iter().all(|(c, _)| c != "member-1"));
    let scrape = running.metrics.encode();
    assert!(
        scrape.contains("multicluster_runtime_engaged_clusters 2"),
        "{scrape}"
    );
    assert!(!scrape.contains("multicluster_runtime_cluster_engaged{cluster=\"member-1\"}"));
    assert!(scrape.contains(
        "multicluster_runtime_reconcile_total{controller=\"copies\",cluster=\"member-0\",result=\"success\"}"
    ), "{scrape}");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_credentials_re_engage_the_member() {
    let servers = TestFleet::start(2).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    eventually("two members engaged", || {
        running.fleet.clusters().len() == 2
    })
    .await;
    create_in(&servers, 0, "kept").await;
    eventually("reconciled once", || {
        reconciled(&log, "member-0", "kept") == 1
    })
    .await;
    let first = running.fleet.cluster("member-0").unwrap();

    // New credentials for the same server: the Secret's content changes.
    let secrets = ResourceClient::<Secret>::namespaced(servers.hub().client(), "default");
    let mut secret = secrets
        .get("member-0-kubeconfig", &Default::default())
        .await
        .unwrap();
    let rotated = format!(
        "{}# rotated\n",
        servers.member(0).unwrap().kubeconfig_yaml()
    );
    secret.data = kubeconfig_secret("member-0", "default", &rotated).data;
    secrets
        .update(&secret, &UpdateOptions::default())
        .await
        .unwrap();

    // Re-engaged: new informers list the object again, so it is reconciled again unchanged.
    eventually("re-engaged and reconciled again", || {
        reconciled(&log, "member-0", "kept") == 2
    })
    .await;
    let second = running.fleet.cluster("member-0").unwrap();
    assert!(
        first
            .factory()
            .informer::<ConfigMap>()
            .add_event_handler(kubegen_cache::HandlerFns::<ConfigMap>::new())
            .is_err(),
        "the old engagement's informers are shut down"
    );
    assert!(second.factory().informer::<ConfigMap>().has_synced());
    // The other member was not touched.
    assert_eq!(running.fleet.clusters(), ["member-0", "member-1"]);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_stops_answering_is_isolated_and_reported() {
    let mut servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    eventually("all members ready", || {
        running.manager_health.readiness_detail()
            == [
                "[+]cluster/member-0 ok",
                "[+]cluster/member-1 ok",
                "[+]cluster/member-2 ok",
            ]
    })
    .await;
    servers.stop_member(2);
    eventually("member-2 reported unreachable", || {
        running.manager_health.readiness_detail()[2].starts_with("[-]cluster/member-2 unreachable")
    })
    .await;
    // The manager stays ready for the others, which keep reconciling.
    assert!(running.manager_health.is_ready());
    for member in 0..2 {
        create_in(&servers, member, "while-2-is-down").await;
    }
    eventually("members 0 and 1 reconciled", || {
        reconciled(&log, "member-0", "while-2-is-down") == 1
            && reconciled(&log, "member-1", "while-2-is-down") == 1
    })
    .await;
    let scrape = running.metrics.encode();
    assert!(
        scrape.contains("multicluster_runtime_cluster_ready{cluster=\"member-2\"} 0"),
        "{scrape}"
    );
    assert!(
        scrape.contains("multicluster_runtime_cluster_ready{cluster=\"member-0\"} 1"),
        "{scrape}"
    );
    running.shutdown().await;
}

/// A member killed and started again on the same address with the same data: while it is down
/// `/readyz` and the metrics show it unreachable and the others keep reconciling; once it is
/// back, it turns ready and reconciles again with no manual step (same Secret, same engagement:
/// its informers' watches resume by themselves).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_killed_and_restarted_recovers_without_a_manual_step() {
    let mut servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    let all_ready = [
        "[+]cluster/member-0 ok",
        "[+]cluster/member-1 ok",
        "[+]cluster/member-2 ok",
    ];
    eventually("all members ready", || {
        running.manager_health.readiness_detail() == all_ready
    })
    .await;
    create_in(&servers, 2, "before-the-crash").await;
    eventually("member-2 reconciled before the crash", || {
        reconciled(&log, "member-2", "before-the-crash") == 1
    })
    .await;
    let engaged = running.fleet.cluster("member-2").unwrap();

    servers.stop_member(2);
    eventually("member-2 reported unreachable", || {
        running.manager_health.readiness_detail()[2].starts_with("[-]cluster/member-2 unreachable")
    })
    .await;
    let scrape = running.metrics.encode();
    assert!(
        scrape.contains("multicluster_runtime_cluster_ready{cluster=\"member-2\"} 0"),
        "{scrape}"
    );
    for member in 0..2 {
        create_in(&servers, member, "while-2-is-down").await;
    }
    eventually("members 0 and 1 reconciled while member-2 is down", || {
        reconciled(&log, "member-0", "while-2-is-down") == 1
            && reconciled(&log, "member-1", "while-2-is-down") == 1
    })
    .await;

    servers.restart_member(2).await.unwrap();
    eventually("member-2 ready again", || {
        running.manager_health.readiness_detail() == all_ready
    })
    .await;
    let scrape = running.metrics.encode();
    assert!(
        scrape.contains("multicluster_runtime_cluster_ready{cluster=\"member-2\"} 1"),
        "{scrape}"
    );
    create_in(&servers, 2, "after-the-restart").await;
    eventually("member-2 reconciles again", || {
        reconciled(&log, "member-2", "after-the-restart") == 1
    })
    .await;
    assert!(
        engaged.is_engaged(),
        "the same engagement carried on: nothing re-engaged it by hand"
    );
    assert_eq!(
        reconciled(&log, "member-2", "before-the-crash"),
        1,
        "the restored object kept its resourceVersion: no spurious change after the restart"
    );
    running.shutdown().await;
}

/// Engaging and disengaging a member over and over leaves no task behind: the runtime's count
/// of live tasks comes back to the same number each time the member is out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engage_disengage_cycles_leak_no_tasks() {
    // The servers run on a runtime of their own, so this runtime's count is the fleet's tasks
    // (and its clients' connections): the servers' controller-manager, connections and watches
    // come and go on their own schedule.
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let servers = server_runtime.spawn(TestFleet::start(2)).await.unwrap();
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    eventually("two members engaged", || {
        running.fleet.clusters().len() == 2
    })
    .await;
    let secrets = ResourceClient::<Secret>::namespaced(servers.hub().client(), "default");
    let metrics = tokio::runtime::Handle::current().metrics();
    let mut baseline = None;
    for _ in 0..4 {
        secrets
            .delete("member-1-kubeconfig", &DeleteOptions::default())
            .await
            .unwrap();
        eventually("member-1 disengaged", || {
            running.fleet.clusters() == ["member-0"]
        })
        .await;
        match baseline {
            // The first time out: wait until teardown (drain, informer shutdown, closed
            // connections) has settled, and remember the count.
            None => {
                let mut last = metrics.num_alive_tasks();
                loop {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let now = metrics.num_alive_tasks();
                    if now == last {
                        break;
                    }
                    last = now;
                }
                baseline = Some(last);
            }
            // Every later time out, the count comes back to it.
            Some(baseline) => {
                eventually("live tasks back to the baseline", || {
                    metrics.num_alive_tasks() <= baseline
                })
                .await;
            }
        }
        let secret = servers.kubeconfig_secret(1, "default").unwrap();
        secrets
            .create(&secret, &CreateOptions::default())
            .await
            .unwrap();
        eventually("member-1 engaged", || running.fleet.clusters().len() == 2).await;
        eventually("member-1 synced", || {
            running
                .fleet
                .cluster("member-1")
                .is_some_and(|c| c.factory().informer::<ConfigMap>().has_synced())
        })
        .await;
        // While engaged, member-1 runs tasks of its own.
        assert!(metrics.num_alive_tasks() > baseline.unwrap_or_default());
    }
    running.shutdown().await;
    drop(servers);
    server_runtime.shutdown_background();
}

/// Cross-cluster watches, member to hub: an object in a member enqueues a hub controller's key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_objects_enqueue_a_hub_controller() {
    let servers = TestFleet::start(2).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let hub_cms = ResourceClient::<ConfigMap>::namespaced(servers.hub().client(), "default");
    hub_cms
        .create(&config_map("summary"), &CreateOptions::default())
        .await
        .unwrap();
    let (log, summaries) = (Log::default(), Arc::new(Mutex::new(0)));
    let counted = Arc::clone(&summaries);
    let running = start(&servers, &log, move |manager, fleet| {
        let informer = manager.factory().informer::<ConfigMap>();
        let controller = manager.controller("summary", &informer).build().unwrap();
        fleet.watch_members::<ConfigMap>(controller.queue(), |_cluster, cm: &ConfigMap| {
            let report = cm.metadata.name.as_deref() == Some("report");
            report
                .then(|| ObjectKey::new(Some("default"), "summary"))
                .into_iter()
                .collect()
        });
        manager.add(controller, Summary(counted));
    });
    eventually("hub summary reconciled at start", || *summaries.lock() >= 1).await;
    eventually("members ready", || running.fleet.clusters().len() == 2).await;
    eventually("members synced", || {
        running
            .manager_health
            .readiness_detail()
            .iter()
            .all(|line| line.starts_with("[+]"))
    })
    .await;
    let before = *summaries.lock();
    create_in(&servers, 1, "report").await;
    eventually("the member's object enqueued the hub's summary", || {
        *summaries.lock() > before
    })
    .await;
    running.shutdown().await;
}

struct Summary(Arc<Mutex<usize>>);

impl Reconciler<ConfigMap> for Summary {
    type Error = Never;

    async fn reconcile(&self, _: Arc<ConfigMap>, _: &Context) -> Result<Action, Never> {
        *self.0.lock() += 1;
        Ok(Action::Done)
    }
}

/// Leader election composes: of two managers over one hub, only the leader engages members;
/// when it shuts down (releasing the Lease), the other takes over and engages them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_engages_members() {
    let servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let elected = |identity: &str| {
        let mut election = LeaderElectionConfig::new("default", "fleet-leader", identity);
        election.lease_duration = Duration::from_secs(2);
        election.renew_deadline = Duration::from_millis(1500);
        election.retry_period = Duration::from_millis(200);
        ManagerOptions::default()
            .identity(identity)
            .shutdown_timeout(Duration::from_secs(2))
            .leader_election(Some(election))
    };
    let log = Log::default();
    let a = start_with(&servers, &log, elected("a"), |_, _| {});
    eventually("a leads and engages all", || a.fleet.clusters().len() == 3).await;
    let b = start_with(&servers, &log, elected("b"), |_, _| {});
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(b.fleet.clusters().is_empty(), "a standby engages nothing");
    a.shutdown().await;
    eventually("b takes over and engages all", || {
        b.fleet.clusters().len() == 3
    })
    .await;
    b.shutdown().await;
}

/// Sharding composes: two sharded managers split the members between them by the shard ring,
/// keyed by cluster name; together they engage each member exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_replicas_split_the_members_over_the_ring() {
    let servers = TestFleet::start(6).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let sharded = |identity: &str| {
        let mut ring = ReplicaConfig::new(Ring::new("fleet-ring", "default"), "");
        ring.lease_duration = Duration::from_secs(2);
        ring.renew_deadline = Duration::from_millis(1500);
        ring.retry_period = Duration::from_millis(300);
        ring.assign_period = Duration::from_millis(100);
        ring.namespace = Some("default".to_owned());
        ring.selector = Some("app=fleet-ring".to_owned());
        ring.selection = Selection::Labels;
        ManagerOptions::default()
            .identity(identity)
            .shutdown_timeout(Duration::from_secs(2))
            .sharding::<ConfigMap>(Some(ring))
    };
    let log = Log::default();
    let a = start_with(&servers, &log, sharded("a"), |_, _| {});
    let b = start_with(&servers, &log, sharded("b"), |_, _| {});
    let ring = HashRing::new(["a", "b"]);
    let all: Vec<String> = (0..6).map(TestFleet::member_name).collect();
    let want = |me: &str| -> Vec<String> {
        all.iter()
            .filter(|c| ring.owner(c) == Some(me))
            .cloned()
            .collect()
    };
    assert!(
        !want("a").is_empty() && !want("b").is_empty(),
        "the ring splits six names"
    );
    eventually("each replica engages its share of the ring", || {
        a.fleet.clusters() == want("a") && b.fleet.clusters() == want("b")
    })
    .await;
    // b goes: a takes over every member.
    b.shutdown().await;
    eventually("a engages all members", || a.fleet.clusters() == all).await;
    a.shutdown().await;
}

/// The static provider: one kubeconfig file per member, re-read when it changes, disengaged
/// when it goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_files_engage_re_engage_and_disengage() {
    let servers = TestFleet::start(2).await;
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(String, std::path::PathBuf)> = (0..2)
        .map(|i| {
            let path = dir.path().join(format!("member-{i}.kubeconfig"));
            servers.member(i).unwrap().write_kubeconfig(&path).unwrap();
            (TestFleet::member_name(i), path)
        })
        .collect();
    let log = Log::default();
    let provider = KubeconfigFiles::new(files.clone()).poll(Duration::from_millis(50));
    let running = start(&servers, &log, move |_, fleet| fleet.add_provider(provider));
    eventually("both files engaged", || running.fleet.clusters().len() == 2).await;
    create_in(&servers, 0, "from-file").await;
    eventually("reconciled", || {
        reconciled(&log, "member-0", "from-file") == 1
    })
    .await;
    let rotated = format!(
        "{}# rotated\n",
        servers.member(0).unwrap().kubeconfig_yaml()
    );
    std::fs::write(&files[0].1, rotated).unwrap();
    eventually("re-engaged: listed and reconciled again", || {
        reconciled(&log, "member-0", "from-file") == 2
    })
    .await;
    std::fs::remove_file(&files[1].1).unwrap();
    eventually("member-1 disengaged", || {
        running.fleet.clusters() == ["member-0"]
    })
    .await;
    running.shutdown().await;
}

/// Writes the hub's `policy` ConfigMap's `v` into each member's `copy`, recording
/// (cluster, version written, whether the cluster was engaged when the reconcile started).
struct CopyPolicy {
    writes: Arc<Mutex<Vec<(String, String, bool)>>>,
}

impl FleetReconciler<ConfigMap> for CopyPolicy {
    type Error = kubegen_client::Error;

    async fn reconcile(
        &self,
        policy: Arc<ConfigMap>,
        request: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        let engaged = request.cluster().is_engaged();
        let version = policy
            .data
            .as_ref()
            .and_then(|d| d.get("v"))
            .cloned()
            .unwrap_or_default();
        let copies =
            ResourceClient::<ConfigMap>::namespaced(request.cluster().client().clone(), "default");
        let mut copy = config_map("copy");
        copy.data = Some([("v".to_owned(), version.clone())].into());
        match copies.get("copy", &Default::default()).await {
            Ok(mut current) => {
                if current.data == copy.data {
                    return Ok(Action::Done);
                }
                current.data = copy.data;
                copies.update(&current, &UpdateOptions::default()).await?;
            }
            Err(error) if error.is_not_found() => {
                copies.create(&copy, &CreateOptions::default()).await?;
            }
            Err(error) => return Err(error),
        }
        self.writes
            .lock()
            .push((request.cluster_name().to_owned(), version, engaged));
        Ok(Action::Done)
    }
}

/// Chaos: members' Secrets are deleted and re-created at random while the hub's policy changes.
/// At the end every engaged member holds the last version, a member left out holds what it had
/// when it went and gets no write after, and no reconcile ever started on a disengaged cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_appear_and_vanish_at_random_while_the_policy_changes() {
    const MEMBERS: usize = 5;
    let servers = TestFleet::start(MEMBERS).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let hub_cms = ResourceClient::<ConfigMap>::namespaced(servers.hub().client(), "default");
    let mut policy = config_map("policy");
    policy.data = Some([("v".to_owned(), "0".to_owned())].into());
    hub_cms
        .create(&policy, &CreateOptions::default())
        .await
        .unwrap();
    let writes = Arc::new(Mutex::new(Vec::new()));
    let copy = CopyPolicy {
        writes: Arc::clone(&writes),
    };
    let running = start(&servers, &Log::default(), move |_, fleet| {
        fleet.add_controller(
            "copy",
            |cluster| cluster.controller("copy", &cluster.hub().informer::<ConfigMap>()),
            copy,
        );
    });
    let secrets = ResourceClient::<Secret>::namespaced(servers.hub().client(), "default");
    let mut present = [true; MEMBERS];
    // A fixed linear congruential sequence: random enough, the same every run.
    let mut seed: u64 = 0x5eed;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize
    };
    let mut version = 0;
    for _ in 0..40 {
        let member = next() % MEMBERS;
        let name = format!("member-{member}-kubeconfig");
        match next() % 3 {
            0 if present[member] => {
                secrets
                    .delete(&name, &DeleteOptions::default())
                    .await
                    .unwrap();
                present[member] = false;
            }
            0 | 1 if !present[member] => {
                let secret = servers.kubeconfig_secret(member, "default").unwrap();
                secrets
                    .create(&secret, &CreateOptions::default())
                    .await
                    .unwrap();
                present[member] = true;
            }
            _ => {
                version += 1;
                let mut current = hub_cms.get("policy", &Default::default()).await.unwrap();
                current.data = Some([("v".to_owned(), version.to_string())].into());
                hub_cms
                    .update(&current, &UpdateOptions::default())
                    .await
                    .unwrap();
            }
        }
        tokio::time::sleep(Duration::from_millis(10 + (next() % 40) as u64)).await;
    }
    let expected: Vec<String> = (0..MEMBERS)
        .filter(|m| present[*m])
        .map(TestFleet::member_name)
        .collect();
    eventually("the fleet follows the Secrets", || {
        running.fleet.clusters() == expected
    })
    .await;
    let last = version.to_string();
    for member in (0..MEMBERS).filter(|m| present[*m]) {
        let copies = ResourceClient::<ConfigMap>::namespaced(
            servers.member(member).unwrap().client(),
            "default",
        );
        let mut converged = false;
        for _ in 0..500 {
            let copy = copies.get("copy", &Default::default()).await;
            if copy
                .ok()
                .and_then(|c| c.data)
                .and_then(|d| d.get("v").cloned())
                == Some(last.clone())
            {
                converged = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(converged, "member-{member} did not converge on v={last}");
    }
    let absent: Vec<String> = (0..MEMBERS)
        .filter(|m| !present[*m])
        .map(TestFleet::member_name)
        .collect();
    let count_absent = || {
        writes
            .lock()
            .iter()
            .filter(|(c, _, _)| absent.contains(c))
            .count()
    };
    let before = count_absent();
    let mut current = hub_cms.get("policy", &Default::default()).await.unwrap();
    current.data = Some([("v".to_owned(), "final".to_owned())].into());
    hub_cms
        .update(&current, &UpdateOptions::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count_absent(), before, "a member left out got a write");
    let written = writes.lock().clone();
    assert!(
        written.iter().all(|(_, _, engaged)| *engaged),
        "a reconcile started on a disengaged cluster"
    );
    assert!(
        written.len() > MEMBERS,
        "the scenario wrote: {}",
        written.len()
    );
    running.shutdown().await;
}

/// A member that hangs (every request to it answered 30 s late) delays no other member: their
/// objects are reconciled within seconds while its own requests wait, and it shows unreachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_member_delays_no_other_member() {
    let servers = TestFleet::start(3).await;
    servers.install_kubeconfig_secrets("default").await.unwrap();
    let log = Log::default();
    let running = start(&servers, &log, |_, _| {});
    eventually("all members ready", || {
        running
            .manager_health
            .readiness_detail()
            .iter()
            .all(|line| line.starts_with("[+]"))
            && running.fleet.clusters().len() == 3
    })
    .await;
    let hanging = servers.member(2).unwrap();
    hanging.faults().set_latency(Duration::from_secs(30));
    // A write to the hanging member, in flight on its own task.
    let stuck = {
        let client = ResourceClient::<ConfigMap>::namespaced(hanging.client(), "default");
        tokio::spawn(async move {
            client
                .create(&config_map("stuck"), &CreateOptions::default())
                .await
        })
    };
    let started = std::time::Instant::now();
    for member in 0..2 {
        create_in(&servers, member, "beside-a-hang").await;
    }
    eventually("members 0 and 1 reconciled", || {
        reconciled(&log, "member-0", "beside-a-hang") == 1
            && reconciled(&log, "member-1", "beside-a-hang") == 1
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    eventually("member-2 reported unreachable", || {
        running.manager_health.readiness_detail()[2].starts_with("[-]cluster/member-2 unreachable")
    })
    .await;
    stuck.abort();
    hanging.faults().clear();
    running.shutdown().await;
}

/// A minimal `ClusterProfile` CRD (cluster-inventory-api's `multicluster.x-k8s.io/v1alpha1`,
/// namespaced, with the status subresource); its fields are kept as written.
const CLUSTER_PROFILE_CRD: &str = r"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterprofiles.multicluster.x-k8s.io
spec:
  group: multicluster.x-k8s.io
  scope: Namespaced
  names: {plural: clusterprofiles, singular: clusterprofile, kind: ClusterProfile, listKind: ClusterProfileList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

/// The members' required token; the exec plugin hands it out.
const MEMBER_TOKEN: &str = "fleet-token";

/// An exec credential plugin that answers with its last argument as the token, and the
/// consumer's provider file naming it for the access provider `token-plugin`, which appends the
/// profile's additional arguments (KEP-5339), so the token comes from each profile.
fn token_plugin(dir: &std::path::Path) -> AccessConfig {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("token-plugin");
    let body = "#!/bin/sh\nfor last in \"$@\"; do :; done\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' \"$last\"\n";
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    serde_json::from_value(serde_json::json!({"providers": [{
        "name": "token-plugin",
        "execConfig": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": script,
            "args": ["--token"],
        },
        "profileSourcedCLIArgsPolicy": "Append",
    }]}))
    .unwrap()
}

/// The status a cluster manager writes for a member at `server`: `health` and an access
/// provider whose extension hands the plugin `token`; `rotation` goes into the exec extension.
fn profile_status(server: &str, health: &str, token: &str, rotation: u32) -> serde_json::Value {
    serde_json::json!({
        "conditions": [{"type": "ControlPlaneHealthy", "status": health, "reason": "Probed",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "accessProviders": [{"name": "token-plugin", "cluster": {
            "server": server,
            "extensions": [
                {"name": "clusterprofiles.multicluster.x-k8s.io/exec/additional-args", "extension": [token]},
                {"name": "client.authentication.k8s.io/exec", "extension": {"rotation": rotation}},
            ],
        }}],
    })
}

/// Writes the status of the hub's profile `name`, creating the profile first if needed.
async fn set_profile(hub: &kubegen_client::Client, name: &str, status: serde_json::Value) {
    let profiles = ResourceClient::<ClusterProfile>::namespaced(hub.clone(), "default");
    let current = match profiles.get(name, &Default::default()).await {
        Ok(current) => current,
        Err(_) => {
            let fresh: ClusterProfile = serde_json::from_value(serde_json::json!({
                "apiVersion": "multicluster.x-k8s.io/v1alpha1",
                "kind": "ClusterProfile",
                "metadata": {"name": name, "namespace": "default",
                             "labels": {"x-k8s.io/cluster-manager": "test"}},
                "spec": {"clusterManager": {"name": "test"}},
            }))
            .unwrap();
            profiles
                .create(&fresh, &CreateOptions::default())
                .await
                .unwrap()
        }
    };
    // The provider's view keeps only the status fields it reads; enough for this server.
    let mut updated = current;
    updated.status = Some(serde_json::from_value(status).unwrap());
    profiles
        .update_status(&updated, &UpdateOptions::default())
        .await
        .unwrap();
}

/// The SIG-Multicluster inventory as a source of clusters: ClusterProfiles in the hub, each
/// member's credentials from an exec plugin the consumer configures (the members require a
/// token). A healthy profile engages its member, an unhealthy one disengages it, changed access
/// data re-engages it, a deleted profile disengages it for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_profiles_engage_healthy_members_through_their_access_provider() {
    let mut member_options = kubegen_testserver::ServerOptions::default();
    member_options.bearer_token = Some(MEMBER_TOKEN.to_owned());
    member_options.controller_manager = false;
    let servers = TestFleet::start_with(2, member_options).await;
    let hub = servers.hub().client();
    kubegen_runtime::crds::install(&hub, CLUSTER_PROFILE_CRD)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = |index: usize| servers.member(index).unwrap().url();
    set_profile(&hub, "m0", profile_status(&url(0), "True", MEMBER_TOKEN, 1)).await;
    set_profile(&hub, "m1", profile_status(&url(1), "True", MEMBER_TOKEN, 1)).await;
    // Not engaged: unhealthy from the start.
    set_profile(
        &hub,
        "m2",
        profile_status(&url(1), "Unknown", MEMBER_TOKEN, 1),
    )
    .await;

    let options = ClusterProfileOptions::new(token_plugin(dir.path()))
        .namespace("default")
        .label_selector("x-k8s.io/cluster-manager=test");
    let provider = ClusterProfiles::new(hub.clone(), options);
    let log = Log::default();
    let options = ManagerOptions::default().shutdown_timeout(Duration::from_secs(2));
    let running = start_over(&servers, &log, options, provider, |_, _| {});
    eventually("the healthy profiles' members engaged", || {
        running.fleet.clusters() == ["default/m0", "default/m1"]
    })
    .await;
    // Reconciling reads through the member's client: the plugin's token got it in.
    for member in 0..2 {
        create_in(&servers, member, "through-the-plugin").await;
    }
    eventually(
        "each member reconciled with the plugin's credentials",
        || {
            reconciled(&log, "default/m0", "through-the-plugin") == 1
                && reconciled(&log, "default/m1", "through-the-plugin") == 1
        },
    )
    .await;

    // The cluster manager finds m1's control plane unhealthy: disengaged.
    set_profile(
        &hub,
        "m1",
        profile_status(&url(1), "False", MEMBER_TOKEN, 1),
    )
    .await;
    eventually("m1 disengaged", || {
        running.fleet.clusters() == ["default/m0"]
    })
    .await;

    // m0's access data changes (rotation): re-engaged, its caches list the object again.
    let first = running.fleet.cluster("default/m0").unwrap();
    set_profile(&hub, "m0", profile_status(&url(0), "True", MEMBER_TOKEN, 2)).await;
    eventually("m0 re-engaged and reconciled again", || {
        reconciled(&log, "default/m0", "through-the-plugin") == 2
    })
    .await;
    assert!(!first.is_engaged(), "the old engagement ended");

    // m1 healthy again: engaged again.
    set_profile(&hub, "m1", profile_status(&url(1), "True", MEMBER_TOKEN, 1)).await;
    eventually("m1 engaged again", || {
        running.fleet.clusters() == ["default/m0", "default/m1"]
    })
    .await;

    // m0's profile deleted: disengaged; no reconcile of it after that.
    let profiles = ResourceClient::<ClusterProfile>::namespaced(hub.clone(), "default");
    profiles
        .delete("m0", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("m0 disengaged", || {
        running.fleet.clusters() == ["default/m1"]
    })
    .await;
    let before = reconciled(&log, "default/m0", "after-the-profile-went");
    create_in(&servers, 0, "after-the-profile-went").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        reconciled(&log, "default/m0", "after-the-profile-went"),
        before
    );
    running.shutdown().await;
}
