//! The generated API types serialize like Kubernetes objects: `apiVersion`/`kind` first,
//! camelCase fields, absent options skipped, `type_` as `type`; and they carry kube-core's
//! `Resource` through the k8s-openapi traits.

use std::any::TypeId;

use kube_core::Resource;
use kubegen_api::clusterprovisioner::v1alpha1::Cluster;
use kubegen_api::police::v1beta1::{
    ImageRule, WhiteList, WhiteListCondition, WhiteListSpec, WhiteListStatus,
};
use serde_json::json;

fn white_list() -> WhiteList {
    WhiteList {
        metadata: kube_core::ObjectMeta {
            name: Some("wl".into()),
            ..Default::default()
        },
        spec: WhiteListSpec {
            images: vec![ImageRule {
                name: "nginx".into(),
                tags: vec!["1.27".into()],
            }],
            allow_none: None,
        },
        status: None,
    }
}

#[test]
fn kind_serializes_type_meta_and_skips_absent_options() {
    let value = serde_json::to_value(white_list()).expect("serializes");
    assert_eq!(
        value,
        json!({
            "apiVersion": "police.example.com/v1beta1",
            "kind": "WhiteList",
            "metadata": {"name": "wl"},
            "spec": {"images": [{"name": "nginx", "tags": ["1.27"]}]},
        })
    );
}

#[test]
fn status_fields_use_kubernetes_names() {
    let status = WhiteListStatus {
        observed_generation: Some(2),
        conditions: vec![WhiteListCondition {
            type_: "Ready".into(),
            status: "True".into(),
            ..Default::default()
        }],
        violations_handled: Some(1),
        last_violations: Vec::new(),
    };
    let value = serde_json::to_value(status).expect("serializes");
    assert_eq!(
        value,
        json!({
            "observedGeneration": 2,
            "conditions": [{"type": "Ready", "status": "True"}],
            "violationsHandled": 1,
            "lastViolations": [],
        })
    );
}

#[test]
fn server_json_deserializes_and_tolerates_missing_lists() {
    let text = r#"{"apiVersion":"police.example.com/v1beta1","kind":"WhiteList",
        "metadata":{"name":"wl","resourceVersion":"7"},
        "spec":{"images":[{"name":"nginx","tags":[]}],"allowNone":true},
        "status":{"conditions":[{"type":"Ready","status":"False","reason":"Empty"}]}}"#;
    let parsed: WhiteList = serde_json::from_str(text).expect("deserializes");
    assert_eq!(parsed.spec.allow_none, Some(true));
    let status = parsed.status.expect("status present");
    assert_eq!(status.conditions[0].reason.as_deref(), Some("Empty"));
    assert!(status.last_violations.is_empty());
}

#[test]
fn resource_impl_comes_from_the_generated_k8s_openapi_traits() {
    assert_eq!(WhiteList::plural(&()), "whitelists");
    assert_eq!(WhiteList::api_version(&()), "police.example.com/v1beta1");
    assert_eq!(Cluster::group(&()), "clusterprovisioner.example.com");
    assert_eq!(
        TypeId::of::<<Cluster as Resource>::Scope>(),
        TypeId::of::<k8s_openapi::ClusterResourceScope>()
    );
    assert_eq!(
        <WhiteList as k8s_openapi::ListableResource>::LIST_KIND,
        "WhiteListList"
    );
}

#[test]
fn built_in_kinds_are_reexported() {
    assert_eq!(kubegen_api::apps::v1::Deployment::kind(&()), "Deployment");
    assert_eq!(kubegen_api::events::v1::Event::group(&()), "events.k8s.io");
    assert_eq!(kubegen_api::core::v1::Pod::plural(&()), "pods");
}

#[test]
fn enums_serialize_as_their_values_and_conditions_as_meta_v1_conditions() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use kubegen_api::cloudnative::v1alpha1::{VirtualMachinePhase, VirtualMachineStatus};
    let wire = json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "reason": "Booted", "message": "",
                        "lastTransitionTime": "2026-11-23T22:00:00Z"}],
    });
    let status: VirtualMachineStatus = serde_json::from_value(wire.clone()).expect("decodes");
    assert_eq!(status.phase, Some(VirtualMachinePhase::Running));
    let ready: &Condition = &status.conditions[0];
    assert_eq!(
        (ready.type_.as_str(), ready.status.as_str()),
        ("Ready", "True")
    );
    assert_eq!(serde_json::to_value(&status).expect("encodes"), wire);
    assert_eq!(VirtualMachinePhase::default(), VirtualMachinePhase::Pending);
    let unknown = serde_json::from_value::<VirtualMachineStatus>(json!({"phase": "Paused"}));
    assert!(
        unknown.is_err(),
        "a value outside the enum is an error, as the CRD rejects it"
    );
}
