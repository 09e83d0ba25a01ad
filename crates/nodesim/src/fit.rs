//! Whether a Pod fits a Node, and the words kube-scheduler uses when it fits none: the Filter
//! plugins of the default profile that decide on a Pod and a Node alone, in the profile's order
//! (`pkg/scheduler/apis/config/v1/default_plugins.go`), each stopping the Node's check at its
//! first refusal as `RunFilterPlugins` does:
//!
//! | plugin | Kubernetes source | refusal |
//! |---|---|---|
//! | NodeUnschedulable | `framework/plugins/nodeunschedulable` | `node(s) were unschedulable` |
//! | TaintToleration | `framework/plugins/tainttoleration` | `node(s) had untolerated taint(s)` |
//! | NodeAffinity | `framework/plugins/nodeaffinity` (nodeSelector and required affinity) | `node(s) didn't match Pod's node affinity/selector` |
//! | NodeResourcesFit | `framework/plugins/noderesources/fit.go` | `Too many pods`, `Insufficient cpu`, `Insufficient memory` |
//!
//! [`FitError::message`] is `framework.FitError.Error()` with the default preemption's
//! PostFilter message (`framework/plugins/defaultpreemption`): a Node refused by a resource
//! may be freed by preemption ("No preemption victims found for incoming pod" when nothing of
//! lower priority runs there, which is all this simulator models), any other refusal is "not
//! helpful".
//!
//! # Differences from kube-scheduler
//! NodePorts, volume, topology-spread and inter-pod affinity filters are not modelled; neither
//! are scores beyond spreading by requested fraction ([`choose_among`]), nor preemption
//! itself.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec, Taint};
use kubegen_scheduling::{RequiredNodeAffinity, tolerated, untolerated_taint};

use crate::quantity::milli;

/// What a Pod asks of a Node, or what is already asked of it: thousandths of a CPU and of a
/// byte, and a count of Pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Requests {
    pub(crate) cpu: i64,
    pub(crate) memory: i64,
    pub(crate) pods: i64,
}

impl Requests {
    /// The sum of two demands.
    pub(crate) fn plus(self, other: Requests) -> Requests {
        Requests {
            cpu: self.cpu + other.cpu,
            memory: self.memory + other.memory,
            pods: self.pods + other.pods,
        }
    }

    /// The demand left when `other` leaves.
    pub(crate) fn minus(self, other: Requests) -> Requests {
        Requests {
            cpu: self.cpu - other.cpu,
            memory: self.memory - other.memory,
            pods: self.pods - other.pods,
        }
    }

    /// A Pod's requests as the scheduler computes them (`resourcehelper.PodRequests`): the sum
    /// over its containers, at least the largest init container's, plus its overhead; one Pod.
    pub(crate) fn of_pod(spec: &PodSpec) -> Requests {
        let sum = |containers: &[Container]| -> (i64, i64) {
            containers.iter().fold((0, 0), |(cpu, memory), c| {
                let (c_cpu, c_memory) = container_requests(c);
                (cpu + c_cpu, memory + c_memory)
            })
        };
        let (mut cpu, mut memory) = sum(&spec.containers);
        for init in spec.init_containers.iter().flatten() {
            let (i_cpu, i_memory) = container_requests(init);
            cpu = cpu.max(i_cpu);
            memory = memory.max(i_memory);
        }
        let overhead = |name: &str| {
            spec.overhead
                .as_ref()
                .and_then(|o| o.get(name))
                .and_then(|q| milli(&q.0))
                .unwrap_or(0)
        };
        Requests {
            cpu: cpu + overhead("cpu"),
            memory: memory + overhead("memory"),
            pods: 1,
        }
    }

    /// A Node's allocatable resources.
    pub(crate) fn allocatable(node: &Node) -> Requests {
        let value = |name: &str| {
            node.status
                .as_ref()
                .and_then(|s| s.allocatable.as_ref())
                .and_then(|a| a.get(name))
                .and_then(|q| milli(&q.0))
                .unwrap_or(0)
        };
        Requests {
            cpu: value("cpu"),
            memory: value("memory"),
            pods: value("pods") / 1000,
        }
    }
}

/// A container's CPU and memory requests; a limit stands in for a missing request, as the
/// API server's defaulting copies limits into requests.
fn container_requests(container: &Container) -> (i64, i64) {
    let resources = container.resources.as_ref();
    let read = |name: &str| {
        let pick = |map: Option<
            &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
        >| { map.and_then(|m| m.get(name)).and_then(|q| milli(&q.0)) };
        pick(resources.and_then(|r| r.requests.as_ref()))
            .or_else(|| pick(resources.and_then(|r| r.limits.as_ref())))
            .unwrap_or(0)
    };
    (read("cpu"), read("memory"))
}

/// Why one Node refuses a Pod: each a Filter plugin's reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// NodeUnschedulable (cannot be resolved by preemption).
    Unschedulable,
    /// TaintToleration (cannot be resolved by preemption).
    Taint,
    /// NodeAffinity (cannot be resolved by preemption).
    Selector,
    /// NodeResourcesFit: one reason per resource short, in the plugin's order.
    Resources(Vec<&'static str>),
}

impl Refusal {
    fn reasons(&self) -> Vec<&'static str> {
        match self {
            Refusal::Unschedulable => vec!["node(s) were unschedulable"],
            Refusal::Taint => vec!["node(s) had untolerated taint(s)"],
            Refusal::Selector => vec!["node(s) didn't match Pod's node affinity/selector"],
            Refusal::Resources(reasons) => reasons.clone(),
        }
    }

    /// Whether preemption could make room (only for resources).
    fn preemption_might_help(&self) -> bool {
        matches!(self, Refusal::Resources(_))
    }
}

