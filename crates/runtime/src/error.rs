//! Why the runtime stopped or could not start.

use std::net::SocketAddr;

/// An error of the runtime's machinery (never of a reconcile: those are retried).
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
}
