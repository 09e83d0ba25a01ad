//! The workload controllers (StatefulSet, DaemonSet, Job) with simulated Nodes, on the in-process test server
//! and, in the `_on_cluster` twins (ignored unless `KUBEGEN_E2E_KUBECONFIG` is set), on a real
//! v1.36 cluster with its kube-controller-manager, kubegen's node simulator playing the kubelet
//! there as an external client. A scenario passes on both or the controllers differ.

#![allow(clippy::unwrap_used)]

mod cronjob;
mod daemonset;
mod endpointslices;
mod job;
mod statefulset;

use std::{future::Future, time::Duration};

use k8s_openapi::api::core::v1::{Event, Namespace, Node, PersistentVolumeClaim};
use kubegen_client::{Client, DeleteOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use kubegen_nodesim::{NodeSimOptions, NodeSimulator};
use serde_json::json;

/// Polls `check` until it returns `Some`, for at most 60 s.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..600 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Polls `observe` every 100 ms until it equals `want`, for at most `within`; on a timeout the
/// failure shows what it last saw.
pub async fn eventually_equal<T, F, Fut>(what: &str, within: Duration, want: &T, mut observe: F)
where
    T: PartialEq + std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    let polls = within.as_millis() / 100;
    let mut seen = observe().await;
    for _ in 1..polls {
        if &seen == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen = observe().await;
    }
    assert_eq!(&seen, want, "timed out waiting for {what}");
}

/// Where a scenario runs: its namespace, the prefix of its simulated Nodes, and the scheduler
/// name its Pods ask for (the scenario's own on a shared cluster, so other simulators never
/// bind them).
#[derive(Clone)]
pub struct Sim {
    /// The scenario's namespace.
    pub ns: String,
    /// The prefix of its simulated Nodes' names.
    pub nodes: String,
    /// The `schedulerName` its Pods ask for.
    pub scheduler: String,
}

impl Sim {
    /// The pool label value of its Nodes, which its Pods select.
    pub fn pool(&self) -> &str {
        self.nodes.trim_end_matches('-')
    }
}

const NODES: usize = 2;

fn options(sim: &Sim) -> NodeSimOptions {
    NodeSimOptions::default()
        .scheduler_name(sim.scheduler.clone())
        .nodes(NODES)
        .name_prefix(sim.nodes.as_str())
        .capacity("8", "32Gi", 110)
        .label("nodesim.kubegen.io/pool", sim.pool())
        .lease_renew_interval(Duration::from_millis(500))
        .status_report_interval(Duration::from_millis(1000))
}

/// Runs `body` with a simulator for `sim`; stops it and deletes its Nodes afterwards.
async fn with_simulator<F, Fut>(client: Client, sim: &Sim, body: F)
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let simulator = NodeSimulator::new(client.clone(), options(sim));
    let running = tokio::spawn(simulator.run(async {
        let _ = stopped.await;
    }));
    let outcome = tokio::spawn(body(client.clone())).await;
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    let nodes = ResourceClient::<Node>::cluster(client);
    for i in 0..NODES {
        let name = format!("{}{i}", sim.nodes);
        let _ = nodes.delete(&name, &DeleteOptions::default()).await;
    }
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
}

/// Runs `scenario` in namespace `default` of a fresh test server (its controller-manager on,
/// as by default) with simulated Nodes beside it.
pub async fn on_test_server<F, Fut>(scenario: F)
where
    F: FnOnce(Client, Sim) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let server = kubegen_testserver::TestServer::start().await;
    let sim = Sim {
        ns: "default".into(),
        nodes: "workloads-node-".into(),
        scheduler: "default-scheduler".into(),
    };
    let inner = sim.clone();
    with_simulator(server.client(), &sim, move |client| scenario(client, inner)).await;
}

