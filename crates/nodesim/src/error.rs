//! The one error type of this crate.

/// What went wrong in the simulator. A failed write is retried (a Node's next heartbeat, a
/// Pod's key requeued with backoff), as the kubelet and the scheduler retry theirs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed; `action` says which (`bind pod ns/web-abc to
    /// nodesim-0`, `renew lease of nodesim-1`).
    #[error("{action}")]
    RequestFailed {
        /// The request that failed.
        action: String,
        /// The client's error, carrying the server's `Status`.
        #[source]
        source: kubegen_client::Error,
    },
    /// An object the simulator built could not be read as its typed form (a bug here).
    #[error("building {what}")]
    BuildFailed {
        /// What was being built.
        what: String,
        /// Why it does not decode.
        #[source]
        source: serde_json::Error,
    },
    /// The simulated kubelet's HTTPS server could not start (the port is taken).
    #[error("kubelet server: {0}")]
    KubeletServerFailed(String),
    /// The informers did not sync before the simulator could start.
    #[error("informer caches did not sync")]
    CacheSyncFailed(#[source] kubegen_cache::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a client error with the action that failed.
pub(crate) fn request(action: impl Into<String>) -> impl FnOnce(kubegen_client::Error) -> Error {
    let action = action.into();
    move |source| Error::RequestFailed { action, source }
}

/// Decodes `value` as the typed object `K` (`what` names it in the error).
pub(crate) fn typed<K: serde::de::DeserializeOwned>(
    what: &str,
    value: serde_json::Value,
) -> Result<K> {
    serde_json::from_value(value).map_err(|source| Error::BuildFailed {
        what: what.to_string(),
        source,
    })
}
