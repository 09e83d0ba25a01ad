use serde_json::json;

use super::*;
use crate::apps::daemonset::fixtures::daemon_set;

#[test]
fn a_revision_holds_the_template_as_a_replace_patch_and_is_named_by_its_hash() {
    let ds = daemon_set(json!({}));
    let revision = new_revision(&ds, 4).unwrap();
    let data = &revision.data.value().unwrap().0;
    assert_eq!(data["spec"]["template"]["$patch"], "replace");
    assert_eq!(
        data["spec"]["template"]["metadata"]["labels"]["app"],
        "agent"
    );
    let hash = revision.metadata.labels.as_ref().unwrap()[REVISION_LABEL].clone();
    assert_eq!(
        revision.metadata.name.as_deref(),
        Some(format!("agent-{hash}").as_str())
    );
    assert_eq!(number(&revision), 4);
    assert_eq!(
        revision.metadata.owner_references.as_ref().unwrap()[0].kind,
        "DaemonSet"
    );
    assert!(matches(&patch_of(&ds).unwrap(), &revision));
}

#[test]
fn another_template_or_collision_count_gives_another_revision() {
    let ds = daemon_set(json!({}));
    let changed = daemon_set(
        json!({"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}),
    );
    let first = new_revision(&ds, 1).unwrap();
    assert!(!matches(&patch_of(&changed).unwrap(), &first));
    assert_ne!(
        first.metadata.name,
        new_revision(&changed, 2).unwrap().metadata.name
    );
    let mut collided = ds.clone();
    collided.status = Some(k8s_openapi::api::apps::v1::DaemonSetStatus {
        collision_count: Some(1),
        ..Default::default()
    });
    assert_ne!(
        first.metadata.name,
        new_revision(&collided, 1).unwrap().metadata.name
    );
}
