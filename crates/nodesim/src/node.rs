//! What a simulated Node looks like to the API: the Node object the kubelet registers
//! (`pkg/kubelet/kubelet_node_status.go`, `initialNode`), the status it reports
//! (`pkg/kubelet/nodestatus/setters.go`: addresses, capacity and allocatable, nodeInfo,
//! daemon endpoints, the four conditions) and its Lease in `kube-node-lease`
//! (`pkg/kubelet/nodelease`, `component-helpers/apimachinery/lease`). Pure builders: the
//! writes are `heartbeat.rs`'s.
//!
//! Addresses are made up, one per Node index: InternalIP `172.18.<i/254>.<i%254+2>` and Pod
//! IPs in `10.<64+i/256>.<i%256>.0/24`, so every Node and Pod has a distinct, stable address.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::options::{NODE_ANNOTATION, NodeSimOptions};

/// The version the Nodes report as their kubelet's.
pub(crate) const KUBELET_VERSION: &str = "v1.36.0";

/// The namespace of node Leases.
pub(crate) const LEASE_NAMESPACE: &str = "kube-node-lease";

/// The kubelet's Lease duration (`nodeLeaseDurationSeconds`).
const LEASE_DURATION_SECONDS: i64 = 40;

/// One simulated Node: its name and index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SimNode {
    pub(crate) name: String,
    pub(crate) index: usize,
}

impl SimNode {
    /// The Node's InternalIP.
    pub(crate) fn ip(&self) -> String {
        format!("172.18.{}.{}", self.index / 254, self.index % 254 + 2)
    }

    /// The `n`th Pod IP of the Node's range (1 to 254, cycling).
    pub(crate) fn pod_ip(&self, n: usize) -> String {
        format!(
            "10.{}.{}.{}",
            64 + self.index / 256,
            self.index % 256,
            n % 254 + 1
        )
    }

    /// The Node as the kubelet creates it: labels, the attach/detach annotation, taints.
    pub(crate) fn object(&self, options: &NodeSimOptions) -> Value {
        let mut labels = json!({
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
        });
        for (key, value) in &options.labels {
            labels[key] = value.clone().into();
        }
        let taints: Vec<Value> = options
            .taints
            .iter()
            .map(|t| {
                let mut taint = json!({"key": t.key, "effect": t.effect});
                if !t.value.is_empty() {
                    taint["value"] = t.value.clone().into();
                }
                taint
            })
            .collect();
        let mut spec = json!({});
        if !taints.is_empty() {
            spec["taints"] = taints.into();
        }
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "labels": labels,
                "annotations": {
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                    NODE_ANNOTATION: "simulated",
                },
            },
            "spec": spec,
        })
    }

    /// The status the kubelet reports: `since` is when the conditions last changed (the
    /// registration), `now` the heartbeat.
    pub(crate) fn status(&self, options: &NodeSimOptions, since: &str, now: &str) -> Value {
        let resources = json!({
            "cpu": options.cpu,
            "memory": options.memory,
            "pods": options.pods.to_string(),
            "ephemeral-storage": "100Gi",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
        });
        let condition = |kind: &str, status: &str, reason: &str, message: &str| {
            json!({"type": kind, "status": status, "lastHeartbeatTime": now,
                   "lastTransitionTime": since, "reason": reason, "message": message})
        };
        let id = machine_id(&self.name);
        let mut status = json!({
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": options.kubelet_address.clone().unwrap_or_else(|| self.ip())},
                {"type": "Hostname", "address": self.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": options.advertised_port()}},
            "nodeInfo": {
                "machineID": id,
                "systemUUID": id,
                "bootID": id,
                "kernelVersion": "6.8.0-nodesim",
                "osImage": "kubegen nodesim",
                "containerRuntimeVersion": "nodesim://0.1.0",
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        });
        if options.kubelet_address.is_some() {
            // The simulated kubelet streams over WebSockets: a v1.36 API server (the
            // `ExtendWebSocketsToKubelet` gate, beta) then proxies exec and attach WebSockets to
            // it as they are instead of translating them to SPDY.
            status["declaredFeatures"] = json!(["ExtendWebSocketsToKubelet"]);
        }
        status
    }

    /// The Node's Lease, held by the Node and owned by it (`uid`), renewed at `now`.
    pub(crate) fn lease(&self, uid: &str, now: &Timestamp) -> Value {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": uid}],
            },
            "spec": {
                "holderIdentity": self.name,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                "renewTime": micro_time(now),
            },
        })
    }
}

