use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, ReplicaSet, ReplicaSetSpec,
    RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

use super::*;

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

fn deployment(replicas: i32, surge: IntOrString, unavailable: IntOrString) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some("web".into()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(surge),
                    max_unavailable: Some(unavailable),
                }),
            }),
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}

fn rs(name: &str, created: i64, replicas: i32, annotations: &[(&str, &str)]) -> Arc<ReplicaSet> {
    Arc::new(ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            creation_timestamp: Some(Time(Timestamp::from_second(created).unwrap())),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(ReplicaSetSpec {
            replicas: Some(replicas),
            ..ReplicaSetSpec::default()
        }),
        status: None,
    })
}

#[test]
fn fenceposts_never_both_zero() {
    let spec = Spec::of(&deployment(3, IntOrString::Int(0), pct("25%")));
    assert_eq!(spec.fenceposts(), (0, 1));
    let spec = Spec::of(&deployment(3, pct("25%"), pct("25%")));
    assert_eq!((spec.max_surge(), spec.max_unavailable()), (1, 0));
    let spec = Spec::of(&deployment(2, IntOrString::Int(1), IntOrString::Int(5)));
    assert_eq!(spec.max_unavailable(), 2, "capped at replicas");
}

#[test]
fn absent_fields_take_the_api_defaults() {
    let spec = Spec::of(&Deployment::default());
    assert_eq!(
        spec,
        Spec {
            replicas: 1,
            recreate: false,
            max_surge: pct("25%"),
            max_unavailable: pct("25%"),
            revision_history_limit: Some(10),
            progress_deadline_seconds: Some(600),
            min_ready_seconds: 0,
            paused: false,
        }
    );
}

#[test]
fn new_rs_is_the_oldest_with_an_equal_template_ignoring_the_hash() {
    let mut d = deployment(3, pct("25%"), pct("25%"));
    let template = |image_label: &str, hash: &str| PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(BTreeMap::from([
                ("app".into(), image_label.into()),
                (POD_TEMPLATE_HASH.into(), hash.into()),
            ])),
            ..ObjectMeta::default()
        }),
        spec: None,
    };
    d.spec.as_mut().unwrap().template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(BTreeMap::from([("app".into(), "v2".into())])),
            ..ObjectMeta::default()
        }),
        spec: None,
    };
    let with = |name: &str, created, t: PodTemplateSpec| {
        let mut r = (*rs(name, created, 1, &[])).clone();
        r.spec.as_mut().unwrap().template = Some(t);
        Arc::new(r)
    };
    let rss = vec![
        with("b", 20, template("v2", "y")),
        with("old", 5, template("v1", "x")),
        with("a", 10, template("v2", "z")),
    ];
    let (new, old) = split_new_old(&d, rss);
    assert_eq!(new.unwrap().metadata.name.as_deref(), Some("a"));
    let old: Vec<_> = old
        .iter()
        .map(|r| r.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(old, ["old", "b"]);
}

