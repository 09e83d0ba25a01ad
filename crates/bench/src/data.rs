//! Deterministic test data: the objects every benchmark and the soak load into the test server.
//!
//! # Why generated, and why these shapes
//! A benchmark is only comparable across runs and across clients if every client sees the same
//! bytes. So the generators are pure functions of `(namespace, index)`: no clock, no randomness.
//!
//! - [`config_map`] is the classic informer benchmark object: small metadata and ~1 KiB of data.
//! - [`deployment`] looks like what `kubectl apply` leaves in a real cluster: labels, the
//!   `last-applied-configuration` annotation, two `managedFields` entries (the client's apply and
//!   the controller manager's status writes), a two-container pod template and a status. It is the
//!   object on which `strip_managed_fields` shows what it saves.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy,
    RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, ContainerPort, EnvVar, HTTPGetAction, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, LabelSelector, ManagedFieldsEntry, ObjectMeta, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

/// Name of the `index`-th ConfigMap: zero-padded so that names sort like indices.
pub fn config_map_name(index: usize) -> String {
    format!("cm-{index:06}")
}

/// Name of the `index`-th Deployment.
pub fn deployment_name(index: usize) -> String {
    format!("web-{index:06}")
}

/// A label that files every object into one of a few groups of 1,000 at the benchmark's
/// sizes (`index % 60` of 60,000 ConfigMaps, `index % 10` of 10,000 Deployments): what a read
/// benchmark lists by.
pub const GROUP_LABEL: &str = "bench.kubegen.dev/group";

/// A ConfigMap of roughly 1 KiB when serialized: a few labels and three data keys.
pub fn config_map(namespace: &str, index: usize) -> ConfigMap {
    let mut data = BTreeMap::new();
    data.insert("index".to_owned(), index.to_string());
    data.insert(
        "settings.yaml".to_owned(),
        format!(
            "replicas: {}\nmode: bench\nshard: {}\n",
            index % 7,
            index % 16
        ),
    );
    data.insert("payload".to_owned(), filler(index, 760));
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(config_map_name(index)),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels(&[
                ("app", "bench"),
                ("shard", &(index % 16).to_string()),
                (GROUP_LABEL, &(index % 60).to_string()),
            ])),
            annotations: Some(labels(&[("bench.kubegen.dev/generation", "1")])),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..ConfigMap::default()
    }
}

/// A Deployment as `kubectl apply` and the controller manager leave it (about 5 KiB of JSON, a
/// third of it `managedFields`).
pub fn deployment(namespace: &str, index: usize) -> Deployment {
    let name = deployment_name(index);
    let app_labels = labels(&[("app", &name), ("tier", "frontend")]);
    let spec = deployment_spec(&name, index, &app_labels);
    let mut object_labels = app_labels;
    object_labels.insert(GROUP_LABEL.to_owned(), (index % 10).to_string());
    let last_applied = last_applied(namespace, &name, &spec);
    let mut annotations = labels(&[("deployment.kubernetes.io/revision", "3")]);
    annotations.insert(
        "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
        last_applied,
    );
    Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_owned()),
            labels: Some(object_labels),
            annotations: Some(annotations),
            managed_fields: Some(managed_fields()),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: Some(deployment_status(index)),
    }
}

fn deployment_spec(
    name: &str,
    index: usize,
    app_labels: &BTreeMap<String, String>,
) -> DeploymentSpec {
    DeploymentSpec {
        replicas: Some(i32::try_from(index % 5 + 1).unwrap_or(1)),
        selector: LabelSelector {
            match_labels: Some(app_labels.clone()),
            ..LabelSelector::default()
        },
        strategy: Some(DeploymentStrategy {
            type_: Some("RollingUpdate".to_owned()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(IntOrString::String("25%".to_owned())),
                max_unavailable: Some(IntOrString::String("25%".to_owned())),
            }),
        }),
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(app_labels.clone()),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![app_container(name, index), sidecar_container()],
                service_account_name: Some(name.to_owned()),
                termination_grace_period_seconds: Some(30),
                ..PodSpec::default()
            }),
        },
        revision_history_limit: Some(10),
        progress_deadline_seconds: Some(600),
        ..DeploymentSpec::default()
    }
}

fn app_container(name: &str, index: usize) -> Container {
    let env = [
        ("LOG_LEVEL", "info"),
        ("HTTP_PORT", "8080"),
        ("FEATURE_FLAGS", "search,checkout,recommendations"),
    ];
    Container {
        name: "app".to_owned(),
        image: Some(format!(
            "registry.example.com/shop/{name}:1.{}.{}",
            index % 10,
            index % 3
        )),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_owned()),
            container_port: 8080,
            protocol: Some("TCP".to_owned()),
            ..ContainerPort::default()
        }]),
        env: Some(
            env.iter()
                .map(|(key, value)| EnvVar {
                    name: (*key).to_owned(),
                    value: Some((*value).to_owned()),
                    ..EnvVar::default()
                })
                .collect(),
        ),
        resources: Some(ResourceRequirements {
            requests: Some(quantities("250m", "256Mi")),
            limits: Some(quantities("1", "512Mi")),
            ..ResourceRequirements::default()
        }),
        readiness_probe: Some(http_probe("/healthz/ready")),
        liveness_probe: Some(http_probe("/healthz/live")),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        termination_message_path: Some("/dev/termination-log".to_owned()),
        termination_message_policy: Some("File".to_owned()),
        ..Container::default()
    }
}

