//! Row cells of the built-in kinds, computed like kube-apiserver's printers
//! (`pkg/printers/internalversion/printers.go`, `printPod`, `printDeployment`, ...).
//!
//! The server always prints wide (`GenerateOptions{Wide: true}`): the priority-1 cells are part of
//! every row and kubectl hides them unless `-o wide`. Cells read the stored JSON, so a field the
//! real server would have defaulted is read with that default (`spec.replicas` 1, a service's
//! `type` ClusterIP, a port's protocol TCP, a cron job's `suspend` false, a pod's phase
//! Pending), since this server stores specs as sent.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::admission_policy::{binding, policy};
use super::duration::{age, human};
use super::event::{EventFields, event};
use super::fields::{
    containers, count, format_labels, format_selector, int, items, label_selector, replicas, text,
};
use super::pod::pod;

/// The built-in printers, one per kind the server serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Pod,
    ReplicaSet,
    DaemonSet,
    Job,
    CronJob,
    Service,
    StatefulSet,
    Node,
    /// `v1` Events.
    Event,
    /// `events.k8s.io/v1` Events: the same printer after the field renames of that API.
    EventsV1,
    Namespace,
    Secret,
    ServiceAccount,
    Deployment,
    ConfigMap,
    Lease,
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
    MutatingAdmissionPolicy,
    MutatingAdmissionPolicyBinding,
}

