//! The next thing the kubelet would do for a Pod bound to a simulated Node, as a pure function
//! of the Pod, its Node and the time ([`step`]). These are kwok's pod stages
//! (`kustomize/stage/pod/fast`: ready, complete, delete; `.../chaos`: container failures) with
//! the status the real kubelet writes (`pkg/kubelet/kubelet_pods.go` `generateAPIPodStatus`,
//! `pkg/kubelet/status/generate.go` for the conditions, `pkg/kubelet/kuberuntime` for the
//! container states and the crash-loop backoff of 10 s doubling to 5 min).
//!
//! ```mermaid
//! stateDiagram-v2
//!     [*] --> Running: bound to a simulated Node
//!     Running --> Ready: ready_after (and probe initialDelaySeconds) elapsed
//!     Running --> CrashLoopBackOff: failure crashloop
//!     CrashLoopBackOff --> CrashLoopBackOff: backoff elapsed, restartCount + 1
//!     Ready --> Succeeded: owned by a Job, restartPolicy Never or OnFailure, job_duration elapsed
//!     Running --> Succeeded: (same)
//!     Running --> [*]: deletionTimestamp set: DELETE gracePeriodSeconds 0
//! ```
//!
//! # Differences from the kubelet
//! Container statuses carry no `volumeMounts`, `user`, `resources` or `allocatedResources`;
//! init containers complete at once; no kubelet Events (Pulling, Pulled, Created, Started) are
//! written, as kwok writes none.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::node::{SimNode, hex_id, time};
use crate::options::{FAILURE_LABEL, Failure, NodeSimOptions};

/// The crash-loop backoff: 10 s doubling to 5 min (`kuberuntime` `backOffPeriod`, `MaxContainerBackOff`).
const BACKOFF_BASE: Duration = Duration::from_secs(10);
const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// What the simulated kubelet does next for a Pod.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// Nothing, ever again (until the Pod changes).
    Nothing,
    /// Nothing yet: look again after this long.
    Wait(Duration),
    /// Write this `status` (the whole of what the kubelet owns), then look again after the
    /// delay if there is one.
    Status(Value, Option<Duration>),
    /// Finish the deletion: `DELETE` with `gracePeriodSeconds: 0`.
    Delete,
}

/// Where and when a step is taken.
pub(crate) struct Context<'a> {
    pub(crate) node: &'a SimNode,
    /// The Pod's IP if it starts now.
    pub(crate) pod_ip: String,
    pub(crate) now: Timestamp,
    pub(crate) options: &'a NodeSimOptions,
}

/// The kubelet's next step for `pod` (bound to `context.node`).
pub(crate) fn step(pod: &Pod, context: &Context<'_>) -> Step {
    if pod.metadata.deletion_timestamp.is_some() {
        return Step::Delete;
    }
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    if phase == "Succeeded" || phase == "Failed" {
        return Step::Nothing;
    }
    let started = status.and_then(|s| s.start_time.as_ref()).map(|t| t.0);
    let Some(started) = started else {
        return start(pod, context);
    };
    let failure = failure(pod, context.options);
    if failure == Some(Failure::CrashLoop) {
        return crash_again(pod, context, started);
    }
    let elapsed = since(started, context.now);
    if runs_to_completion(pod) {
        let left = context.options.job_duration.saturating_sub(elapsed);
        return if left.is_zero() {
            Step::Status(PodView::new(pod, context, started).succeeded(), None)
        } else {
            Step::Wait(left)
        };
    }
    let ready = containers_ready(pod);
    if ready || failure == Some(Failure::NotReady) {
        return Step::Nothing;
    }
    let left = ready_delay(pod, context.options).saturating_sub(elapsed);
    if left.is_zero() {
        Step::Status(PodView::new(pod, context, started).running(true), None)
    } else {
        Step::Wait(left)
    }
}

