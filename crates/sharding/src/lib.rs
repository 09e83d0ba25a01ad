//! Horizontal scale-out without an external sharder: the replicas of one controller split its
//! objects between them, each working only on its own shard, and re-split them when a replica
//! joins, leaves or dies. Raising `replicas` is all an operator does; nothing else is installed.
//!
//! How (each step in its own file):
//! 1. Membership (`membership.rs`): every replica holds a shard Lease named after itself and
//!    labelled with the ring (`alpha.sharding.timebertt.dev/controllerring=<ring>`), renewed by
//!    `kubegen-leaderelection` exactly as a leader renews its lock. A replica whose Lease expires
//!    is out of the ring.
//! 2. Assignment (`ring.rs`, `key.rs`): a consistent-hash ring over the live shards, computed by
//!    every replica from the Leases alone, on the FNV-1a 64 circle of KEP-5866.
//! 3. Selection (`config.rs`, `selection.rs`, `list_watch.rs`): each replica's informer lists,
//!    watches and caches only its shard, one of two ways, chosen per server ([`Selection`]; by
//!    default the replica asks the server once, at start):
//!    - **server-side**, where the server serves KEP-5866's `shardSelector` (alpha in v1.36,
//!      behind the `ShardedListAndWatch` gate): the informer selects the shard's arcs of the
//!      ring over the hash of `metadata.uid` (or `metadata.namespace`, [`RingKey::Namespace`])
//!      and relists when the ring changes. Nothing is written on the objects. The server hashes
//!      the UID, not `namespace/name`, so an owner and its dependents do not share a shard;
//!    - **labels** everywhere else (every server without the gate, e.g. v1.36 by default and
//!      1.15), compatible with timebertt/kubernetes-controller-sharding (`labels.rs`): objects
//!      carry `shard.alpha.sharding.timebertt.dev/<ring>=<shard>` and the informer selects on
//!      its shard's label. The ring is keyed by `namespace/name` of the object or of its
//!      controller owner, so an owner and its dependents share a shard.
//! 4. Handover (`replica.rs`, with `assigner.rs` or `server_side.rs`): when the ring moves an
//!    object, its old shard finishes the reconcile in flight and acknowledges before the new
//!    owner starts. With labels, the old shard removes its label itself (or a
//!    `drain.alpha.sharding.timebertt.dev/<ring>` label asks it to), and the new owner labels
//!    what is unlabelled; with `shardSelector`, every shard writes the ring it has adopted on
//!    its own Lease, and a shard starts an object it gained only once every live shard's
//!    acknowledged ring gives it away. A shard whose Lease expired is out either way. No object
//!    is reconciled by two replicas at once, none is left behind.
//!
//! 5. Dependents (`dependents.rs`): with labels, the objects of the kinds a controller owns can
//!    follow their controller owner's shard ([`Dependents::follow`]), labelled by the replica,
//!    so a replica caches only its share of them too; they are handed over before their owner
//!    and an owner's reconcile waits until its dependents are in the new shard's cache.
//!
//! A controller built on `kubegen-runtime` gets all of this from manager options,
//! `ManagerOptions::sharding::<K>(Some(ReplicaConfig))` (and `shard_owned::<C>()` per owned
//! kind): the manager's informer of `K` becomes the shard's ([`Replica::in_factory`]) and its
//! worker loop calls [`Replica::begin`]. A controller that judges a namespace at a time keys
//! the ring by namespace ([`RingKey`]).
//!
//! | timebertt sharding                 | kubegen                       | file            |
//! |------------------------------------|-------------------------------|-----------------|
//! | shard Lease (`shardlease`)         | [`Replica`] (its elector)     | `replica.rs`    |
//! | sharder's ring (`consistenthash`)  | [`HashRing`]                  | `ring.rs`       |
//! | Lease states `ready` / `expired`   | [`is_live`]                   | `membership.rs` |
//! | sharder webhook + controller       | [`Replica`]'s assigner passes | `assigner.rs`   |
//! | `LabelShard`, `LabelDrain`         | [`Ring`]                      | `labels.rs`     |
//! | controlled resources               | [`Dependents`]                | `dependents.rs` |
//! | (none: KEP-5866 `shardSelector`)   | [`Selection::ShardSelector`]  | `server_side.rs`|
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `assigner`, `server_side`
//! - `replica`
//! - `dependents`
//! - `list_watch`, `membership`, `object`, `selection`
//! - `config`, `acks`
//! - `key`, `error`, `labels`, `ring`

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod acks;
mod assigner;
mod config;
mod dependents;
mod error;
mod key;
mod labels;
mod list_watch;
mod membership;
mod object;
mod replica;
mod ring;
mod selection;
mod server_side;

pub use config::{ReplicaConfig, Selection};
pub use dependents::Dependents;
pub use error::Error;
pub use key::{RingKey, ring_key};
pub use labels::{ACK_ANNOTATION, RING_LABEL, Ring, SELECTION_LABEL};
pub use membership::{is_live, ring_of};
pub use replica::{Refusal, Replica, WorkGuard};
pub use ring::{HashRing, SelectorField, VIRTUAL_NODES, hash};
