//! The crate's one error type.
//!
//! Failures of individual API calls while electing are *not* errors of [`crate::LeaderElector::run`]:
//! the loop logs them and retries, exactly like client-go. Only misuse and the health check surface
//! here.

use std::time::Duration;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// [`crate::LeaderElectionConfig::validate`] rejected the configuration.
    #[error("invalid leader election config: {reason}")]
    InvalidConfig {
        /// Which rule was broken, in words.
        reason: String,
    },
    /// [`crate::LeaderElector::run`] was called while another `run` of the same elector is active.
    #[error("this leader elector is already running")]
    AlreadyRunning,
    /// The health check found a leader whose last successful renewal is too old: its renew loop is
    /// stuck or the API server is unreachable while it still believes it leads.
    #[error("leader has not renewed its lease for {since_renewal:?} (allowed: {allowed:?})")]
    RenewalOverdue {
        /// Time since the last successful renewal.
        since_renewal: Duration,
        /// Lease duration plus the tolerance passed to the health check.
        allowed: Duration,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
