//! What the workload controllers share besides object metadata: the field manager they write
//! as, and how they word a failed request in Events and conditions.

use kube_core::Resource;
use kubegen_cache::HandlerFns;

use crate::{Error, Result};

/// The field manager of every write, as the real controller-manager's user agent yields it.
pub(crate) const FIELD_MANAGER: &str = "kube-controller-manager";

/// An error as Go's `%v` prints it in Events and conditions: the API server's message for a
/// refused request, the bare reason for an object that cannot be acted on.
pub(crate) fn go_message(error: &Error) -> String {
    match error {
        Error::RequestFailed { source, .. } => api_message(source),
        Error::InvalidObject { reason, .. } => reason.clone(),
        Error::CacheSyncFailed(_) => error.to_string(),
    }
}

/// A client error as Go's `%v` of the API error prints it: the `Status` message.
pub(crate) fn api_message(error: &kubegen_client::Error) -> String {
    error
        .status()
        .map_or_else(|| error.to_string(), |s| s.message.clone())
}

/// Whether a write failed because its namespace is being deleted (a `NamespaceTerminating`
/// cause): the controllers then record no Event, as every further write would fail the same way.
pub(crate) fn namespace_terminating(error: &kubegen_client::Error) -> bool {
    error
        .status()
        .and_then(|s| s.details.as_ref())
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"))
}

/// Registers a handler; fails only on an informer that was shut down.
pub(crate) fn register<K>(
    informer: &kubegen_cache::SharedIndexInformer<K>,
    handler: HandlerFns<K>,
) -> Result<()>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    informer
        .add_event_handler(handler)
        .map(drop)
        .map_err(Error::CacheSyncFailed)
}
