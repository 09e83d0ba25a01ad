//! Why the runtime stopped or could not start.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// An error of the runtime's machinery (never of a reconcile: those follow the reconciler's
/// error policy).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Registering an event handler failed (the informer was already shut down).
    #[error("registering an event handler failed")]
    HandlerRegistrationFailed {
        /// The cache's error.
        #[source]
        source: kubegen_cache::Error,
    },
    /// The caches did not sync in time.
    #[error("waiting for the informer caches failed")]
    CacheSyncFailed {
        /// The cache's error.
        #[source]
        source: kubegen_cache::Error,
    },
    /// An endpoint address could not be bound.
    #[error("binding {addr} failed")]
    BindFailed {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Leader election could not run.
    #[error("leader election failed")]
    LeaderElectionFailed {
        /// The elector's error.
        #[source]
        source: kubegen_leaderelection::Error,
    },
    /// This replica lost the leader Lease; the process should exit and start over as a fresh
    /// candidate (client-go's controllers exit the same way).
    #[error("leadership lost")]
    LeadershipLost,
    /// The shard replica of a sharded manager could not start (a bad identity, bad timings).
    #[error("sharding over ring {ring:?} failed")]
    ShardingFailed {
        /// The ring.
        ring: String,
        /// The replica's error.
        #[source]
        source: kubegen_sharding::Error,
    },
    /// This replica's shard Lease was lost; the process should exit and join the ring again
    /// as a fresh shard (its objects were adopted by the others meanwhile).
    #[error("shard lease of ring {ring:?} lost")]
    ShardLost {
        /// The ring.
        ring: String,
    },
    /// A controller keyed by namespace was given a ring that hashes objects: one namespace's
    /// objects would be split between replicas that each judge the namespace.
    #[error(
        "controller {controller:?} groups by namespace but its ring does not shard by namespace (RingKey::Namespace)"
    )]
    ShardingByObject {
        /// The controller.
        controller: String,
    },
    /// The client configuration could not be loaded.
    #[error("loading the client configuration failed")]
    ConfigLoadFailed {
        /// The client's error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The client could not be built from its configuration.
    #[error("building the client failed")]
    ClientBuildFailed {
        /// The client's error.
        #[source]
        source: kubegen_client::Error,
    },
    /// A command-line flag has a value the runtime cannot use.
    #[error("{flag}: {reason}")]
    InvalidFlag {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The log subscriber could not be installed.
    #[error("installing the log subscriber failed: {reason}")]
    LoggingFailed {
        /// Why.
        reason: String,
    },
    /// A manifest could not be read or parsed, or names a kind the server does not serve.
    #[error("{}: {reason}", file.display())]
    ManifestUnreadable {
        /// The manifest file (or the name its text was given).
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The API server refused an object of a manifest.
    #[error("{}: creating {object} failed", file.display())]
    ManifestRejected {
        /// The manifest file.
        file: PathBuf,
        /// `Kind namespace/name` of the object.
        object: String,
        /// The API error (boxed: it is large and rare).
        #[source]
        source: Box<kubegen_client::Error>,
    },
    /// A document of a manifest could not be applied: its kind is not served, or the server
    /// refused it.
    #[error("{}: document {index} ({object}) failed", file.display())]
    DocumentFailed {
        /// The manifest file (or the name its text was given).
        file: PathBuf,
        /// The document's position in the file, from 1.
        index: usize,
        /// `Kind namespace/name` of the object.
        object: String,
        /// The client's error (boxed: it is large and rare).
        #[source]
        source: Box<kubegen_client::Error>,
    },
    /// Discovery failed or did not list what was needed.
    #[error("discovery of {path} failed: {reason}")]
    DiscoveryFailed {
        /// The discovery path asked.
        path: String,
        /// What went wrong, or what the server served instead.
        reason: String,
    },
    /// A CustomResourceDefinition did not become Established in time.
    #[error("CustomResourceDefinition {name} was not Established within {timeout:?}")]
    NotEstablished {
        /// The CRD's name.
        name: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// A webhook certificate or key could not be read, written or used.
    #[error("webhook certificate {}: {reason}", file.display())]
    CertificateUnreadable {
        /// The file (or directory).
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The CA bundle could not be written into a webhook configuration or CRD.
    #[error("injecting the webhook CA into {object} failed: {reason}")]
    CaBundleInjectionFailed {
        /// `resource/name` of the object.
        object: String,
        /// What went wrong.
        reason: String,
    },
    /// The TokenRequest for a ServiceAccount failed (no such ServiceAccount, not allowed, ...).
    #[error("requesting a token for ServiceAccount {namespace}/{name} failed")]
    TokenRequestFailed {
        /// The ServiceAccount's namespace.
        namespace: String,
        /// The ServiceAccount's name.
        name: String,
        /// The client's error (boxed: it is large and rare).
        #[source]
        source: Box<kubegen_client::Error>,
    },
    /// The TokenRequest was answered without a `status.token`.
    #[error("the TokenRequest for {namespace}/{name} answered no status.token")]
    TokenMissing {
        /// The ServiceAccount's namespace.
        namespace: String,
        /// The ServiceAccount's name.
        name: String,
    },
    /// A cached list selected on a field that has no index: controller-runtime's `index with name
    /// field:<field> does not exist`.
    #[error(
        "listing {kind} by field {field:?}: index with name field:{field} does not exist (register it with CachedClient::index_field)"
    )]
    FieldNotIndexed {
        /// The kind listed.
        kind: String,
        /// The field path selected on.
        field: String,
    },
    /// A field selector with a requirement the cache cannot answer from an index (`!=`).
    #[error("field selector {selector:?}: non-exact field matches are not supported by the cache")]
    FieldSelectorNotExact {
        /// The selector as given.
        selector: String,
    },
    /// Registering a field index failed (the field already has one).
    #[error("indexing {kind} by field {field:?} failed")]
    IndexFieldFailed {
        /// The kind indexed.
        kind: String,
        /// The field path.
        field: String,
        /// The cache's error.
        #[source]
        source: kubegen_cache::Error,
    },
    /// A kubeconfig could not be rewritten (no usable current context).
    #[error("kubeconfig: {reason}")]
    KubeconfigInvalid {
        /// What is wrong with it.
        reason: String,
    },
    /// A member cluster's kubeconfig cannot be used (multi-cluster fleet).
    #[error("cluster {cluster}: {reason}")]
    ClusterUnusable {
        /// The cluster's name.
        cluster: String,
        /// What is wrong with how it is reached.
        reason: String,
    },
    /// A cluster provider cannot watch its source at all (multi-cluster fleet).
    #[error("cluster provider {provider}: {reason}")]
    ProviderFailed {
        /// The provider's name.
        provider: String,
        /// What failed.
        reason: String,
    },
}
