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
use std::sync::Arc;

use futures_util::future::BoxFuture;
use kube_core::Selector;
use kubegen_cache::{ClientListWatchSource, FactoryOptions, HandlerFns, InformerFactory};
use kubegen_client::{ApiObject, Client, Config, Kubeconfig, LoadOptions};
use tokio::sync::{Notify, mpsc};

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

/// Where a hub-backed provider looks: one namespace or all, and a label selector.
pub(crate) struct HubSelection<'a> {
    pub(crate) provider: &'a str,
    pub(crate) namespace: Option<String>,
    pub(crate) label_selector: Option<String>,
}

/// Follows the objects of kind `K` that `selection` picks in the hub until `stop`: an informer of
/// its own lists and watches them, and every change wakes one call of `pass` with all the cached
/// objects. Events are only a nudge, the cache is the truth: a burst of updates is one pass, no
/// event is misapplied out of order, and `pass` runs only once the cache holds a full list
/// (a cluster is judged gone against a full list only).
///
/// # Errors
/// [`Error::ProviderFailed`] when the informer cannot take a handler.
pub(crate) async fn follow_hub<K: ApiObject>(
    hub: &Client,
    selection: HubSelection<'_>,
    stop: BoxFuture<'static, ()>,
    mut pass: impl FnMut(&[Arc<K>]),
) -> Result<(), Error> {
    let selector = selection.label_selector;
    let factory_options = FactoryOptions::default()
        .namespace(selection.namespace)
        .tweak_list_options(Arc::new(move |list| {
            list.label_selector.clone_from(&selector);
        }));
    let factory = InformerFactory::new(ClientListWatchSource::new(hub.clone()), factory_options);
    let informer = factory.informer::<K>();
    let nudge = Arc::new(Notify::new());
    let (a, u, d) = (nudge.clone(), nudge.clone(), nudge.clone());
    let handler = HandlerFns::<K>::new()
        .on_add(move |_, _| a.notify_one())
        .on_update(move |_, _| u.notify_one())
        .on_delete(move |_| d.notify_one());
    informer
        .add_event_handler(handler)
        .map_err(|source| Error::ProviderFailed {
            provider: selection.provider.to_owned(),
            reason: source.to_string(),
        })?;
    factory.start();
    let lister = informer.lister();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = nudge.notified() => {
                if informer.has_synced() {
                    pass(&lister.list(&Selector::default()));
                } else {
                    nudge.notify_one();
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            }
            () = &mut stop => break,
        }
    }
    factory.shutdown().await;
    Ok(())
}
