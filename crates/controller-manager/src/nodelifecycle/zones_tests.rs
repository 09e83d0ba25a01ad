use std::collections::BTreeMap;

use super::*;

fn labelled(labels: &[(&str, &str)]) -> Node {
    let mut node = Node::default();
    node.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    );
    node
}

#[test]
fn zone_keys_join_region_and_zone_preferring_beta_labels() {
    assert_eq!(zone_key(&Node::default()), "");
    assert_eq!(zone_key(&labelled(&[("other", "x")])), "");
    assert_eq!(
        zone_key(&labelled(&[
            ("topology.kubernetes.io/region", "r"),
            ("topology.kubernetes.io/zone", "z")
        ])),
        "r:\0:z"
    );
    assert_eq!(
        zone_key(&labelled(&[
            ("topology.kubernetes.io/zone", "ga"),
            ("failure-domain.beta.kubernetes.io/zone", "beta")
        ])),
        ":\0:beta"
    );
}

#[test]
fn zone_states_follow_the_share_of_not_ready_nodes() {
    let t = Some(true);
    let f = Some(false);
    assert_eq!(zone_state(&[t, t, f], 0.55), (1, ZoneState::Normal));
    assert_eq!(zone_state(&[f, None], 0.55), (2, ZoneState::FullDisruption));
    assert_eq!(
        zone_state(&[t, f, f], 0.55),
        (2, ZoneState::Normal),
        "2 is not more than 2"
    );
    assert_eq!(
        zone_state(&[t, f, f, f], 0.55),
        (3, ZoneState::PartialDisruption)
    );
    assert_eq!(
        zone_state(&[t, t, t, f, f, f], 0.55),
        (3, ZoneState::Normal)
    );
    assert_eq!(zone_state(&[], 0.55), (0, ZoneState::Normal));
}

#[test]
fn partial_disruption_slows_large_zones_and_stops_small_ones() {
    let rates = (0.1, 0.01);
    assert_eq!(zone_rate(ZoneState::Normal, 3, rates, 50), 0.1);
    assert_eq!(zone_rate(ZoneState::PartialDisruption, 51, rates, 50), 0.01);
    assert_eq!(zone_rate(ZoneState::PartialDisruption, 50, rates, 50), 0.0);
    assert_eq!(zone_rate(ZoneState::FullDisruption, 3, rates, 50), 0.1);
}

#[test]
fn the_queue_releases_one_node_per_token() {
    let start = Instant::now();
    let mut q = RateLimitedQueue::new(0.1, start);
    assert!(q.add("a", "1", start));
    assert!(!q.add("a", "1", start), "a node waits once");
    assert!(q.add("b", "2", start));
    let due = q.take_due(start);
    assert_eq!(
        due.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    assert!(q.take_due(start + Duration::from_secs(5)).is_empty());
    let due = q.take_due(start + Duration::from_secs(10));
    assert_eq!(due[0].name, "b");
}

#[test]
fn a_zero_rate_releases_nothing_and_removal_cancels() {
    let start = Instant::now();
    let mut q = RateLimitedQueue::new(0.1, start);
    q.add("a", "1", start);
    q.set_rate(0.0, start);
    assert!(q.take_due(start + Duration::from_secs(100)).is_empty());
    assert!(q.remove("a"));
    assert!(!q.remove("a"));
}

#[test]
fn a_failed_node_is_retried_after_its_wait() {
    let start = Instant::now();
    let mut q = RateLimitedQueue::new(1000.0, start);
    q.add("a", "1", start);
    let a = q.take_due(start).remove(0);
    q.retry(a, Duration::from_millis(50), start);
    assert!(q.take_due(start + Duration::from_millis(10)).is_empty());
    assert_eq!(q.take_due(start + Duration::from_millis(60)).len(), 1);
}
