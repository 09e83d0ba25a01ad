use super::*;

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn node(uid: &str, kind: &str, owners: &[(&str, &str, bool)]) -> Node {
    Node {
        resource: resource(kind, &format!("{}s", kind.to_lowercase())),
        namespace: Some("ns".into()),
        name: uid.into(),
        uid: uid.into(),
        owners: owners
            .iter()
            .map(|(uid, kind, block)| OwnerReference {
                api_version: "apps/v1".into(),
                kind: (*kind).into(),
                name: (*uid).into(),
                uid: (*uid).into(),
                block_owner_deletion: Some(*block),
                ..OwnerReference::default()
            })
            .collect(),
        finalizers: Vec::new(),
        deleting: false,
    }
}

fn uids(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_dependent_whose_owner_is_unknown_is_verified_once() {
    let mut graph = Graph::default();
    let work = graph.upsert(node("rs", "ReplicaSet", &[("d", "Deployment", true)]));
    assert_eq!(work.delete, uids(&["rs"]));
    graph.check_invariants();
    // The same references again: nothing new to verify.
    let again = graph.upsert(node("rs", "ReplicaSet", &[("d", "Deployment", true)]));
    assert_eq!(again, Work::default());
}

#[test]
fn a_dependent_of_a_known_owner_is_left_alone_until_the_owner_goes() {
    let mut graph = Graph::default();
    graph.upsert(node("d", "Deployment", &[]));
    let work = graph.upsert(node("rs", "ReplicaSet", &[("d", "Deployment", true)]));
    assert_eq!(work, Work::default());
    let gone = graph.remove("d");
    assert_eq!(gone.delete, uids(&["rs"]));
    graph.check_invariants();
}

#[test]
fn an_owner_in_another_namespace_does_not_count_as_known() {
    let mut graph = Graph::default();
    let mut owner = node("d", "Deployment", &[]);
    owner.namespace = Some("elsewhere".into());
    graph.upsert(owner);
    let work = graph.upsert(node("rs", "ReplicaSet", &[("d", "Deployment", false)]));
    assert_eq!(work.delete, uids(&["rs"]));
}

#[test]
fn foreground_deletion_looks_at_the_owner_and_every_dependent() {
    let mut graph = Graph::default();
    graph.upsert(node("d", "Deployment", &[]));
    graph.upsert(node("a", "ReplicaSet", &[("d", "Deployment", true)]));
    graph.upsert(node("b", "ReplicaSet", &[("d", "Deployment", false)]));
    let mut deleting = node("d", "Deployment", &[]);
    deleting.deleting = true;
    deleting.finalizers = vec![FOREGROUND.into()];
    let work = graph.upsert(deleting);
    assert_eq!(work.delete, uids(&["a", "b", "d"]));
    let blockers: Vec<_> = blocking(&graph, "d")
        .iter()
        .map(|n| n.uid.clone())
        .collect();
    assert_eq!(blockers, ["a"]);
    // A dependent going away wakes the owner that waits for it.
    assert_eq!(graph.remove("a").delete, uids(&["d"]));
    assert!(blocking(&graph, "d").is_empty());
    graph.check_invariants();
}

#[test]
fn orphaning_deletion_queues_the_owner_for_orphaning() {
    let mut graph = Graph::default();
    let mut deleting = node("d", "Deployment", &[]);
    deleting.deleting = true;
    deleting.finalizers = vec![ORPHAN.into()];
    let work = graph.upsert(deleting);
    assert_eq!(work.orphan, uids(&["d"]));
    assert!(work.delete.is_empty());
}

#[test]
fn dropping_an_owner_reference_unlinks_the_dependent() {
    let mut graph = Graph::default();
    graph.upsert(node("d", "Deployment", &[]));
    graph.upsert(node("rs", "ReplicaSet", &[("d", "Deployment", true)]));
    graph.upsert(node("rs", "ReplicaSet", &[]));
    assert!(graph.dependents("d").is_empty());
    graph.check_invariants();
}
