//! The crate's one error type.

/// What can go wrong setting up or running a replica.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shard Lease's timings are inconsistent (see `kubegen_leaderelection::LeaderElectionConfig`).
    #[error("shard lease configuration: {0}")]
    LeaseConfig(#[from] kubegen_leaderelection::Error),
    /// The identity is not usable as a Lease name and label value.
    #[error("shard identity {identity:?}: {why}")]
    Identity {
        /// The identity given.
        identity: String,
        /// What is wrong with it.
        why: &'static str,
    },
}
