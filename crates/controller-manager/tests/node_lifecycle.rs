//! The node-lifecycle and taint-eviction controllers with simulated Nodes: on the in-process test
//! server with short grace periods, and in the `_on_cluster` twins (ignored unless
//! `KUBEGEN_E2E_KUBECONFIG` is set) on a real v1.36 cluster whose kube-controller-manager runs
//! both controllers with their real periods (a silent Node goes `Unknown` after 50 s). Each
//! scenario prints what it saw (conditions, taints, Events, the evicted Pod) in one shape on
//! both, so that the two can be set side by side.

#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Namespace, Node, Pod};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient,
};
use kubegen_controller_manager::{
    ControllerManager, ControllerManagerOptions, NodeLifecycleOptions,
};
use kubegen_nodesim::{NodeSimOptions, NodeSimulator};
use kubegen_testserver::TestServer;
use serde_json::json;
use tokio::sync::oneshot;

/// Polls `check` every 100 ms until it returns `Some`, for at most `limit`.
async fn wait_for<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Where a scenario runs.
#[derive(Clone)]
struct Env {
    client: Client,
    ns: String,
    /// Pool label and zone of the scenario's Nodes; Pods select the pool.
    pool: String,
    /// The name prefixes of the simulator that dies (one Node) and of the one that lives (two).
    dying: String,
    living: String,
    scheduler: String,
    /// How long a silent Node may take to go `Unknown` (grace period plus monitor period).
    grace: Duration,
}

impl Env {
    fn dying_node(&self) -> String {
        format!("{}0", self.dying)
    }

    fn nodes(&self) -> ResourceClient<Node> {
        ResourceClient::cluster(self.client.clone())
    }

    fn pods(&self) -> ResourceClient<Pod> {
        ResourceClient::namespaced(self.client.clone(), &self.ns)
    }
}

/// A running simulator and the way to stop it.
struct Running {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<kubegen_nodesim::Result<()>>,
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

/// Starts a simulator of `count` Nodes named `<prefix>0..`, in the scenario's pool and zone,
/// renewing Leases every 500 ms; only a scheduling one runs the scheduler.
fn simulate(env: &Env, prefix: &str, count: usize, scheduling: bool) -> Running {
    let options = NodeSimOptions::default()
        .nodes(count)
        .name_prefix(prefix)
        .capacity("4", "16Gi", 110)
        .label("nodesim.kubegen.io/pool", env.pool.clone())
        .label("topology.kubernetes.io/zone", env.pool.clone())
        .scheduler(scheduling)
        .scheduler_name(env.scheduler.clone())
        .lease_renew_interval(Duration::from_millis(500))
        .status_report_interval(Duration::from_secs(20));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(NodeSimulator::new(env.client.clone(), options).run(async {
        let _ = stopped.await;
    }));
    Running { stop, task }
}

fn condition<'a>(
    node: &'a Node,
    type_: &str,
) -> Option<&'a k8s_openapi::api::core::v1::NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

fn taints(node: &Node) -> Vec<(String, String, bool)> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|t| (t.key, t.effect, t.time_added.is_some()))
        .collect()
}

fn has_taint(node: &Node, key: &str, effect: &str) -> bool {
    taints(node).iter().any(|(k, e, _)| k == key && e == effect)
}

async fn node(env: &Env, name: &str) -> Option<Node> {
    env.nodes().get(name, &GetOptions::default()).await.ok()
}

/// Sets `spec.unschedulable` of Node `name`.
async fn cordon(env: &Env, name: &str, on: bool) {
    let patch = Patch::Merge(json!({"spec": {"unschedulable": on}}));
    env.nodes()
        .patch(name, &patch, &PatchOptions::default())
        .await
        .unwrap();
}

/// Tolerations of the `unreachable` and `not-ready` `NoExecute` taints for `seconds` (or
/// forever).
fn tolerations(seconds: Option<i64>) -> serde_json::Value {
    let toleration = |key: &str| {
        let mut t = json!({"key": key, "operator": "Exists", "effect": "NoExecute"});
        if let Some(s) = seconds {
            t["tolerationSeconds"] = json!(s);
        }
        t
    };
    json!([
        toleration("node.kubernetes.io/unreachable"),
        toleration("node.kubernetes.io/not-ready")
    ])
}

