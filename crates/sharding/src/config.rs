//! How a replica takes part in its ring: the ring, its identity, timings, scope, what the ring
//! hashes, and how its informer gets only the shard's objects ([`Selection`]).

use std::time::Duration;

use kubegen_client::{ApiObject, Client, ResourceClient};
use kubegen_leaderelection::LeaderElectionConfig;

use crate::key::RingKey;
use crate::labels::{Ring, SELECTION_LABEL};

/// How a replica's informer gets only its shard's objects, and so which handover protocol the
/// ring runs. Every replica of a ring must end up with the same one: a replica that sees a live
/// shard of its ring using the other one starts no reconcile until that shard is gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// Ask the server once, when the replica starts: a list with `limit=1` and a
    /// `shardSelector` over the whole hash space. A server that serves KEP-5866 says so in the
    /// list's `metadata.shardInfo` ([`Selection::ShardSelector`]); one without the alpha
    /// `ShardedListAndWatch` gate (every server before v1.36 and v1.36 by default) ignores the
    /// parameter and echoes nothing, and one that rejects it answers with an error: both get
    /// [`Selection::Labels`]. A failure that says nothing about the parameter (no answer, 429,
    /// 503, 504) is asked again after a second.
    #[default]
    Auto,
    /// The label protocol, on every server: objects carry the shard label, which the replicas
    /// move themselves; an informer selects on its shard's label (see `labels.rs`).
    Labels,
    /// Server-side, without asking: the informer lists and watches with the shard's
    /// `shardSelector`, its arcs of the ring over the FNV-1a 64 hash of `metadata.uid`
    /// ([`RingKey::Object`]) or `metadata.namespace` ([`RingKey::Namespace`]), and relists when
    /// the ring changes; objects are never written. A server that ignores the parameter makes
    /// each replica cache every object (the gate still lets it work only on its own).
    ShardSelector,
}

impl Selection {
    /// The value of the [`SELECTION_LABEL`] on a shard Lease; `Auto` never gets there.
    pub(crate) fn label_value(self) -> &'static str {
        match self {
            Selection::ShardSelector => "shard-selector",
            Selection::Auto | Selection::Labels => "labels",
        }
    }
}

/// How a replica takes part in its ring.
#[derive(Clone, Debug)]
pub struct ReplicaConfig {
    /// The ring and where its Leases live.
    pub ring: Ring,
    /// This replica's shard name: its Lease's name and its label value (e.g. the Pod name).
    pub identity: String,
    /// Shard Lease duration (leader election's `LeaseDuration`).
    pub lease_duration: Duration,
    /// Stop starting reconciles when the Lease could not be renewed for this long.
    pub renew_deadline: Duration,
    /// Lease renewal interval.
    pub retry_period: Duration,
    /// How often the ring is recomputed and objects are assigned, handed over and adopted.
    pub assign_period: Duration,
    /// Shard only the objects in this namespace (None: every namespace, or a cluster-scoped kind).
    pub namespace: Option<String>,
    /// Shard only the objects matching this label selector (e.g. `app.kubernetes.io/managed-by=x`);
    /// None shards every object of the kind in scope. Objects outside it are never labelled.
    pub selector: Option<String>,
    /// What the ring hashes for an object.
    pub key: RingKey,
    /// Labels or `shardSelector` (default: ask the server).
    pub selection: Selection,
}

impl ReplicaConfig {
    /// The shard `identity` of `ring`, with leader election's default timings.
    pub fn new(ring: Ring, identity: &str) -> ReplicaConfig {
        ReplicaConfig {
            ring,
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            assign_period: Duration::from_secs(1),
            namespace: None,
            selector: None,
            key: RingKey::Object,
            selection: Selection::Auto,
        }
    }

    /// `selector` restricted to the objects this ring shards.
    pub(crate) fn scoped(&self, selector: String) -> String {
        match &self.selector {
            Some(extra) => format!("{selector},{extra}"),
            None => selector,
        }
    }

    /// A client for the kind in this ring's scope.
    pub(crate) fn objects<K: ApiObject>(&self, client: Client) -> ResourceClient<K> {
        match &self.namespace {
            Some(namespace) => ResourceClient::namespaced(client, namespace),
            None => ResourceClient::all_namespaces(client),
        }
    }

    /// The shard Lease's elector settings; the Lease says which protocol this replica runs.
    pub(crate) fn lease_config(&self, selection: Selection) -> LeaderElectionConfig {
        let mut config =
            LeaderElectionConfig::new(&self.ring.lease_namespace, &self.identity, &self.identity);
        config.lease_duration = self.lease_duration;
        config.renew_deadline = self.renew_deadline;
        config.retry_period = self.retry_period;
        config.release_on_cancel = true;
        config.lease_labels = self.ring.lease_labels();
        config.lease_labels.insert(
            SELECTION_LABEL.to_owned(),
            selection.label_value().to_owned(),
        );
        config
    }
}
