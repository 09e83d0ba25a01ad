//! One simulated Node's life on the API: registration, then heartbeats until the simulator
//! stops. Mirrors the kubelet's `registerWithAPIServer` and `syncNodeStatus`
//! (`pkg/kubelet/kubelet_node_status.go`) and its lease controller
//! (`component-helpers/apimachinery/lease/controller.go`): the Lease in `kube-node-lease` is
//! renewed every `lease_renew_interval` (10 s), the Node status (with every condition's
//! `lastHeartbeatTime`) every `status_report_interval` (5 min), as the kubelet does once
//! node leases carry its liveness.
//!
//! A failed write is logged and tried again at the next tick, as the kubelet does.

use std::time::Duration;

use k8s_openapi::api::{coordination::v1::Lease, core::v1::Node};
use k8s_openapi::jiff::Timestamp;
use kubegen_client::{
    Client, CreateOptions, GetOptions, Patch, PatchOptions, ResourceClient, UpdateOptions,
};
use serde_json::json;
use tokio::sync::{mpsc, watch};

use crate::error::{Result, request, typed};
use crate::node::{LEASE_NAMESPACE, SimNode, micro_time, time};
use crate::options::NodeSimOptions;

/// The field manager of the Node's writes, as the kubelet's user agent yields it.
const FIELD_MANAGER: &str = "kubelet";

/// How long a failed registration waits before it is tried again (the kubelet: 7 s, doubling).
const REGISTER_RETRY: Duration = Duration::from_secs(1);

/// Registers `node` (then drops `registered`), then heartbeats until `stop` turns true.
pub(crate) async fn run(
    client: Client,
    node: SimNode,
    options: NodeSimOptions,
    (registered, mut stop): (mpsc::Sender<()>, watch::Receiver<bool>),
) {
    let agent = Agent {
        nodes: ResourceClient::cluster(client.clone()),
        leases: ResourceClient::namespaced(client, LEASE_NAMESPACE),
        node,
        options,
        registered_at: time(&Timestamp::now()),
    };
    let uid = loop {
        match agent.register().await {
            Ok(uid) => {
                drop(registered);
                break uid;
            }
            Err(e) => {
                tracing::warn!(node = agent.node.name, error = %e, "could not register the node; retrying")
            }
        }
        tokio::select! {
            () = stopped(&mut stop) => return,
            () = tokio::time::sleep(REGISTER_RETRY) => {}
        }
    };
    let mut lease = tokio::time::interval(agent.options.lease_renew_interval);
    let mut status = tokio::time::interval(agent.options.status_report_interval);
    // Both intervals tick at once: the registration has just done their work.
    lease.tick().await;
    status.tick().await;
    loop {
        let result = tokio::select! {
            () = stopped(&mut stop) => return,
            _ = lease.tick() => agent.renew_lease(&uid).await,
            _ = status.tick() => agent.report_status().await,
        };
        if let Err(e) = result {
            tracing::warn!(node = agent.node.name, error = %e, "heartbeat failed; trying again at the next one");
        }
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// What one Node's heartbeats write with.
struct Agent {
    nodes: ResourceClient<Node>,
    leases: ResourceClient<Lease>,
    node: SimNode,
    options: NodeSimOptions,
    /// When the conditions became what they are (their `lastTransitionTime`).
    registered_at: String,
}

impl Agent {
    /// Creates the Node (or takes the one of that name over), reports its status and renews its
    /// Lease; returns the Node's UID.
    async fn register(&self) -> Result<String> {
        let name = &self.node.name;
        let object: Node = typed(&format!("node {name}"), self.node.object(&self.options))?;
        let node = match self.nodes.create(&object, &create_options()).await {
            Ok(node) => node,
            Err(e) if e.is_already_exists() => self
                .nodes
                .get(name, &GetOptions::default())
                .await
                .map_err(request(format!("get node {name}")))?,
            Err(e) => return Err(request(format!("register node {name}"))(e)),
        };
        self.report_status().await?;
        let uid = node.metadata.uid.unwrap_or_default();
        self.renew_lease(&uid).await?;
        tracing::info!(node = name, "simulated node registered");
        Ok(uid)
    }

    /// Patches the Node's status with every condition's heartbeat set to now.
    async fn report_status(&self) -> Result<()> {
        let now = time(&Timestamp::now());
        let status = self.node.status(&self.options, &self.registered_at, &now);
        let patch = Patch::Merge(json!({"status": status}));
        let options = PatchOptions::default().field_manager(FIELD_MANAGER);
        self.nodes
            .patch_status(&self.node.name, &patch, &options)
            .await
            .map_err(request(format!("report status of node {}", self.node.name)))?;
        Ok(())
    }

    /// Moves the Lease's `renewTime` to now, creating the Lease when it is missing.
    async fn renew_lease(&self, uid: &str) -> Result<()> {
        let name = &self.node.name;
        let now = Timestamp::now();
        let action = || format!("renew lease of node {name}");
        match self.leases.get(name, &GetOptions::default()).await {
            Ok(mut lease) => {
                let spec = lease.spec.get_or_insert_default();
                spec.renew_time = Some(typed(&action(), json!(micro_time(&now)))?);
                spec.holder_identity = Some(name.clone());
                self.leases
                    .update(&lease, &update_options())
                    .await
                    .map_err(request(action()))?;
            }
            Err(e) if e.is_not_found() => {
                let lease: Lease = typed(&action(), self.node.lease(uid, &now))?;
                self.leases
                    .create(&lease, &create_options())
                    .await
                    .map_err(request(action()))?;
            }
            Err(e) => return Err(request(action())(e)),
        }
        Ok(())
    }
}

fn create_options() -> CreateOptions {
    CreateOptions::default().field_manager(FIELD_MANAGER)
}

fn update_options() -> UpdateOptions {
    UpdateOptions::default().field_manager(FIELD_MANAGER)
}
