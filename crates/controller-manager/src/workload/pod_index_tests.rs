use std::sync::Arc;

use k8s_openapi::api::{apps::v1::ReplicaSet, core::v1::Pod};
use kubegen_cache::{Indexer, Lister, ObjectKey};
use serde_json::json;

use super::*;

fn replica_set(namespace: &str, name: &str, uid: &str) -> ReplicaSet {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace, "uid": uid}
    }))
    .unwrap()
}

/// A Pod in `namespace`, controlled by the ReplicaSet `owner` (name, uid) when given, with one
/// more reference that is not its controller.
fn pod(namespace: &str, name: &str, owner: Option<(&str, &str)>) -> Pod {
    let mut references = vec![
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "cm",
                                     "uid": "cm-uid"}),
    ];
    if let Some((owner, uid)) = owner {
        references.push(
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                               "uid": uid, "controller": true}),
        );
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": references}
    }))
    .unwrap()
}

fn lister(pods: Vec<Pod>) -> (Indexer<Pod>, Lister<Pod>) {
    let indexer = Indexer::new();
    indexer.add_indexers(indexers()).unwrap();
    for pod in pods {
        indexer.insert(ObjectKey::of(&pod), Arc::new(pod));
    }
    (indexer.clone(), Lister::new(indexer))
}

fn names(pods: &[Arc<Pod>]) -> Vec<&str> {
    let mut names: Vec<&str> = pods
        .iter()
        .map(|p| p.metadata.name.as_deref().unwrap())
        .collect();
    names.sort_unstable();
    names
}

#[test]
fn an_owner_finds_its_own_pods_and_the_orphans_of_its_namespace_only() {
    let (_, lister) = lister(vec![
        pod("ns", "mine", Some(("web", "uid-1"))),
        pod("ns", "orphan", None),
        pod("ns", "theirs", Some(("db", "uid-2"))),
        // Same name, another uid: a ReplicaSet recreated under the old name owns nothing.
        pod("ns", "old", Some(("web", "uid-0"))),
        pod("other", "elsewhere", Some(("web", "uid-1"))),
        pod("other", "orphan-elsewhere", None),
    ]);
    let web = replica_set("ns", "web", "uid-1");
    assert_eq!(
        names(&pods_of(&lister, &web, Orphans::Included)),
        ["mine", "orphan"]
    );
    assert_eq!(names(&pods_of(&lister, &web, Orphans::Excluded)), ["mine"]);
}

#[test]
fn a_pod_moves_between_owners_when_its_controller_reference_changes() {
    let (indexer, lister) = lister(vec![pod("ns", "p", None)]);
    let web = replica_set("ns", "web", "uid-1");
    assert_eq!(names(&pods_of(&lister, &web, Orphans::Excluded)), [""; 0]);
    // Adopted: now filed under its controller, no longer an orphan.
    let adopted = pod("ns", "p", Some(("web", "uid-1")));
    indexer.insert(ObjectKey::of(&adopted), Arc::new(adopted));
    assert_eq!(names(&pods_of(&lister, &web, Orphans::Excluded)), ["p"]);
    let db = replica_set("ns", "db", "uid-2");
    assert_eq!(names(&pods_of(&lister, &db, Orphans::Included)), [""; 0]);
    // Released: an orphan again, which any owner of the namespace may adopt.
    let released = pod("ns", "p", None);
    indexer.insert(ObjectKey::of(&released), Arc::new(released));
    assert_eq!(names(&pods_of(&lister, &web, Orphans::Excluded)), [""; 0]);
    assert_eq!(names(&pods_of(&lister, &db, Orphans::Included)), ["p"]);
}

/// A Pod named `name` in `ns`, bound to `node` when given.
fn bound(name: &str, node: Option<&str>) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"containers": [], "nodeName": node}
    }))
    .unwrap()
}

#[test]
fn a_node_finds_the_pods_bound_to_it_and_follows_a_binding() {
    let indexer = Indexer::new();
    indexer.add_indexers(node_name_indexers()).unwrap();
    for pod in [
        bound("a", Some("n1")),
        bound("b", Some("n2")),
        bound("c", None),
    ] {
        indexer.insert(ObjectKey::of(&pod), Arc::new(pod));
    }
    let lister = Lister::new(indexer.clone());
    assert_eq!(names(&pods_on(&lister, "n1")), ["a"]);
    assert_eq!(names(&pods_on(&lister, "")), [""; 0]);
    // Bound later: found under its Node from then on.
    let c = bound("c", Some("n1"));
    indexer.insert(ObjectKey::of(&c), Arc::new(c));
    assert_eq!(names(&pods_on(&lister, "n1")), ["a", "c"]);
    assert_eq!(names(&pods_on(&lister, "n2")), ["b"]);
}