fn pod_spec(env: &Env, seconds: Option<i64>) -> serde_json::Value {
    json!({
        "schedulerName": env.scheduler,
        "nodeSelector": {"nodesim.kubegen.io/pool": env.pool},
        "tolerations": tolerations(seconds),
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "3600"]}],
    })
}

fn running_on(pod: &Pod) -> Option<String> {
    let status = pod.status.as_ref()?;
    (status.phase.as_deref() == Some("Running") && pod.metadata.deletion_timestamp.is_none())
        .then(|| pod.spec.as_ref()?.node_name.clone())
        .flatten()
}

/// `(type, reason, message, source component)` of the Events about `kind/name` in `ns`.
async fn events(
    env: &Env,
    ns: &str,
    kind: &str,
    name: &str,
) -> Vec<(String, String, String, String)> {
    let list = kubegen_e2e_support::list_in::<Event>(&env.client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .filter(|e| {
            e.involved_object.kind.as_deref() == Some(kind)
                && e.involved_object.name.as_deref() == Some(name)
        })
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.message.unwrap_or_default(),
                e.source.and_then(|s| s.component).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The whole scenario: two living Nodes and a dying one; a Deployment's Pod (tolerating
/// `unreachable` for 2 s) and a patient Pod (tolerating it forever) on the dying one; its
/// simulator stops; its conditions go `Unknown`, its taints appear, the Deployment's Pod is
/// evicted and replaced on a living Node, the patient Pod stays (not ready); the simulator comes
/// back and the taints go.
async fn node_dies_and_comes_back(env: Env) {
    let living = simulate(&env, &env.living, 2, true);
    // Moved into the scenario, which stops it; a panic drops it, which stops it too.
    let dying = simulate(&env, &env.dying, 1, false);
    let dead = env.dying_node();
    let all = [
        format!("{}0", env.living),
        format!("{}1", env.living),
        dead.clone(),
    ];
    let outcome = tokio::spawn({
        let env = env.clone();
        let all = all.clone();
        async move {
            // Registered Nodes lose the not-ready taint admission gave them once Ready.
            for name in &all {
                wait_for("the node to be ready and untainted", Duration::from_secs(60), || async {
                    let n = node(&env, name).await?;
                    let ready = condition(&n, "Ready")?.status == "True";
                    (ready && !has_taint(&n, "node.kubernetes.io/not-ready", "NoSchedule")).then_some(())
                })
                .await;
            }
            // Only the dying Node takes Pods: the living ones are cordoned, which taints them.
            for name in &all[..2] {
                cordon(&env, name, true).await;
                wait_for("the unschedulable taint", Duration::from_secs(30), || async {
                    let n = node(&env, name).await?;
                    has_taint(&n, "node.kubernetes.io/unschedulable", "NoSchedule").then_some(())
                })
                .await;
            }
            let deployment: Deployment = serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec(&env, Some(2))},
                },
            }))
            .unwrap();
            ResourceClient::<Deployment>::namespaced(env.client.clone(), &env.ns)
                .create(&deployment, &CreateOptions::default())
                .await
                .unwrap();
            let patient: Pod = serde_json::from_value(json!({
                "metadata": {"name": "patient"},
                "spec": pod_spec(&env, None),
            }))
            .unwrap();
            env.pods().create(&patient, &CreateOptions::default()).await.unwrap();
            let slow: Pod = serde_json::from_value(json!({
                "metadata": {"name": "slow"},
                "spec": pod_spec(&env, Some(600)),
            }))
            .unwrap();
            env.pods().create(&slow, &CreateOptions::default()).await.unwrap();
            let web = wait_for("web's pod to run on the dying node", Duration::from_secs(60), || async {
                let list = env.pods().list(&ListOptions::default().labels("app=web")).await.ok()?;
                let pod = list.into_iter().next()?;
                (running_on(&pod)? == dead).then(|| pod.metadata.name.clone().unwrap())
            })
            .await;
            for name in ["patient", "slow"] {
                wait_for("the tolerant pods to run", Duration::from_secs(60), || async {
                    let pod = env.pods().get(name, &GetOptions::default()).await.ok()?;
                    (running_on(&pod)? == dead).then_some(())
                })
                .await;
            }
            for name in &all[..2] {
                cordon(&env, name, false).await;
            }

            let stopped_at = Instant::now();
            let before = node(&env, &dead).await.unwrap();
            let heartbeat = condition(&before, "Ready").unwrap().last_heartbeat_time.clone();
            dying.stop().await;
            let unknown = wait_for("the node to go Unknown", env.grace, || async {
                let n = node(&env, &dead).await?;
                (condition(&n, "Ready")?.status == "Unknown").then_some(n)
            })
            .await;
            let to_unknown = stopped_at.elapsed();
            for type_ in ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] {
                let c = condition(&unknown, type_).unwrap();
                println!(
                    "condition {type_}: {} {:?} {:?} heartbeat kept: {}",
                    c.status,
                    c.reason,
                    c.message,
                    c.last_heartbeat_time == heartbeat || type_ != "Ready"
                );
                assert_eq!(c.status, "Unknown", "{type_}");
                assert_eq!(c.reason.as_deref(), Some("NodeStatusUnknown"), "{type_}");
                assert_eq!(c.message.as_deref(), Some("Kubelet stopped posting node status."));
            }
            assert_eq!(condition(&unknown, "Ready").unwrap().last_heartbeat_time, heartbeat);
            // Both taints, in either order: the NoSchedule pass and the NoExecute pass run apart.
            let tainted = wait_for("the unreachable taints", Duration::from_secs(30), || async {
                let n = node(&env, &dead).await?;
                (has_taint(&n, "node.kubernetes.io/unreachable", "NoExecute")
                    && has_taint(&n, "node.kubernetes.io/unreachable", "NoSchedule"))
                .then_some(n)
            })
            .await;
            let to_taint = stopped_at.elapsed();
            println!(
                "dead node conditions: {}\ndead node taints: {}",
                serde_json::to_string(&tainted.status.as_ref().unwrap().conditions).unwrap(),
                serde_json::to_string(&tainted.spec.as_ref().unwrap().taints).unwrap()
            );
            assert!(taints(&tainted).contains(&("node.kubernetes.io/unreachable".into(), "NoExecute".into(), true)));
            assert!(has_taint(&tainted, "node.kubernetes.io/unreachable", "NoSchedule"));
            assert!(!has_taint(&tainted, "node.kubernetes.io/not-ready", "NoExecute"));

            let evicted = wait_for("web's pod to be evicted", Duration::from_secs(30), || async {
                let pod = env.pods().get(&web, &GetOptions::default()).await.ok()?;
                pod.metadata.deletion_timestamp.is_some().then_some(pod)
            })
            .await;
            let to_eviction = stopped_at.elapsed();
            let conditions = evicted.status.as_ref().unwrap().conditions.clone().unwrap_or_default();
            for c in &conditions {
                println!("evicted pod condition {}: {} {:?} {:?} observedGeneration {:?}", c.type_, c.status, c.reason, c.message, serde_json::to_value(c).unwrap().get("observedGeneration"));
            }
            println!("evicted pod phase {:?}, grace {:?}", evicted.status.as_ref().unwrap().phase, evicted.metadata.deletion_grace_period_seconds);
            let disruption = conditions.iter().find(|c| c.type_ == "DisruptionTarget").unwrap();
            assert_eq!(disruption.status, "True");
            assert_eq!(disruption.reason.as_deref(), Some("DeletionByTaintManager"));
            assert_eq!(disruption.message.as_deref(), Some("Taint manager: deleting due to NoExecute taint"));
            let ready = conditions.iter().find(|c| c.type_ == "Ready").unwrap();
            assert_eq!(ready.status, "False", "marked not ready when the node went Unknown");

            let replacement = wait_for("a replacement pod on a living node", Duration::from_secs(60), || async {
                let list = env.pods().list(&ListOptions::default().labels("app=web")).await.ok()?;
                list.into_iter().find_map(|p| running_on(&p).filter(|n| *n != dead))
            })
            .await;
            println!("replacement runs on {replacement}");
            let patient = env.pods().get("patient", &GetOptions::default()).await.unwrap();
            assert!(patient.metadata.deletion_timestamp.is_none(), "tolerates forever");
            let patient_ready = patient.status.unwrap().conditions.unwrap().into_iter().find(|c| c.type_ == "Ready").unwrap();
            assert_eq!(patient_ready.status, "False");

            let raw = kubegen_e2e_support::list_in::<Event>(&env.client, "default").await;
            for e in raw.iter().filter(|e| e.involved_object.name.as_deref() == Some(dead.as_str())) {
                println!(
                    "node event {:?}: involvedObject {} reporting {:?}/{:?} source {:?}",
                    e.reason,
                    serde_json::to_string(&e.involved_object).unwrap(),
                    e.reporting_component,
                    e.reporting_instance,
                    e.source
                );
            }
            let node_events = events(&env, "default", "Node", &dead).await;
            println!("node events: {node_events:#?}");
            assert!(node_events.contains(&(
                "Normal".into(),
                "NodeNotReady".into(),
                format!("Node {dead} status is now: NodeNotReady"),
                "node-controller".into()
            )));
            assert!(node_events.contains(&(
                "Normal".into(),
                "RegisteredNode".into(),
                format!("Node {dead} event: Registered Node {dead} in Controller"),
                "node-controller".into()
            )));
            let web_events = events(&env, &env.ns, "Pod", &web).await;
            println!("evicted pod events: {web_events:#?}");
            assert!(web_events.contains(&(
                "Normal".into(),
                "TaintManagerEviction".into(),
                format!("Marking for deletion Pod {}/{web}", env.ns),
                "taint-eviction-controller".into()
            )));
            assert!(web_events.contains(&(
                "Warning".into(),
                "NodeNotReady".into(),
                "Node is not ready".into(),
                "node-controller".into()
            )));
            println!("stop -> Unknown {to_unknown:?}, -> NoExecute taint {to_taint:?}, -> eviction {to_eviction:?}");

            // The Node comes back: its taints go, its kubelet finishes the evicted Pod.
            let back = simulate(&env, &env.dying, 1, false);
            let healed = wait_for("the node to be ready and untainted again", env.grace, || async {
                let n = node(&env, &dead).await?;
                let ready = condition(&n, "Ready")?.status == "True";
                (ready && taints(&n).is_empty()).then_some(n)
            })
            .await;
            println!("after coming back: taints {:?}", taints(&healed));
            // The slow Pod's planned deletion (600 s) is cancelled with the taint.
            let cancelled = (
                "Normal".to_owned(),
                "TaintManagerEviction".to_owned(),
                format!("Cancelling deletion of Pod {}/slow", env.ns),
                "taint-eviction-controller".to_owned(),
            );
            let slow_events = wait_for("the cancelled eviction", Duration::from_secs(30), || async {
                let found = events(&env, &env.ns, "Pod", "slow").await;
                found.contains(&cancelled).then_some(found)
            })
            .await;
            println!("slow pod events: {slow_events:#?}");
            let slow = env.pods().get("slow", &GetOptions::default()).await.unwrap();
            assert!(slow.metadata.deletion_timestamp.is_none());
            wait_for("the evicted pod to be gone", Duration::from_secs(60), || async {
                env.pods().get(&web, &GetOptions::default()).await.is_err().then_some(())
            })
            .await;
            back
        }
    })
    .await;
    // The Pods go with the namespace while the kubelets still run to finish them; after a
    // failure they are force-deleted, as a kubelet may be gone.
    let (back, failure) = match outcome {
        Ok(back) => (Some(back), None),
        Err(failure) => (None, Some(failure)),
    };
    delete_namespace_and_wait(&env, failure.is_some()).await;
    living.stop().await;
    if let Some(back) = back {
        back.stop().await;
    }
    delete_nodes(&env, &all).await;
    if let Some(failure) = failure {
        std::panic::resume_unwind(failure.into_panic());
    }
}

