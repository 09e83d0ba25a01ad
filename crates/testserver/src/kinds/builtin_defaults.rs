//! Defaults of the built-in workload kinds, filled in when a write's body is decoded, as v1.36's
//! generated defaulters do (`pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/batch/v1/defaults.go`): a StatefulSet applied without `updateStrategy` has
//! `RollingUpdate` when read back, so `kubectl rollout status` works on it, and a Pod template
//! carries `imagePullPolicy`, `dnsPolicy` and the rest, so the controller-manager's template
//! hashes and the Pods it creates are the real server's. Each value here was read back from a
//! v1.36.2 server (`kubectl create --dry-run=server -o json` of minimal objects).
//!
//! Two more things the real server writes are kept with the defaults, since a reader cannot tell
//! them apart: the empty `resources: {}` of every container and `metadata: {}` of templates,
//! which Go's encoder writes for struct fields that are never omitted.
//!
//! # Not here
//! A Service's allocated `clusterIP`/`ipFamilies` (`crate::kinds::service`), a Job's generated
//! selector and labels (which need its uid: `crate::kinds::job`), and the admission plugins that change Pods on create (`Priority`,
//! `DefaultTolerationSeconds`) are not defaults: see [`pod_admission`] for the last two.

use serde_json::{Map, Value, json};

/// Fills in the defaults of an object of `(group, plural)`, if the kind has any here.
pub(crate) fn fill(group: &str, plural: &str, object: &mut Map<String, Value>) {
    if let Some(defaulter) = defaulter(group, plural) {
        // `None`: a part is not an object; validation answers for it.
        let _ = defaulter(object);
    }
}

/// Fills in an object's defaults; `None` where a part to default is not an object (validation
/// refuses it as written, and the parts after it are left alone).
type Defaulter = fn(&mut Map<String, Value>) -> Option<()>;

/// The defaulter of `(group, plural)`, if the kind has one here.
fn defaulter(group: &str, plural: &str) -> Option<Defaulter> {
    Some(match (group, plural) {
        ("", "pods") => pod,
        ("", "services") => service,
        ("", "persistentvolumeclaims") => persistent_volume_claim,
        ("apps", "deployments") => deployment,
        ("apps", "replicasets") => replica_set,
        ("apps", "statefulsets") => stateful_set,
        ("apps", "daemonsets") => daemon_set,
        ("batch", "jobs") => job,
        ("batch", "cronjobs") => cron_job,
        _ => return None,
    })
}

/// `SetDefaults_Pod` and `SetDefaults_PodSpec`.
fn pod(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "enableServiceLinks", json!(true));
    pod_spec(spec);
    Some(())
}

/// What the `Priority` and `DefaultTolerationSeconds` admission plugins, on in every cluster,
/// add to a created Pod: priority 0 with `PreemptLowerPriority` when no class names another
/// (there are no PriorityClasses here), and five minutes of tolerating a not-ready or
/// unreachable Node unless the Pod tolerates those taints already.
pub(crate) fn pod_admission(object: &mut Map<String, Value>) {
    let Some(spec) = child(object, "spec") else {
        return;
    };
    insert_absent(spec, "priority", json!(0));
    insert_absent(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    let tolerations = spec
        .entry("tolerations")
        .or_insert_with(|| Value::Array(Vec::new()));
    if tolerations.is_null() {
        *tolerations = Value::Array(Vec::new());
    }
    let Some(tolerations) = tolerations.as_array_mut() else {
        return;
    };
    for taint in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        if !tolerations.iter().any(|t| tolerates(t, taint)) {
            tolerations.push(json!({
                "key": taint, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300
            }));
        }
    }
}

/// Whether `toleration` already tolerates the `NoExecute` taint `key` (the plugin then adds
/// none): the same key or an empty key with `Exists`, and effect `NoExecute` or any.
fn tolerates(toleration: &Value, key: &str) -> bool {
    let text = |field: &str| toleration.get(field).and_then(Value::as_str).unwrap_or("");
    let key_matches =
        text("key") == key || (text("key").is_empty() && text("operator") == "Exists");
    key_matches && matches!(text("effect"), "" | "NoExecute")
}

/// `SetDefaults_PodSpec` with its containers, volumes and probes.
fn pod_spec(spec: &mut Map<String, Value>) {
    insert_absent(spec, "dnsPolicy", json!("ClusterFirst"));
    insert_absent(spec, "restartPolicy", json!("Always"));
    insert_absent(spec, "terminationGracePeriodSeconds", json!(30));
    insert_absent(spec, "securityContext", json!({}));
    insert_absent(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for container in objects(spec, list) {
            container_defaults(container);
        }
    }
    for volume in objects(spec, "volumes") {
        volume_defaults(volume);
    }
}

