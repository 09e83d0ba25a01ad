//! [`NodeSimOptions`]: how many Nodes, what they look like, how often they heartbeat and how
//! their Pods behave, built with builder methods so a test in another crate can write
//! `NodeSimOptions::default().nodes(5).ready_after(Duration::from_secs(2))`.
//!
//! The defaults are the kubelet's (`pkg/kubelet/apis/config/v1beta1/defaults.go`: a Lease
//! renewed every 10 s of its 40 s, the node status reported every 5 min when unchanged) and
//! kwok's fast stages (a Pod runs and is ready as soon as it is bound).

use std::{collections::BTreeMap, time::Duration};

/// A taint of every simulated Node (`spec.taints[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value` (may be empty).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// What the simulated containers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Every container exits with code 1 at start and is restarted with the kubelet's backoff:
    /// `CrashLoopBackOff`, a growing `restartCount`.
    CrashLoop,
    /// Containers run but never become ready.
    NotReady,
}

impl Failure {
    /// The value of the [`FAILURE_LABEL`] that asks for this failure.
    pub fn label_value(self) -> &'static str {
        match self {
            Failure::CrashLoop => "crashloop",
            Failure::NotReady => "not-ready",
        }
    }

    /// The failure a [`FAILURE_LABEL`] value asks for.
    pub fn from_label_value(value: &str) -> Option<Failure> {
        [Failure::CrashLoop, Failure::NotReady]
            .into_iter()
            .find(|f| f.label_value() == value)
    }
}

/// A Pod label that injects a [`Failure`] into that Pod only: `crashloop` or `not-ready`.
pub const FAILURE_LABEL: &str = "nodesim.kubegen.io/failure";

/// The annotation every simulated Node carries (`simulated`), as kwok marks its own.
pub const NODE_ANNOTATION: &str = "nodesim.kubegen.io/node";

/// What a [`NodeSimulator`](crate::NodeSimulator) simulates.
#[derive(Clone, Debug)]
pub struct NodeSimOptions {
    pub(crate) count: usize,
    pub(crate) name_prefix: String,
    pub(crate) cpu: String,
    pub(crate) memory: String,
    pub(crate) pods: u32,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) taints: Vec<Taint>,
    pub(crate) lease_renew_interval: Duration,
    pub(crate) status_report_interval: Duration,
    pub(crate) ready_after: Duration,
    pub(crate) job_duration: Duration,
    pub(crate) failure: Option<Failure>,
    pub(crate) scheduler: bool,
    pub(crate) scheduler_name: String,
    pub(crate) kubelet_port: u16,
    pub(crate) kubelet_server: bool,
    pub(crate) kubelet_bind: std::net::IpAddr,
    /// The address the Nodes advertise as InternalIP instead of their own made-up one: set by
    /// the simulator to `127.0.0.1` when it serves the kubelet API there.
    pub(crate) kubelet_address: Option<String>,
    pub(crate) responder: crate::port_forward_responder::Responder,
}

impl Default for NodeSimOptions {
    /// Three Nodes `nodesim-0..2` of 32 CPUs, 256 GiB and 110 Pods (the kubelet's `maxPods`),
    /// the kubelet's heartbeat intervals, Pods ready at once, the scheduler on.
    fn default() -> Self {
        NodeSimOptions {
            count: 3,
            name_prefix: "nodesim-".into(),
            cpu: "32".into(),
            memory: "256Gi".into(),
            pods: 110,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            lease_renew_interval: Duration::from_secs(10),
            status_report_interval: Duration::from_secs(5 * 60),
            ready_after: Duration::ZERO,
            job_duration: Duration::ZERO,
            failure: None,
            scheduler: true,
            scheduler_name: "default-scheduler".into(),
            kubelet_port: 0,
            kubelet_server: true,
            kubelet_bind: std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            kubelet_address: None,
            responder: Default::default(),
        }
    }
}

impl NodeSimOptions {
    /// How many Nodes (`<prefix>0` .. `<prefix><count-1>`).
    pub fn nodes(mut self, count: usize) -> Self {
        self.count = count;
        self
    }

