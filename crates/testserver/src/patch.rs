//! Patch algorithms: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch
//! for built-in kinds (apimachinery `pkg/util/strategicpatch`), as apiserver
//! `endpoints/handlers/patch.go` applies them.
//!
//! # Strategic merge, the subset implemented
//! Lists of named things merge element-wise by their merge key instead of being replaced:
//! `containers`, `initContainers`, `ephemeralContainers`, `env`, `volumes`, `imagePullSecrets`
//! (by `name`), `volumeMounts` (by `mountPath`), container `ports` (by `containerPort`), service
//! `ports` (by `port`), `conditions` (by `type`), `ownerReferences` (by `uid`); `finalizers` is a
//! merged set of strings. Directives: `$patch: delete` / `$patch: replace` on elements, maps and
//! lists, and `$deleteFromPrimitiveList/<field>`. `$setElementOrder` is accepted and ignored.
//! Other lists are replaced, as with a merge patch.
//!
//! # Limits
//! A JSON patch has at most 10000 operations (413, apiserver `maxJSONPatchOperations`) and its
//! `copy` operations may add at most 3 MiB (422, apiserver `JSONPatchMaxCopyBytes`): `copy` of a list
//! into itself doubles it, so a few dozen operations would otherwise exhaust memory. A patched object
//! may be nested at most [`MAX_NESTING`] levels deep (422), the depth a request body may have here:
//! patches cannot add more than that per request, but JSON patch `add` and `copy` can stack levels
//! request after request until dropping or writing the object overflows the stack.

use bytes::Bytes;
use json_patch::PatchOperation;
use serde_json::{Map, Value};

use crate::registry::ResourceDefinition;
use crate::status::{ApiError, Cause};

/// The patch type, from the request's `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Merge,
    Json,
    Strategic,
    /// Server-side apply, handled by [`crate::apply`].
    Apply,
}

impl PatchKind {
    /// Maps a content type.
    ///
    /// # Errors
    /// 415 UnsupportedMediaType for strategic merge on custom resources and anything unknown; the
    /// message lists what is accepted.
    pub(crate) fn from_content_type(
        content_type: &str,
        strategic_allowed: bool,
    ) -> Result<PatchKind, ApiError> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/merge-patch+json" => Ok(PatchKind::Merge),
            "application/json-patch+json" => Ok(PatchKind::Json),
            "application/apply-patch+yaml" => Ok(PatchKind::Apply),
            "application/strategic-merge-patch+json" if strategic_allowed => {
                Ok(PatchKind::Strategic)
            }
            _ if strategic_allowed => Err(ApiError::unsupported_media_type(
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
            )),
            _ => Err(ApiError::unsupported_media_type(
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            )),
        }
    }
}

/// Applies `body` to a copy of `original`.
///
/// # Errors
/// 400 for a malformed patch document, 422 when a JSON patch operation cannot be applied.
pub(crate) fn apply(
    kind: PatchKind,
    original: &Value,
    body: &Bytes,
    def: &ResourceDefinition,
) -> Result<Value, ApiError> {
    let mut doc = original.clone();
    match kind {
        PatchKind::Merge | PatchKind::Strategic => {
            let patch: Value =
                serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                ));
            }
            if kind == PatchKind::Merge {
                json_patch::merge(&mut doc, &patch);
            } else {
                strategic_merge(&mut doc, &patch, &mut Vec::new());
            }
        }
        PatchKind::Apply => {
            return Err(ApiError::internal(
                "an apply patch is merged by the field manager, not as a patch document",
            ));
        }
        PatchKind::Json => {
            let ops: json_patch::Patch =
                serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            apply_json_patch(&mut doc, &ops, def)?;
        }
    }
    if nesting(&doc) > MAX_NESTING {
        let message = format!("the patched object is nested more than {MAX_NESTING} levels deep");
        return Err(unprocessable(def, message));
    }
    Ok(doc)
}

/// The most operations one JSON patch may have (apiserver `maxJSONPatchOperations`).
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// How many bytes (serialized) the `copy` operations of one JSON patch may add (apiserver
/// `JSONPatchMaxCopyBytes`).
const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The deepest nesting of arrays and objects a stored object may have: what `serde_json` accepts
/// in a request body (its recursion limit).
pub(crate) const MAX_NESTING: usize = 127;