fn sidecar_container() -> Container {
    Container {
        name: "proxy".to_owned(),
        image: Some("docker.io/envoyproxy/envoy:v1.31.2".to_owned()),
        args: Some(vec![
            "--config-path".to_owned(),
            "/etc/envoy/envoy.yaml".to_owned(),
        ]),
        resources: Some(ResourceRequirements {
            requests: Some(quantities("50m", "64Mi")),
            ..ResourceRequirements::default()
        }),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        ..Container::default()
    }
}

fn http_probe(path: &str) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::String("http".to_owned()),
            scheme: Some("HTTP".to_owned()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(10),
        timeout_seconds: Some(1),
        failure_threshold: Some(3),
        success_threshold: Some(1),
        ..Probe::default()
    }
}

fn quantities(cpu: &str, memory: &str) -> BTreeMap<String, Quantity> {
    BTreeMap::from([
        ("cpu".to_owned(), Quantity(cpu.to_owned())),
        ("memory".to_owned(), Quantity(memory.to_owned())),
    ])
}

fn deployment_status(index: usize) -> DeploymentStatus {
    let replicas = i32::try_from(index % 5 + 1).unwrap_or(1);
    let condition = |type_: &str, reason: &str, message: &str| DeploymentCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_transition_time: Some(fixed_time()),
        last_update_time: Some(fixed_time()),
    };
    DeploymentStatus {
        observed_generation: Some(3),
        replicas: Some(replicas),
        updated_replicas: Some(replicas),
        ready_replicas: Some(replicas),
        available_replicas: Some(replicas),
        conditions: Some(vec![
            condition(
                "Available",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            ),
            condition(
                "Progressing",
                "NewReplicaSetAvailable",
                "ReplicaSet has successfully progressed.",
            ),
        ]),
        ..DeploymentStatus::default()
    }
}

/// The two writers a real Deployment records: the user's client-side apply and the controller
/// manager's status updates. The field sets are what the API server writes for such a spec.
fn managed_fields() -> Vec<ManagedFieldsEntry> {
    let apply = serde_json::json!({
        "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                       "f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
        "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {},
                   "f:selector": {}, "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
                   "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
                                  "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {},
                                      "f:livenessProbe": {}, "f:name": {}, "f:ports": {}, "f:readinessProbe": {}, "f:resources": {}},
                                      "k:{\"name\":\"proxy\"}": {".": {}, "f:args": {}, "f:image": {}, "f:name": {}, "f:resources": {}}},
                                      "f:serviceAccountName": {}, "f:terminationGracePeriodSeconds": {}}}}
    });
    let status = serde_json::json!({
        "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
        "f:status": {"f:availableReplicas": {}, "f:conditions": {".": {},
            "k:{\"type\":\"Available\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}},
            "k:{\"type\":\"Progressing\"}": {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}},
            "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}
    });
    let entry =
        |manager: &str, fields: serde_json::Value, subresource: Option<&str>| ManagedFieldsEntry {
            api_version: Some("apps/v1".to_owned()),
            fields_type: Some("FieldsV1".to_owned()),
            fields_v1: Some(FieldsV1(fields)),
            manager: Some(manager.to_owned()),
            operation: Some("Update".to_owned()),
            subresource: subresource.map(str::to_owned),
            time: Some(fixed_time()),
        };
    vec![
        entry("kubectl-client-side-apply", apply, None),
        entry("kube-controller-manager", status, Some("status")),
    ]
}

fn last_applied(namespace: &str, name: &str, spec: &DeploymentSpec) -> String {
    let applied = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name, "tier": "frontend"}},
        "spec": spec,
    });
    applied.to_string()
}

fn fixed_time() -> Time {
    Time(Timestamp::from_second(1_767_225_600).unwrap_or(Timestamp::UNIX_EPOCH))
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

/// `len` printable characters that differ per index, so no two objects compress alike.
fn filler(index: usize, len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut state = (index as u64).wrapping_mul(6_364_136_223_846_793_005) | 1;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let pick = usize::try_from(state >> 58).unwrap_or(0) % ALPHABET.len();
            char::from(ALPHABET[pick])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_map_serializes_to_about_one_kib() {
        let len = serde_json::to_vec(&config_map("bench", 42))
            .map(|bytes| bytes.len())
            .unwrap_or(0);
        assert!((900..=1300).contains(&len), "{len} bytes");
    }

    #[test]
    fn deployment_carries_two_managed_fields_entries_and_is_several_kib() {
        let deployment = deployment("bench", 7);
        let entries = deployment.metadata.managed_fields.as_ref().map(Vec::len);
        assert_eq!(entries, Some(2));
        let len = serde_json::to_vec(&deployment)
            .map(|bytes| bytes.len())
            .unwrap_or(0);
        assert!((3_000..=9_000).contains(&len), "{len} bytes");
    }

    #[test]
    fn generators_are_deterministic_and_distinct_per_index() {
        assert_eq!(config_map("ns", 3), config_map("ns", 3));
        assert_ne!(config_map("ns", 3).data, config_map("ns", 4).data);
        assert_eq!(deployment("ns", 9), deployment("ns", 9));
    }
}