/// Runs `scenario` on the cluster `KUBEGEN_E2E_KUBECONFIG` names, with its own simulated Nodes
/// and a `workloads-` namespace. The simulator runs until the namespace is gone: only its
/// kubelet finishes the deletion of Pods bound to its Nodes.
pub async fn on_cluster<F, Fut>(name: &str, scenario: F)
where
    F: FnOnce(Client, Sim) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let client = kubegen_e2e_support::cluster_client().await;
    let prefix = format!("workloads-{}-", name.replace('_', "-"));
    let sim = Sim {
        ns: String::new(),
        nodes: format!("workloads-node-{}-", name.replace('_', "-")),
        scheduler: format!("{prefix}scheduler"),
    };
    let outer = sim.clone();
    with_simulator(client, &outer, |client| async move {
        let names: Vec<String> = (0..NODES).map(|i| format!("{}{i}", sim.nodes)).collect();
        kubegen_e2e_support::nodes_schedulable(&client, &names).await;
        let (scratch, scratch_prefix) = (client.clone(), prefix.clone());
        let run = async move {
            kubegen_e2e_support::in_scratch_namespace(&scratch, &scratch_prefix, |client, ns| {
                let sim = Sim {
                    ns: ns.clone(),
                    ..sim
                };
                async move {
                    let cleanup = (client.clone(), ns);
                    let outcome = tokio::spawn(scenario(client, sim)).await;
                    release_claims(&cleanup.0, &cleanup.1).await;
                    if let Err(failure) = outcome {
                        std::panic::resume_unwind(failure.into_panic());
                    }
                }
            })
            .await
        };
        let outcome = tokio::spawn(run).await;
        eventually("the scenario's namespace to be gone", || async {
            let namespaces = ResourceClient::<Namespace>::cluster(client.clone())
                .list(&ListOptions::default())
                .await
                .ok()?;
            let left = namespaces.items.iter().any(|n| {
                n.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with(&prefix))
            });
            (!left).then_some(())
        })
        .await;
        if let Err(failure) = outcome {
            std::panic::resume_unwind(failure.into_panic());
        }
    })
    .await;
}

/// Removes the `kubernetes.io/pvc-protection` finalizer the real API server's admission puts on
/// every claim: the reference cluster runs no pvc-protection controller, so without this its
/// claims, and the namespace, would never finish deleting.
async fn release_claims(client: &Client, ns: &str) {
    let claims = ResourceClient::<PersistentVolumeClaim>::namespaced(client.clone(), ns);
    let Ok(list) = claims.list(&ListOptions::default()).await else {
        return;
    };
    for claim in list {
        let name = claim.metadata.name.unwrap_or_default();
        let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
        let _ = claims.patch(&name, &patch, &PatchOptions::default()).await;
    }
}

/// A test on the test server and its `_on_cluster` twin for each scenario.
macro_rules! scenarios {
    ($($scenario:ident => $local:ident, $cluster:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $local() {
            $crate::on_test_server($scenario).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
        async fn $cluster() {
            $crate::on_cluster(stringify!($scenario), $scenario).await;
        }
    )*};
}
pub(crate) use scenarios;

/// `(type, reason, involved kind/name, message, count)` of the namespace's core/v1 Events
/// about anything but Pods (the simulated kubelet's own) and Nodes (the node-lifecycle
/// controller's `RegisteredNode`, which land in `default` as on a cluster), sorted.
pub async fn events(client: &Client, ns: &str) -> Vec<(String, String, String, String, i32)> {
    let list = kubegen_e2e_support::list_in::<Event>(client, ns).await;
    let mut out: Vec<_> = list
        .into_iter()
        .filter(|e| !matches!(e.involved_object.kind.as_deref(), Some("Pod" | "Node")))
        .map(|e| {
            let object = &e.involved_object;
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                format!(
                    "{}/{}",
                    object.kind.as_deref().unwrap_or_default(),
                    object.name.as_deref().unwrap_or_default()
                ),
                e.message.unwrap_or_default(),
                e.count.unwrap_or(1),
            )
        })
        .collect();
    out.sort();
    out
}
