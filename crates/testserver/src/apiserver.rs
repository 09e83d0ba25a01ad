//! [`ApiServer`], the handle the server's parts share: the storage ([`Storage`]: state and watch
//! wake-ups), options, the authorizer, the token signing key and faults. The pipeline (`pipeline.rs`)
//! builds it and hands each handler what it needs: write handlers get only the storage handle,
//! readers, watches, reviews and discovery the whole server (options, faults, the authorizer).
//!
//! Mirrors what kube-apiserver's handlers receive from their `RequestScope` and storage: here one
//! struct, defined apart from the pipeline so that the handlers may depend on it and the pipeline
//! on the handlers, never the other way round.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::audit::AuditLog;
use crate::authz::Authorizer;
use crate::faults::Faults;
use crate::options::ServerOptions;
use crate::registry::ResourceDefinition;
use crate::storage::Storage;
use crate::storage::tokens::TokenKeys;

pub(crate) struct Inner {
    pub(crate) options: ServerOptions,
    /// Decides every request: RBAC over the store when `options.rbac`, else `options.authorizer`.
    pub(crate) authorizer: Arc<dyn Authorizer>,
    /// The key ServiceAccount tokens are signed with (TokenRequest) and checked against.
    pub(crate) tokens: TokenKeys,
    /// The objects and resource table, and the wake-up of watches.
    pub(crate) storage: Storage,
    pub(crate) faults: Faults,
    /// The audit policy and log, when [`ServerOptions::audit_policy`] is set.
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// `host:port` the listener serves on, for discovery's `serverAddressByClientCIDRs`.
    pub(crate) address: Mutex<String>,
}

/// The server's logic without a socket: the same router the HTTP listener uses. Cheap to clone;
/// clones share one store.
///
/// # Guarantees
/// - Every request gets a response: failures are `Status` bodies, never panics or dropped
///   connections.
/// - Watch responses stream: the body yields one chunk per event as it happens.
#[derive(Clone)]
pub struct ApiServer {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl ApiServer {
    /// Fault injection for requests handled by this server.
    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    /// Serves a resource without a CustomResourceDefinition object (what a fake clientset needs to
    /// register its custom kinds). Replaces an existing definition with the same group, version
    /// and plural; stored objects are kept.
    pub fn register(&self, definition: ResourceDefinition) {
        self.inner.storage.lock().registry.insert(definition);
    }

    /// The audit events written so far (with [`ServerOptions::audit_policy`]), oldest first:
    /// the `audit.k8s.io/v1` `Event`s of the log, as JSON values. Memory keeps the newest
    /// 100,000; empty without a policy.
    pub fn audit_events(&self) -> Vec<serde_json::Value> {
        self.inner
            .audit
            .as_ref()
            .map(|log| log.events())
            .unwrap_or_default()
    }

    /// The newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.inner.storage.resource_version()
    }

    /// Wakes watch tasks after a write.
    pub(crate) fn notify(&self, rv: u64) {
        self.inner.storage.notify(rv);
    }
}