async fn delete_nodes(env: &Env, names: &[String]) {
    for name in names {
        let _ = env.nodes().delete(name, &DeleteOptions::default()).await;
    }
}

async fn delete_namespace_and_wait(env: &Env, force: bool) {
    if force {
        let pods = env.pods();
        let options = DeleteOptions::default().grace_period_seconds(0);
        for pod in pods
            .list(&ListOptions::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default()
        {
            let _ = pods
                .delete(pod.metadata.name.as_deref().unwrap_or_default(), &options)
                .await;
        }
    }
    let namespaces = ResourceClient::<Namespace>::cluster(env.client.clone());
    let _ = namespaces.delete(&env.ns, &DeleteOptions::default()).await;
    wait_for(
        "the namespace to be gone",
        Duration::from_secs(90),
        || async {
            namespaces
                .get(&env.ns, &GetOptions::default())
                .await
                .is_err()
                .then_some(())
        },
    )
    .await;
}

async fn create_namespace(client: &Client, name: &str) -> String {
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let mut namespace = Namespace::default();
    namespace.metadata.generate_name = Some(name.to_owned());
    namespaces
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap()
        .metadata
        .name
        .unwrap()
}

/// Short periods for the test server: a silent Node is `Unknown` after 3 s.
fn short_periods() -> NodeLifecycleOptions {
    NodeLifecycleOptions {
        monitor_period: Duration::from_millis(500),
        monitor_grace_period: Duration::from_secs(3),
        startup_grace_period: Duration::from_secs(4),
        ..NodeLifecycleOptions::default()
    }
}

/// A test server without its own controller-manager, and one with short periods beside it.
async fn server_with_short_periods() -> (TestServer, oneshot::Sender<()>) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let mut options = kubegen_testserver::ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let manager = ControllerManager::new(
        server.client(),
        ControllerManagerOptions::default().node_lifecycle(short_periods()),
    );
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(manager.run(async {
        let _ = stopped.await;
    }));
    (server, stop)
}