/// The first status: containers running (or crashed), ready at once when nothing delays it.
fn start(pod: &Pod, context: &Context<'_>) -> Step {
    let view = PodView::new(pod, context, context.now);
    let failure = failure(pod, context.options);
    if failure == Some(Failure::CrashLoop) {
        return match view.crashed(0) {
            Some(status) => Step::Status(status, Some(backoff(0))),
            None => Step::Status(view.failed(), None),
        };
    }
    if runs_to_completion(pod) && context.options.job_duration.is_zero() {
        return Step::Status(view.succeeded(), None);
    }
    let delay = ready_delay(pod, context.options);
    let ready = delay.is_zero() && failure.is_none();
    let next = if runs_to_completion(pod) {
        Some(context.options.job_duration)
    } else if ready || failure.is_some() {
        None
    } else {
        Some(delay)
    };
    Step::Status(view.running(ready), next)
}

/// Another crash once the backoff of the last one has passed.
fn crash_again(pod: &Pod, context: &Context<'_>, started: Timestamp) -> Step {
    let restarts = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .map_or(0, |c| c.restart_count.max(0) as u32);
    let last = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .and_then(|c| c.last_state.as_ref())
        .and_then(|s| s.terminated.as_ref())
        .and_then(|t| t.finished_at.as_ref())
        .map_or(started, |t| t.0);
    let left = backoff(restarts).saturating_sub(since(last, context.now));
    if !left.is_zero() {
        return Step::Wait(left);
    }
    match PodView::new(pod, context, started).crashed(restarts + 1) {
        Some(status) => Step::Status(status, Some(backoff(restarts + 1))),
        None => Step::Nothing,
    }
}

/// The backoff after the `restarts`th restart: 10 s doubling, at most 5 min.
pub(crate) fn backoff(restarts: u32) -> Duration {
    let factor = 1u32.checked_shl(restarts).unwrap_or(u32::MAX);
    BACKOFF_BASE.saturating_mul(factor).min(BACKOFF_MAX)
}

/// The failure injected into `pod`: its [`FAILURE_LABEL`], else the simulator's option.
pub(crate) fn failure(pod: &Pod, options: &NodeSimOptions) -> Option<Failure> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(FAILURE_LABEL))
        .and_then(|v| Failure::from_label_value(v))
        .or(options.failure)
}

/// Whether the Pod's containers run to completion: owned by a Job, restartPolicy `Never` or
/// `OnFailure` (kwok's `pod-complete` stage selects the same).
pub(crate) fn runs_to_completion(pod: &Pod) -> bool {
    let owned_by_job = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "Job" && o.api_version.starts_with("batch/"));
    let policy = pod.spec.as_ref().and_then(|s| s.restart_policy.as_deref());
    owned_by_job && matches!(policy, Some("Never" | "OnFailure"))
}

/// How long after start the Pod's containers become ready: the option, and at least every
/// readiness probe's `initialDelaySeconds` (a container without a probe is ready at once).
pub(crate) fn ready_delay(pod: &Pod, options: &NodeSimOptions) -> Duration {
    let probe_delay = containers(pod)
        .iter()
        .filter_map(|c| c.readiness_probe.as_ref())
        .map(|p| Duration::from_secs(p.initial_delay_seconds.unwrap_or(0).max(0) as u64))
        .max()
        .unwrap_or(Duration::ZERO);
    options.ready_after.max(probe_delay)
}

fn containers_ready(pod: &Pod) -> bool {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref());
    statuses.is_some_and(|s| !s.is_empty() && s.iter().all(|c| c.ready))
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec.as_ref().map_or(&[], |s| s.containers.as_slice())
}

fn since(then: Timestamp, now: Timestamp) -> Duration {
    let elapsed: SignedDuration = now.duration_since(then);
    Duration::try_from(elapsed).unwrap_or(Duration::ZERO)
}

/// Builds the status documents of one Pod at one moment.
struct PodView<'a> {
    pod: &'a Pod,
    context: &'a Context<'a>,
    /// When the Pod started (`startTime`, the containers' `startedAt`).
    started: String,
    now: String,
}

