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

use super::duration::{age, human};

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
            Kind::Deployment => {
                let (names, images) = containers(o, "/spec/template/spec/containers");
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
                let (names, images) = containers(o, "/spec/template/spec/containers");
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
                let (names, images) = containers(o, "/spec/template/spec/containers");
                let ready = format!("{}/{}", int(o, "/status/readyReplicas"), replicas(o));
                vec![json!(ready), json!(created), json!(names), json!(images)]
            }
            Kind::DaemonSet => {
                let (names, images) = containers(o, "/spec/template/spec/containers");
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
        };
        cells.extend(rest);
        cells
    }
}

fn text<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn int(o: &Value, pointer: &str) -> i64 {
    o.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn items<'a>(o: &'a Value, pointer: &str) -> &'a [Value] {
    o.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Entries of a map or list field.
fn count(o: &Value, pointer: &str) -> i64 {
    let n = match o.pointer(pointer) {
        Some(Value::Object(map)) => map.len(),
        Some(Value::Array(list)) => list.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `spec.replicas`, with the real server's default of 1.
fn replicas(o: &Value) -> i64 {
    o.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// Container names and images, comma-joined (`layoutContainerCells`).
fn containers(o: &Value, pointer: &str) -> (String, String) {
    let list = items(o, pointer);
    let names: Vec<&str> = list.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = list.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

/// A `map[string]string` as `k=v,...` in key order, `<none>` when empty (`labels.FormatLabels`).
fn format_labels(map: Option<&Value>) -> String {
    let pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// A LabelSelector in selector syntax, requirements sorted by key (`labels.Selector.String`);
/// `<error>` for an operator that does not exist.
pub(crate) fn label_selector(sel: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for expr in items(sel, "/matchExpressions") {
        let key = text(expr, "/key");
        let values: BTreeSet<&str> = items(expr, "/values")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let values = values.into_iter().collect::<Vec<_>>().join(",");
        let requirement = match text(expr, "/operator") {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".into(),
        };
        requirements.push((key.to_string(), requirement));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = requirements.into_iter().map(|(_, r)| r).collect();
    parts.join(",")
}

/// `metav1.FormatLabelSelector`: the selector, `<none>` when it selects everything.
fn format_selector(sel: Option<&Value>) -> String {
    let text = sel.map_or(String::new(), label_selector);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
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

/// Where the fields the event printer reads live in each Event API.
struct EventFields {
    first: &'static str,
    last: &'static str,
    count: &'static str,
    object: &'static str,
    message: &'static str,
    source: &'static str,
}

impl EventFields {
    const V1: EventFields = EventFields {
        first: "/firstTimestamp",
        last: "/lastTimestamp",
        count: "/count",
        object: "/involvedObject",
        message: "/message",
        source: "/source",
    };
    const EVENTS_V1: EventFields = EventFields {
        first: "/deprecatedFirstTimestamp",
        last: "/deprecatedLastTimestamp",
        count: "/deprecatedCount",
        object: "/regarding",
        message: "/note",
        source: "/deprecatedSource",
    };
}

fn event(f: &EventFields, o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let stamp = |pointer: &str| o.pointer(pointer).and_then(Value::as_str);
    let first = match stamp(f.first) {
        Some(t) => age(Some(t), now),
        None => age(stamp("/eventTime"), now),
    };
    let mut last = match stamp(f.last) {
        Some(t) => age(Some(t), now),
        None => first.clone(),
    };
    let mut count = int(o, f.count);
    if let Some(series) = o.get("series").filter(|s| s.is_object()) {
        last = age(series.get("lastObservedTime").and_then(Value::as_str), now);
        count = int(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let involved = o.pointer(f.object).unwrap_or(&Value::Null);
    let kind = text(involved, "/kind").to_lowercase();
    let target = match text(involved, "/name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let component = first_non_empty(
        text(o, &format!("{}/component", f.source)),
        text(o, "/reportingController"),
    );
    let instance = first_non_empty(
        text(o, &format!("{}/host", f.source)),
        text(o, "/reportingInstance"),
    );
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(o, "/type")),
        json!(text(o, "/reason")),
        json!(target),
        json!(text(involved, "/fieldPath")),
        json!(source),
        json!(text(o, f.message).trim()),
        json!(first),
        json!(count),
        json!(text(o, "/metadata/name")),
    ]
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}

/// `printPod`: READY, STATUS (the reason kubectl users know: `Running`, `CrashLoopBackOff`,
/// `Init:0/1`, `Terminating`, ...), RESTARTS (with the age of the last restart), AGE, then the
/// wide IP, NODE, NOMINATED NODE and READINESS GATES.
fn pod(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
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

#[cfg(test)]
#[path = "builtin_tests.rs"]
mod tests;