/// A `metav1.Time`: seconds, UTC.
pub(crate) fn time(at: &Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A `metav1.MicroTime`: microseconds, UTC.
pub(crate) fn micro_time(at: &Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

/// 32 hex digits derived from `seed` (stable, so a restarted simulator reports the same ids).
pub(crate) fn hex_id(seed: &str, digits: usize) -> String {
    let mut out = String::new();
    let mut round = 0u64;
    while out.len() < digits {
        let mut hasher = fnv::FnvHasher::default();
        std::hash::Hasher::write(&mut hasher, seed.as_bytes());
        std::hash::Hasher::write_u64(&mut hasher, round);
        out.push_str(&format!("{:016x}", std::hash::Hasher::finish(&hasher)));
        round += 1;
    }
    out.truncate(digits);
    out
}

fn machine_id(name: &str) -> String {
    hex_id(name, 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Taint;

    fn sim(index: usize) -> SimNode {
        SimNode {
            name: format!("nodesim-{index}"),
            index,
        }
    }

    #[test]
    fn addresses_are_distinct_per_node_and_pod() {
        assert_eq!(sim(0).ip(), "172.18.0.2");
        assert_eq!(sim(300).ip(), "172.18.1.48");
        assert_eq!(sim(0).pod_ip(0), "10.64.0.1");
        assert_eq!(sim(257).pod_ip(253), "10.65.1.254");
        assert_eq!(sim(257).pod_ip(254), "10.65.1.1");
    }

    #[test]
    fn the_node_carries_kubelet_labels_user_labels_and_taints() {
        let options = NodeSimOptions::default().label("zone", "a").taint(Taint {
            key: "k".into(),
            value: String::new(),
            effect: "NoSchedule".into(),
        });
        let node = sim(1).object(&options);
        assert_eq!(
            node["metadata"]["labels"]["kubernetes.io/hostname"],
            "nodesim-1"
        );
        assert_eq!(node["metadata"]["labels"]["zone"], "a");
        assert_eq!(
            node["metadata"]["annotations"][NODE_ANNOTATION],
            "simulated"
        );
        assert_eq!(
            node["spec"]["taints"],
            json!([{"key": "k", "effect": "NoSchedule"}])
        );
        assert_eq!(sim(1).object(&NodeSimOptions::default())["spec"], json!({}));
    }

    #[test]
    fn the_status_reports_capacity_address_endpoint_and_a_ready_heartbeat() {
        let options = NodeSimOptions::default()
            .capacity("4", "8Gi", 20)
            .kubelet_port(10251);
        let status = sim(0).status(&options, "T0", "T1");
        assert_eq!(status["capacity"]["cpu"], "4");
        assert_eq!(status["allocatable"]["pods"], "20");
        assert_eq!(
            status["addresses"][0],
            json!({"type": "InternalIP", "address": "172.18.0.2"})
        );
        assert_eq!(status["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10251);
        let ready = &status["conditions"][3];
        assert_eq!(
            (ready["type"].as_str(), ready["status"].as_str()),
            (Some("Ready"), Some("True"))
        );
        assert_eq!(ready["lastHeartbeatTime"], "T1");
        assert_eq!(ready["lastTransitionTime"], "T0");
        assert_eq!(status["nodeInfo"]["kubeletVersion"], KUBELET_VERSION);
    }

    #[test]
    fn a_node_with_a_served_kubelet_advertises_its_address_and_websocket_streaming() {
        let mut options = NodeSimOptions::default();
        assert_eq!(
            sim(0).status(&options, "T0", "T1")["declaredFeatures"],
            Value::Null
        );
        assert_eq!(
            sim(0).status(&options, "T0", "T1")["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            10250
        );
        options.kubelet_port = 40123;
        options.kubelet_address = Some("127.0.0.1".into());
        let status = sim(0).status(&options, "T0", "T1");
        assert_eq!(
            status["addresses"][0],
            json!({"type": "InternalIP", "address": "127.0.0.1"})
        );
        assert_eq!(status["daemonEndpoints"]["kubeletEndpoint"]["Port"], 40123);
        assert_eq!(
            status["declaredFeatures"],
            json!(["ExtendWebSocketsToKubelet"])
        );
    }

    #[test]
    fn the_lease_is_held_and_owned_by_its_node() {
        let now: Timestamp = "2026-11-28T14:00:00.5Z".parse().unwrap();
        let lease = sim(2).lease("uid-2", &now);
        assert_eq!(lease["metadata"]["namespace"], LEASE_NAMESPACE);
        assert_eq!(lease["metadata"]["ownerReferences"][0]["uid"], "uid-2");
        assert_eq!(lease["spec"]["holderIdentity"], "nodesim-2");
        assert_eq!(lease["spec"]["leaseDurationSeconds"], 40);
        assert_eq!(lease["spec"]["renewTime"], "2026-11-28T14:00:00.500000Z");
    }

    #[test]
    fn ids_are_stable_hex_of_the_asked_length() {
        assert_eq!(hex_id("a", 64).len(), 64);
        assert_eq!(hex_id("a", 32), hex_id("a", 32));
        assert_ne!(hex_id("a", 32), hex_id("b", 32));
        assert!(hex_id("a", 40).chars().all(|c| c.is_ascii_hexdigit()));
    }
}
