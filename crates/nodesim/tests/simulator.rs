//! The simulator against the in-process test server and its controller-manager, and the same
//! scenarios against a real v1.36 cluster with its kube-controller-manager (`_on_cluster`,
//! ignored unless `KUBEGEN_E2E_KUBECONFIG` is set): a scenario passes on both or the simulated
//! nodes behave differently there.

#![allow(clippy::unwrap_used)]

use std::{future::Future, time::Duration};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Namespace, Node, Pod};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient,
};
use kubegen_nodesim::{NodeSimOptions, NodeSimulator};
use serde_json::json;

/// Polls `check` until it returns `Some`, for at most 30 s.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Where a scenario runs: its namespace, the prefix of its simulated Nodes' names, and the
/// `schedulerName` its Pods name (`default-scheduler` on the test server; one of the scenario's
/// own on a shared cluster, so that simulators of scenarios running side by side, and other
/// tests' Pods, never meet).
#[derive(Clone)]
struct Sim {
    ns: String,
    nodes: String,
    scheduler: String,
}

impl Sim {
    /// The label value of its Nodes' pool (`nodesim.kubegen.io/pool`): Pods select it, so they
    /// land on this scenario's Nodes even when other simulators' Nodes share the cluster.
    fn pool(&self) -> &str {
        self.nodes.trim_end_matches('-')
    }
}

/// The options of a scenario: three Nodes of 4 CPUs named `<prefix>0..2`, fast heartbeats.
fn options(sim: &Sim) -> NodeSimOptions {
    let prefix = sim.nodes.as_str();
    NodeSimOptions::default()
        .scheduler_name(sim.scheduler.clone())
        .nodes(3)
        .name_prefix(prefix)
        .capacity("4", "16Gi", 110)
        .label("nodesim.kubegen.io/pool", sim.pool())
        .lease_renew_interval(Duration::from_millis(500))
        .status_report_interval(Duration::from_millis(1000))
}

/// Runs `body(client)` with a simulator for `sim` beside it, stops the simulator and deletes
/// its Nodes afterwards.
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
    let prefix = &sim.nodes;
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    let nodes = ResourceClient::<Node>::cluster(client);
    for i in 0..3 {
        let _ = nodes
            .delete(&format!("{prefix}{i}"), &DeleteOptions::default())
            .await;
    }
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure.into_panic());
    }
}

async fn on_test_server<F, Fut>(scenario: F)
where
    F: FnOnce(Client, Sim) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let server = kubegen_testserver::TestServer::start().await;
    let sim = Sim {
        ns: "default".into(),
        nodes: "nodesim-".into(),
        scheduler: "default-scheduler".into(),
    };
    let inner = sim.clone();
    with_simulator(server.client(), &sim, move |client| scenario(client, inner)).await;
}

