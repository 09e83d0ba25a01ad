//! The crate's one error type.

use std::time::Duration;

/// Everything that can go wrong in `kubegen-cache` outside the reflector (whose list and watch
/// failures are retried internally and reported through the watch-error hook as
/// [`ListWatchError`](crate::ListWatchError)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `add_indexers` was given a name that is already registered.
    #[error("indexer {name:?} already exists")]
    IndexerConflict {
        /// The conflicting index name.
        name: String,
    },
    /// A query named an index that does not exist.
    #[error("index {name:?} does not exist")]
    IndexNotFound {
        /// The unknown index name.
        name: String,
    },
    /// `wait_for_cache_sync` was asked about an informer that was never started: it would
    /// never sync, so waiting is a bug in the caller.
    #[error("informer {name} was never started")]
    NotStarted {
        /// The informer's name.
        name: String,
    },
    /// `wait_for_cache_sync` gave up.
    #[error("caches not synced after {timeout:?}: {}", pending.join(", "))]
    SyncTimeout {
        /// How long we waited.
        timeout: Duration,
        /// Names of the informers that had not synced.
        pending: Vec<String>,
    },
    /// `shutdown_and_wait` gave up waiting for some of the informer's tasks; they were aborted.
    #[error("informer {name}: tasks still running {timeout:?} after shutdown, aborted: {}", tasks.join(", "))]
    ShutdownTimeout {
        /// The informer's name.
        name: String,
        /// How long we waited.
        timeout: Duration,
        /// The tasks that had not ended (`reflector`, `resync timer`, `process loop`,
        /// `handler #<n>`).
        tasks: Vec<String>,
    },
    /// A byte-backed cache holds bytes for this object that do not decode (see
    /// [`StoreMode::Bytes`](crate::StoreMode)). The cache keeps them; the next change from the
    /// server replaces them.
    #[error("cached object {key} does not decode")]
    Undecodable {
        /// The object's cache key (`namespace/name` or `name`).
        key: String,
        /// What the decoder reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The informer was shut down; it accepts no more handlers and will not run again.
    #[error("informer {name} is shut down")]
    ShutDown {
        /// The informer's name.
        name: String,
    },
}
