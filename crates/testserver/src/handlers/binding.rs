//! `POST /api/v1/namespaces/{ns}/pods/{name}/binding`: what kube-scheduler does to place a Pod
//! on a Node. Mirrors `pkg/registry/core/pod/storage/storage.go` (`BindingREST.Create`,
//! `setPodNodeAndMetadata`, `assignPod`) of v1.36.
//!
//! The Pod is rewritten in storage directly, as the real registry's `GuaranteedUpdate` does:
//! no admission of the Pod, no new managedFields entry, no generation bump; only
//! `spec.nodeName`, the Binding's annotations and labels merged in, and the `PodScheduled=True`
//! condition (its `lastTransitionTime` set when the status changes). The answer is a bare
//! `Status` of `Success` with code 201.
//!
//! Checked on v1.36.2: a Pod already bound answers 409 `pod a is already assigned to node "n"`,
//! a deleting Pod 409 `pod d is being deleted, cannot be assigned to a host` (both on
//! `pods/binding`), a missing Pod 404 on `pods`, a Binding named otherwise than the URL 400
//! `name in URL does not match name in Binding object`, an empty `target.name` a reasonless 500
//! `target.name: Required value`. The target Node need not exist.
//!
//! # Differences from the real server
//! - The old `POST .../namespaces/{ns}/bindings` collection is not served.
//! - A failed `metadata.resourceVersion` precondition answers the update's generic 409 instead
//!   of the real server's `StorageError: invalid object` text.

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Map, Value, json};

use crate::body::{BoxBody, json_response};
use crate::object::{meta_str, now, parse_object};
use crate::request::scope::Scope;
use crate::status::{ApiError, Qualified};
use crate::storage::Storage;

/// The resource named in a refused binding's 409.
const BINDING: Qualified<'static> = Qualified {
    group: "",
    resource: "pods/binding",
};

/// Binds the Pod `target` names to the Node the Binding in `body` names.
///
/// # Errors
/// As the real server's, listed in the module docs.
pub(crate) fn create(
    store: &Storage,
    target: &Scope,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let binding = parse_object(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type Binding): {}",
            e.message
        ))
    })?;
    let url = (target.namespace.as_deref(), target.name.as_deref());
    let request = BindingRequest::read(url, &binding)?;
    let mut state = store.lock();
    let (stored, key) = state.existing(&target.def, target.object_key())?;
    let next = bound(&stored.value, &request, stored.rv)?;
    if !target.dry_run {
        state.store.replace(&target.def.key(), key, next);
        store.notify(state.store.current_rv());
    }
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201,
    });
    Ok(json_response(
        StatusCode::CREATED,
        Bytes::from(status.to_string()),
    ))
}

/// What a Binding asks, checked against the URL.
#[derive(Debug, PartialEq)]
struct BindingRequest {
    name: String,
    node: String,
    uid: Option<String>,
    resource_version: Option<String>,
    annotations: Map<String, Value>,
    labels: Map<String, Value>,
}

impl BindingRequest {
    /// The Binding `binding` posted to the Pod `(namespace, name)` of the URL.
    fn read(
        (namespace, url_name): (Option<&str>, Option<&str>),
        binding: &Map<String, Value>,
    ) -> Result<BindingRequest, ApiError> {
        let kind = binding.get("kind").and_then(Value::as_str);
        if let Some(other) = kind.filter(|k| *k != "Binding") {
            return Err(ApiError::bad_request(format!(
                "{other} in version \"v1\" cannot be handled as a Binding: converting (v1.{other}) to (core.Binding): unknown conversion"
            )));
        }
        let meta = binding.get("metadata").cloned().unwrap_or(Value::Null);
        let text = |field: &str| {
            meta.get(field)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        if let (Some(given), Some(url)) = (text("namespace"), namespace)
            && given != url
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let name = text("name").unwrap_or_default();
        if url_name != Some(name.as_str()) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        let node = binding
            .get("target")
            .and_then(|t| t.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if node.is_empty() {
            return Err(ApiError::unknown(500, "target.name: Required value"));
        }
        let map = |field: &str| {
            meta.get(field)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        Ok(BindingRequest {
            node: node.to_string(),
            uid: text("uid"),
            resource_version: text("resourceVersion"),
            annotations: map("annotations"),
            labels: map("labels"),
            name,
        })
    }
}

/// The Pod `pod` (stored at `rv`) bound as `request` asks, or the real server's refusal.
fn bound(pod: &Value, request: &BindingRequest, rv: u64) -> Result<Value, ApiError> {
    let name = &request.name;
    let pods = Qualified {
        group: "",
        resource: "pods",
    };
    let uid = meta_str(pod, "uid");
    if let Some(given) = request.uid.as_deref().filter(|given| *given != uid) {
        let why =
            format!("Precondition failed: UID in precondition: {given}, UID in object meta: {uid}");
        return Err(ApiError::conflict(pods, name, &why));
    }
    if request
        .resource_version
        .as_deref()
        .is_some_and(|given| given != rv.to_string())
    {
        return Err(ApiError::conflict(pods, name, ApiError::MODIFIED));
    }
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        let why = format!("pod {name} is being deleted, cannot be assigned to a host");
        return Err(ApiError::conflict(BINDING, name, &why));
    }
    let assigned = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !assigned.is_empty() {
        let why = format!("pod {name} is already assigned to node \"{assigned}\"");
        return Err(ApiError::conflict(BINDING, name, &why));
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|gates| !gates.is_empty())
    {
        let why = format!("pod {name} has non-empty .spec.schedulingGates");
        return Err(ApiError::conflict(BINDING, name, &why));
    }
    let mut next = pod.clone();
    next["spec"]["nodeName"] = request.node.clone().into();
    for (field, values) in [
        ("annotations", &request.annotations),
        ("labels", &request.labels),
    ] {
        if field == "labels" && values.is_empty() {
            continue;
        }
        let target = &mut next["metadata"][field];
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        if let Some(map) = target.as_object_mut() {
            map.extend(values.clone());
        }
    }
    set_scheduled(&mut next["status"]);
    Ok(next)
}

/// `podutil.UpdatePodCondition` with `PodScheduled=True`: the condition is added, or its status
/// changed (and `lastTransitionTime` set) when it was not already True.
fn set_scheduled(status: &mut Value) {
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = &mut status["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(conditions) = conditions.as_array_mut() else {
        return;
    };
    let fresh = json!({
        "type": "PodScheduled", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now(),
    });
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(existing) if existing["status"] == "True" => {}
        Some(existing) => {
            let mut condition = fresh;
            // The reason and message of a scheduling failure are cleared, as the real helper
            // replaces the whole condition.
            std::mem::swap(existing, &mut condition);
        }
        None => conditions.push(fresh),
    }
}

#[cfg(test)]
#[path = "binding_tests.rs"]
mod tests;
