/// A Kubernetes cluster to provision.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
/// +kubegen:printcolumn:name=Version,type=string,jsonPath=.spec.kubernetesVersion
/// +kubegen:printcolumn:name=Phase,type=string,jsonPath=.status.phase
/// +kubegen:printcolumn:name=Age,type=date,jsonPath=.metadata.creationTimestamp
pub struct Cluster {
    pub metadata: ObjectMeta,
    /// The wanted cluster.
    pub spec: ClusterSpec,
    /// What the provisioner observed. No status subresource (`+genclient:noStatus`): the
    /// provisioner writes it with a plain update.
    pub status: Option<ClusterStatus>,
}

/// The wanted cluster.
pub struct ClusterSpec {
    /// Kubernetes version, e.g. `1.33.1`.
    /// +kubegen:validation:Pattern=^[0-9]+\.[0-9]+\.[0-9]+$
    pub kubernetes_version: String,
    /// Number of worker nodes.
    /// +kubegen:validation:Minimum=0
    /// +kubegen:default=3
    pub workers: i32,
    /// Cloud region.
    pub region: Option<String>,
}

/// What the provisioner observed.
pub struct ClusterStatus {
    /// Where provisioning is.
    pub phase: Option<ClusterPhase>,
    /// The latest observations of the cluster's state (`Ready`, `Provisioned`, ...), one per type.
    /// +kubegen:optional
    /// +kubegen:listType=map
    /// +kubegen:listMapKeys=type
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` the status was computed from.
    pub observed_generation: Option<i64>,
}

/// Where provisioning of a cluster is.
pub enum ClusterPhase {
    /// Accepted, not started yet.
    Pending,
    /// The provisioner is creating the cluster.
    Provisioning,
    /// The cluster is up and its Kubeconfig is written.
    Ready,
    /// Provisioning failed; see the conditions.
    Failed,
}
