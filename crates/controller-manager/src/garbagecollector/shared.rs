//! The collector's state that the monitors' handlers, the workers and their attempts all reach:
//! below each of them, so none imports the module that wires them together.

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kubegen_client::{Client, ServedResource};
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;

use super::graph::{Graph, Work};

/// What the monitors' handlers and the workers share.
pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) graph: Mutex<Graph>,
    /// The served resources by (group, kind), to resolve owner references.
    pub(crate) resources: RwLock<HashMap<(String, String), ServedResource>>,
    /// Asks for an early resync with discovery.
    pub(crate) resync: Notify,
    pub(crate) delete_queue: RateLimitingQueue<String>,
    pub(crate) orphan_queue: RateLimitingQueue<String>,
}

impl Shared {
    /// The resource of an owner reference's kind, in its group.
    pub(crate) fn resource_for(&self, reference: &OwnerReference) -> Option<ServedResource> {
        let group = match reference.api_version.rsplit_once('/') {
            Some((group, _)) => group,
            None => "",
        };
        let key = (group.to_owned(), reference.kind.clone());
        self.resources.read().get(&key).cloned()
    }

    pub(crate) fn queue(&self, work: Work) {
        work.delete
            .into_iter()
            .for_each(|uid| self.delete_queue.add(uid));
        work.orphan
            .into_iter()
            .for_each(|uid| self.orphan_queue.add(uid));
    }
}
