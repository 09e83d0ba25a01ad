//! A provider over kubeconfig Secrets in the hub cluster: every Secret matching a label selector
//! (in one namespace or all) is one member cluster. A Secret that appears engages its cluster,
//! one whose kubeconfig changes (rotated credentials) re-engages it, one that is deleted or
//! stops matching disengages it. The counterpart of multicluster-runtime's
//! `providers/kubeconfig` (Secrets labelled `sigs.k8s.io/multicluster-runtime-kubeconfig`) and of
//! Cluster API's kubeconfig Secrets (`util/secret`: `<cluster>-kubeconfig`, key `value`,
//! labelled `cluster.x-k8s.io/cluster-name`), which [`SecretOptions::cluster_api`] selects.
//!
//! # Which key, which name
//! The kubeconfig is read from [`SecretOptions::key`] if set, else from `kubeconfig`, else from
//! `value` (Cluster API's key). The cluster's name is the Secret's
//! `cluster.x-k8s.io/cluster-name` label when it has one, else the Secret's name without a
//! `-kubeconfig` suffix; with [`SecretOptions::namespace`] unset, it is prefixed by the
//! Secret's namespace (`<namespace>/<name>`), since two namespaces may name the same cluster.
//!
//! # How changes are noticed
//! The provider runs an informer of its own over the hub (only the selected Secrets are listed
//! and cached, `provider.rs`'s `follow_hub`). Every event wakes one pass that compares the cached
//! Secrets with what it reported last: events are only a nudge, the cache is the truth, so a
//! burst of updates is one pass and no event can be misapplied out of order.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kubegen_client::Client;

use crate::error::Error;
use crate::multicluster::provider::{
    ClusterSink, HubSelection, Provider, fingerprint, follow_hub, kubeconfig_to_config,
};

/// Cluster API's label naming the cluster a Secret belongs to.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// multicluster-runtime's kubeconfig provider's label on its Secrets.
pub const MULTICLUSTER_RUNTIME_LABEL: &str = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/// Which Secrets hold members' kubeconfigs.
#[derive(Clone, Debug)]
pub struct SecretOptions {
    namespace: Option<String>,
    label_selector: String,
    key: Option<String>,
}

impl Default for SecretOptions {
    /// multicluster-runtime's convention: Secrets labelled
    /// `sigs.k8s.io/multicluster-runtime-kubeconfig=true`, in every namespace.
    fn default() -> Self {
        SecretOptions {
            namespace: None,
            label_selector: format!("{MULTICLUSTER_RUNTIME_LABEL}=true"),
            key: None,
        }
    }
}

impl SecretOptions {
    /// Cluster API's convention: Secrets labelled `cluster.x-k8s.io/cluster-name` (whatever its
    /// value), in `namespace`, the kubeconfig under `value`.
    pub fn cluster_api(namespace: &str) -> SecretOptions {
        SecretOptions {
            namespace: Some(namespace.to_owned()),
            label_selector: CLUSTER_NAME_LABEL.to_owned(),
            key: Some("value".to_owned()),
        }
    }

    /// Only Secrets in `namespace` (default: all namespaces).
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> SecretOptions {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Only Secrets matching `selector` (a label selector, `kubectl -l` syntax).
    #[must_use]
    pub fn label_selector(mut self, selector: &str) -> SecretOptions {
        selector.clone_into(&mut self.label_selector);
        self
    }

    /// The data key holding the kubeconfig.
    #[must_use]
    pub fn key(mut self, key: &str) -> SecretOptions {
        self.key = Some(key.to_owned());
        self
    }

    /// The cluster a Secret stands for, and its kubeconfig bytes.
    fn cluster_of<'a>(&self, secret: &'a Secret) -> Result<(String, &'a [u8]), String> {
        let meta = &secret.metadata;
        let secret_name = meta.name.as_deref().unwrap_or_default();
        let labelled = meta
            .labels
            .as_ref()
            .and_then(|labels| labels.get(CLUSTER_NAME_LABEL))
            .filter(|name| !name.is_empty());
        let name = labelled.map_or_else(
            || {
                secret_name
                    .strip_suffix("-kubeconfig")
                    .unwrap_or(secret_name)
                    .to_owned()
            },
            Clone::clone,
        );
        let name = match (&self.namespace, &meta.namespace) {
            (None, Some(namespace)) => format!("{namespace}/{name}"),
            _ => name,
        };
        let data = secret.data.as_ref();
        let keys: Vec<&str> = match &self.key {
            Some(key) => vec![key.as_str()],
            None => vec!["kubeconfig", "value"],
        };
        let bytes = keys
            .iter()
            .find_map(|key| data.and_then(|data| data.get(*key)))
            .ok_or_else(|| format!("Secret {secret_name} has no data key {}", keys.join(" or ")))?;
        Ok((name, bytes.0.as_slice()))
    }
}

/// Member clusters from kubeconfig Secrets in the hub. See the module docs.
#[derive(Clone, Debug)]
pub struct KubeconfigSecrets {
    hub: Client,
    options: SecretOptions,
}

impl KubeconfigSecrets {
    /// Secrets chosen by `options`, read with `hub` (the manager's client, usually).
    pub fn new(hub: Client, options: SecretOptions) -> KubeconfigSecrets {
        KubeconfigSecrets { hub, options }
    }

    /// Reports what changed between the cached Secrets and `seen` (cluster → fingerprint).
    fn pass(&self, secrets: &[Arc<Secret>], sink: &ClusterSink, seen: &mut BTreeMap<String, u64>) {
        let mut now = BTreeMap::new();
        for secret in secrets {
            let found = self.options.cluster_of(secret).and_then(|(name, bytes)| {
                let text = String::from_utf8_lossy(bytes);
                let origin = Path::new(secret.metadata.name.as_deref().unwrap_or("secret"));
                kubeconfig_to_config(&name, &text, origin)
                    .map(|config| (name, config, fingerprint(bytes)))
                    .map_err(|error| error.to_string())
            });
            match found {
                Ok((name, config, print)) => {
                    if seen.get(&name) != Some(&print) {
                        sink.engage(&name, config, print);
                    }
                    now.insert(name, print);
                }
                Err(reason) => tracing::warn!(
                    secret = secret.metadata.name.as_deref().unwrap_or_default(),
                    reason,
                    "kubeconfig Secret unusable; its cluster is not engaged"
                ),
            }
        }
        for gone in seen.keys().filter(|name| !now.contains_key(*name)) {
            sink.disengage(gone);
        }
        *seen = now;
    }
}

impl Provider for KubeconfigSecrets {
    fn name(&self) -> &str {
        "kubeconfig-secrets"
    }

    fn run(
        &self,
        sink: ClusterSink,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            let selection = HubSelection {
                provider: self.name(),
                namespace: self.options.namespace.clone(),
                label_selector: Some(self.options.label_selector.clone()),
            };
            let mut seen = BTreeMap::new();
            follow_hub::<Secret>(&self.hub, selection, stop, |secrets| {
                self.pass(secrets, &sink, &mut seen);
            })
            .await
        })
    }
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
