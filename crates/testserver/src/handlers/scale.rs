//! The `scale` subresource: an `autoscaling/v1 Scale` view of a workload's replica count, which
//! `kubectl scale` and autoscalers read and write without knowing the workload's kind
//! (kube-apiserver's `ScaleREST` of deployments, replicasets and statefulsets, and
//! apiextensions-apiserver's `ScaleREST` for CRDs declaring `subresources.scale`).
//!
//! # Semantics copied from the real server
//! - GET builds the Scale from the parent: name, namespace, uid, resourceVersion and
//!   creationTimestamp of the parent; `spec.replicas` from the spec path, `status.replicas` and
//!   `status.selector` from the status paths.
//! - PUT and PATCH (merge, JSON or strategic: Scale is a built-in type) compute the new Scale, then
//!   write only the spec replicas back into the parent. A `metadata.resourceVersion` in the Scale
//!   is a precondition checked against the parent (409 on `deployments.apps "x"`), the parent
//!   gets a new resourceVersion, a generation bump and a `MODIFIED` watch event; setting the
//!   same count changes nothing.
//! - Negative replicas are 422 `Scale.autoscaling "x" is invalid`; a custom resource without its
//!   spec replicas field is a 500 on GET, as the real server answers.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use serde_json::{Map, Value, json};

use crate::body::BoxBody;
use crate::body::json_response;
use crate::handlers::update;
use crate::object::{meta_str, parse_object};
use crate::patch::{self, PatchKind};
use crate::registry::ResourceDefinition;
use crate::registry::scale::ScaleSubresource;
use crate::request::route::existing;
use crate::request::scope::Scope;
use crate::request::verb::Verb;
use crate::status::{ApiError, Qualified, cause};
use crate::storage::Storage;
use crate::storage::objects::Stored;

/// `/` pointer of a dotted path (`.spec.replicas` -> `/spec/replicas`).
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .map(|segment| format!("/{segment}"))
        .collect()
}

/// `GET|PUT|PATCH .../<plural>/<name>/scale`.
pub(crate) fn serve(
    store: &Storage,
    target: &Scope,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let paths = target
        .def
        .scale_subresource
        .clone()
        .ok_or_else(ApiError::unknown_path)?;
    let mut state = store.lock();
    let (parent, key) = existing(&state, target).map_err(|e| not_found_scale(target, e))?;
    let parent = parent.clone();
    let old = scale_of(&target.def, &paths, &parent)?;
    let wanted = match target.verb {
        Verb::Update => parse_object(body)?,
        Verb::Patch => patched(headers, body, &old)?,
        // Only get, update and patch are routed to `/scale`.
        _ => return Ok(json_response(StatusCode::OK, Bytes::from(old.to_string()))),
    };
    let replicas = check_scale(target, &parent, &wanted)?;
    let mut next = (*parent.value).clone();
    set_replicas(&mut next, &paths.spec_replicas_path, replicas, &target.def)?;
    if let Some(rv) = wanted
        .get("metadata")
        .and_then(|m| m.get("resourceVersion"))
        .filter(|rv| rv.as_str().is_some_and(|s| !s.is_empty()))
    {
        next["metadata"]["resourceVersion"] = rv.clone();
    }
    let Value::Object(next) = next else {
        return Err(ApiError::internal("the stored object is not a JSON object"));
    };
    let mut parent_target = target.clone();
    parent_target.target.subresource = None;
    let stored = update::commit(
        &mut state,
        &parent_target,
        key,
        &parent,
        next,
        crate::apply::Fields::TrackScale,
    )?;
    store.notify(state.store.current_rv());
    let scale = scale_of(&target.def, &paths, &stored)?;
    Ok(json_response(
        StatusCode::OK,
        Bytes::from(scale.to_string()),
    ))
}

/// A built-in's missing parent is reported on `deployments/scale.apps`, as the real server
/// does. (Custom resources keep the parent's resource: a guess, no real server with a scalable
/// CRD was at hand.)
fn not_found_scale(target: &Scope, error: ApiError) -> ApiError {
    if error.code != 404 || target.def.group != "apps" {
        return error;
    }
    let resource = format!("{}/scale", target.def.plural);
    let what = Qualified {
        group: &target.def.group,
        resource: &resource,
    };
    ApiError::not_found(what, target.name.as_deref().unwrap_or_default())
}