impl<'a> PodView<'a> {
    fn new(pod: &'a Pod, context: &'a Context<'a>, started: Timestamp) -> PodView<'a> {
        PodView {
            pod,
            context,
            started: time(&started),
            now: time(&context.now),
        }
    }

    /// `Running`, every container running and `ready` or not.
    fn running(&self, ready: bool) -> Value {
        let statuses = self.each_container(|c, id| {
            json!({"name": c.name, "image": image(c), "imageID": image_id(c), "containerID": id,
                   "started": true, "ready": ready, "restartCount": 0,
                   "state": {"running": {"startedAt": self.started}}, "lastState": {}})
        });
        let readiness = if ready {
            self.condition_true()
        } else {
            self.not_ready("ContainersNotReady")
        };
        self.status("Running", statuses, ("True", readiness))
    }

    /// Crashed for the `restarts`th time and waiting in `CrashLoopBackOff`; `None` when the
    /// restart policy is `Never` (the Pod fails instead).
    fn crashed(&self, restarts: u32) -> Option<Value> {
        let policy = self
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref());
        if policy == Some("Never") {
            return None;
        }
        let pod_ref = self.pod_ref();
        let statuses = self.each_container(|c, id| {
            let message = format!(
                "back-off {} restarting failed container={} pod={pod_ref}",
                go_duration(backoff(restarts)),
                c.name
            );
            json!({"name": c.name, "image": image(c), "imageID": image_id(c), "containerID": id,
                   "started": false, "ready": false, "restartCount": restarts,
                   "state": {"waiting": {"reason": "CrashLoopBackOff", "message": message}},
                   "lastState": {"terminated": self.terminated(id, 1, "Error")}})
        });
        Some(self.status(
            "Running",
            statuses,
            ("True", self.not_ready("ContainersNotReady")),
        ))
    }

    /// `Failed`: every container exited with code 1.
    fn failed(&self) -> Value {
        let statuses = self.exited(1, "Error");
        self.status("Failed", statuses, ("False", self.not_ready("PodFailed")))
    }

    /// `Succeeded`: every container exited with code 0.
    fn succeeded(&self) -> Value {
        let statuses = self.exited(0, "Completed");
        self.status(
            "Succeeded",
            statuses,
            ("False", self.not_ready("PodCompleted")),
        )
    }

    fn exited(&self, code: i32, reason: &str) -> Value {
        self.each_container(|c, id| {
            json!({"name": c.name, "image": image(c), "imageID": image_id(c), "containerID": id,
                   "started": false, "ready": false, "restartCount": 0,
                   "state": {"terminated": self.terminated(id, code, reason)}, "lastState": {}})
        })
    }

    fn terminated(&self, id: &str, code: i32, reason: &str) -> Value {
        json!({"exitCode": code, "reason": reason, "startedAt": self.started,
               "finishedAt": self.now, "containerID": id})
    }

    fn each_container(&self, status: impl Fn(&Container, &str) -> Value) -> Value {
        let uid = self.pod.metadata.uid.as_deref().unwrap_or_default();
        containers(self.pod)
            .iter()
            .map(|c| status(c, &container_id(uid, &c.name)))
            .collect()
    }

    /// The whole status: phase, conditions (PodReadyToStartContainers, Initialized, Ready,
    /// ContainersReady, PodScheduled, in the kubelet's order), IPs, start time, containers.
    fn status(&self, phase: &str, containers: Value, (sandbox, ready): (&str, Value)) -> Value {
        let host_ip = self.context.node.ip();
        let pod_ip = self.pod_ip();
        let scheduled = self
            .existing_condition("PodScheduled")
            .unwrap_or_else(|| self.condition_true());
        let mut initialized = self.condition_true();
        if phase != "Running" {
            initialized["reason"] = ready["reason"].clone();
        }
        let mut sandbox_ready = self.condition_true();
        sandbox_ready["status"] = sandbox.into();
        let mut status = json!({
            "phase": phase,
            "conditions": [
                typed("PodReadyToStartContainers", sandbox_ready),
                typed("Initialized", initialized),
                typed("Ready", ready.clone()),
                typed("ContainersReady", ready),
                typed("PodScheduled", scheduled),
            ],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": self.started,
            "containerStatuses": containers,
        });
        if let Some(generation) = self.pod.metadata.generation {
            status["observedGeneration"] = generation.into();
        }
        if let Some(init) = self.init_statuses() {
            status["initContainerStatuses"] = init;
        }
        status
    }

