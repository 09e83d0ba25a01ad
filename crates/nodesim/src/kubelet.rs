//! The kubelet of every simulated Node: watches the Pods bound to them and writes what
//! [`crate::lifecycle::step`] decides, as the kubelet's pod workers and status manager do
//! (`pkg/kubelet/pod_workers.go`, `pkg/kubelet/status/status_manager.go`).
//!
//! Status writes are merge patches of `status` carrying the Pod's `resourceVersion`, so a write
//! computed from a stale cache is refused (409) instead of restarting a running Pod. Nothing
//! retries a refused write: the newer Pod it lost to is on its way through the watch, and its
//! update event queues the Pod again, to step from the fresh state. A Pod being deleted is finished with
//! `DELETE gracePeriodSeconds=0` and its UID as precondition, as the status manager's
//! `canBeDeleted` path does.

use std::{collections::HashMap, sync::Arc};

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use k8s_openapi::jiff::Timestamp;
use kubegen_cache::{HandlerFns, Lister, SharedIndexInformer};
use kubegen_client::{Client, DeleteOptions, Patch, PatchOptions, ResourceClient};
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;
use serde_json::json;

use crate::error::{Error, Result, request};
use crate::lifecycle::{Context, Step, step};
use crate::node::SimNode;
use crate::options::NodeSimOptions;
use crate::worker::{Next, key_of, queue};

/// The field manager of the status writes.
const FIELD_MANAGER: &str = "kubelet";

/// The kubelets of the simulated Nodes, over the shared Pod informer.
#[derive(Clone)]
pub(crate) struct Kubelet {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    nodes: HashMap<String, SimNode>,
    options: NodeSimOptions,
    /// Pod IPs handed out per Node so far.
    next_ip: Mutex<HashMap<String, usize>>,
}

impl Kubelet {
    /// Registers the kubelet's handler on the shared Pod informer, for Pods bound to `nodes`.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] when the informer refuses a handler.
    pub(crate) fn new(
        client: Client,
        pods: &SharedIndexInformer<Pod>,
        nodes: Vec<SimNode>,
        options: NodeSimOptions,
    ) -> Result<Kubelet> {
        let inner = Arc::new(Inner {
            client,
            pods: pods.lister(),
            queue: queue("kubelet"),
            nodes: nodes.into_iter().map(|n| (n.name.clone(), n)).collect(),
            options,
            next_ip: Mutex::new(HashMap::new()),
        });
        let (a, u) = (inner.clone(), inner.clone());
        let handler = HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| a.pod_changed(pod))
            .on_update(move |_, pod: &Arc<Pod>| u.pod_changed(pod));
        pods.add_event_handler(handler)
            .map_err(Error::CacheSyncFailed)?;
        Ok(Kubelet { inner })
    }

    /// The queue of Pods to look at.
    pub(crate) fn queue(&self) -> RateLimitingQueue<String> {
        self.inner.queue.clone()
    }

    /// Takes the next step for the Pod `key`.
    ///
    /// # Errors
    /// A failed status write or delete (retried with backoff).
    pub(crate) async fn sync(&self, key: &str) -> Result<Next> {
        let Some(pod) = self.inner.pods.get_by_key(key) else {
            return Ok(Next::Done);
        };
        let Some(node) = self.inner.node_of(&pod) else {
            return Ok(Next::Done);
        };
        let context = Context {
            node,
            pod_ip: self.inner.peek_ip(node),
            now: Timestamp::now(),
            options: &self.inner.options,
        };
        match step(&pod, &context) {
            Step::Nothing => Ok(Next::Done),
            Step::Wait(delay) => Ok(Next::After(delay)),
            Step::Status(status, next) => {
                let took_ip = status["podIP"] == context.pod_ip.as_str();
                if !self.inner.write_status(&pod, key, status).await? {
                    return Ok(Next::Done);
                }
                if took_ip {
                    self.inner.take_ip(node);
                }
                Ok(next.map_or(Next::Done, Next::After))
            }
            Step::Delete => self.inner.delete(&pod, key).await.map(|()| Next::Done),
        }
    }
}

impl Inner {
    fn pod_changed(&self, pod: &Arc<Pod>) {
        if self.node_of(pod).is_some() {
            self.queue.add(key_of(pod));
        }
    }

    /// The simulated Node `pod` is bound to, if it is one of ours.
    fn node_of(&self, pod: &Pod) -> Option<&SimNode> {
        let name = pod.spec.as_ref()?.node_name.as_deref()?;
        self.nodes.get(name)
    }

    /// The next free Pod IP of `node`, not yet taken.
    fn peek_ip(&self, node: &SimNode) -> String {
        let next = self.next_ip.lock().get(&node.name).copied().unwrap_or(0);
        node.pod_ip(next)
    }

    fn take_ip(&self, node: &SimNode) {
        *self.next_ip.lock().entry(node.name.clone()).or_default() += 1;
    }

    /// Writes `status` over the Pod as cached; `false` when the Pod is gone or changed since
    /// (404, 409): its deletion or its newer state arrives through the watch.
    async fn write_status(&self, pod: &Pod, key: &str, status: serde_json::Value) -> Result<bool> {
        let (namespace, name) = names(pod);
        let patch = Patch::Merge(json!({
            "metadata": {"resourceVersion": pod.metadata.resource_version},
            "status": status,
        }));
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let options = PatchOptions::default().field_manager(FIELD_MANAGER);
        match pods.patch_status(name, &patch, &options).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(false),
            Err(e) => Err(request(format!("update status of pod {key}"))(e)),
        }
    }

    async fn delete(&self, pod: &Pod, key: &str) -> Result<()> {
        let (namespace, name) = names(pod);
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let options = DeleteOptions::default()
            .grace_period_seconds(0)
            .preconditions(Preconditions {
                uid: pod.metadata.uid.clone(),
                resource_version: None,
            });
        match pods.delete(name, &options).await {
            Ok(()) => Ok(()),
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
            Err(e) => Err(request(format!("delete pod {key}"))(e)),
        }
    }
}

fn names(pod: &Pod) -> (&str, &str) {
    (
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default(),
    )
}
