//! Creating and deleting a DaemonSet's Pods, each recorded as an Event on the DaemonSet in
//! v1.36's words, with the expectations that keep the next sync from acting on a stale cache.
//!
//! Mirrors `syncNodes` of `pkg/controller/daemon/daemon_controller.go` and `RealPodControl`
//! (`CreatePods`, `DeletePod`) of `pkg/controller/controller_utils.go`.
//!
//! # Rules
//! - At most 250 creates and 250 deletes per sync (`BurstReplicas`).
//! - Creates go in slow-start batches of 1, 2, 4, ...; a batch with a failure ends them, and the
//!   creates never tried are no longer expected.
//! - Events: `SuccessfulCreate` "Created pod: `<name>`", `SuccessfulDelete` "Deleted pod:
//!   `<name>`", Warnings `FailedCreate` "Error creating: `<message>`" and `FailedDelete` "Error
//!   deleting: `<message>`". A create refused because the namespace is terminating records none.

use std::sync::Arc;

use futures_util::future::join_all;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod;
use kubegen_client::{Client, CreateOptions, DeleteOptions, ResourceClient};
use kubegen_runtime::EventType;

use super::daemon::Daemon;
use super::placement::pin_to_node;
use crate::workload::events::EventSink;
use crate::workload::expectations::Expectations;
use crate::workload::meta::{controller_ref, describe};
use crate::workload::pods::pod_from_template;
use crate::workload::shared::{FIELD_MANAGER, api_message, namespace_terminating};
use crate::{Result, error::request};

/// Most Pods created, and most deleted, in one sync (`BurstReplicas`).
const BURST: usize = 250;

/// Writes a DaemonSet's Pods.
pub(crate) struct PodControl {
    pub(crate) client: Client,
    pub(crate) events: EventSink,
    pub(crate) expectations: Arc<Expectations>,
}

impl PodControl {
    /// Deletes the Pods named `delete` and creates one on each of `create_on` (`syncNodes`).
    ///
    /// # Errors
    /// The first failed create or delete (a Pod already gone is no failure).
    pub(crate) async fn sync_nodes(
        &self,
        daemon: &Daemon<'_>,
        key: &str,
        delete: &[String],
        create_on: &[String],
    ) -> Result<()> {
        let ds = daemon.ds;
        let namespace = ds.metadata.namespace.as_deref().unwrap_or_default();
        let create_on = &create_on[..create_on.len().min(BURST)];
        let delete = &delete[..delete.len().min(BURST)];
        let doomed_keys = delete.iter().map(|n| format!("{namespace}/{n}")).collect();
        self.expectations.expect(key, create_on.len(), doomed_keys);
        let created = self.create(daemon, key, create_on).await;
        let deleted = self.delete(ds, key, delete).await;
        created.and(deleted)
    }

    async fn create(&self, daemon: &Daemon<'_>, key: &str, nodes: &[String]) -> Result<()> {
        let ds = daemon.ds;
        let namespace = ds.metadata.namespace.as_deref().unwrap_or_default();
        let ds_name = ds.metadata.name.as_deref().unwrap_or_default();
        let api: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        let template = daemon.pod_template();
        let mut first_error = None;
        let (mut done, mut batch) = (0, nodes.len().min(1));
        while batch > 0 {
            let creates = nodes[done..done + batch].iter().map(|node| {
                let mut pod = pod_from_template(&template, ds_name, controller_ref(ds));
                let spec = pod.spec.get_or_insert_with(Default::default);
                spec.affinity = Some(pin_to_node(spec.affinity.take(), node));
                let api = api.clone();
                let options = options.clone();
                async move { api.create(&pod, &options).await }
            });
            let mut failed = false;
            for result in join_all(creates).await {
                match result {
                    Ok(pod) => {
                        let name = pod.metadata.name.as_deref().unwrap_or_default();
                        self.events.record(
                            ds,
                            EventType::Normal,
                            "SuccessfulCreate",
                            format!("Created pod: {name}"),
                        );
                    }
                    Err(e) if namespace_terminating(&e) => {}
                    Err(e) => {
                        self.events.record(
                            ds,
                            EventType::Warning,
                            "FailedCreate",
                            format!("Error creating: {}", api_message(&e)),
                        );
                        self.expectations.creation_observed(key);
                        failed = true;
                        first_error
                            .get_or_insert(request(format!("create Pod for {}", describe(ds)))(e));
                    }
                }
            }
            done += batch;
            if failed {
                for _ in done..nodes.len() {
                    self.expectations.creation_observed(key);
                }
                break;
            }
            batch = (2 * batch).min(nodes.len() - done);
        }
        first_error.map_or(Ok(()), Err)
    }

    async fn delete(&self, ds: &DaemonSet, key: &str, names: &[String]) -> Result<()> {
        let namespace = ds.metadata.namespace.as_deref().unwrap_or_default();
        let api: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let deletes = names.iter().map(|name| {
            let api = api.clone();
            async move { (name, api.delete(name, &DeleteOptions::default()).await) }
        });
        let mut first_error = None;
        for (name, result) in join_all(deletes).await {
            let Err(e) = result else {
                self.events.record(
                    ds,
                    EventType::Normal,
                    "SuccessfulDelete",
                    format!("Deleted pod: {name}"),
                );
                continue;
            };
            self.expectations
                .deletion_observed(key, &format!("{namespace}/{name}"));
            if !e.is_not_found() {
                self.events.record(
                    ds,
                    EventType::Warning,
                    "FailedDelete",
                    format!("Error deleting: {}", api_message(&e)),
                );
                first_error.get_or_insert(request(format!("delete Pod {namespace}/{name}"))(e));
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
