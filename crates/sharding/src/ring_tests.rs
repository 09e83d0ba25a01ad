use super::*;

#[test]
fn hash_is_go_fnv1a_64() {
    // Vectors from Go's `hash/fnv` New64a, which KEP-5866 servers use.
    assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(hash("abc"), 0xe71f_a219_0541_574b);
    assert_eq!(hash("test-uid-123"), 0xd0ba_6798_3455_6c0b);
}

#[test]
fn same_members_in_any_order_give_the_same_ring() {
    let a = HashRing::new(["r1", "r2", "r3"]);
    let b = HashRing::new(["r3", "r1", "r2", "r1"]);
    assert_eq!(a, b);
    assert_eq!(a.members(), vec!["r1", "r2", "r3"]);
    for i in 0..200 {
        let key = format!("ns/obj-{i}");
        assert_eq!(a.owner(&key), b.owner(&key));
    }
}

#[test]
fn empty_ring_owns_nothing() {
    let ring = HashRing::new(Vec::<String>::new());
    assert!(ring.is_empty());
    assert_eq!(ring.owner("ns/a"), None);
    assert_eq!(ring.shard_selector("r1", SelectorField::Uid), None);
}

#[test]
fn arcs_partition_the_hash_space_and_agree_with_owner() {
    let ring = HashRing::new(["r1", "r2", "r3"]);
    let mut all: Vec<(u128, u128, &str)> = Vec::new();
    for member in ring.members() {
        all.extend(ring.ranges(member).into_iter().map(|(s, e)| (s, e, member)));
    }
    all.sort_unstable();
    assert_eq!(all.first().map(|a| a.0), Some(0));
    assert_eq!(all.last().map(|a| a.1), Some(1 << 64));
    for pair in all.windows(2) {
        assert_eq!(pair[0].1, pair[1].0, "arcs must touch without overlap");
    }
    for (start, end, member) in &all {
        for h in [*start, end - 1] {
            let h = u64::try_from(h).unwrap();
            assert_eq!(ring.owner_of_hash(h), Some(*member), "hash {h:#x}");
        }
    }
}

#[test]
fn a_new_member_takes_keys_only_for_itself() {
    let before = HashRing::new(["r1", "r2", "r3"]);
    let after = HashRing::new(["r1", "r2", "r3", "r4"]);
    let mut moved = 0;
    for i in 0..2000 {
        let key = format!("ns/obj-{i}");
        let (old, new) = (before.owner(&key), after.owner(&key));
        if old != new {
            assert_eq!(new, Some("r4"), "{key} moved between old members");
            moved += 1;
        }
    }
    // About a quarter of the keys (500) move to the new member.
    assert!((300..700).contains(&moved), "moved {moved}");
}

#[test]
fn shard_selector_lists_the_arcs_in_kep_5866_syntax() {
    let ring = HashRing::new(["only"]);
    assert_eq!(
        ring.shard_selector("only", SelectorField::Namespace)
            .as_deref(),
        Some("shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')")
    );
    assert_eq!(ring.shard_selector("other", SelectorField::Uid), None);
    assert_eq!(
        ring.shard_selector("only", SelectorField::Uid),
        Some(SelectorField::Uid.everything())
    );
}

#[test]
fn keys_with_a_common_prefix_spread_over_every_member() {
    let ring = HashRing::new(["replica-0", "replica-1", "replica-2"]);
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..900 {
        let key = format!("kubegen-sharding-e2e-x7k2p/obj-{i:05}");
        *counts.entry(ring.owner(&key).unwrap()).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 3, "{counts:?}");
    // Every share within 2x of the fair 300.
    assert!(
        counts.values().all(|n| (150..600).contains(n)),
        "{counts:?}"
    );
}

#[test]
fn five_shards_each_hold_close_to_a_fifth() {
    // The fullest shard bounds a ring's throughput; 32 tokens per shard gave one of these five
    // 26% of the keys.
    let ring = HashRing::new(["r0", "r1", "r2", "r3", "r4"]);
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..10_000 {
        let key = format!("bench/cm-{i:05}");
        *counts.entry(ring.owner(&key).unwrap()).or_insert(0) += 1;
    }
    assert_eq!(counts.len(), 5, "{counts:?}");
    assert!(
        counts.values().all(|n| (1700..2300).contains(n)),
        "{counts:?}"
    );
}