/// `SetDefaults_Container`, its ports, environment, probes and lifecycle handlers.
fn container_defaults(container: &mut Map<String, Value>) {
    let image = container.get("image").and_then(Value::as_str).unwrap_or("");
    insert_absent(container, "imagePullPolicy", json!(pull_policy(image)));
    insert_absent(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    insert_absent(container, "terminationMessagePolicy", json!("File"));
    insert_absent(container, "resources", json!({}));
    for port in objects(container, "ports") {
        insert_absent(port, "protocol", json!("TCP"));
    }
    for variable in objects(container, "env") {
        if let Some(Value::Object(from)) = variable.get_mut("valueFrom") {
            field_ref(from);
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(probe)) = container.get_mut(probe) {
            insert_absent(probe, "timeoutSeconds", json!(1));
            insert_absent(probe, "periodSeconds", json!(10));
            insert_absent(probe, "successThreshold", json!(1));
            insert_absent(probe, "failureThreshold", json!(3));
            http_get(probe);
        }
    }
    if let Some(Value::Object(lifecycle)) = container.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(Value::Object(handler)) = lifecycle.get_mut(hook) {
                http_get(handler);
            }
        }
    }
}

/// `Always` for an image without a tag or tagged `latest`, else `IfNotPresent` (a digest pins it).
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let name = image.rsplit('/').next().unwrap_or(image);
    match name.split_once(':') {
        Some((_, tag)) if tag != "latest" => "IfNotPresent",
        _ => "Always",
    }
}

/// `SetDefaults_HTTPGetAction`: scheme `HTTP`.
fn http_get(handler: &mut Map<String, Value>) {
    if let Some(Value::Object(get)) = handler.get_mut("httpGet") {
        insert_absent(get, "scheme", json!("HTTP"));
    }
}

/// `SetDefaults_ObjectFieldSelector`: a `fieldRef` without `apiVersion` means `v1`.
fn field_ref(holder: &mut Map<String, Value>) {
    if let Some(Value::Object(field)) = holder.get_mut("fieldRef") {
        insert_absent(field, "apiVersion", json!("v1"));
    }
}

/// `SetDefaults_Volume` and the defaults of its sources: files are `0644` (420), a host path's
/// type is `""`, a projected token lives an hour, a volume without a source is an `emptyDir`.
fn volume_defaults(volume: &mut Map<String, Value>) {
    if volume.keys().all(|key| key == "name") {
        volume.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(Value::Object(source)) = volume.get_mut(source) {
            insert_absent(source, "defaultMode", json!(420));
        }
    }
    if let Some(Value::Object(downward)) = volume.get_mut("downwardAPI") {
        for item in objects(downward, "items") {
            field_ref(item);
        }
    }
    if let Some(Value::Object(projected)) = volume.get_mut("projected") {
        for source in objects(projected, "sources") {
            if let Some(Value::Object(token)) = source.get_mut("serviceAccountToken") {
                insert_absent(token, "expirationSeconds", json!(3600));
            }
            if let Some(Value::Object(downward)) = source.get_mut("downwardAPI") {
                for item in objects(downward, "items") {
                    field_ref(item);
                }
            }
        }
    }
    if let Some(Value::Object(host_path)) = volume.get_mut("hostPath") {
        insert_absent(host_path, "type", json!(""));
    }
}

/// A pod template: `metadata: {}` as Go writes it, and the pod spec's defaults.
fn template(holder: &mut Map<String, Value>) -> Option<()> {
    let template = child(holder, "template")?;
    insert_absent(template, "metadata", json!({}));
    pod_spec(child(template, "spec")?);
    Some(())
}