/// Applies `ops` one by one, counting the bytes `copy` operations add. On error `doc` is partly
/// patched: the caller works on a copy and drops it.
fn apply_json_patch(
    doc: &mut Value,
    ops: &[PatchOperation],
    def: &ResourceDefinition,
) -> Result<(), ApiError> {
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::request_entity_too_large(&format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let mut copied = 0usize;
    for op in ops {
        if let PatchOperation::Copy(copy) = op {
            let source = doc.pointer(copy.from.as_str());
            copied += source.map_or(0, |v| serde_json::to_vec(v).map_or(0, |b| b.len()));
            if copied > MAX_JSON_PATCH_COPY_BYTES {
                let message = format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                );
                return Err(unprocessable(def, message));
            }
        }
        if tests_for_an_absent_member(doc, op) {
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(op))
            .map_err(|_| ApiError::json_patch_failed())?;
    }
    Ok(())
}

/// Whether `op` is a `test` for `null` of a member its existing parent lacks: the apiserver's
/// json-patch library passes such a test (checked on v1.15 and v1.36: `test` of an absent
/// `/metadata/finalizers` with value `null` passes, of an absent parent fails), which guards such
/// as "add the finalizer list only if there is none" rely on; the `json-patch` crate fails it.
fn tests_for_an_absent_member(doc: &Value, op: &PatchOperation) -> bool {
    let PatchOperation::Test(test) = op else {
        return false;
    };
    if !test.value.is_null() {
        return false;
    }
    let path = test.path.as_str();
    let parent = path.rfind('/').map_or("", |slash| &path[..slash]);
    !path.is_empty()
        && doc.pointer(path).is_none()
        && doc.pointer(parent).is_some_and(|p| p.is_object())
}

/// 422 for a patch that cannot be applied, shaped like the real server's (a generic server
/// response: the message once more as the only cause).
fn unprocessable(def: &ResourceDefinition, message: String) -> ApiError {
    let mut err = ApiError::invalid(&def.group, &def.kind, "", Vec::new());
    err.message = message.clone();
    err.details = Default::default();
    err.details.causes.push(Cause {
        reason: "UnexpectedServerResponse".into(),
        message,
        field: String::new(),
    });
    err
}

/// How deeply arrays and objects nest in `value` (a scalar: 0, `{}`: 1), counted without
/// recursion, so a deep value cannot overflow the stack here.
fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0)];
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    deepest
}

/// The merge key of a list field, given the path of keys leading to it.
fn merge_key(field: &str, path: &[String]) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets" => Some("name"),
        "volumeMounts" | "volumeDevices" => Some("mountPath"),
        "ports" if path.iter().any(|p| p.ends_with("ontainers")) => Some("containerPort"),
        "ports" => Some("port"),
        "conditions" => Some("type"),
        "ownerReferences" => Some("uid"),
        "hostAliases" => Some("ip"),
        _ => None,
    }
}

/// Lists of strings merged as sets.
fn is_merged_set(field: &str) -> bool {
    field == "finalizers"
}