    /// The prefix of the Nodes' names (`nodesim-` by default).
    pub fn name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.name_prefix = prefix.into();
        self
    }

    /// Each Node's capacity (and allocatable): CPU and memory as quantities (`"4"`, `"16Gi"`),
    /// and the number of Pods.
    pub fn capacity(
        mut self,
        cpu: impl Into<String>,
        memory: impl Into<String>,
        pods: u32,
    ) -> Self {
        self.cpu = cpu.into();
        self.memory = memory.into();
        self.pods = pods;
        self
    }

    /// A label of every Node, beside the kubelet's own (`kubernetes.io/hostname`, `.../os`,
    /// `.../arch`).
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// A taint of every Node.
    pub fn taint(mut self, taint: Taint) -> Self {
        self.taints.push(taint);
        self
    }

    /// How often each Node renews its Lease in `kube-node-lease` (the kubelet: 10 s, a quarter
    /// of the Lease's 40 s).
    pub fn lease_renew_interval(mut self, every: Duration) -> Self {
        self.lease_renew_interval = every.max(Duration::from_millis(10));
        self
    }

    /// How often an unchanged Node status is reported, moving the conditions'
    /// `lastHeartbeatTime` (the kubelet's `nodeStatusReportFrequency`: 5 min).
    pub fn status_report_interval(mut self, every: Duration) -> Self {
        self.status_report_interval = every.max(Duration::from_millis(10));
        self
    }

    /// How long a running container waits before it is ready (zero by default, as the kubelet
    /// marks a container without a readiness probe ready at once). A container with a readiness
    /// probe waits at least its `initialDelaySeconds`.
    pub fn ready_after(mut self, delay: Duration) -> Self {
        self.ready_after = delay;
        self
    }

    /// How long a Job's Pod runs before it succeeds (zero by default, as kwok's fast stages).
    pub fn job_duration(mut self, duration: Duration) -> Self {
        self.job_duration = duration;
        self
    }

    /// A failure every Pod on the simulated Nodes suffers (a Pod's [`FAILURE_LABEL`] asks for
    /// one Pod only).
    pub fn failure(mut self, failure: Option<Failure>) -> Self {
        self.failure = failure;
        self
    }

    /// Whether to bind unscheduled Pods of `default-scheduler` (on by default; switch it off
    /// beside a real kube-scheduler).
    pub fn scheduler(mut self, on: bool) -> Self {
        self.scheduler = on;
        self
    }

    /// The `spec.schedulerName` whose Pods the scheduler binds, and the component its Events
    /// come from (`default-scheduler`, which the API server writes into Pods that name none).
    /// Another name runs it as a second scheduler beside a real one, as kube-scheduler's
    /// profiles do.
    pub fn scheduler_name(mut self, name: impl Into<String>) -> Self {
        self.scheduler_name = name.into();
        self
    }

    /// The port of the simulated kubelet's HTTPS API, which the Nodes advertise as
    /// `daemonEndpoints.kubeletEndpoint.Port`: 0 (the default) serves on a free port and
    /// advertises that one. Without [`kubelet_server`](Self::kubelet_server), the port advertised
    /// (10250, the kubelet's, when 0).
    pub fn kubelet_port(mut self, port: u16) -> Self {
        self.kubelet_port = port;
        self
    }

    /// Whether to serve the kubelet's streaming API (`logs`, `exec`, `attach`, `port-forward`)
    /// on `127.0.0.1`, which the Nodes then advertise as their InternalIP so an API server can
    /// dial it (on by default).
    pub fn kubelet_server(mut self, on: bool) -> Self {
        self.kubelet_server = on;
        self
    }

    /// The address the kubelet server binds and the Nodes advertise as InternalIP (127.0.0.1).
    /// Another loopback address lets an API server that dials Nodes by hostname reach it: Nodes
    /// named `127.0.0.10` (prefix `127.0.0.1`, one Node) served on `127.0.0.10`.
    pub fn kubelet_address(mut self, address: std::net::IpAddr) -> Self {
        self.kubelet_bind = address;
        self
    }

    /// Makes `port` of every simulated Pod answer each HTTP request with `200 OK` and `body`,
    /// instead of echoing what it receives (the default of every port).
    pub fn http_port(mut self, port: u16, body: impl Into<String>) -> Self {
        self.responder.http.insert(port, body.into());
        self
    }

    /// The port the Nodes advertise when no kubelet server is bound.
    pub(crate) fn advertised_port(&self) -> u16 {
        if self.kubelet_port == 0 {
            10250
        } else {
            self.kubelet_port
        }
    }

    /// The names of the simulated Nodes.
    pub fn node_names(&self) -> Vec<String> {
        (0..self.count)
            .map(|i| format!("{}{i}", self.name_prefix))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_named_by_prefix_and_index() {
        let options = NodeSimOptions::default().nodes(2).name_prefix("sim-");
        assert_eq!(options.node_names(), ["sim-0", "sim-1"]);
        assert_eq!(NodeSimOptions::default().node_names().len(), 3);
    }

    #[test]
    fn failures_round_trip_through_their_label_values() {
        for failure in [Failure::CrashLoop, Failure::NotReady] {
            assert_eq!(
                Failure::from_label_value(failure.label_value()),
                Some(failure)
            );
        }
        assert_eq!(Failure::from_label_value("other"), None);
    }
}
