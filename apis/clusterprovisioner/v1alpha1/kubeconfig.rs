/// Credentials to reach a provisioned Cluster.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
pub struct Kubeconfig {
    pub metadata: ObjectMeta,
    /// Which cluster and how to reach it.
    pub spec: KubeconfigSpec,
}

/// Which cluster and how to reach it.
pub struct KubeconfigSpec {
    /// Name of the Cluster.
    pub cluster_name: String,
    /// API server URL.
    pub server: String,
    /// Name of the Secret holding the kubeconfig file.
    pub secret_name: Option<String>,
}