#[test]
fn new_rs_annotations_on_creation_and_on_rollback() {
    let mut d = deployment(3, pct("25%"), pct("25%"));
    d.metadata.annotations = Some(BTreeMap::from([
        (
            "kubernetes.io/change-cause".into(),
            "kubectl set image".into(),
        ),
        (REVISION.into(), "7".into()),
    ]));
    let mut created = (*rs("n", 1, 1, &[])).clone();
    assert!(set_new_rs_annotations(&d, &mut created, 2, false));
    let expected: BTreeMap<String, String> = [
        ("kubernetes.io/change-cause", "kubectl set image"),
        (REVISION, "2"),
        (DESIRED_REPLICAS, "3"),
        (MAX_REPLICAS, "4"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(created.metadata.annotations.as_ref(), Some(&expected));

    let mut rolled_back = (*rs("o", 1, 1, &[(REVISION, "1"), (REVISION_HISTORY, "")])).clone();
    assert!(set_new_rs_annotations(&d, &mut rolled_back, 3, true));
    let a = rolled_back.metadata.annotations.unwrap();
    assert_eq!(
        (a[REVISION].as_str(), a[REVISION_HISTORY].as_str()),
        ("3", "1")
    );
    let mut again = (*rs("o", 1, 1, &[(REVISION, "3"), (REVISION_HISTORY, "1")])).clone();
    set_new_rs_annotations(&d, &mut again, 5, true);
    assert_eq!(again.metadata.annotations.unwrap()[REVISION_HISTORY], "1,3");
}

#[test]
fn a_newer_revision_is_kept_and_a_malformed_one_is_left_alone() {
    let d = deployment(3, pct("25%"), pct("25%"));
    let mut newer = (*rs("n", 1, 1, &[(REVISION, "9")])).clone();
    assert!(!set_new_rs_annotations(&d, &mut newer, 4, true));
    let mut bad = (*rs("b", 1, 1, &[(REVISION, "x")])).clone();
    assert!(!set_new_rs_annotations(&d, &mut bad, 4, true));
}

#[test]
fn new_rs_grows_within_the_surge() {
    let spec = Spec::of(&deployment(3, pct("25%"), pct("25%")));
    let old = rs("old", 1, 3, &[]);
    assert_eq!(
        new_rs_replicas(&spec, &[old.clone(), rs("new", 2, 0, &[])], 0),
        1
    );
    assert_eq!(new_rs_replicas(&spec, &[old, rs("new", 2, 1, &[])], 1), 1);
    let spec = Spec::of(&deployment(5, pct("25%"), pct("25%")));
    assert_eq!(
        new_rs_replicas(&spec, &[rs("o", 1, 4, &[]), rs("n", 2, 2, &[])], 2),
        3
    );
}

#[test]
fn proportions_follow_the_max_replicas_annotation() {
    // The real pair: 3 replicas at 25% with old=3 and new=1, scaled to 5: old +2, new +1.
    let spec = Spec::of(&deployment(5, pct("25%"), pct("25%")));
    let old = rs("old", 1, 3, &[(MAX_REPLICAS, "4")]);
    let new = rs("new", 2, 1, &[(MAX_REPLICAS, "4")]);
    let first = proportion(&old, &spec, 4, 3, 0);
    assert_eq!(first, 2);
    assert_eq!(proportion(&new, &spec, 4, 3, first), 1);
    assert_eq!(proportion(&new, &spec, 4, 3, 3), 0);
    let zero = Spec::of(&deployment(0, pct("25%"), pct("25%")));
    assert_eq!(proportion(&old, &zero, 4, -4, 0), -3);
}

#[test]
fn orderings() {
    let (a, b) = (
        rs("a", 1, 2, &[(REVISION, "3")]),
        rs("b", 2, 2, &[(REVISION, "2")]),
    );
    assert_eq!(by_size_newer(&a, &b), std::cmp::Ordering::Greater);
    assert_eq!(by_size_older(&a, &b), std::cmp::Ordering::Less);
    assert_eq!(by_revision(&a, &b), std::cmp::Ordering::Greater);
    let big = rs("c", 3, 5, &[]);
    assert_eq!(by_size_newer(&big, &a), std::cmp::Ordering::Less);
    assert_eq!(max_revision(&[a, b]), 3);
}

#[test]
fn saturation_needs_all_replicas_available() {
    let spec = Spec::of(&deployment(3, pct("25%"), pct("25%")));
    let mut r = (*rs("n", 1, 3, &[(DESIRED_REPLICAS, "3")])).clone();
    assert!(!is_saturated(&spec, Some(&r)));
    r.status = Some(k8s_openapi::api::apps::v1::ReplicaSetStatus {
        available_replicas: Some(3),
        ..Default::default()
    });
    assert!(is_saturated(&spec, Some(&r)));
    assert!(!is_saturated(&spec, None));
}
