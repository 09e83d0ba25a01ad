use k8s_openapi::api::apps::v1::StatefulSetSpec;
use k8s_openapi::api::core::v1::{Container, PodSpec};

use super::*;

/// A revision v1.36.2 wrote for a StatefulSet `db` (template `app: db`, one `nginx` container),
/// read back with `kubectl get controllerrevision -o json`; its name there was `db-5685d99b96`.
const REAL_DATA: &str = r#"{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}"#;

fn set_with_image(image: &str) -> StatefulSet {
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some([("app".to_string(), "db".to_string())].into()),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some(image.into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
    };
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("db".into()),
            namespace: Some("ns".into()),
            uid: Some("uid-1".into()),
            annotations: Some([("note".to_string(), "kept".to_string())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(StatefulSetSpec {
            template,
            ..StatefulSetSpec::default()
        }),
        status: None,
    }
}

#[test]
fn the_hash_of_real_revision_data_is_the_real_name() {
    let data: Value = serde_json::from_str(REAL_DATA).unwrap();
    assert_eq!(go_json(&data), REAL_DATA, "Go's encoding round-trips");
    assert_eq!(hash(&data, 0), "5685d99b96");
    assert_ne!(
        hash(&data, 1),
        "5685d99b96",
        "a collision count changes the hash"
    );
}

#[test]
fn a_new_revision_is_named_labelled_and_owned_by_the_set() {
    let set = set_with_image("nginx");
    let revision = new_revision(&set, 3, 0).unwrap();
    let data = data_of(&revision).unwrap();
    assert_eq!(data["spec"]["template"]["$patch"], "replace");
    let hash = hash(data, 0);
    assert_eq!(revision.metadata.name, Some(format!("db-{hash}")));
    let labels = revision.metadata.labels.clone().unwrap();
    assert_eq!(labels.get("app").map(String::as_str), Some("db"));
    assert_eq!(labels.get(HASH_LABEL), Some(&hash));
    assert_eq!(number_of(&revision), 3);
    assert_eq!(
        revision
            .metadata
            .annotations
            .clone()
            .unwrap()
            .get("note")
            .map(String::as_str),
        Some("kept")
    );
    let owner = &revision.metadata.owner_references.clone().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("StatefulSet", "uid-1")
    );
}

#[test]
fn applying_a_revision_restores_its_template() {
    let old = new_revision(&set_with_image("nginx:1"), 1, 0).unwrap();
    let now = set_with_image("nginx:2");
    let restored = apply(&now, &old).unwrap();
    let image = |s: &StatefulSet| spec(s).template.spec.unwrap().containers[0].image.clone();
    assert_eq!(image(&restored).as_deref(), Some("nginx:1"));
    assert!(equal(&old, &new_revision(&restored, 9, 0).unwrap()));
    assert!(!equal(&old, &new_revision(&now, 1, 0).unwrap()));
}

#[test]
fn revisions_sort_by_number_and_the_next_follows_the_newest() {
    let set = set_with_image("nginx");
    let mut revisions = vec![
        new_revision(&set, 4, 0).unwrap(),
        new_revision(&set, 2, 0).unwrap(),
    ];
    sort(&mut revisions);
    assert_eq!(revisions.iter().map(number_of).collect::<Vec<_>>(), [2, 4]);
    assert_eq!(next_number(&revisions), 5);
    assert_eq!(next_number(&[]), 1);
}
