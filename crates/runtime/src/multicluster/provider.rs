//! Where clusters come from: the one [`Provider`] trait every source of clusters implements, and
//! the [`ClusterSink`] through which it tells the fleet to engage or disengage a cluster. The
//! counterpart of multicluster-runtime's `multicluster.Provider` (`pkg/multicluster`), whose
//! providers call `mgr.Engage(ctx, name, cluster)` and cancel the cluster's context to
//! disengage it.
//!
//! # Differences from multicluster-runtime
//! There a provider builds the `cluster.Cluster` (client, cache) itself and hands it over. Here a
//! provider only says *which* clusters exist and how to reach them (a name and a
//! [`kubegen_client::Config`]): the fleet builds every cluster's client, informers and recorder
//! the same way, so a provider is a few dozen lines of discovery and cannot get the wiring
//! wrong. Rotated credentials are a new [`ClusterSink::engage`] for a known name with a new
//! fingerprint: the fleet replaces the cluster (disengage, then engage), as multicluster-runtime's
//! kubeconfig provider does when a Secret's content changes.

use std::hash::{Hash, Hasher};
use std::path::Path;

use futures_util::future::BoxFuture;
use kubegen_client::{Config, Kubeconfig, LoadOptions};
use tokio::sync::mpsc;

use crate::error::Error;

/// What a provider tells the fleet.
#[derive(Debug)]
pub(crate) enum ClusterEvent {
    /// The cluster `name` exists and is reached with `config`; `fingerprint` changes when the
    /// way to reach it (server, credentials) changes.
    Engage {
        name: String,
        config: Box<Config>,
        fingerprint: u64,
    },
    /// The cluster `name` is gone.
    Disengage { name: String },
}

/// The fleet's inbox: a provider engages and disengages clusters through it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ClusterSink(pub(crate) mpsc::UnboundedSender<ClusterEvent>);

impl ClusterSink {
    /// Engages (or keeps) the cluster `name`, reached with `config`. Sending the same name again
    /// with another `fingerprint` re-engages it (rotated credentials, a moved server); with the
    /// same fingerprint it changes nothing.
    pub fn engage(&self, name: &str, config: Config, fingerprint: u64) {
        let _ = self.0.send(ClusterEvent::Engage {
            name: name.to_owned(),
            config: Box::new(config),
            fingerprint,
        });
    }

    /// Disengages the cluster `name`: its controllers stop and its informers end their watches.
    /// A name the fleet does not know is ignored.
    pub fn disengage(&self, name: &str) {
        let _ = self.0.send(ClusterEvent::Disengage {
            name: name.to_owned(),
        });
    }
}

/// A source of clusters: a list of files, Secrets in a hub cluster, an inventory API.
///
/// [`Provider::run`] reports the clusters it finds through the sink, keeps watching its source
/// and reports every change, until `stop` resolves; it should not disengage its clusters on
/// stop (the fleet disengages every cluster itself when it stops).
pub trait Provider: Send + Sync + 'static {
    /// The provider's name, for logs.
    fn name(&self) -> &str;

    /// Watches the source until `stop`, engaging and disengaging clusters through `sink`.
    ///
    /// # Errors
    /// The source cannot be watched at all (a hub informer could not be set up). A single bad
    /// entry (an unparsable kubeconfig) is logged and skipped, never an error.
    fn run(
        &self,
        sink: ClusterSink,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), Error>>;
}

/// The client configuration a kubeconfig document describes (its current context), for the
/// cluster `cluster`; `origin` is where the document came from (a file's path: relative paths
/// inside it resolve against its folder).
///
/// # Errors
/// [`Error::ClusterUnusable`] naming the cluster when the document does not parse or has no
/// usable current context.
pub fn kubeconfig_to_config(cluster: &str, yaml: &str, origin: &Path) -> Result<Config, Error> {
    let unusable = |source: kubegen_client::Error| Error::ClusterUnusable {
        cluster: cluster.to_owned(),
        reason: source.to_string(),
    };
    let kubeconfig = Kubeconfig::parse(yaml, origin).map_err(unusable)?;
    Config::from_kubeconfig(&kubeconfig, &LoadOptions::default()).map_err(unusable)
}

/// A fingerprint of what reaches a cluster (a kubeconfig's bytes): equal bytes, equal prints.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}
