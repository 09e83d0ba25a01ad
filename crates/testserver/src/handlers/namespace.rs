//! Namespace lifecycle: namespaced writes need an existing, active namespace; deleting a namespace
//! marks it `Terminating`, deletes its content (honouring finalizers) and removes it once empty —
//! what the real namespace registry plus the namespace controller do together.

use serde_json::{Map, Value, json};

use crate::handlers::now;
use crate::registry::ResourceKey;
use crate::route::Target;
use crate::shared::ApiServer;
use crate::state::State;
use crate::status::{ApiError, Qualified};
use crate::store::ObjectKey;

fn namespaces() -> ResourceKey {
    ResourceKey::new("", "v1", "namespaces")
}

fn ns_key(name: &str) -> ObjectKey {
    (String::new(), name.to_string())
}

/// Creates one of the namespaces every cluster starts with.
pub(crate) fn create_initial(api: &ApiServer, name: &str) {
    let mut state = api.inner.state.lock();
    let mut object = json!({
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now()},
    });
    if let Some(map) = object.as_object_mut() {
        prepare(map);
    }
    state.store.insert(&namespaces(), ns_key(name), object);
    api.notify(state.store.current_rv());
}

/// Defaults of a new namespace: the `kubernetes` finalizer, phase Active, the name label.
pub(crate) fn prepare(object: &mut Map<String, Value>) {
    let name = object
        .get("metadata")
        .and_then(|m| m.get("name"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }
    object.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
    object.insert("status".into(), json!({"phase": "Active"}));
}

/// Namespaced writes need the namespace to exist and not be terminating.
///
/// # Errors
/// 404 `namespaces "x" not found`; 403 Forbidden while it terminates.
pub(crate) fn check_writable(
    state: &State,
    target: &Target,
    ns: &str,
    name: &str,
) -> Result<(), ApiError> {
    let Some(namespace) = state.store.get(&namespaces(), &ns_key(ns)) else {
        return Err(ApiError::not_found(
            Qualified {
                group: "",
                resource: "namespaces",
            },
            ns,
        ));
    };
    if namespace
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_some()
    {
        let why = format!(
            "unable to create new content in namespace {ns} because it is being terminated"
        );
        return Err(ApiError::forbidden(target.qualified(), name, &why));
    }
    Ok(())
}

/// Starts deleting a namespace, as the namespace registry does: `deletionTimestamp` and phase
/// `Terminating`, or removal right away when neither `spec.finalizers` nor `metadata.finalizers`
/// hold anything. Its content is the namespace controller's job (the controller-manager, see
/// [`crate::ServerOptions::controller_manager`]), which ends with `PUT .../finalize`.
/// Returns the namespace as it is after this call (None when already gone).
pub(crate) fn terminate(state: &mut State, name: &str) -> Option<crate::store::Stored> {
    let key = ns_key(name);
    let current = state.store.get(&namespaces(), &key)?.clone();
    if finalized(&current.value) {
        return state.store.remove(&namespaces(), &key);
    }
    if current
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_none()
    {
        let mut next = (*current.value).clone();
        next["metadata"]["deletionTimestamp"] = now().into();
        next["metadata"]["deletionGracePeriodSeconds"] = 0.into();
        next["status"]["phase"] = "Terminating".into();
        return Some(state.store.replace(&namespaces(), key, next));
    }
    Some(current)
}

/// Whether both finalizer lists of a namespace are empty: a terminating namespace is then removed
/// (the namespace store's `ShouldDeleteNamespaceDuringUpdate`).
pub(crate) fn finalized(namespace: &Value) -> bool {
    let empty = |pointer: &str| {
        namespace
            .pointer(pointer)
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    empty("/spec/finalizers") && empty("/metadata/finalizers")
}

/// The namespace strategy's update rules: `spec.finalizers` changes only through the `finalize`
/// subresource, which changes nothing else of the spec or status
/// (`pkg/registry/core/namespace/strategy.go`).
pub(crate) fn prepare_update(old: &Value, next: &mut Value, subresource: Option<&str>) {
    match subresource {
        Some("finalize") => {
            let finalizers = next.pointer("/spec/finalizers").cloned();
            let mut kept = old.clone();
            kept["metadata"] = next["metadata"].take();
            kept["spec"]["finalizers"] = finalizers.unwrap_or_else(|| json!([]));
            *next = kept;
        }
        Some(_) => {}
        None => {
            next["spec"]["finalizers"] = old
                .pointer("/spec/finalizers")
                .cloned()
                .unwrap_or_else(|| json!([]));
        }
    }
}
