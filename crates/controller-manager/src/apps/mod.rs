//! The `deployment` and `replicaset` controllers of kube-controller-manager
//! (`pkg/controller/deployment`, `pkg/controller/replicaset`): Deployment → ReplicaSet → Pod;
//! the `statefulset` controller (`pkg/controller/statefulset`) and the `daemonset` controller
//! (`pkg/controller/daemon`), which reuse their helpers and are started on their own
//! ([`statefulset::start`], [`daemonset::start`]).
//!
//! # Why both live together
//! They share three informers (Deployments, ReplicaSets, Pods) and the same helpers
//! (ControllerRef adoption, expectations, pod ranking), and neither is useful without the other:
//! the deployment controller only writes ReplicaSets, the replicaset controller turns them into
//! Pods. Without a scheduler and kubelet the Pods stay `Pending`, never ready, so rollouts stall
//! exactly where they stall on a real cluster with no nodes.
//!
//! # Entry point
//! [`start`] registers both controllers on the manager's shared informers (the Pods and
//! ReplicaSets the garbage collector and others may read too: one watch per kind); its runner
//! works both queues until the manager stops.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `daemonset`, `deployment`, `statefulset`
//! - `replicaset`
//! - `informers`
//!
//! The pieces they share with the batch controllers (ControllerRef adoption, expectations, pod
//! ranking, Events) are in `crate::workload`.

pub(crate) mod daemonset;
mod deployment;
mod informers;
mod replicaset;
pub(crate) mod statefulset;

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::Pod,
};

use crate::context::{Context, Runner};
use crate::worker::{self, Next, QueueLoop, Retries};

use informers::Informers;

/// Workers per controller (kube-controller-manager's `--concurrent-deployment-syncs` and
/// `--concurrent-replicaset-syncs`, both 5 by default, or the manager's
/// [`workers`](crate::ControllerManagerOptions::workers)).
#[derive(Clone, Debug)]
pub(crate) struct AppsOptions {
    pub(crate) deployment_workers: usize,
    pub(crate) replicaset_workers: usize,
}

/// Registers the deployment and replicaset controllers' handlers on the manager's shared
/// informers (Deployments, ReplicaSets, Pods); the runner works both queues until the manager
/// stops. Sync errors are logged and their keys retried with backoff, as the real controllers do.
pub(crate) fn start(context: &Context, options: AppsOptions) -> Runner {
    let informers = Informers {
        deployments: context.factory.informer::<Deployment>(),
        replica_sets: context.factory.informer::<ReplicaSet>(),
        pods: context.factory.informer::<Pod>(),
    };
    let client = context.client.clone();
    let loops = replicaset::ReplicaSetController::new(client.clone(), &informers).and_then(|rs| {
        let deployments = deployment::DeploymentController::new(client, &informers)?;
        // The replicaset controller retries a failing key until it syncs; the deployment
        // controller gives up after 15 retries (its `maxRetries`) until the key's next event.
        Ok(vec![
            QueueLoop::new(
                rs.queue(),
                options.replicaset_workers,
                Retries::Forever,
                move |key: String| {
                    let c = rs.clone();
                    async move { c.sync(&key).await.map(|()| Next::Done) }
                },
            ),
            QueueLoop::new(
                deployments.queue(),
                options.deployment_workers,
                Retries::AtMost(15),
                move |key: String| {
                    let c = deployments.clone();
                    async move { c.sync(&key).await.map(|()| Next::Done) }
                },
            ),
        ])
    });
    worker::run("deployment and replicaset", context.stop.clone(), loops)
}