fn test_server_env(client: Client, ns: String) -> Env {
    Env {
        client,
        ns,
        pool: "nodelife".into(),
        dying: "nodelife-dying-".into(),
        living: "nodelife-living-".into(),
        scheduler: "default-scheduler".into(),
        grace: Duration::from_secs(20),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_node_goes_unknown_its_pods_are_evicted_and_it_heals() {
    let (server, _manager) = server_with_short_periods().await;
    let client = server.client();
    let ns = create_namespace(&client, "nodelife-").await;
    node_dies_and_comes_back(test_server_env(client, ns)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real v1.36 cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_silent_node_goes_unknown_its_pods_are_evicted_and_it_heals_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    let ns = create_namespace(&client, "nodelife-").await;
    // Node names are loopback addresses, as the API server dials a Node by its hostname.
    let env = Env {
        client,
        ns,
        pool: "nodelife-cluster".into(),
        dying: "127.0.61.2".into(),
        living: "127.0.61.1".into(),
        scheduler: "nodelife-scheduler".into(),
        grace: Duration::from_secs(120),
    };
    node_dies_and_comes_back(env).await;
}

/// A Node created by hand (no kubelet): admission gives it the not-ready `NoSchedule` taint;
/// having no conditions it loses it; past the startup grace period its conditions are added as
/// `Unknown` (`NodeStatusNeverUpdated`) and it is tainted unreachable, `NoExecute` too while
/// another zone has a Ready Node.
async fn a_node_without_kubelet(env: Env, name: &str, startup: Duration) {
    let living = simulate(&env, &env.living, 1, false);
    let outcome = tokio::spawn({
        let env = env.clone();
        let name = name.to_owned();
        async move {
            wait_for("the living node to be ready", Duration::from_secs(60), || async {
                let n = node(&env, &format!("{}0", env.living)).await?;
                (condition(&n, "Ready")?.status == "True").then_some(())
            })
            .await;
            let bare: Node = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": format!("{}-bare", env.pool)}},
            }))
            .unwrap();
            let created = env.nodes().create(&bare, &CreateOptions::default()).await.unwrap();
            println!("taints at creation: {:?}", taints(&created));
            assert_eq!(taints(&created), [("node.kubernetes.io/not-ready".into(), "NoSchedule".into(), false)]);
            wait_for("the not-ready taint to be lifted", Duration::from_secs(30), || async {
                let n = node(&env, &name).await?;
                taints(&n).is_empty().then_some(())
            })
            .await;
            let unknown = wait_for("conditions never updated", startup, || async {
                let n = node(&env, &name).await?;
                (condition(&n, "Ready")?.status == "Unknown").then_some(n)
            })
            .await;
            for type_ in ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] {
                let c = condition(&unknown, type_).unwrap();
                println!("condition {type_}: {} {:?} {:?}", c.status, c.reason, c.message);
                assert_eq!(c.reason.as_deref(), Some("NodeStatusNeverUpdated"));
                assert_eq!(c.message.as_deref(), Some("Kubelet never posted node status."));
                assert_eq!(c.last_heartbeat_time, created.metadata.creation_timestamp);
            }
            assert!(condition(&unknown, "NetworkUnavailable").is_none());
            let tainted = wait_for("the unreachable taints", Duration::from_secs(30), || async {
                let n = node(&env, &name).await?;
                (has_taint(&n, "node.kubernetes.io/unreachable", "NoSchedule")
                    && has_taint(&n, "node.kubernetes.io/unreachable", "NoExecute"))
                .then_some(n)
            })
            .await;
            println!("taints: {:?}", taints(&tainted));
            let node_events = events(&env, "default", "Node", &name).await;
            println!("node events: {node_events:#?}");
            assert!(node_events.iter().any(|e| e.1 == "RegisteredNode"));
            assert!(!node_events.iter().any(|e| e.1 == "NodeNotReady"), "it never was Ready");
            // A deleted Node is noticed at the next health pass.
            env.nodes().delete(&name, &DeleteOptions::default()).await.unwrap();
            let removing = (
                "Normal".to_owned(),
                "RemovingNode".to_owned(),
                format!("Node {name} event: Removing Node {name} from Controller"),
                "node-controller".to_owned(),
            );
            wait_for("the RemovingNode event", Duration::from_secs(30), || async {
                events(&env, "default", "Node", &name).await.contains(&removing).then_some(())
            })
            .await;
        }
    })
    .await;
    living.stop().await;
    let _ = env.nodes().delete(name, &DeleteOptions::default()).await;
    delete_nodes(&env, &[format!("{}0", env.living)]).await;
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_never_reports_status_goes_unknown_after_the_startup_grace() {
    let (server, _manager) = server_with_short_periods().await;
    let env = test_server_env(server.client(), "default".into());
    a_node_without_kubelet(env, "nodelife-bare", Duration::from_secs(15)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real v1.36 cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
async fn a_node_that_never_reports_status_goes_unknown_after_the_startup_grace_on_cluster() {
    let client = kubegen_e2e_support::cluster_client().await;
    let env = Env {
        client,
        ns: "default".into(),
        pool: "nodelife-cluster".into(),
        dying: "127.0.61.2".into(),
        living: "127.0.61.1".into(),
        scheduler: "nodelife-scheduler".into(),
        grace: Duration::from_secs(120),
    };
    // A name not used lately: kube-controller-manager remembers the health of a deleted Node,
    // and one re-created under its name is not given the startup grace again.
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let name = format!("127.0.61.{}", 100 + seconds % 150);
    a_node_without_kubelet(env, &name, Duration::from_secs(120)).await;
}

/// When every zone is fully disrupted (here the only Node is silent), the controller stops
/// tainting `NoExecute`: conditions go `Unknown`, but no Pod is evicted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fully_disrupted_cluster_gets_no_no_execute_taints() {
    let (server, _manager) = server_with_short_periods().await;
    let env = test_server_env(server.client(), "default".into());
    let sim = simulate(&env, &env.dying, 1, false);
    let name = env.dying_node();
    wait_for("the node to be ready", Duration::from_secs(30), || async {
        let n = node(&env, &name).await?;
        (condition(&n, "Ready")?.status == "True").then_some(())
    })
    .await;
    sim.stop().await;
    wait_for(
        "the node to go Unknown",
        Duration::from_secs(20),
        || async {
            let n = node(&env, &name).await?;
            (condition(&n, "Ready")?.status == "Unknown").then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let n = node(&env, &name).await.unwrap();
    assert!(has_taint(
        &n,
        "node.kubernetes.io/unreachable",
        "NoSchedule"
    ));
    assert!(
        !has_taint(&n, "node.kubernetes.io/unreachable", "NoExecute"),
        "{:?}",
        taints(&n)
    );
}
