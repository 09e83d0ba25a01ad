use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

use super::*;

fn lease(name: &str, renewed: i64, ack: Option<&str>) -> Arc<Lease> {
    Arc::new(Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: ack.map(|a| BTreeMap::from([(ACK_ANNOTATION.to_owned(), a.to_owned())])),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(name.into()),
            lease_duration_seconds: Some(10),
            renew_time: Some(MicroTime(Timestamp::from_second(renewed).unwrap())),
            ..LeaseSpec::default()
        }),
    })
}

#[test]
fn the_annotation_names_the_members_and_reads_back_as_the_same_ring() {
    let ring = HashRing::new(["b", "a", "c"]);
    assert_eq!(ack_value(&ring), "a,b,c");
    assert_eq!(ring_from("a,b,c"), ring);
    assert_eq!(ring_from(""), HashRing::default());
}

#[test]
fn only_live_shards_other_than_this_one_count_with_what_they_acknowledged() {
    let now = Timestamp::from_second(1_000).unwrap();
    let leases = [
        lease("a", 999, Some("a,b")),
        lease("b", 998, Some("b")),
        lease("c", 999, None),
        lease("gone", 900, Some("gone")),
    ];
    let seen = others(&leases, "a", now);
    assert_eq!(
        seen,
        vec![
            ("b".to_owned(), HashRing::new(["b"])),
            ("c".to_owned(), HashRing::default()),
        ]
    );
}

#[test]
fn a_lease_without_the_selection_label_runs_the_label_protocol() {
    let mut labelled = (*lease("a", 999, None)).clone();
    assert_eq!(selection_of(&labelled), "labels");
    labelled.metadata.labels = Some(BTreeMap::from([(
        SELECTION_LABEL.to_owned(),
        "shard-selector".to_owned(),
    )]));
    assert_eq!(selection_of(&labelled), "shard-selector");
}
