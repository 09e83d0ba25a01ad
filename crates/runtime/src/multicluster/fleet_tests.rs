use std::time::Instant;

use super::*;

fn cluster(name: &str) -> Cluster {
    let config = kubegen_client::Config::new("http://127.0.0.1:1".parse().unwrap());
    let client = Client::new(config).unwrap();
    let hub = InformerFactory::new(
        ClientListWatchSource::new(client.clone()),
        kubegen_cache::FactoryOptions::default(),
    );
    let parts = ClusterParts {
        hub,
        metrics: ProcessMetrics::default(),
        sync_timeout: Duration::from_secs(1),
        component: "test".to_owned(),
        identity: "me".to_owned(),
        factory: kubegen_cache::FactoryOptions::default(),
    };
    Cluster::new(name, client, parts)
}

#[test]
fn placement_gives_each_cluster_to_the_rings_owner_only() {
    let ring = HashRing::new(["a", "b", "c"]);
    for cluster in ["prod-eu", "prod-us", "edge-1", "edge-2", "lab"] {
        let owners: Vec<&str> = ["a", "b", "c"]
            .into_iter()
            .filter(|me| placement(&ring, me, cluster))
            .collect();
        assert_eq!(owners, [ring.owner(cluster).unwrap()], "{cluster}");
    }
}

#[test]
fn an_empty_ring_places_no_cluster() {
    let ring = HashRing::new(Vec::<String>::new());
    assert!(!placement(&ring, "a", "prod-eu"));
}

#[test]
fn readiness_lines_show_each_clusters_state_in_name_order() {
    let (ready, syncing, down) = (cluster("a"), cluster("b"), cluster("c"));
    ready.set_state(ClusterState::Ready);
    down.set_state(ClusterState::Unreachable {
        since: Instant::now(),
        reason: "connection refused".to_owned(),
    });
    let engaged = BTreeMap::from([
        ("c".to_owned(), down),
        ("a".to_owned(), ready),
        ("b".to_owned(), syncing),
    ]);
    assert_eq!(
        readiness_lines(&engaged),
        [
            "[+]cluster/a ok",
            "[-]cluster/b syncing",
            "[-]cluster/c unreachable for 0s (isolated): connection refused",
        ]
    );
}

#[test]
fn an_ongoing_outage_keeps_its_start() {
    let down = cluster("c");
    let first = Instant::now();
    down.set_state(ClusterState::Unreachable {
        since: first,
        reason: "one".to_owned(),
    });
    let changed = down.set_state(ClusterState::Unreachable {
        since: first + Duration::from_secs(5),
        reason: "two".to_owned(),
    });
    assert!(!changed, "still not ready");
    assert_eq!(
        down.state(),
        ClusterState::Unreachable {
            since: first,
            reason: "two".to_owned()
        }
    );
    assert!(
        down.set_state(ClusterState::Ready),
        "back to ready is a change"
    );
}