/// The Scale of `parent`.
///
/// # Errors
/// 500 when a custom resource lacks its spec replicas field, like the real server.
fn scale_of(
    def: &ResourceDefinition,
    paths: &ScaleSubresource,
    parent: &Stored,
) -> Result<Value, ApiError> {
    let object = &*parent.value;
    let custom = def.group != "apps";
    let spec = object.pointer(&pointer(&paths.spec_replicas_path));
    let spec_replicas = match spec.and_then(Value::as_i64) {
        Some(n) => n,
        None if custom => {
            return Err(ApiError::internal(format!(
                "the spec replicas field \"{}\" does not exist",
                paths.spec_replicas_path
            )));
        }
        // Built-in specs are defaulted to 1 replica by the real server; this one stores specs
        // as sent.
        None => 1,
    };
    let status_replicas = object
        .pointer(&pointer(&paths.status_replicas_path))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = if custom {
        match paths.label_selector_path.as_str() {
            "" => String::new(),
            path => object
                .pointer(&pointer(path))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }
    } else {
        object
            .pointer("/spec/selector")
            .map_or(String::new(), crate::table::label_selector)
    };
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        let value = meta_str(object, field);
        if !value.is_empty() {
            metadata.insert(field.into(), value.into());
        }
    }
    let mut spec = json!({});
    if spec_replicas != 0 {
        spec["replicas"] = spec_replicas.into();
    }
    let mut status = json!({"replicas": status_replicas});
    if !selector.is_empty() {
        status["selector"] = selector.into();
    }
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }))
}

/// The Scale after a patch of `old`.
fn patched(headers: &HeaderMap, body: &Bytes, old: &Value) -> Result<Map<String, Value>, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let kind = PatchKind::from_content_type(content_type, true)?;
    let scale_def = ResourceDefinition {
        group: "autoscaling".into(),
        version: "v1".into(),
        kind: "Scale".into(),
        plural: "scales".into(),
        strategic_merge: true,
        ..ResourceDefinition::default()
    };
    match patch::apply(kind, old, body, &scale_def)? {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::bad_request(
            "the patched object is not a JSON object",
        )),
    }
}

/// Checks a Scale sent by the client against the URL and the parent; returns its replicas.
///
/// # Errors
/// 400 for a wrong kind, name or namespace, 409 for a UID precondition that fails, 422 for a
/// missing namespace or negative replicas.
fn check_scale(
    target: &Scope,
    parent: &Stored,
    scale: &Map<String, Value>,
) -> Result<i64, ApiError> {
    for (field, want) in [("apiVersion", "autoscaling/v1"), ("kind", "Scale")] {
        if let Some(given) = scale.get(field).and_then(Value::as_str)
            && given != want
        {
            let what = if field == "kind" {
                "kind"
            } else {
                "API version"
            };
            return Err(ApiError::bad_request(format!(
                "the {what} in the data ({given}) does not match the expected {what} ({want})"
            )));
        }
    }
    let url_name = target.name.as_deref().unwrap_or_default();
    let meta = scale.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    if name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    let namespace = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
    match target.namespace.as_deref() {
        Some(_) if namespace.is_empty() => {
            let required = cause("FieldValueRequired", "metadata.namespace", "Required value");
            return Err(ApiError::invalid(
                "autoscaling",
                "Scale",
                url_name,
                vec![required],
            ));
        }
        Some(ns) if ns != namespace => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        _ => {}
    }
    let uid = meta_str(&parent.value, "uid");
    if let Some(given) = meta
        .get("uid")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty() && *u != uid)
    {
        let plural = format!("{}/scale", target.def.plural);
        let what = Qualified {
            group: &target.def.group,
            resource: &plural,
        };
        let why =
            format!("Precondition failed: UID in precondition: {given}, UID in object meta: {uid}");
        return Err(ApiError::conflict(what, url_name, &why));
    }
    let replicas = scale
        .get("spec")
        .and_then(|s| s.get("replicas"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        let why = format!("Invalid value: {replicas}: must be greater than or equal to 0");
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            url_name,
            vec![cause("FieldValueInvalid", "spec.replicas", why)],
        ));
    }
    Ok(replicas)
}

/// Writes `replicas` at `path` of `object`, creating missing maps on the way.
fn set_replicas(
    object: &mut Value,
    path: &str,
    replicas: i64,
    def: &ResourceDefinition,
) -> Result<(), ApiError> {
    let segments: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let Some((last, parents)) = segments.split_last() else {
        return Err(ApiError::internal(format!(
            "{}: empty replicas path",
            def.kind
        )));
    };
    let mut current = object;
    for segment in parents {
        let map = current
            .as_object_mut()
            .ok_or_else(|| ApiError::bad_request(format!("{path}: {segment} is not an object")))?;
        current = map.entry(*segment).or_insert_with(|| json!({}));
    }
    let map = current
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request(format!("{path}: not an object")))?;
    map.insert((*last).to_string(), replicas.into());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_paths_become_pointers() {
        assert_eq!(pointer(".spec.replicas"), "/spec/replicas");
        assert_eq!(pointer("status.count"), "/status/count");
    }

    #[test]
    fn set_replicas_creates_missing_maps() {
        let mut object = json!({"spec": {}});
        set_replicas(
            &mut object,
            ".spec.deep.replicas",
            4,
            &ResourceDefinition::default(),
        )
        .unwrap();
        assert_eq!(object, json!({"spec": {"deep": {"replicas": 4}}}));
        let mut bad = json!({"spec": 3});
        let err = set_replicas(
            &mut bad,
            ".spec.replicas",
            1,
            &ResourceDefinition::default(),
        )
        .unwrap_err();
        assert_eq!(err.code, 400);
    }
}