impl Kind {
    /// The printer of a built-in resource; None for kinds printed by the default convertor.
    pub(crate) fn of(group: &str, plural: &str) -> Option<Kind> {
        Some(match (group, plural) {
            ("", "pods") => Kind::Pod,
            ("apps", "replicasets") => Kind::ReplicaSet,
            ("apps", "daemonsets") => Kind::DaemonSet,
            ("batch", "jobs") => Kind::Job,
            ("batch", "cronjobs") => Kind::CronJob,
            ("", "services") => Kind::Service,
            ("apps", "statefulsets") => Kind::StatefulSet,
            ("", "nodes") => Kind::Node,
            ("", "events") => Kind::Event,
            ("events.k8s.io", "events") => Kind::EventsV1,
            ("", "namespaces") => Kind::Namespace,
            ("", "secrets") => Kind::Secret,
            ("", "serviceaccounts") => Kind::ServiceAccount,
            ("apps", "deployments") => Kind::Deployment,
            ("", "configmaps") => Kind::ConfigMap,
            ("coordination.k8s.io", "leases") => Kind::Lease,
            ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
                Kind::ValidatingAdmissionPolicy
            }
            ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => {
                Kind::ValidatingAdmissionPolicyBinding
            }
            ("admissionregistration.k8s.io", "mutatingadmissionpolicies") => {
                Kind::MutatingAdmissionPolicy
            }
            ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings") => {
                Kind::MutatingAdmissionPolicyBinding
            }
            _ => return None,
        })
    }

    /// The key of this printer's columns in `columns.json`.
    pub(crate) fn columns_key(self) -> &'static str {
        match self {
            Kind::Pod => "/pods",
            Kind::ReplicaSet => "apps/replicasets",
            Kind::DaemonSet => "apps/daemonsets",
            Kind::Job => "batch/jobs",
            Kind::CronJob => "batch/cronjobs",
            Kind::Service => "/services",
            Kind::StatefulSet => "apps/statefulsets",
            Kind::Node => "/nodes",
            Kind::Event => "/events",
            Kind::EventsV1 => "events.k8s.io/events",
            Kind::Namespace => "/namespaces",
            Kind::Secret => "/secrets",
            Kind::ServiceAccount => "/serviceaccounts",
            Kind::Deployment => "apps/deployments",
            Kind::ConfigMap => "/configmaps",
            Kind::Lease => "coordination.k8s.io/leases",
            Kind::ValidatingAdmissionPolicy => {
                "admissionregistration.k8s.io/validatingadmissionpolicies"
            }
            Kind::ValidatingAdmissionPolicyBinding => {
                "admissionregistration.k8s.io/validatingadmissionpolicybindings"
            }
            Kind::MutatingAdmissionPolicy => {
                "admissionregistration.k8s.io/mutatingadmissionpolicies"
            }
            Kind::MutatingAdmissionPolicyBinding => {
                "admissionregistration.k8s.io/mutatingadmissionpolicybindings"
            }
        }
    }

    /// The cells of one object's row, wide.
    pub(crate) fn cells(self, o: &Value, now: jiff::Timestamp) -> Vec<Value> {
        let name = json!(text(o, "/metadata/name"));
        let created = age(
            o.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now,
        );
        let mut cells = vec![name];
        let rest: Vec<Value> = match self {
            Kind::Pod => return pod(o, now),
            Kind::Event => return event(&EventFields::V1, o, now),
            Kind::EventsV1 => return event(&EventFields::EVENTS_V1, o, now),
            Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::DaemonSet => {
                self.workload(o, created)
            }
            Kind::Job => job(o, now, created),
            Kind::CronJob => cron_job(o, now, created),
            Kind::Service => service(o, created),
            Kind::Node => node(o, created),
            Kind::Namespace => vec![json!(text(o, "/status/phase")), json!(created)],
            Kind::Secret => vec![
                json!(text(o, "/type")),
                json!(count(o, "/data")),
                json!(created),
            ],
            Kind::ServiceAccount => vec![json!(created)],
            Kind::ConfigMap => vec![
                json!(count(o, "/data") + count(o, "/binaryData")),
                json!(created),
            ],
            Kind::Lease => vec![json!(text(o, "/spec/holderIdentity")), json!(created)],
            Kind::ValidatingAdmissionPolicy => with_age(policy(o, "validations"), created),
            Kind::MutatingAdmissionPolicy => with_age(policy(o, "mutations"), created),
            Kind::ValidatingAdmissionPolicyBinding | Kind::MutatingAdmissionPolicyBinding => {
                with_age(binding(o), created)
            }
        };
        cells.extend(rest);
        cells
    }

    /// The cells after NAME of the four workload controllers' printers.
    fn workload(self, o: &Value, created: String) -> Vec<Value> {
        let (names, images) = containers(o, "/spec/template/spec/containers");
        match self {
            Kind::Deployment => {
                let selector = o
                    .pointer("/spec/selector")
                    .map_or(String::new(), label_selector);
                vec![
                    json!(format!(
                        "{}/{}",
                        int(o, "/status/readyReplicas"),
                        replicas(o)
                    )),
                    json!(int(o, "/status/updatedReplicas")),
                    json!(int(o, "/status/availableReplicas")),
                    json!(created),
                    json!(names),
                    json!(images),
                    json!(selector),
                ]
            }
            Kind::ReplicaSet => {
                vec![
                    json!(replicas(o)),
                    json!(int(o, "/status/replicas")),
                    json!(int(o, "/status/readyReplicas")),
                    json!(created),
                    json!(names),
                    json!(images),
                    json!(format_selector(o.pointer("/spec/selector"))),
                ]
            }
            Kind::StatefulSet => {
                let ready = format!("{}/{}", int(o, "/status/readyReplicas"), replicas(o));
                vec![json!(ready), json!(created), json!(names), json!(images)]
            }
            Kind::DaemonSet => {
                vec![
                    json!(int(o, "/status/desiredNumberScheduled")),
                    json!(int(o, "/status/currentNumberScheduled")),
                    json!(int(o, "/status/numberReady")),
                    json!(int(o, "/status/updatedNumberScheduled")),
                    json!(int(o, "/status/numberAvailable")),
                    json!(format_labels(o.pointer("/spec/template/spec/nodeSelector"))),
                    json!(created),
                    json!(names),
                    json!(images),
                    json!(format_selector(o.pointer("/spec/selector"))),
                ]
            }
            _ => Vec::new(),
        }
    }
}
fn job(o: &Value, now: jiff::Timestamp, created: String) -> Vec<Value> {
    let succeeded = int(o, "/status/succeeded");
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let seconds = |pointer: &str| {
        o.pointer(pointer)
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.as_second())
    };
    let duration = match (
        seconds("/status/startTime"),
        seconds("/status/completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => human(now.as_second() - start),
        (Some(start), Some(end)) => human(end - start),
    };
    let condition = |kind: &str| {
        items(o, "/status/conditions")
            .iter()
            .find(|c| c["type"] == kind)
            .is_some_and(|c| c["status"] == "True")
    };
    let status = if condition("Complete") {
        "Complete"
    } else if condition("Failed") {
        "Failed"
    } else if o.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if condition("Suspended") {
        "Suspended"
    } else if condition("FailureTarget") {
        "FailureTarget"
    } else if condition("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (names, images) = containers(o, "/spec/template/spec/containers");
    vec![
        json!(status),
        json!(completions),
        json!(duration),
        json!(created),
        json!(names),
        json!(images),
        json!(format_selector(o.pointer("/spec/selector"))),
    ]
}

fn cron_job(o: &Value, now: jiff::Timestamp, created: String) -> Vec<Value> {
    let last = match o
        .pointer("/status/lastScheduleTime")
        .and_then(Value::as_str)
    {
        Some(t) => age(Some(t), now),
        None => "<none>".into(),
    };
    let time_zone = o
        .pointer("/spec/timeZone")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    // The real server defaults `suspend` to false, so its printer never shows `<unset>`.
    let suspend = match o.pointer("/spec/suspend").and_then(Value::as_bool) {
        Some(true) => "True",
        _ => "False",
    };
    let template = "/spec/jobTemplate/spec/template/spec/containers";
    let (names, images) = containers(o, template);
    vec![
        json!(text(o, "/spec/schedule")),
        json!(time_zone),
        json!(suspend),
        json!(count(o, "/status/active")),
        json!(last),
        json!(created),
        json!(names),
        json!(images),
        json!(format_selector(
            o.pointer("/spec/jobTemplate/spec/selector")
        )),
    ]
}

fn service(o: &Value, created: String) -> Vec<Value> {
    let kind = o
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let cluster_ip = items(o, "/spec/clusterIPs")
        .first()
        .and_then(Value::as_str)
        .or_else(|| o.pointer("/spec/clusterIP").and_then(Value::as_str))
        .unwrap_or("<none>");
    let external: Vec<&str> = items(o, "/spec/externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let external_ip = match kind {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let ingress: BTreeSet<&str> = items(o, "/status/loadBalancer/ingress")
                .iter()
                .map(|i| match text(i, "/ip") {
                    "" => text(i, "/hostname"),
                    ip => ip,
                })
                .filter(|s| !s.is_empty())
                .collect();
            let mut all: Vec<&str> = ingress.into_iter().collect();
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => text(o, "/spec/externalName").to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = items(o, "/spec/ports")
        .iter()
        .map(|p| {
            let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match int(p, "/nodePort") {
                0 => format!("{}/{protocol}", int(p, "/port")),
                node => format!("{}:{node}/{protocol}", int(p, "/port")),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    };
    vec![
        json!(kind),
        json!(cluster_ip),
        json!(external_ip),
        json!(ports),
        json!(created),
        json!(format_labels(o.pointer("/spec/selector"))),
    ]
}

fn node(o: &Value, created: String) -> Vec<Value> {
    let ready = items(o, "/status/conditions")
        .iter()
        .find(|c| c["type"] == "Ready");
    let mut status = vec![match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if o.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push("SchedulingDisabled");
    }
    let mut roles = BTreeSet::new();
    if let Some(labels) = o.pointer("/metadata/labels").and_then(Value::as_object) {
        for (k, v) in labels {
            match k.strip_prefix("node-role.kubernetes.io/") {
                Some(role) if !role.is_empty() => {
                    roles.insert(role.to_string());
                }
                _ if k == "kubernetes.io/role" && v.as_str().is_some_and(|v| !v.is_empty()) => {
                    roles.insert(v.as_str().unwrap_or("").to_string());
                }
                _ => {}
            }
        }
    }
    let roles = if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    };
    let address = |kind: &str| {
        items(o, "/status/addresses")
            .iter()
            .find(|a| a["type"] == kind)
            .map_or("<none>", |a| text(a, "/address"))
    };
    let info = |field: &str| match text(o, &format!("/status/nodeInfo/{field}")) {
        "" => "<unknown>".to_string(),
        v => v.to_string(),
    };
    let mut kernel = info("kernelVersion");
    let arch = text(o, "/status/nodeInfo/architecture");
    if !arch.is_empty() {
        kernel = format!("{kernel} ({arch})");
    }
    vec![
        json!(status.join(",")),
        json!(roles),
        json!(created),
        json!(text(o, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(kernel),
        json!(info("containerRuntimeVersion")),
    ]
}
#[cfg(test)]
#[path = "builtin_tests.rs"]
mod tests;

/// `cells` followed by the AGE cell.
fn with_age(mut cells: Vec<Value>, created: String) -> Vec<Value> {
    cells.push(json!(created));
    cells
}