/// Runs `scenario` on the cluster `KUBEGEN_E2E_KUBECONFIG` names, with its own simulated Nodes
/// and namespace. The simulator keeps running until the namespace is gone: its Pods are bound
/// to simulated Nodes, and only their kubelet finishes their deletion.
async fn on_cluster<F, Fut>(name: &str, scenario: F)
where
    F: FnOnce(Client, Sim) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let client = kubegen_e2e_support::cluster_client().await;
    let prefix = format!("nodesim-e2e-{}-", name.replace('_', "-"));
    let sim = Sim {
        ns: String::new(),
        nodes: format!("{prefix}node-"),
        scheduler: format!("{prefix}scheduler"),
    };
    let outer = sim.clone();
    with_simulator(client, &outer, |client| async move {
        let names: Vec<String> = (0..3).map(|i| format!("{}{i}", sim.nodes)).collect();
        kubegen_e2e_support::nodes_schedulable(&client, &names).await;
        let (scratch_client, scratch_prefix) = (client.clone(), prefix.clone());
        let run = async move {
            kubegen_e2e_support::in_scratch_namespace(
                &scratch_client,
                &scratch_prefix,
                |client, ns| scenario(client, Sim { ns, ..sim }),
            )
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

/// A test on the test server and its `_on_cluster` twin for each scenario.
macro_rules! scenarios {
    ($($scenario:ident => $local:ident, $cluster:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $local() {
            on_test_server($scenario).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real cluster with kube-controller-manager: set KUBEGEN_E2E_KUBECONFIG"]
        async fn $cluster() {
            on_cluster(stringify!($scenario), $scenario).await;
        }
    )*};
}

scenarios! {
    deployment_becomes_available => deployment_becomes_available_on_test_server, deployment_becomes_available_on_cluster;
    unschedulable_pod_stays_pending => unschedulable_pod_stays_pending_on_test_server, unschedulable_pod_stays_pending_on_cluster;
    pod_waits_for_a_fitting_node => pod_waits_for_a_fitting_node_on_test_server, pod_waits_for_a_fitting_node_on_cluster;
    nodes_register_and_heartbeat => nodes_register_and_heartbeat_on_test_server, nodes_register_and_heartbeat_on_cluster;
    deleted_pod_is_finished_by_its_kubelet => deleted_pod_is_finished_by_its_kubelet_on_test_server, deleted_pod_is_finished_by_its_kubelet_on_cluster;
    job_pod_succeeds => job_pod_succeeds_on_test_server, job_pod_succeeds_on_cluster;
}

/// A running Pod deleted without options is marked for 30 s by the API server; its kubelet
/// finishes the deletion at once (`gracePeriodSeconds: 0`), so it is gone well before.
async fn deleted_pod_is_finished_by_its_kubelet(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), &ns);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "doomed"},
        "spec": {"schedulerName": sim.scheduler, "nodeSelector": {"nodesim.kubegen.io/pool": sim.pool()}, "containers": [{"name": "c", "image": "nginx"}]},
    }))
    .unwrap();
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    eventually("the pod to run", || async {
        let pod = pods.get("doomed", &GetOptions::default()).await.ok()?;
        (pod.status?.phase.as_deref() == Some("Running")).then_some(())
    })
    .await;
    pods.delete("doomed", &DeleteOptions::default())
        .await
        .unwrap();
    eventually("the pod to be gone", || async {
        match pods.get("doomed", &GetOptions::default()).await {
            Err(e) if e.is_not_found() => Some(()),
            _ => None,
        }
    })
    .await;
}

