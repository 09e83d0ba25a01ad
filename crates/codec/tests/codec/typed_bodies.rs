//! The serde decoder (`from_body`, `ProtoKind::decode`) against real server answers: every object
//! decodes to the same value as the server's own JSON of it, both as a JSON value and as the
//! k8s-openapi type a cache holds.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::real_bodies::{as_from_go_1_15, fixture};

const SERVED: [&str; 8] = [
    "configmaps",
    "deployments",
    "jobs",
    "leases",
    "pods",
    "secrets",
    "services",
    "customresourcedefinitions",
];

fn served() -> Vec<(String, Vec<u8>, Value)> {
    let mut pairs = Vec::new();
    for resource in SERVED {
        for version in ["1.15", "1.36"] {
            let stem = format!("get-{resource}-{version}");
            if resource == "customresourcedefinitions" && version == "1.15" {
                continue;
            }
            let json = serde_json::from_slice(&fixture(&format!("{stem}.json"))).unwrap();
            pairs.push((stem.clone(), fixture(&format!("{stem}.pb")), json));
        }
    }
    pairs
}

#[test]
fn real_objects_decode_to_the_same_json_value_as_the_servers_json() {
    for (stem, protobuf, json) in served() {
        let decoded: Value = kubegen_codec::from_body(&protobuf).unwrap();
        assert_eq!(
            decoded,
            kubegen_codec::decode_object(&protobuf).unwrap(),
            "{stem}"
        );
        if stem.ends_with("-1.15") {
            assert_eq!(as_from_go_1_15(&decoded), as_from_go_1_15(&json), "{stem}");
        } else {
            assert_eq!(decoded, json, "{stem}");
        }
    }
}

fn same_typed<K: DeserializeOwned + PartialEq + std::fmt::Debug>(stem: &str) {
    let protobuf = fixture(&format!("{stem}.pb"));
    let from_protobuf: K = kubegen_codec::from_body(&protobuf).unwrap();
    let from_json: K = serde_json::from_slice(&fixture(&format!("{stem}.json"))).unwrap();
    assert_eq!(from_protobuf, from_json, "{stem}");
}

#[test]
fn real_objects_decode_to_the_same_k8s_openapi_value_as_the_servers_json() {
    for version in ["1.15", "1.36"] {
        same_typed::<ConfigMap>(&format!("get-configmaps-{version}"));
        same_typed::<Deployment>(&format!("get-deployments-{version}"));
        same_typed::<Job>(&format!("get-jobs-{version}"));
        same_typed::<Lease>(&format!("get-leases-{version}"));
        same_typed::<Pod>(&format!("get-pods-{version}"));
        same_typed::<Secret>(&format!("get-secrets-{version}"));
        same_typed::<Service>(&format!("get-services-{version}"));
    }
    same_typed::<CustomResourceDefinition>("get-customresourcedefinitions-1.36");
}

#[test]
fn a_not_found_status_in_protobuf_decodes_like_its_json() {
    for version in ["1.15", "1.36"] {
        let protobuf = fixture(&format!("streams/notfound-{version}.pb"));
        let decoded: Value = kubegen_codec::from_body(&protobuf).unwrap();
        let json: Value =
            serde_json::from_slice(&fixture(&format!("streams/notfound-{version}.json"))).unwrap();
        assert_eq!(decoded, json, "{version}");
    }
}

#[test]
fn a_type_that_does_not_fit_is_an_error_naming_the_field() {
    let protobuf = fixture("get-deployments-1.36.pb");
    let err = kubegen_codec::from_body::<ConfigMap>(&protobuf).unwrap_err();
    assert_eq!(
        err.to_string(),
        "k8s.io.api.apps.v1.Deployment: invalid value: string \"apps/v1\", expected v1"
    );
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Wrong {
        spec: WrongSpec,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct WrongSpec {
        replicas: String,
    }
    let err = kubegen_codec::from_body::<Wrong>(&protobuf).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("spec.replicas: invalid type: integer"),
        "{err}"
    );
}

#[test]
fn every_truncation_of_a_real_body_is_an_error_or_a_different_object() {
    for (stem, protobuf, json) in served() {
        for end in 0..protobuf.len() - 4 {
            if let Ok(partial) = kubegen_codec::from_body::<Value>(&protobuf[..end]) {
                assert_ne!(partial, json, "{stem} cut at {end} decoded whole");
            }
        }
    }
}

#[test]
fn lists_decoded_from_protobuf_are_allocated_at_their_exact_length() {
    // A cached object keeps its Vecs for its whole life: serde_json grows them by doubling from
    // four elements, the protobuf decoder counts the elements first.
    for version in ["1.15", "1.36"] {
        let stem = format!("get-deployments-{version}");
        let deployment: Deployment =
            kubegen_codec::from_body(&fixture(&format!("{stem}.pb"))).unwrap();
        let pod = deployment
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap();
        assert_eq!(pod.containers.capacity(), pod.containers.len(), "{stem}");
        for container in &pod.containers {
            if let Some(ports) = &container.ports {
                assert_eq!(ports.capacity(), ports.len(), "{stem}");
            }
        }
        if let Some(managed) = &deployment.metadata.managed_fields {
            assert_eq!(managed.capacity(), managed.len(), "{stem}");
        }
    }
    let from_json: Deployment =
        serde_json::from_slice(&fixture("get-deployments-1.36.json")).unwrap();
    let managed = from_json.metadata.managed_fields.unwrap();
    assert!(
        managed.capacity() > managed.len(),
        "the slack this decoder avoids"
    );
}
