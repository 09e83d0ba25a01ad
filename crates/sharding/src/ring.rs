//! The consistent-hash ring: which live shard owns which object.
//!
//! Every replica builds the ring from the same input (the names of the live shard Leases) and so
//! computes the same assignment with nobody in charge: there is no sharder to ask. Each shard
//! places [`VIRTUAL_NODES`] tokens on the 64-bit FNV-1a circle; a key belongs to the shard of the
//! first token at or above its hash (wrapping around). Adding or removing one of `n` shards moves about
//! `1/n` of the keys, and only to or from that shard.
//!
//! The circle is the hash space of KEP-5866's `shardSelector` (FNV-1a 64, half-open ranges), so
//! [`HashRing::shard_selector`] turns a shard's arcs into the selector a server filters by. Keys
//! and tokens are placed with FNV-1a plus a finalizer (see `position`), UIDs for the server-side
//! path with plain FNV-1a, as the server hashes them.
//!
//! Mirrors the ring of timebertt/kubernetes-controller-sharding (`pkg/sharding/consistenthash`),
//! with KEP-5866's hash in place of xxhash.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Tokens per shard, timebertt's default. With 100, the fullest of five shards holds about 21% of
/// the keys where 32 tokens gave it 26%, and a ring's throughput is its fullest shard's: the
/// scale-out bench measured 3.9x one replica's at five replicas with 32. The cost is a longer
/// `shardSelector`, one range per arc: up to 100 ranges, about 10 KiB in a list or watch URL.
pub const VIRTUAL_NODES: usize = 100;

/// The exclusive upper bound of the hash space, 2^64.
const TOP: u128 = 1 << 64;

/// FNV-1a 64 of `value`: apimachinery `pkg/sharding/hash.go`'s `HashField`.
pub fn hash(value: &str) -> u64 {
    use std::hash::Hasher;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(value.as_bytes());
    hasher.finish()
}

/// A position on the circle for `value`: FNV-1a 64 followed by MurmurHash3's 64-bit finalizer.
///
/// FNV-1a alone is fine for random input (KEP-5866 hashes UIDs) but spreads strings that differ
/// only in their last characters (`ns/obj-001`, `ns/obj-002`, `pod-a#1`, `pod-a#2`) over a tiny
/// arc, because a late byte only reaches the high bits through a few multiplications; the
/// finalizer lets every input bit reach every output bit. (Found on a real cluster: without it
/// one of three shards got all 90 objects of a test.)
fn position(value: &str) -> u64 {
    let mut h = hash(value);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The field a server-side `shardSelector` hashes (KEP-5866 supports these two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorField {
    /// `object.metadata.uid`: spreads objects evenly, owners and dependents apart.
    Uid,
    /// `object.metadata.namespace`: a namespace stays on one shard.
    Namespace,
}

impl SelectorField {
    fn path(self) -> &'static str {
        match self {
            SelectorField::Uid => "object.metadata.uid",
            SelectorField::Namespace => "object.metadata.namespace",
        }
    }

    /// The value of this field of an object, as the server hashes it.
    pub fn of(self, meta: &ObjectMeta) -> &str {
        match self {
            SelectorField::Uid => meta.uid.as_deref(),
            SelectorField::Namespace => meta.namespace.as_deref(),
        }
        .unwrap_or("")
    }

    /// A `shardSelector` over the whole hash space: every object, and the word of a server that
    /// serves KEP-5866 in its `shardInfo`.
    pub(crate) fn everything(self) -> String {
        format!(
            "shardRange({}, '0x0000000000000000', '0x10000000000000000')",
            self.path()
        )
    }
}

/// A consistent-hash ring over a set of shard names.
///
/// # Invariants
/// `tokens` holds exactly `VIRTUAL_NODES` tokens per member except where two tokens collide (the
/// lexicographically first member keeps the token); it is empty only when there are no members.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashRing {
    tokens: BTreeMap<u64, String>,
}

impl HashRing {
    /// The ring over `members` (order and duplicates do not matter).
    pub fn new<S: AsRef<str>>(members: impl IntoIterator<Item = S>) -> HashRing {
        let mut names: Vec<String> = members.into_iter().map(|m| m.as_ref().to_owned()).collect();
        names.sort();
        names.dedup();
        let mut tokens = BTreeMap::new();
        for name in &names {
            for i in 0..VIRTUAL_NODES {
                tokens
                    .entry(position(&format!("{name}#{i}")))
                    .or_insert_with(|| name.clone());
            }
        }
        HashRing { tokens }
    }

    /// The members, sorted.
    pub fn members(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tokens.values().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The shard owning the key `key` (see [`crate::ring_key`]), None on an empty ring.
    pub fn owner(&self, key: &str) -> Option<&str> {
        self.owner_of_hash(position(key))
    }

    /// The shard owning hash value `h`: the member of the first token at or above `h`, wrapping.
    /// For server-side sharding `h` is the FNV-1a 64 of the object's UID ([`hash`]), the value a
    /// KEP-5866 server compares with [`HashRing::shard_selector`]'s ranges.
    pub fn owner_of_hash(&self, h: u64) -> Option<&str> {
        self.tokens
            .range(h..)
            .next()
            .or_else(|| self.tokens.iter().next())
            .map(|(_, m)| m.as_str())
    }

    /// The half-open arcs `[start, end)` of the hash space `member` owns, merged and sorted.
    pub fn ranges(&self, member: &str) -> Vec<(u128, u128)> {
        let mut arcs: Vec<(u128, u128)> = Vec::new();
        let mut push = |start: u128, end: u128| {
            if start == end {
                return;
            }
            match arcs.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => arcs.push((start, end)),
            }
        };
        let Some((&first, first_owner)) = self.tokens.iter().next() else {
            return arcs;
        };
        // [0, first token]: the first token's member (the wrap-around arc, lower half).
        if first_owner == member {
            push(0, u128::from(first) + 1);
        }
        let mut previous = u128::from(first) + 1;
        for (&token, owner) in self.tokens.iter().skip(1) {
            let end = u128::from(token) + 1;
            if owner == member {
                push(previous, end);
            }
            previous = end;
        }
        // (last token, 2^64): the wrap-around arc, upper half.
        if first_owner == member {
            push(previous, TOP);
        }
        arcs
    }

    /// `member`'s arcs as a KEP-5866 `shardSelector` over `field`, None when it owns nothing.
    pub fn shard_selector(&self, member: &str, field: SelectorField) -> Option<String> {
        let hex = |v: u128| {
            if v == TOP {
                "0x10000000000000000".to_owned()
            } else {
                format!("0x{v:016x}")
            }
        };
        let parts: Vec<String> = self
            .ranges(member)
            .into_iter()
            .map(|(s, e)| format!("shardRange({}, '{}', '{}')", field.path(), hex(s), hex(e)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" || "))
    }
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
