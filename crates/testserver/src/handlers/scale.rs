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
//! - A built-in's negative replicas are 422 `Scale.autoscaling "x" is invalid`; a custom
//!   resource's are its own 422 (`.spec.replicas: Invalid value: -1: should be a non-negative
//!   integer`), its schema validating the object first. A custom resource without its spec
//!   replicas field is a 500 on GET; a patch starts from a Scale showing the smallest int32
//!   there, and a write that leaves it so is a 400 `the spec replicas field ".spec.replicas"
//!   cannot be empty`, as v1.36 answers.
//! - The writer is an `Update` manager with `subresource: scale` and no `time`, owning the
//!   replicas field, which leaves the managers who owned it.
//!
//! A custom resource whose CRD serves several versions is scaled in the version the request
//! names (`crate::handlers::versioned`).
//!
//! # Differences from the real server
//! - A scale of an object whose replicas field no manager owns records the writer; v1.36
//!   records none (the Scale it tracks has no managedFields, and a field manager does not
//!   start tracking an object on an update).
//! - No admission webhook is called; v1.36 calls those whose rules name `<plural>/scale`, with
//!   the Scale.

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
use crate::request::scope::Scope;
use crate::status::{ApiError, Qualified, cause};
use crate::storage::Storage;
use crate::verb::Verb;

/// `/` pointer of a dotted path (`.spec.replicas` -> `/spec/replicas`).
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .map(|segment| format!("/{segment}"))
        .collect()
}

/// `GET|PUT|PATCH .../<plural>/<name>/scale` (of a custom resource whose CRD serves several
/// versions: `crate::handlers::versioned`).
pub(crate) fn serve(
    store: &Storage,
    target: &Scope,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let paths = paths(target)?;
    let mut state = store.lock();
    let (parent, key) = state
        .existing(&target.def, target.object_key())
        .map_err(|e| not_found_scale(target, e))?;
    let parent = parent.clone();
    if target.verb == Verb::Get {
        let scale = scale_of(&target.def, &paths, &parent.value)?;
        return Ok(json_response(
            StatusCode::OK,
            Bytes::from(scale.to_string()),
        ));
    }
    let patch = scale_patch(target, headers)?;
    let next = scaled(target, (patch, body), &parent.value, &paths)?;
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
    let scale = scale_of(&target.def, &paths, &stored.value)?;
    Ok(json_response(
        StatusCode::OK,
        Bytes::from(scale.to_string()),
    ))
}

/// The paths of the request's kind's `scale` subresource.
///
/// # Errors
/// 404 for a kind without one.
pub(crate) fn paths(target: &Scope) -> Result<ScaleSubresource, ApiError> {
    target
        .def
        .scale_subresource
        .clone()
        .ok_or_else(ApiError::unknown_path)
}

/// The patch type of a `PATCH` of the Scale (a built-in type: strategic merge too); `None` for
/// a `PUT`.
///
/// # Errors
/// 415 for a type the Scale does not take.
pub(crate) fn scale_patch(
    target: &Scope,
    headers: &HeaderMap,
) -> Result<Option<PatchKind>, ApiError> {
    if target.verb != Verb::Patch {
        return Ok(None);
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    PatchKind::from_content_type(content_type, true).map(Some)
}

/// `parent` with the replicas of the Scale a `PUT` sends or a patch (`Some` kind) makes, the
/// Scale's `resourceVersion`, if any, as its precondition.
///
/// # Errors
/// The Scale's (see [`check_scale`]), or the patch's.
pub(crate) fn scaled(
    target: &Scope,
    (patch, body): (Option<PatchKind>, &Bytes),
    parent: &Value,
    paths: &ScaleSubresource,
) -> Result<Map<String, Value>, ApiError> {
    let wanted = match patch {
        None => parse_object(body)?,
        Some(kind) => {
            let base = scale_with(&target.def, paths, parent, Some(UNSET_REPLICAS))?;
            patched(kind, body, &base)?
        }
    };
    let replicas = check_scale(target, parent, &wanted)?;
    if replicas == UNSET_REPLICAS && custom(&target.def) {
        return Err(ApiError::bad_request(format!(
            "the spec replicas field {:?} cannot be empty",
            paths.spec_replicas_path
        )));
    }
    let mut next = parent.clone();
    set_replicas(&mut next, &paths.spec_replicas_path, replicas, &target.def)?;
    if let Some(rv) = wanted
        .get("metadata")
        .and_then(|m| m.get("resourceVersion"))
        .filter(|rv| rv.as_str().is_some_and(|s| !s.is_empty()))
    {
        next["metadata"]["resourceVersion"] = rv.clone();
    }
    match next {
        Value::Object(next) => Ok(next),
        _ => Err(ApiError::internal("the stored object is not a JSON object")),
    }
}

/// A built-in's missing parent is reported on `deployments/scale.apps`, as the real server
/// does; a custom resource's on the parent's resource (`boats.<group>`), as v1.36 does.
fn not_found_scale(target: &Scope, error: ApiError) -> ApiError {
    if error.code != 404 || custom(&target.def) {
        return error;
    }
    let resource = format!("{}/scale", target.def.plural);
    let what = Qualified {
        group: &target.def.group,
        resource: &resource,
    };
    ApiError::not_found(what, target.name.as_deref().unwrap_or_default())
}

/// Whether the kind is a custom resource (the built-in scalable kinds are all `apps`).
fn custom(def: &ResourceDefinition) -> bool {
    def.group != "apps"
}

/// What apiextensions shows as the spec replicas a write of `/scale` starts from when the
/// custom resource has none: the smallest int32, which the write must replace.
const UNSET_REPLICAS: i64 = i32::MIN as i64;

/// The Scale of `object`.
///
/// # Errors
/// 500 when a custom resource lacks its spec replicas field, like the real server.
pub(crate) fn scale_of(
    def: &ResourceDefinition,
    paths: &ScaleSubresource,
    object: &Value,
) -> Result<Value, ApiError> {
    scale_with(def, paths, object, None)
}

/// The Scale of `object`; a custom resource without spec replicas shows `unset` there, or is
/// a 500 without.
fn scale_with(
    def: &ResourceDefinition,
    paths: &ScaleSubresource,
    object: &Value,
    unset: Option<i64>,
) -> Result<Value, ApiError> {
    let custom = custom(def);
    let spec = object.pointer(&pointer(&paths.spec_replicas_path));
    let spec_replicas = match (spec.and_then(Value::as_i64), unset) {
        (Some(n), _) => n,
        (None, Some(unset)) if custom => unset,
        (None, None) if custom => {
            return Err(ApiError::internal(format!(
                "the spec replicas field \"{}\" does not exist",
                paths.spec_replicas_path
            )));
        }
        // Built-in specs are defaulted to 1 replica by the real server; this one stores specs
        // as sent.
        (None, _) => 1,
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
fn patched(kind: PatchKind, body: &Bytes, old: &Value) -> Result<Map<String, Value>, ApiError> {
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
    parent: &Value,
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
    let uid = meta_str(parent, "uid");
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
    // A custom resource's negative replicas are its own validation's (`ValidateScaleSpec`),
    // which comes first there.
    if replicas < 0 && !custom(&target.def) {
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