/// A Job's Pod (restartPolicy Never, owned by the Job) ends Succeeded with its container
/// terminated `Completed`, exit code 0.
async fn job_pod_succeeds(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let jobs = ResourceClient::<k8s_openapi::api::batch::v1::Job>::namespaced(client.clone(), &ns);
    let job = serde_json::from_value(json!({
        "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "schedulerName": sim.scheduler, "nodeSelector": {"nodesim.kubegen.io/pool": sim.pool()},
                                        "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    jobs.create(&job, &CreateOptions::default()).await.unwrap();
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), &ns);
    // The Job controller (the test server's or the cluster's) creates the Pod.
    let selected = ListOptions::default().labels("batch.kubernetes.io/job-name=once");
    let status = eventually("the pod to succeed", || async {
        let list = pods.list(&selected).await.ok()?;
        let status = list.items.into_iter().next()?.status?;
        (status.phase.as_deref() == Some("Succeeded")).then_some(status)
    })
    .await;
    let container = &status.container_statuses.unwrap()[0];
    let terminated = container
        .state
        .as_ref()
        .unwrap()
        .terminated
        .as_ref()
        .unwrap();
    assert_eq!(
        (terminated.exit_code, terminated.reason.as_deref()),
        (0, Some("Completed"))
    );
    assert!(!container.ready);
}

/// A Deployment of 3 becomes Available, as `kubectl rollout status` waits for: every replica
/// updated and available, the `Available` condition true; its Pods run, ready, on simulated
/// Nodes, each with a `Scheduled` Event.
async fn deployment_becomes_available(client: Client, sim: Sim) {
    let (ns, prefix) = (sim.ns.clone(), sim.nodes.clone());
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), &ns);
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"schedulerName": sim.scheduler, "nodeSelector": {"nodesim.kubegen.io/pool": sim.pool()},
                                       "containers": [{"name": "nginx", "image": "nginx:1.27",
                                                       "resources": {"requests": {"cpu": "500m", "memory": "64Mi"}}}]}}},
    }))
    .unwrap();
    deployments
        .create(&deployment, &CreateOptions::default())
        .await
        .unwrap();
    let done = eventually("the rollout to complete", || async {
        let d = deployments.get("web", &GetOptions::default()).await.ok()?;
        let status = d.status.clone()?;
        let available = status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Available" && c.status == "True");
        let complete = status.updated_replicas == Some(3)
            && status.available_replicas == Some(3)
            && status.ready_replicas == Some(3)
            && status.observed_generation >= d.metadata.generation;
        (available && complete).then_some(d)
    })
    .await;
    assert_eq!(done.status.unwrap().replicas, Some(3));
    let pods = kubegen_e2e_support::list_in::<Pod>(&client, &ns).await;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let node = pod.spec.as_ref().unwrap().node_name.clone().unwrap();
        assert!(node.starts_with(&prefix), "{node}");
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.pod_ip.is_some() && status.host_ip.is_some());
        let ready = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(ready.status, "True");
        assert!(status.container_statuses.as_ref().unwrap()[0].ready);
    }
    let scheduled = eventually("three Scheduled events", || async {
        let events = ResourceClient::<Event>::namespaced(client.clone(), &ns)
            .list(&ListOptions::default())
            .await
            .ok()?;
        let scheduled: Vec<Event> = events
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("Scheduled"))
            .collect();
        (scheduled.len() == 3).then_some(scheduled)
    })
    .await;
    for event in scheduled {
        let pod = event.involved_object.name.clone().unwrap();
        let message = event.message.unwrap();
        assert!(
            message.starts_with(&format!("Successfully assigned {ns}/{pod} to {prefix}")),
            "{message}"
        );
        assert_eq!(event.type_.as_deref(), Some("Normal"));
    }
}

/// A Pod whose nodeSelector matches no Node stays Pending with `PodScheduled=False`,
/// `Unschedulable`, and a `FailedScheduling` Event naming the reason per Node.
async fn unschedulable_pod_stays_pending(client: Client, sim: Sim) {
    let ns = sim.ns.clone();
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), &ns);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "nowhere"},
        "spec": {"nodeSelector": {"nodesim.kubegen.io/pool": "none"}, "schedulerName": sim.scheduler,
                 "containers": [{"name": "c", "image": "nginx"}]},
    }))
    .unwrap();
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    let condition = eventually("PodScheduled=False", || async {
        let pod = pods.get("nowhere", &GetOptions::default()).await.ok()?;
        let status = pod.status?;
        assert_eq!(status.phase.as_deref(), Some("Pending"));
        status
            .conditions?
            .into_iter()
            .find(|c| c.type_ == "PodScheduled")
    })
    .await;
    assert_eq!(condition.status, "False");
    assert_eq!(condition.reason.as_deref(), Some("Unschedulable"));
    let message = condition.message.unwrap();
    // The count of Nodes depends on the cluster; the reason does not.
    assert!(message.starts_with("0/"), "{message}");
    assert!(
        message.contains("node(s) didn't match Pod's node affinity/selector"),
        "{message}"
    );
    assert!(
        message.ends_with("Preemption is not helpful for scheduling."),
        "{message}"
    );
    let event = eventually("a FailedScheduling event", || async {
        let events = ResourceClient::<Event>::namespaced(client.clone(), &ns)
            .list(&ListOptions::default())
            .await
            .ok()?;
        events.items.into_iter().find(|e| {
            e.reason.as_deref() == Some("FailedScheduling")
                && e.message.as_deref() == Some(message.as_str())
        })
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.message.as_deref(), Some(message.as_str()));
    let pod = pods.get("nowhere", &GetOptions::default()).await.unwrap();
    assert_eq!(pod.spec.unwrap().node_name, None);
}

