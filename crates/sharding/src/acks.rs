//! The ring acknowledgements a server-side shard has written and read (`server_side.rs` runs the
//! protocol), kept apart from the protocol so the replica's state can hold them without importing
//! the passes that update them.

use crate::ring::HashRing;

/// What a replica knows of the acknowledgements; see `server_side.rs` for the protocol.
#[derive(Debug, Default)]
pub(crate) struct Acks {
    /// The ring this replica acknowledged and has seen its acknowledgement of.
    pub(crate) mine: Option<HashRing>,
    /// Written, not yet seen in the Lease cache: the ring and the Lease's new resourceVersion.
    pub(crate) pending: Option<(HashRing, u64)>,
    /// The other live shards' acknowledged rings, read after `mine` was seen.
    pub(crate) others: Vec<(String, HashRing)>,
}

impl Acks {
    /// Whether `me` may start work on hash `h` now (the ring `R` gives `h` to it already).
    pub(crate) fn allows(&self, me: &str, h: u64) -> bool {
        let Some(mine) = &self.mine else {
            return false;
        };
        mine.owner_of_hash(h) == Some(me)
            && self
                .others
                .iter()
                .all(|(shard, ring)| ring.owner_of_hash(h) != Some(shard.as_str()))
    }

    /// The ring acknowledged last (seen or not).
    pub(crate) fn latest(&self) -> Option<&HashRing> {
        self.pending
            .as_ref()
            .map(|(ring, _)| ring)
            .or(self.mine.as_ref())
    }
}

#[cfg(test)]
#[path = "acks_tests.rs"]
mod tests;