/// Applies a strategic merge patch object to `doc` (which becomes an object if it was not).
pub(crate) fn strategic_merge(doc: &mut Value, patch: &Value, path: &mut Vec<String>) {
    let Some(patch_map) = patch.as_object() else {
        *doc = patch.clone();
        return;
    };
    if patch_map.get("$patch").and_then(Value::as_str) == Some("replace") {
        *doc = Value::Object(strip_directives(patch_map));
        return;
    }
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Some(target) = doc.as_object_mut() else {
        return;
    };
    for (key, value) in patch_map {
        if key == "$patch" || key.starts_with("$setElementOrder/") || key == "$retainKeys" {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let remove: Vec<&Value> = value
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            if let Some(list) = target.get_mut(field).and_then(Value::as_array_mut) {
                list.retain(|v| !remove.contains(&v));
            }
            continue;
        }
        if value.is_null() || value.get("$patch").and_then(Value::as_str) == Some("delete") {
            target.remove(key);
            continue;
        }
        path.push(key.clone());
        match value {
            Value::Object(_) => strategic_merge(
                target.entry(key.clone()).or_insert(Value::Null),
                value,
                path,
            ),
            Value::Array(items) => {
                let existing = target.remove(key);
                target.insert(key.clone(), merge_list(key, existing, items, path));
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
        path.pop();
    }
}

fn merge_list(
    field: &str,
    existing: Option<Value>,
    patch: &[Value],
    path: &mut Vec<String>,
) -> Value {
    let replace = patch
        .iter()
        .any(|v| v.get("$patch").and_then(Value::as_str) == Some("replace"));
    let mut list = match existing {
        Some(Value::Array(items)) if !replace => items,
        _ => Vec::new(),
    };
    if is_merged_set(field) {
        for item in patch {
            if !list.contains(item) {
                list.push(item.clone());
            }
        }
        return Value::Array(list);
    }
    let Some(key) = merge_key(field, path) else {
        return Value::Array(
            patch
                .iter()
                .map(|v| {
                    v.as_object()
                        .map_or(v.clone(), |m| Value::Object(strip_directives(m)))
                })
                .collect(),
        );
    };
    for item in patch {
        if item.get("$patch").and_then(Value::as_str) == Some("replace") {
            continue;
        }
        let id = item.get(key);
        let position = list
            .iter()
            .position(|existing| id.is_some() && existing.get(key) == id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(i), true) => {
                list.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => strategic_merge(&mut list[i], item, path),
            (None, false) => {
                let mut fresh = Value::Object(Map::new());
                strategic_merge(&mut fresh, item, path);
                list.push(fresh);
            }
        }
    }
    Value::Array(list)
}

fn strip_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(doc: Value, patch: Value) -> Value {
        let mut doc = doc;
        strategic_merge(&mut doc, &patch, &mut Vec::new());
        doc
    }

    #[test]
    fn containers_merge_by_name_instead_of_being_replaced() {
        let doc = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
        let out = smp(
            doc,
            json!({"spec": {"containers": [{"name": "b", "image": "b:2"}]}}),
        );
        assert_eq!(
            out,
            json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]}})
        );
    }

    #[test]
    fn patch_delete_directive_removes_a_keyed_element() {
        let doc = json!({"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]});
        let out = smp(doc, json!({"env": [{"name": "A", "$patch": "delete"}]}));
        assert_eq!(out, json!({"env": [{"name": "B", "value": "2"}]}));
    }

    #[test]
    fn container_ports_key_on_container_port_and_service_ports_on_port() {
        let pod = json!({"containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]});
        let out = smp(
            pod,
            json!({"containers": [{"name": "c", "ports": [{"containerPort": 443}]}]}),
        );
        assert_eq!(out["containers"][0]["ports"].as_array().unwrap().len(), 2);
        let svc = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}]}});
        let out = smp(
            svc,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}),
        );
        assert_eq!(
            out,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}})
        );
    }

    #[test]
    fn finalizers_merge_as_a_set_and_delete_from_primitive_list_removes() {
        let doc = json!({"metadata": {"finalizers": ["a"]}});
        let out = smp(doc, json!({"metadata": {"finalizers": ["b", "a"]}}));
        assert_eq!(out, json!({"metadata": {"finalizers": ["a", "b"]}}));
        let out = smp(
            out,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(out, json!({"metadata": {"finalizers": ["b"]}}));
    }

    #[test]
    fn unkeyed_lists_and_null_fields_behave_like_merge_patch() {
        let doc = json!({"args": ["a", "b"], "x": 1, "m": {"k": "v"}});
        let out = smp(
            doc,
            json!({"args": ["c"], "x": null, "m": {"$patch": "replace", "n": 2}}),
        );
        assert_eq!(out, json!({"args": ["c"], "m": {"n": 2}}));
    }

    fn cm() -> ResourceDefinition {
        ResourceDefinition {
            plural: "configmaps".into(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            namespaced: true,
            ..Default::default()
        }
    }

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn max_nesting_is_what_the_body_parser_accepts() {
        assert!(serde_json::from_str::<Value>(&nested(MAX_NESTING)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_NESTING + 1)).is_err());
        let value: Value = serde_json::from_str(&nested(MAX_NESTING)).unwrap();
        assert_eq!(nesting(&value), MAX_NESTING);
        assert_eq!(nesting(&json!({"a": [1, {"b": {}}], "c": 2})), 4);
        assert_eq!(nesting(&json!(1)), 0);
    }

    #[test]
    fn json_patches_cannot_stack_levels_past_the_limit() {
        let deep: Value = serde_json::from_str(&nested(100)).unwrap();
        let ops = json!([{"op": "add", "path": "/data", "value": deep}]);
        let body = Bytes::from(ops.to_string());
        let once = apply(PatchKind::Json, &json!({}), &body, &cm()).unwrap();
        assert_eq!(nesting(&once), 101);
        let innermost = format!("/data{}/0", "/0".repeat(99));
        let more: Value = serde_json::from_str(&nested(30)).unwrap();
        let ops = json!([{"op": "add", "path": innermost, "value": more}]);
        let err = apply(PatchKind::Json, &once, &Bytes::from(ops.to_string()), &cm()).unwrap_err();
        assert_eq!((err.code, &*err.reason), (422, "Invalid"));
        assert_eq!(
            err.message,
            format!("the patched object is nested more than {MAX_NESTING} levels deep")
        );
    }

    #[test]
    fn json_patch_copies_are_capped_before_they_exhaust_memory() {
        let doc = json!({"data": {"list": ["x".repeat(1024)]}});
        let doubling: Vec<Value> = (0..40)
            .map(|_| json!({"op": "copy", "from": "/data/list", "path": "/data/list/-"}))
            .collect();
        let body = Bytes::from(Value::Array(doubling).to_string());
        let err = apply(PatchKind::Json, &doc, &body, &cm()).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(
            err.message.starts_with(
                "Unable to complete the copy, the accumulated size increase of copy is "
            ),
            "{}",
            err.message
        );
        assert!(
            err.message.ends_with("exceeding the limit 3145728"),
            "{}",
            err.message
        );
    }

    #[test]
    fn json_patches_over_ten_thousand_operations_are_too_large() {
        let ops: Vec<Value> = (0..10_001)
            .map(|_| json!({"op": "test", "path": "/a", "value": 1}))
            .collect();
        let body = Bytes::from(Value::Array(ops).to_string());
        let err = apply(PatchKind::Json, &json!({"a": 1}), &body, &cm()).unwrap_err();
        assert_eq!((err.code, &*err.reason), (413, "RequestEntityTooLarge"));
        assert_eq!(
            err.message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }

    #[test]
    fn a_failing_json_patch_operation_is_the_generic_422_real_servers_send() {
        let ops =
            json!([{"op": "test", "path": "/a", "value": 1}, {"op": "remove", "path": "/nope"}]);
        let err = apply(
            PatchKind::Json,
            &json!({"a": 1}),
            &Bytes::from(ops.to_string()),
            &cm(),
        )
        .unwrap_err();
        assert_eq!(
            (
                err.code,
                &*err.reason,
                err.message.as_str(),
                err.empty_details
            ),
            (
                422,
                "Invalid",
                "the server rejected our request due to an error in our request",
                true
            )
        );
    }

    #[test]
    fn a_test_for_null_passes_for_a_member_its_parent_lacks_and_only_then() {
        let doc = json!({"metadata": {"name": "x"}});
        let outcome = |path: &str| {
            let ops = json!([
                {"op": "test", "path": path, "value": null},
                {"op": "add", "path": "/data", "value": {"k": "v"}},
            ]);
            apply(PatchKind::Json, &doc, &Bytes::from(ops.to_string()), &cm())
                .map(|patched| patched["data"]["k"].clone())
                .map_err(|e| e.code)
        };
        assert_eq!(outcome("/metadata/finalizers"), Ok(json!("v")));
        assert_eq!(outcome("/metadata/missing/deeper"), Err(422));
        assert_eq!(outcome("/metadata/name"), Err(422));
    }

    #[test]
    fn unknown_types_are_unsupported_media_types() {
        assert_eq!(
            PatchKind::from_content_type("application/apply-patch+yaml", false).unwrap(),
            PatchKind::Apply
        );
        for ct in ["application/json", ""] {
            assert_eq!(
                PatchKind::from_content_type(ct, true).unwrap_err().code,
                415,
                "{ct}"
            );
        }
        assert_eq!(
            PatchKind::from_content_type("application/strategic-merge-patch+json", false)
                .unwrap_err()
                .code,
            415
        );
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8", false)
                .unwrap(),
            PatchKind::Merge
        );
    }
}