/// A Pod that fit no Node is tried again when a Node changes so that it fits (the scheduling
/// queue moving its unschedulable Pods), and is bound there, without waiting the 5 min retry.
async fn pod_waits_for_a_fitting_node(client: Client, sim: Sim) {
    const LABEL: &str = "nodesim.kubegen.io/late";
    let pods = ResourceClient::<Pod>::namespaced(client.clone(), &sim.ns);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "later"},
        "spec": {"nodeSelector": {LABEL: sim.pool()}, "schedulerName": sim.scheduler,
                 "containers": [{"name": "c", "image": "nginx"}]},
    }))
    .unwrap();
    pods.create(&pod, &CreateOptions::default()).await.unwrap();
    eventually("PodScheduled=False", || async {
        let pod = pods.get("later", &GetOptions::default()).await.ok()?;
        pod.status?
            .conditions?
            .into_iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    })
    .await;
    let node = format!("{}1", sim.nodes);
    let label = Patch::Merge(json!({"metadata": {"labels": {LABEL: sim.pool()}}}));
    ResourceClient::<Node>::cluster(client.clone())
        .patch(&node, &label, &PatchOptions::default())
        .await
        .unwrap();
    let bound = eventually("the Pod bound to the labelled Node", || async {
        let pod = pods.get("later", &GetOptions::default()).await.ok()?;
        pod.spec?.node_name
    })
    .await;
    assert_eq!(bound, node);
}

/// Each Node is Ready with its capacity and kubelet endpoint, and renews its Lease.
async fn nodes_register_and_heartbeat(client: Client, sim: Sim) {
    let prefix = sim.nodes.clone();
    let nodes = ResourceClient::<Node>::cluster(client.clone());
    let leases = ResourceClient::<Lease>::namespaced(client.clone(), "kube-node-lease");
    let name = format!("{prefix}1");
    let node = eventually("the node to be ready", || async {
        let node = nodes.get(&name, &GetOptions::default()).await.ok()?;
        let ready = node
            .status
            .as_ref()?
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        ready.then_some(node)
    })
    .await;
    let status = node.status.unwrap();
    assert_eq!(status.capacity.unwrap()["cpu"].0, "4");
    assert_eq!(status.allocatable.unwrap()["pods"].0, "110");
    // The simulated kubelet serves on a free port of loopback, and the Node says where.
    let endpoint = status.daemon_endpoints.unwrap().kubelet_endpoint.unwrap();
    assert_ne!(endpoint.port, 0);
    let addresses = status.addresses.unwrap();
    assert_eq!(addresses[0].type_, "InternalIP");
    assert_eq!(addresses[0].address, "127.0.0.1");
    assert_eq!(addresses[1].address, name);
    let first = eventually("the lease", || async {
        leases
            .get(&name, &GetOptions::default())
            .await
            .ok()?
            .spec?
            .renew_time
    })
    .await;
    let renewed = eventually("the lease to be renewed", || async {
        let renew = leases
            .get(&name, &GetOptions::default())
            .await
            .ok()?
            .spec?
            .renew_time?;
        (renew.0 > first.0).then_some(renew)
    })
    .await;
    assert!(renewed.0 > first.0);
    let lease = leases.get(&name, &GetOptions::default()).await.unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity.as_deref(),
        Some(name.as_str())
    );
    assert_eq!(
        lease.metadata.owner_references.unwrap()[0].uid,
        node.metadata.uid.unwrap()
    );
}
