//! The lock itself: one `coordination.k8s.io/v1` Lease read and written through the generic REST
//! client. Mirrors `LeaseLock` in client-go `tools/leaderelection/resourcelock/leaselock.go`.
//!
//! Every update sends the Lease exactly as last read or written, with the new record applied, so its
//! `metadata.resourceVersion` is the optimistic-concurrency precondition: if anybody wrote in between,
//! the server answers 409 Conflict and the elector re-reads instead of overwriting.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{Client, CreateOptions, GetOptions, ResourceClient, UpdateOptions};

use crate::record::LeaderElectionRecord;

/// A named Lease used as the election's lock.
#[derive(Clone)]
pub(crate) struct LeaseLock {
    /// Client for Leases in the lock's namespace.
    api: ResourceClient<Lease>,
    /// Namespace of the Lease (for creating it and for logs).
    namespace: String,
    /// Name of the Lease.
    name: String,
    /// Labels every write makes sure the Lease carries.
    labels: BTreeMap<String, String>,
}

impl LeaseLock {
    /// The lock `namespace/name`, accessed through `client`.
    pub(crate) fn new(client: Client, namespace: &str, name: &str) -> Self {
        LeaseLock {
            api: ResourceClient::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            labels: BTreeMap::new(),
        }
    }

    /// The same lock, writing `labels` onto the Lease.
    pub(crate) fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    /// `namespace/name`, for logs.
    pub(crate) fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Reads the Lease.
    pub(crate) async fn get(&self) -> kubegen_client::Result<Lease> {
        self.api.get(&self.name, &GetOptions::default()).await
    }

    /// Creates the Lease holding `record`. Fails with 409 AlreadyExists if a rival created it first.
    pub(crate) async fn create(
        &self,
        record: &LeaderElectionRecord,
    ) -> kubegen_client::Result<Lease> {
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        };
        self.api.create(&lease, &CreateOptions::default()).await
    }

    /// Writes `record` into `current` (as last seen, resourceVersion included) and updates it.
    pub(crate) async fn update(
        &self,
        mut current: Lease,
        record: &LeaderElectionRecord,
    ) -> kubegen_client::Result<Lease> {
        record.apply_to(current.spec.get_or_insert_with(LeaseSpec::default));
        if !self.labels.is_empty() {
            let labels = current.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.extend(self.labels.clone());
        }
        self.api.update(&current, &UpdateOptions::default()).await
    }
}
