//! The one error type of this crate.

/// What went wrong in a controller's sync. A failed sync is retried with backoff by its
/// workqueue, as in kube-controller-manager.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request to the API server failed; `action` says which (`create pods for
    /// ns/web-abc`, `update status of deployment ns/web`).
    #[error("{action}")]
    RequestFailed {
        /// The request that failed.
        action: String,
        /// The client's error, carrying the server's `Status`.
        #[source]
        source: kubegen_client::Error,
    },
    /// An object cannot be acted on as it is (e.g. an invalid label selector).
    #[error("{object}: {reason}")]
    InvalidObject {
        /// `kind namespace/name`.
        object: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The informers did not sync before the controllers could start.
    #[error("informer caches did not sync")]
    CacheSyncFailed(#[source] kubegen_cache::Error),
}

impl Error {
    /// Whether the API server answered 409 Conflict (a stale resourceVersion).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::RequestFailed { source, .. } if source.is_conflict())
    }

    /// Whether the API server answered 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::RequestFailed { source, .. } if source.is_not_found())
    }

    /// Whether the API server answered 409 AlreadyExists.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::RequestFailed { source, .. } if source.is_already_exists())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps a client error with the action that failed.
pub(crate) fn request(action: impl Into<String>) -> impl FnOnce(kubegen_client::Error) -> Error {
    let action = action.into();
    move |source| Error::RequestFailed { action, source }
}
