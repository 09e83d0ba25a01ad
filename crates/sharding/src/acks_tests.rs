use super::*;

/// A hash `ring` gives to `member`.
fn hash_of(ring: &HashRing, member: &str) -> u64 {
    (0..u64::MAX)
        .step_by(1 << 40)
        .find(|h| ring.owner_of_hash(*h) == Some(member))
        .unwrap()
}

#[test]
fn nothing_starts_before_this_replica_has_seen_its_own_acknowledgement() {
    let ring = HashRing::new(["a", "b"]);
    let h = hash_of(&ring, "a");
    let mut acks = Acks {
        pending: Some((ring.clone(), 7)),
        ..Acks::default()
    };
    assert!(!acks.allows("a", h), "written, not seen");
    acks.mine = acks.pending.take().map(|(ring, _)| ring);
    assert!(acks.allows("a", h));
    assert!(!acks.allows("a", hash_of(&ring, "b")), "b's arc");
}

#[test]
fn a_gained_hash_waits_until_its_previous_owner_acknowledged_a_ring_without_it() {
    let old = HashRing::new(["b"]);
    let new = HashRing::new(["a", "b"]);
    let h = hash_of(&new, "a");
    assert_eq!(old.owner_of_hash(h), Some("b"));
    let mut acks = Acks {
        mine: Some(new.clone()),
        others: vec![("b".to_owned(), old)],
        ..Acks::default()
    };
    assert!(!acks.allows("a", h), "b still works under the old ring");
    acks.others = vec![("b".to_owned(), new.clone())];
    assert!(acks.allows("a", h));
    acks.others = vec![("b".to_owned(), HashRing::default())];
    assert!(
        acks.allows("a", h),
        "a shard that acknowledged nothing works on nothing"
    );
}