/// Checks `pod` (asking `wanted`) against `node`, whose Pods already ask `used`.
#[cfg(test)]
pub(crate) fn check(
    pod: &Pod,
    wanted: Requests,
    node: &Node,
    used: Requests,
) -> Result<(), Refusal> {
    check_against(pod, wanted, node, used, Requests::allocatable(node))
}

/// [`check`] with the Node's allocatable resources `free` read already: a scheduler checks every
/// Node for every Pod, and reading quantities is the costly part.
fn check_against(
    pod: &Pod,
    wanted: Requests,
    node: &Node,
    used: Requests,
    free: Requests,
) -> Result<(), Refusal> {
    let empty = PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let node_spec = node.spec.as_ref();
    if node_spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        let unschedulable = Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        };
        if !tolerated(tolerations, &unschedulable) {
            return Err(Refusal::Unschedulable);
        }
    }
    let taints = node_spec
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let hard = |t: &Taint| t.effect == "NoSchedule" || t.effect == "NoExecute";
    if untolerated_taint(taints, tolerations, hard).is_some() {
        return Err(Refusal::Taint);
    }
    if !RequiredNodeAffinity::of(spec).matches(node) {
        return Err(Refusal::Selector);
    }
    let mut short = Vec::new();
    if used.pods + 1 > free.pods {
        short.push("Too many pods");
    }
    if wanted.cpu > 0 && used.cpu + wanted.cpu > free.cpu {
        short.push("Insufficient cpu");
    }
    if wanted.memory > 0 && used.memory + wanted.memory > free.memory {
        short.push("Insufficient memory");
    }
    if short.is_empty() {
        Ok(())
    } else {
        Err(Refusal::Resources(short))
    }
}

/// The Node `pod` goes to among `nodes` (each with what its Pods already ask): of those that
/// fit, the least loaded ([`load`]), then the first by name; or why none fits.
#[cfg(test)]
pub(crate) fn choose(pod: &Pod, nodes: &[Candidate<'_>]) -> Result<String, FitError> {
    choose_among(pod, nodes.iter().copied(), usize::MAX).0
}

/// [`choose`] over `nodes` in their order, stopping once `enough` Nodes fit (kube-scheduler's
/// `findNodesThatPassFilters` stops at `numFeasibleNodesToFind`); also returns how many Nodes
/// were looked at, where the next Pod's search starts.
pub(crate) fn choose_among<'a>(
    pod: &Pod,
    nodes: impl Iterator<Item = Candidate<'a>>,
    enough: usize,
) -> (Result<String, FitError>, usize) {
    let wanted = Requests::of_pod(pod.spec.as_ref().unwrap_or(&PodSpec::default()));
    let mut best: Option<((f64, i64), &str)> = None;
    let (mut feasible, mut processed) = (0, 0);
    let mut refusals = Vec::new();
    for candidate in nodes {
        if feasible >= enough {
            break;
        }
        processed += 1;
        let name = candidate.node.metadata.name.as_deref().unwrap_or_default();
        match check_against(pod, wanted, candidate.node, candidate.used, candidate.free) {
            Ok(()) => {
                feasible += 1;
                let load = load(candidate.free, candidate.used, wanted);
                let better = best.is_none_or(|(best_load, best_name)| {
                    load < best_load || (load == best_load && name < best_name)
                });
                if better {
                    best = Some((load, name));
                }
            }
            Err(refusal) => refusals.push(refusal),
        }
    }
    let chosen = match best {
        Some((_, node)) => Ok(node.to_owned()),
        None => Err(FitError { refusals }),
    };
    (chosen, processed)
}

/// A Node a Pod may go to: what its Pods ask of it already (`used`) and what it has (`free`,
/// its allocatable resources, read once per Node change rather than once per Pod).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate<'a> {
    pub(crate) node: &'a Node,
    pub(crate) used: Requests,
    pub(crate) free: Requests,
}

/// Why a Pod fits no Node: the refusal of each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FitError {
    pub(crate) refusals: Vec<Refusal>,
}

impl FitError {
    /// The message of the `FailedScheduling` Event and the `PodScheduled` condition.
    pub(crate) fn message(&self) -> String {
        if self.refusals.is_empty() {
            return "no nodes available to schedule pods".into();
        }
        let total = self.refusals.len();
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        let mut after_preemption: BTreeMap<&str, usize> = BTreeMap::new();
        for refusal in &self.refusals {
            for reason in refusal.reasons() {
                *reasons.entry(reason).or_default() += 1;
            }
            let outcome = if refusal.preemption_might_help() {
                "No preemption victims found for incoming pod"
            } else {
                "Preemption is not helpful for scheduling"
            };
            *after_preemption.entry(outcome).or_default() += 1;
        }
        format!(
            "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {}.",
            histogram(&reasons),
            histogram(&after_preemption)
        )
    }
}

/// `"<count> <reason>"` per reason, sorted as strings (the scheduler's `sortReasonsHistogram`).
fn histogram(reasons: &BTreeMap<&str, usize>) -> String {
    let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    parts.join(", ")
}

/// The load `node` would carry with `used` plus `wanted`: the mean of its CPU and memory
/// requested fractions (what NodeResourcesFit's LeastAllocated score minimises), then its Pod
/// count.
fn load(free: Requests, used: Requests, wanted: Requests) -> (f64, i64) {
    let after = used.plus(wanted);
    let fraction = |used: i64, free: i64| {
        if free <= 0 {
            1.0
        } else {
            used as f64 / free as f64
        }
    };
    let mean = (fraction(after.cpu, free.cpu) + fraction(after.memory, free.memory)) / 2.0;
    (mean, after.pods)
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
