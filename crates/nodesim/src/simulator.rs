//! [`NodeSimulator`]: registers the simulated Nodes and runs their heartbeats, the scheduler
//! and the kubelet over one shared informer factory (Pods and Nodes), until told to stop. The
//! shape of `kubegen-controller-manager`'s `ControllerManager::run` (handlers registered first,
//! then `InformerFactory::start` once), and of kwok's controller (`pkg/kwok/controllers`).

use std::{future::Future, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory};
use kubegen_client::Client;
use tokio::{
    sync::{mpsc, watch},
    task::JoinSet,
};

use crate::kubelet::Kubelet;
use crate::kubelet_server::KubeletServer;
use crate::node::SimNode;
use crate::options::NodeSimOptions;
use crate::scheduler::Scheduler;
use crate::streaming::Host;
use crate::{Error, Result, heartbeat, worker};

/// How long [`NodeSimulator::run`] waits for the shared informers' first lists.
const CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the scheduler waits for the Nodes' registration before it starts anyway.
const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(10);

/// Workers of the kubelet's queue (Pods of every simulated Node).
const KUBELET_WORKERS: usize = 4;

/// Simulated Nodes, a scheduler and a kubelet, against the API server of one client.
///
/// ```no_run
/// # async fn demo(client: kubegen_client::Client) -> kubegen_nodesim::Result<()> {
/// use kubegen_nodesim::{NodeSimOptions, NodeSimulator};
/// let options = NodeSimOptions::default().nodes(5).capacity("8", "32Gi", 110);
/// NodeSimulator::new(client, options)
///     .run(async { let _ = tokio::signal::ctrl_c().await; })
///     .await
/// # }
/// ```
pub struct NodeSimulator {
    client: Client,
    options: NodeSimOptions,
}

impl NodeSimulator {
    /// A simulator that will act with `client`: it needs the rights of a kubelet on its Nodes,
    /// Leases and Pods, of kube-scheduler on bindings, and to write Events (an administrator's
    /// client is simplest).
    pub fn new(client: Client, options: NodeSimOptions) -> Self {
        NodeSimulator { client, options }
    }

    /// Runs until `shutdown` completes, then stops the heartbeats and waits for in-flight
    /// writes. The Nodes stay registered (a stopped kubelet leaves its Node behind too; the
    /// node lifecycle controller of a real cluster then marks it `Unknown`).
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when the informers cannot list within a minute. Write errors
    /// are not returned: each is logged and retried, as the kubelet and the scheduler do.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        let (stop_tx, stop) = watch::channel(false);
        let factory = InformerFactory::new(
            ClientListWatchSource::new(self.client.clone()),
            FactoryOptions::default(),
        );
        let pods = factory.informer::<Pod>();
        let nodes = factory.informer::<Node>();
        let sim_nodes: Vec<SimNode> = self
            .options
            .node_names()
            .into_iter()
            .enumerate()
            .map(|(index, name)| SimNode { name, index })
            .collect();
        let kubelet = Kubelet::new(
            self.client.clone(),
            &pods,
            sim_nodes.clone(),
            self.options.clone(),
        )?;
        let scheduler = if self.options.scheduler {
            let name = &self.options.scheduler_name;
            Some(Scheduler::new(self.client.clone(), name, (&pods, &nodes))?)
        } else {
            None
        };
        factory.start();
        if let Err(e) = factory.wait_for_cache_sync(CACHE_SYNC_TIMEOUT).await {
            factory.shutdown().await;
            return Err(Error::CacheSyncFailed(e));
        }
        let mut options = self.options.clone();
        let kubelet_server = if options.kubelet_server {
            let host = Host {
                pods: pods.lister(),
                responder: options.responder.clone(),
            };
            let server =
                match KubeletServer::bind((options.kubelet_bind, options.kubelet_port), host).await
                {
                    Ok(server) => server,
                    Err(e) => {
                        factory.shutdown().await;
                        return Err(e);
                    }
                };
            let address = server.address()?;
            options.kubelet_port = address.port();
            options.kubelet_address = Some(address.ip().to_string());
            tracing::info!(%address, "simulated kubelet serving");
            Some(tokio::spawn(server.serve(stop.clone())))
        } else {
            None
        };
        let mut heartbeats = JoinSet::new();
        let (registered, mut registering) = mpsc::channel::<()>(1);
        for node in sim_nodes {
            let (client, options) = (self.client.clone(), options.clone());
            let signals = (registered.clone(), stop.clone());
            heartbeats.spawn(heartbeat::run(client, node, options, signals));
        }
        drop(registered);
        // The scheduler starts once the Nodes are registered (each heartbeat drops its sender
        // then), so Pods created with the simulator are not first refused for want of Nodes.
        let _ = tokio::time::timeout(REGISTRATION_TIMEOUT, registering.recv()).await;
        let kubelet_workers = worker::spawn(kubelet.queue(), KUBELET_WORKERS, move |key| {
            let kubelet = kubelet.clone();
            async move { kubelet.sync(&key).await }
        });
        // One scheduling worker: Pods are placed one at a time, each seeing the last one's
        // requests, as kube-scheduler's single scheduling cycle does.
        let scheduler_workers = scheduler.map(|scheduler| {
            worker::spawn(scheduler.queue(), 1, move |key| {
                let scheduler = scheduler.clone();
                async move { scheduler.sync(&key).await }
            })
        });
        shutdown.await;
        stop_tx.send_replace(true);
        while heartbeats.join_next().await.is_some() {}
        if let Some(workers) = scheduler_workers {
            workers.stop().await;
        }
        kubelet_workers.stop().await;
        if let Some(server) = kubelet_server {
            let _ = server.await;
        }
        factory.shutdown().await;
        Ok(())
    }
}