/// `SetDefaults_Service`: session affinity, type, internal traffic policy, each port's protocol
/// and target port (the port itself).
fn service(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "sessionAffinity", json!("None"));
    insert_absent(spec, "type", json!("ClusterIP"));
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if kind != "ExternalName" {
        insert_absent(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "NodePort" || kind == "LoadBalancer" {
        insert_absent(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        insert_absent(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    for port in objects(spec, "ports") {
        insert_absent(port, "protocol", json!("TCP"));
        let unset = port
            .get("targetPort")
            .is_none_or(|target| target.as_i64() == Some(0) || target.as_str() == Some(""));
        if unset && let Some(number) = port.get("port").cloned() {
            port.insert("targetPort".into(), number);
        }
    }
    Some(())
}

/// `SetDefaults_Deployment`.
fn deployment(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "replicas", json!(1));
    let strategy = child(spec, "strategy")?;
    insert_absent(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let rolling = child(strategy, "rollingUpdate")?;
        insert_absent(rolling, "maxUnavailable", json!("25%"));
        insert_absent(rolling, "maxSurge", json!("25%"));
    }
    insert_absent(spec, "revisionHistoryLimit", json!(10));
    insert_absent(spec, "progressDeadlineSeconds", json!(600));
    template(spec)
}

/// `SetDefaults_ReplicaSet`.
fn replica_set(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "replicas", json!(1));
    template(spec)
}

/// `SetDefaults_StatefulSet`, and what its volume claim templates read back as.
fn stateful_set(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = child(spec, "updateStrategy")?;
    insert_absent(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        insert_absent(child(strategy, "rollingUpdate")?, "partition", json!(0));
    }
    insert_absent(spec, "replicas", json!(1));
    insert_absent(spec, "revisionHistoryLimit", json!(10));
    let retention = child(spec, "persistentVolumeClaimRetentionPolicy")?;
    insert_absent(retention, "whenDeleted", json!("Retain"));
    insert_absent(retention, "whenScaled", json!("Retain"));
    for claim in objects(spec, "volumeClaimTemplates") {
        insert_absent(claim, "apiVersion", json!("v1"));
        insert_absent(claim, "kind", json!("PersistentVolumeClaim"));
        insert_absent(child(claim, "spec")?, "volumeMode", json!("Filesystem"));
        insert_absent(child(claim, "status")?, "phase", json!("Pending"));
    }
    template(spec)
}

/// `SetDefaults_PersistentVolumeClaim` and `SetDefaults_PersistentVolumeClaimSpec`: a
/// filesystem volume, `Pending` until something binds it (nothing does here, as on a cluster
/// without a provisioner).
fn persistent_volume_claim(object: &mut Map<String, Value>) -> Option<()> {
    insert_absent(child(object, "spec")?, "volumeMode", json!("Filesystem"));
    insert_absent(child(object, "status")?, "phase", json!("Pending"));
    Some(())
}

/// `SetDefaults_DaemonSet`.
fn daemon_set(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    let strategy = child(spec, "updateStrategy")?;
    insert_absent(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
        let rolling = child(strategy, "rollingUpdate")?;
        insert_absent(rolling, "maxUnavailable", json!(1));
        insert_absent(rolling, "maxSurge", json!(0));
    }
    insert_absent(spec, "revisionHistoryLimit", json!(10));
    template(spec)
}

/// `SetDefaults_Job`: one completion at a time unless said otherwise, six retries, and the
/// replacement policy its failure policy allows.
fn job(object: &mut Map<String, Value>) -> Option<()> {
    job_spec(child(object, "spec")?)
}

fn job_spec(spec: &mut Map<String, Value>) -> Option<()> {
    let completions = spec.get("completions").is_some_and(|v| !v.is_null());
    let parallelism = spec.get("parallelism").is_some_and(|v| !v.is_null());
    if !completions && !parallelism {
        spec.insert("completions".into(), json!(1));
    }
    insert_absent(spec, "parallelism", json!(1));
    if spec.get("backoffLimitPerIndex").is_none_or(Value::is_null) {
        insert_absent(spec, "backoffLimit", json!(6));
    } else {
        insert_absent(spec, "backoffLimit", json!(i32::MAX));
    }
    insert_absent(spec, "completionMode", json!("NonIndexed"));
    insert_absent(spec, "suspend", json!(false));
    insert_absent(spec, "manualSelector", json!(false));
    let policy = if spec.get("podFailurePolicy").is_some_and(|v| !v.is_null()) {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    insert_absent(spec, "podReplacementPolicy", json!(policy));
    template(spec)
}

/// `SetDefaults_CronJob`: the CronJob's own fields and its Job template's pod template (not the
/// Job template's Job defaults, which the Jobs it creates get).
fn cron_job(object: &mut Map<String, Value>) -> Option<()> {
    let spec = child(object, "spec")?;
    insert_absent(spec, "concurrencyPolicy", json!("Allow"));
    insert_absent(spec, "suspend", json!(false));
    insert_absent(spec, "successfulJobsHistoryLimit", json!(3));
    insert_absent(spec, "failedJobsHistoryLimit", json!(1));
    let job_template = child(spec, "jobTemplate")?;
    insert_absent(job_template, "metadata", json!({}));
    template(child(job_template, "spec")?)
}

/// `map[key]`, made an empty object when absent or `null` (Go's zero struct); `None` when it
/// holds something else, which validation refuses as written.
fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = json!({});
    }
    slot.as_object_mut()
}

/// The objects of `map[key]` when it is a list (others in it are left to validation).
fn objects<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Sets `key` when it is absent or `null`, as a defaulter sets a nil pointer or an empty string.
fn insert_absent(map: &mut Map<String, Value>, key: &str, value: Value) {
    match map.get(key) {
        None | Some(Value::Null) => {
            map.insert(key.to_owned(), value);
        }
        Some(Value::String(text)) if text.is_empty() && value.is_string() => {
            map.insert(key.to_owned(), value);
        }
        Some(_) => {}
    }
}

#[cfg(test)]
#[path = "builtin_defaults_tests.rs"]
mod tests;
