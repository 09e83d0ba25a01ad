/// A Kubernetes cluster to provision.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub struct Cluster {
    pub metadata: ObjectMeta,
    /// The wanted cluster.
    pub spec: ClusterSpec,
}

/// The wanted cluster.
pub struct ClusterSpec {
    /// Kubernetes version, e.g. `1.33.1`.
    /// +kubegen:validation:pattern=^[0-9]+\.[0-9]+\.[0-9]+$
    pub kubernetes_version: String,
    /// Number of worker nodes.
    /// +kubegen:validation:minimum=0
    /// +kubegen:default=3
    pub workers: i32,
    /// Cloud region.
    pub region: Option<String>,
}
