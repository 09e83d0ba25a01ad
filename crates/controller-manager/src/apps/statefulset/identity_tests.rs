use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSetOrdinals, StatefulSetSpec, StatefulSetStatus,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn set(replicas: i32) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("db".into()),
            namespace: Some("ns".into()),
            uid: Some("set-uid".into()),
            ..ObjectMeta::default()
        },
        spec: Some(StatefulSetSpec {
            replicas: Some(replicas),
            service_name: Some("db-svc".into()),
            selector: LabelSelector {
                match_labels: Some(labels(&[("app", "db")])),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(&[("app", "db")])),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec::default()),
            },
            volume_claim_templates: Some(vec![PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some("data".into()),
                    labels: Some(labels(&[("tier", "disk")])),
                    ..ObjectMeta::default()
                },
                ..PersistentVolumeClaim::default()
            }]),
            ..StatefulSetSpec::default()
        }),
        status: None,
    }
}

#[test]
fn names_ending_in_digits_have_a_parent_and_an_ordinal() {
    assert_eq!(parent_and_ordinal("db-0"), Some(("db", 0)));
    assert_eq!(parent_and_ordinal("my-db-12"), Some(("my-db", 12)));
    assert_eq!(parent_and_ordinal("db-"), None);
    assert_eq!(parent_and_ordinal("db-x1"), None);
    assert_eq!(parent_and_ordinal("db"), None);
    assert_eq!(parent_and_ordinal("db-99999999999"), None, "beyond i32");
}

#[test]
fn a_new_pod_carries_its_identity_storage_and_revision() {
    let pod = new_pod(&set(2), 1, "db-abc");
    assert_eq!(pod.metadata.name.as_deref(), Some("db-1"));
    assert_eq!(pod.metadata.generate_name.as_deref(), Some("db-"));
    assert_eq!(
        pod.metadata.labels,
        Some(labels(&[
            ("app", "db"),
            (POD_INDEX_LABEL, "1"),
            (REVISION_LABEL, "db-abc"),
            (POD_NAME_LABEL, "db-1"),
        ]))
    );
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.hostname.as_deref(), Some("db-1"));
    assert_eq!(spec.subdomain.as_deref(), Some("db-svc"));
    let volumes = spec.volumes.as_ref().unwrap();
    assert_eq!(volumes.len(), 1);
    assert_eq!(volumes[0].name, "data");
    assert_eq!(
        volumes[0]
            .persistent_volume_claim
            .as_ref()
            .unwrap()
            .claim_name,
        "data-db-1"
    );
    assert!(identity_matches(&set(2), &pod));
    assert!(storage_matches(&set(2), &pod));
    assert!(is_member_of(&set(2), &pod));
}

#[test]
fn claims_take_the_template_labels_and_the_selector() {
    let claims = claims_for(&set(1), 3);
    assert_eq!(claims.len(), 1);
    let (template, claim) = &claims[0];
    assert_eq!(template, "data");
    assert_eq!(claim.metadata.name.as_deref(), Some("data-db-3"));
    assert_eq!(claim.metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(
        claim.metadata.labels,
        Some(labels(&[("app", "db"), ("tier", "disk")]))
    );
}

#[test]
fn a_drifted_label_or_volume_breaks_the_match_and_update_restores_it() {
    let s = set(1);
    let mut pod = new_pod(&s, 0, "r");
    pod.metadata.labels.as_mut().unwrap().remove(POD_NAME_LABEL);
    pod.spec.as_mut().unwrap().volumes = None;
    assert!(!identity_matches(&s, &pod));
    assert!(!storage_matches(&s, &pod));
    update_identity(&s, &mut pod);
    update_storage(&s, &mut pod);
    assert!(identity_matches(&s, &pod));
    assert!(storage_matches(&s, &pod));
}

#[test]
fn ordinals_start_where_the_spec_says() {
    let mut s = set(2);
    s.spec.as_mut().unwrap().ordinals = Some(StatefulSetOrdinals { start: Some(5) });
    let spec = spec(&s);
    assert!(!in_range(&spec, 4));
    assert!(in_range(&spec, 5));
    assert!(in_range(&spec, 6));
    assert!(!in_range(&spec, 7));
}

#[test]
fn pods_below_the_partition_come_from_the_current_revision() {
    let mut current = set(3);
    current.spec.as_mut().unwrap().update_strategy = Some(StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateStatefulSetStrategy {
            partition: Some(2),
            max_unavailable: None,
        }),
    });
    let update = current.clone();
    let revision = |o| new_versioned_pod((&current, "old"), (&update, "new"), o);
    assert_eq!(pod_revision(&revision(1)), "old");
    assert_eq!(pod_revision(&revision(2)), "new");
}

#[test]
fn without_rolling_update_parameters_current_replicas_decide() {
    let mut current = set(3);
    current.spec.as_mut().unwrap().update_strategy = Some(StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: None,
    });
    current.status = Some(StatefulSetStatus {
        current_replicas: Some(1),
        ..StatefulSetStatus::default()
    });
    let update = current.clone();
    let revision = |o| new_versioned_pod((&current, "old"), (&update, "new"), o);
    assert_eq!(pod_revision(&revision(0)), "old");
    assert_eq!(pod_revision(&revision(1)), "new");
}
