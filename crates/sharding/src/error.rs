//! The crate's one error type.

/// What can go wrong setting up or running a replica.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shard Lease's elector refused: inconsistent timings (see
    /// `kubegen_leaderelection::LeaderElectionConfig`) or the replica is already running.
    #[error("shard lease: {0}")]
    Lease(#[from] kubegen_leaderelection::Error),
    /// The informer factory had made its informer of the sharded kind before the replica
    /// could make it the shard's.
    #[error(
        "the factory's informer of {kind} was made before the shard replica: it would see every shard"
    )]
    InformerTaken {
        /// The sharded kind.
        kind: String,
    },
    /// The identity is not usable as a Lease name and label value.
    #[error("shard identity {identity:?}: {why}")]
    Identity {
        /// The identity given.
        identity: String,
        /// What is wrong with it.
        why: &'static str,
    },
}
