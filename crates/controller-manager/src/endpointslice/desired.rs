//! What a Service's EndpointSlices should hold, from its Pods, as pure functions (the reconciler
//! of `staging/src/k8s.io/endpointslice`: `reconciler.go`, `utils.go`'s `podToEndpoint`,
//! `getEndpointPorts`, and `pkg/api/v1/pod`'s `FindPort`).
//!
//! - A Pod is an endpoint when it has an IPv4 address and has not finished (`Succeeded`,
//!   `Failed`); a terminating one stays, marked `terminating`.
//! - `ready` is the Pod's `Ready` condition unless it is terminating, `serving` the condition
//!   alone; `publishNotReadyAddresses` makes both true.
//! - A Service port's `targetPort` becomes the Pod's port: a number as is, a name by the
//!   container port of that name and protocol (a Pod without it leaves the port out), none the
//!   port itself. Pods resolving to the same ports share slices, at most 100 endpoints each.
//! - A Service with no endpoint still gets one slice, without ports or endpoints.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

/// The value of the managed-by label, the controller's name for itself.
pub(crate) const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// Who manages a slice.
pub(crate) const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// Which Service a slice belongs to.
pub(crate) const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// The most endpoints in one slice (`--max-endpoints-per-slice`).
pub(crate) const MAX_ENDPOINTS: usize = 100;

/// One slice's content: its ports (`None`: the placeholder's `null`) and endpoints.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Slice {
    pub(crate) ports: Value,
    pub(crate) endpoints: Vec<Value>,
}

/// The slices `service` should have for `pods` (those its selector picks), grouped by the ports
/// each Pod resolves to, in the order the groups first appear.
pub(crate) fn slices(service: &Service, pods: &[&Pod]) -> Vec<Slice> {
    let name = service.metadata.name.as_deref().unwrap_or_default();
    let spec = service.spec.clone().unwrap_or_default();
    let publish = spec.publish_not_ready_addresses == Some(true);
    let service_ports = spec.ports.unwrap_or_default();
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for pod in pods {
        let Some(endpoint) = endpoint(pod, name, publish) else {
            continue;
        };
        let ports = Value::Array(
            service_ports
                .iter()
                .filter_map(|port| endpoint_port(port, pod))
                .collect(),
        );
        match groups.iter_mut().find(|(key, _)| *key == ports) {
            Some((_, endpoints)) => endpoints.push(endpoint),
            None => groups.push((ports, vec![endpoint])),
        }
    }
    let mut out = Vec::new();
    for (ports, endpoints) in groups {
        for chunk in endpoints.chunks(MAX_ENDPOINTS) {
            out.push(Slice {
                ports: ports.clone(),
                endpoints: chunk.to_vec(),
            });
        }
    }
    if out.is_empty() {
        out.push(Slice {
            ports: Value::Null,
            endpoints: Vec::new(),
        });
    }
    out
}

/// The endpoint of `pod` for Service `service`, `None` when the Pod is not one.
fn endpoint(pod: &Pod, service: &str, publish: bool) -> Option<Value> {
    let status = pod.status.as_ref()?;
    if matches!(status.phase.as_deref(), Some("Succeeded" | "Failed")) {
        return None;
    }
    let ip = ipv4_of(pod)?;
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let pod_ready = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    let mut endpoint = json!({
        "addresses": [ip],
        "conditions": {
            "ready": publish || (pod_ready && !terminating),
            "serving": publish || pod_ready,
            "terminating": terminating,
        },
    });
    let spec = pod.spec.as_ref();
    if let Some(spec) = spec
        && let Some(hostname) = spec.hostname.as_deref().filter(|h| !h.is_empty())
        && spec.subdomain.as_deref() == Some(service)
    {
        endpoint["hostname"] = json!(hostname);
    }
    if let Some(node) = spec
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
    {
        endpoint["nodeName"] = json!(node);
    }
    endpoint["targetRef"] = json!({
        "kind": "Pod",
        "namespace": pod.metadata.namespace.as_deref().unwrap_or_default(),
        "name": pod.metadata.name.as_deref().unwrap_or_default(),
        "uid": pod.metadata.uid.as_deref().unwrap_or_default(),
    });
    Some(endpoint)
}

/// The Pod's IPv4 address (`podIPs`, else `podIP`).
fn ipv4_of(pod: &Pod) -> Option<String> {
    let status = pod.status.as_ref()?;
    let listed = status.pod_ips.iter().flatten().map(|ip| ip.ip.as_str());
    listed
        .chain(status.pod_ip.as_deref())
        .find(|ip| ip.parse::<std::net::Ipv4Addr>().is_ok())
        .map(str::to_owned)
}

/// The slice port of Service port `port` for `pod`, `None` when a named target port is not
/// one of the Pod's.
fn endpoint_port(port: &ServicePort, pod: &Pod) -> Option<Value> {
    let protocol = port.protocol.as_deref().unwrap_or("TCP");
    let number = match &port.target_port {
        None => port.port,
        Some(IntOrString::Int(0)) => port.port,
        Some(IntOrString::Int(number)) => *number,
        Some(IntOrString::String(name)) => named_port(pod, name, protocol)?,
    };
    let mut out = json!({
        "name": port.name.as_deref().unwrap_or_default(),
        "port": number,
        "protocol": protocol,
    });
    if let Some(app_protocol) = &port.app_protocol {
        out["appProtocol"] = json!(app_protocol);
    }
    Some(out)
}

/// The container port named `name` with `protocol` (`FindPort`).
fn named_port(pod: &Pod, name: &str, protocol: &str) -> Option<i32> {
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or_default();
    containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| {
            p.name.as_deref() == Some(name) && p.protocol.as_deref().unwrap_or("TCP") == protocol
        })
        .map(|p| p.container_port)
}

/// The labels of a Service's slices: the Service's own, then the two the controller owns, and
/// `service.kubernetes.io/headless` for a headless Service (`setEndpointSliceLabels`).
pub(crate) fn labels(service: &Service) -> BTreeMap<String, String> {
    let mut labels = service.metadata.labels.clone().unwrap_or_default();
    labels.insert(MANAGED_BY_LABEL.into(), CONTROLLER_NAME.into());
    labels.insert(
        SERVICE_NAME_LABEL.into(),
        service.metadata.name.clone().unwrap_or_default(),
    );
    let headless = service.spec.as_ref().and_then(|s| s.cluster_ip.as_deref()) == Some("None");
    if headless {
        labels.insert("service.kubernetes.io/headless".into(), String::new());
    }
    labels
}

#[cfg(test)]
#[path = "desired_tests.rs"]
mod tests;
