//! The Pod printer (`printPod`): the STATUS column is the reason a kubectl user knows, derived
//! from the phase, init containers, container states and deletion, in the upstream order.

use serde_json::{Value, json};

use super::duration::age;
use super::fields::{int, items, text};

/// `printPod`: READY, STATUS (the reason kubectl users know: `Running`, `CrashLoopBackOff`,
/// `Init:0/1`, `Terminating`, ...), RESTARTS (with the age of the last restart), AGE, then the
/// wide IP, NODE, NOMINATED NODE and READINESS GATES.
pub(super) fn pod(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    // A new pod's status is set to Pending by the real server.
    let phase = match text(o, "/status/phase") {
        "" => "Pending",
        phase => phase,
    };
    let mut state = PodState {
        reason: match text(o, "/status/reason") {
            "" => phase.to_string(),
            r => r.to_string(),
        },
        ..PodState::default()
    };
    let gated = items(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated");
    if gated {
        state.reason = "SchedulingGated".into();
    }
    let init_specs = items(o, "/spec/initContainers");
    let sidecar = |name: &str| {
        init_specs
            .iter()
            .any(|c| c["name"] == name && c["restartPolicy"] == "Always")
    };
    let total = items(o, "/spec/containers").len()
        + init_specs
            .iter()
            .filter(|c| c["restartPolicy"] == "Always")
            .count();
    let initializing = state.init_containers(o, init_specs.len(), &sidecar);
    let initialized = items(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    if !initializing || initialized {
        state.containers(o);
    }
    let deleting = o.pointer("/metadata/deletionTimestamp").is_some();
    if deleting && text(o, "/status/reason") == "NodeLost" {
        state.reason = "Unknown".into();
    } else if deleting && !matches!(phase, "Succeeded" | "Failed") {
        state.reason = "Terminating".into();
    }
    let restarts = match &state.last_restart {
        Some(at) if state.restarts != 0 => {
            format!("{} ({} ago)", state.restarts, age(Some(at), now))
        }
        _ => state.restarts.to_string(),
    };
    let none_if_empty = |s: &str| {
        if s.is_empty() {
            "<none>".to_string()
        } else {
            s.to_string()
        }
    };
    let ip = items(o, "/status/podIPs")
        .first()
        .map_or("", |p| text(p, "/ip"));
    let gates = items(o, "/spec/readinessGates");
    let gates = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let conditions = items(o, "/status/conditions");
        let ready = gates
            .iter()
            .filter(|g| {
                conditions
                    .iter()
                    .find(|c| c["type"] == g["conditionType"])
                    .is_some_and(|c| c["status"] == "True")
            })
            .count();
        format!("{ready}/{}", gates.len())
    };
    vec![
        json!(text(o, "/metadata/name")),
        json!(format!("{}/{total}", state.ready)),
        json!(state.reason),
        json!(restarts),
        json!(age(
            o.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str),
            now
        )),
        json!(none_if_empty(ip)),
        json!(none_if_empty(text(o, "/spec/nodeName"))),
        json!(none_if_empty(text(o, "/status/nominatedNodeName"))),
        json!(gates),
    ]
}

/// What `printPod` accumulates over the container statuses.
#[derive(Default)]
struct PodState {
    reason: String,
    ready: usize,
    restarts: i64,
    /// The newest `lastState.terminated.finishedAt` among the counted containers.
    last_restart: Option<String>,
    /// Restarts and last restart of restartable init containers (sidecars) only.
    sidecar_restarts: i64,
    sidecar_last_restart: Option<String>,
}

fn later(current: Option<String>, candidate: Option<&str>) -> Option<String> {
    match (current, candidate) {
        (Some(c), Some(n)) if n > c.as_str() => Some(n.to_string()),
        (None, Some(n)) => Some(n.to_string()),
        (c, _) => c,
    }
}

impl PodState {
    /// Walks the init container statuses; true while initialization is still going on.
    fn init_containers(&mut self, o: &Value, specs: usize, sidecar: &dyn Fn(&str) -> bool) -> bool {
        for (i, status) in items(o, "/status/initContainerStatuses").iter().enumerate() {
            let finished = status
                .pointer("/lastState/terminated/finishedAt")
                .and_then(Value::as_str);
            self.restarts += int(status, "/restartCount");
            self.last_restart = later(self.last_restart.take(), finished);
            let is_sidecar = sidecar(text(status, "/name"));
            if is_sidecar {
                self.sidecar_restarts += int(status, "/restartCount");
                self.sidecar_last_restart = later(self.sidecar_last_restart.take(), finished);
            }
            let terminated = status.pointer("/state/terminated");
            let waiting = text(status, "/state/waiting/reason");
            match terminated {
                Some(t) if int(t, "/exitCode") == 0 => continue,
                _ if is_sidecar && status["started"] == true => {
                    if status["ready"] == true {
                        self.ready += 1;
                    }
                    continue;
                }
                Some(t) => {
                    self.reason = match (text(t, "/reason"), int(t, "/signal")) {
                        ("", 0) => format!("Init:ExitCode:{}", int(t, "/exitCode")),
                        ("", signal) => format!("Init:Signal:{signal}"),
                        (reason, _) => format!("Init:{reason}"),
                    };
                }
                None if !waiting.is_empty() && waiting != "PodInitializing" => {
                    self.reason = format!("Init:{waiting}");
                }
                None => self.reason = format!("Init:{i}/{specs}"),
            }
            return true;
        }
        false
    }

    /// Walks the app container statuses from the last to the first, as `printPod` does.
    fn containers(&mut self, o: &Value) {
        self.restarts = self.sidecar_restarts;
        self.last_restart = self.sidecar_last_restart.take();
        let mut running = false;
        let mut error_reason = String::new();
        for status in items(o, "/status/containerStatuses").iter().rev() {
            self.restarts += int(status, "/restartCount");
            let finished = status
                .pointer("/lastState/terminated/finishedAt")
                .and_then(Value::as_str);
            self.last_restart = later(self.last_restart.take(), finished);
            let waiting = text(status, "/state/waiting/reason");
            if !waiting.is_empty() {
                self.reason = waiting.to_string();
            } else if let Some(t) = status.pointer("/state/terminated") {
                self.reason = match (text(t, "/reason"), int(t, "/signal")) {
                    ("", 0) => format!("ExitCode:{}", int(t, "/exitCode")),
                    ("", signal) => format!("Signal:{signal}"),
                    (reason, _) => reason.to_string(),
                };
                if int(t, "/exitCode") != 0 {
                    error_reason = self.reason.clone();
                }
            } else if status["ready"] == true && status.pointer("/state/running").is_some() {
                running = true;
                self.ready += 1;
            }
        }
        if self.reason == "Completed" {
            let pod_ready = items(o, "/status/conditions")
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            if running && pod_ready {
                self.reason = "Running".into();
            } else if !error_reason.is_empty() {
                self.reason = error_reason;
            } else if running {
                self.reason = "NotReady".into();
            }
        }
    }
}
