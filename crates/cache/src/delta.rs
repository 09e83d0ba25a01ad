//! The vocabulary of change: what the reflector tells the informer about one object.
//!
//! Mirrors the `Delta`, `Deltas` and `DeletedFinalStateUnknown` types of client-go
//! `tools/cache/delta_fifo.go`, with enums instead of `interface{}` so that no handler ever
//! needs a type switch to find out whether it got an object or a tombstone.

use std::sync::Arc;

use crate::{key::ObjectKey, stored::Stored};

/// One change to one object, as queued in the [`DeltaFifo`](crate::DeltaFifo).
///
/// Payloads are `Arc<K>`: the same allocation travels from the reflector through the FIFO into
/// the indexer and out to every handler, and nobody can mutate it on the way.
#[derive(Debug)]
pub enum Delta<K> {
    /// A watch reported a new object.
    Added(Arc<K>),
    /// A watch reported a changed object.
    Updated(Arc<K>),
    /// The object is gone: seen deleted by a watch, or missing from a relist.
    Deleted(DeletedObject<K>),
    /// The object was part of a full list (`Replace`). The informer turns it into an add or an
    /// update depending on whether the indexer already knew the key.
    Replaced(Arc<K>),
    /// A periodic resync replayed the cached object. Not news from the server.
    Sync(Arc<K>),
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Added(o) => Self::Added(Arc::clone(o)),
            Self::Updated(o) => Self::Updated(Arc::clone(o)),
            Self::Deleted(d) => Self::Deleted(d.clone()),
            Self::Replaced(o) => Self::Replaced(Arc::clone(o)),
            Self::Sync(o) => Self::Sync(Arc::clone(o)),
        }
    }
}

impl<K> Delta<K> {
    /// The object this delta carries (for a tombstone, the last known state).
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Added(o) | Self::Updated(o) | Self::Replaced(o) | Self::Sync(o) => o,
            Self::Deleted(d) => d.object(),
        }
    }

    /// Short name of the delta type, for logs and traces.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Added(_) => "Added",
            Self::Updated(_) => "Updated",
            Self::Deleted(_) => "Deleted",
            Self::Replaced(_) => "Replaced",
            Self::Sync(_) => "Sync",
        }
    }
}

/// All pending deltas of one key, oldest first. Never empty when handed out by
/// [`DeltaFifo::pop`](crate::DeltaFifo::pop).
pub type Deltas<K> = Vec<Delta<K>>;

/// What a delete notification carries.
///
/// # Why a tombstone?
/// If the watch was down while an object was deleted, the reflector only learns about it on the
/// next relist, when the key is simply missing. The final state of the object is then unknown:
/// all we have is what the cache last saw. client-go hands out a `DeletedFinalStateUnknown` in
/// an `interface{}`; here it is a variant, so the compiler reminds every handler it can happen.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// A watch delivered the deletion with the object's final state.
    Known(Arc<K>),
    /// The deletion was inferred from a relist; `last_known` is the cached state, possibly stale.
    Tombstone {
        /// The key of the deleted object.
        key: ObjectKey,
        /// The last state the cache had seen.
        last_known: Arc<K>,
    },
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Known(o) => Self::Known(Arc::clone(o)),
            Self::Tombstone { key, last_known } => Self::Tombstone {
                key: key.clone(),
                last_known: Arc::clone(last_known),
            },
        }
    }
}

impl<K> DeletedObject<K> {
    /// The object: its final state, or the last known state for a tombstone.
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Known(o) => o,
            Self::Tombstone { last_known, .. } => last_known,
        }
    }

    /// Whether this is a tombstone (the deletion was inferred from a relist).
    pub fn is_tombstone(&self) -> bool {
        matches!(self, Self::Tombstone { .. })
    }
}

/// A delta as the [`DeltaFifo`](crate::DeltaFifo) holds it: the object in the shape the
/// informer's store keeps ([`Stored`]), so that a byte-backed informer queues bytes, not
/// decoded objects (a first list queues every object at once). Handlers get [`Delta`]s, decoded
/// when the key is popped.
pub(crate) enum Queued<K> {
    /// [`Delta::Added`].
    Added(Stored<K>),
    /// [`Delta::Updated`].
    Updated(Stored<K>),
    /// [`Delta::Deleted`]: the final state, or for a `tombstone` the last known one.
    Deleted {
        /// The object's final (or last known) state.
        last: Stored<K>,
        /// Whether the deletion was inferred from a relist ([`DeletedObject::Tombstone`]).
        tombstone: bool,
    },
    /// [`Delta::Replaced`].
    Replaced(Stored<K>),
    /// [`Delta::Sync`].
    Sync(Stored<K>),
}

impl<K> Queued<K> {
    /// The object this delta carries.
    pub(crate) fn entry(&self) -> &Stored<K> {
        match self {
            Self::Added(s) | Self::Updated(s) | Self::Replaced(s) | Self::Sync(s) => s,
            Self::Deleted { last, .. } => last,
        }
    }

    /// Short name of the delta type, as [`Delta::type_name`].
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Self::Added(_) => "Added",
            Self::Updated(_) => "Updated",
            Self::Deleted { .. } => "Deleted",
            Self::Replaced(_) => "Replaced",
            Self::Sync(_) => "Sync",
        }
    }

    /// Whether this is a deletion inferred from a relist.
    pub(crate) fn is_tombstone(&self) -> bool {
        matches!(
            self,
            Self::Deleted {
                tombstone: true,
                ..
            }
        )
    }

    /// The [`Delta`] of `key` with the object `obj` (this delta's entry, decoded).
    pub(crate) fn into_delta(self, key: ObjectKey, obj: Arc<K>) -> Delta<K> {
        match self {
            Self::Added(_) => Delta::Added(obj),
            Self::Updated(_) => Delta::Updated(obj),
            Self::Replaced(_) => Delta::Replaced(obj),
            Self::Sync(_) => Delta::Sync(obj),
            Self::Deleted {
                tombstone: false, ..
            } => Delta::Deleted(DeletedObject::Known(obj)),
            Self::Deleted {
                tombstone: true, ..
            } => Delta::Deleted(DeletedObject::Tombstone {
                key,
                last_known: obj,
            }),
        }
    }
}