    fn init_statuses(&self) -> Option<Value> {
        let uid = self.pod.metadata.uid.as_deref().unwrap_or_default();
        let init = self.pod.spec.as_ref()?.init_containers.as_ref()?;
        let statuses = init.iter().map(|c| {
            let id = container_id(uid, &c.name);
            json!({"name": c.name, "image": image(c), "imageID": image_id(c), "containerID": id,
                   "started": false, "ready": true, "restartCount": 0,
                   "state": {"terminated": self.terminated(&id, 0, "Completed")}, "lastState": {}})
        });
        Some(statuses.collect())
    }

    /// The Pod's IP: the one it has, else the one the context offers.
    fn pod_ip(&self) -> String {
        self.pod
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.clone())
            .unwrap_or_else(|| self.context.pod_ip.clone())
    }

    fn condition_true(&self) -> Value {
        json!({"status": "True", "lastProbeTime": null, "lastTransitionTime": self.now})
    }

    /// Ready/ContainersReady `False` with `reason` and the kubelet's message naming the
    /// containers.
    fn not_ready(&self, reason: &str) -> Value {
        let names: Vec<&str> = containers(self.pod)
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let message = match reason {
            "ContainersNotReady" => {
                format!("containers with unready status: [{}]", names.join(" "))
            }
            _ => String::new(),
        };
        let mut condition = json!({"status": "False", "lastProbeTime": null,
                                   "lastTransitionTime": self.now, "reason": reason});
        if !message.is_empty() {
            condition["message"] = message.into();
        }
        condition
    }

    fn existing_condition(&self, kind: &str) -> Option<Value> {
        let conditions = self.pod.status.as_ref()?.conditions.as_ref()?;
        let found = conditions.iter().find(|c| c.type_ == kind)?;
        let mut value = serde_json::to_value(found).ok()?;
        value.as_object_mut()?.remove("type");
        Some(value)
    }

    /// `name_namespace(uid)`, as the kubelet names a Pod in its messages (`format.Pod`).
    fn pod_ref(&self) -> String {
        let meta = &self.pod.metadata;
        format!(
            "{}_{}({})",
            meta.name.as_deref().unwrap_or_default(),
            meta.namespace.as_deref().unwrap_or_default(),
            meta.uid.as_deref().unwrap_or_default()
        )
    }
}

/// `condition` with its `type` first, as the kubelet's conditions read.
fn typed(kind: &str, condition: Value) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("type".into(), kind.into());
    if let Value::Object(rest) = condition {
        out.extend(rest);
    }
    Value::Object(out)
}

/// The image as containerd reports it: fully qualified, `:latest` when untagged.
pub(crate) fn image(container: &Container) -> String {
    let image = container.image.as_deref().unwrap_or_default();
    let (name, suffix) = match image.find('@') {
        Some(at) => (&image[..at], &image[at..]),
        None => match image.rfind(':').filter(|c| !image[*c..].contains('/')) {
            Some(colon) => (&image[..colon], &image[colon..]),
            None => (image, ":latest"),
        },
    };
    let first = name.split('/').next().unwrap_or_default();
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let qualified = match (has_registry, name.contains('/')) {
        (true, _) => name.to_string(),
        (false, true) => format!("docker.io/{name}"),
        (false, false) => format!("docker.io/library/{name}"),
    };
    format!("{qualified}{suffix}")
}

/// `<repository>@sha256:<digest>`, a made-up digest stable per image.
fn image_id(container: &Container) -> String {
    let image = image(container);
    let repository = match image.find('@') {
        Some(at) => &image[..at],
        None => image
            .rfind(':')
            .filter(|c| !image[*c..].contains('/'))
            .map_or(image.as_str(), |c| &image[..c]),
    };
    format!("{repository}@sha256:{}", hex_id(&image, 64))
}

/// `containerd://<64 hex>`, stable per Pod and container.
fn container_id(uid: &str, name: &str) -> String {
    format!("containerd://{}", hex_id(&format!("{uid}/{name}"), 64))
}

/// A duration as Go's `time.Duration.String` prints whole seconds (`10s`, `1m20s`, `5m0s`).
fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m{}s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
