//! The Namespace strategy (`pkg/registry/core/namespace/strategy.go` and its REST storage):
//! defaults on create (the `kubernetes` finalizer, phase Active, the name label), the `finalize`
//! subresource (`PUT .../namespaces/<name>/finalize`, what the namespace controller calls to
//! remove its finalizer: an update of everything but `status`), and removal by an update only once
//! `spec.finalizers` is empty as well as `metadata.finalizers` (`ShouldDeleteNamespaceDuringUpdate`).
//!
//! Deleting a namespace only terminates it ([`terminate`]), as on a real apiserver: emptying it
//! and calling `finalize` is the namespace controller's job (`kubegen-controller-manager`, run
//! beside the server unless [`crate::ServerOptions::controller_manager`] is off — then it stays
//! `Terminating`, as with a kube-apiserver without kube-controller-manager). Which namespaces
//! exist and accept content is admission's check (`crate::admission::namespace_lifecycle`).

use serde_json::{Map, Value, json};

use crate::kinds::strategy::Strategy;
use crate::object::{finalizers_of, meta_str, now, strings_at};
use crate::registry::ResourceKey;
use crate::status::{ApiError, cause};
use crate::storage::State;
use crate::storage::objects::{ObjectKey, Stored};
use crate::verb::Verb;

/// The strategy of `namespaces`.
pub(crate) struct Namespaces;

impl Strategy for Namespaces {
    /// The real namespace storage has no DeleteCollection: namespaces go one at a time, through
    /// termination.
    fn verbs(&self) -> &'static [Verb] {
        &[
            Verb::Create,
            Verb::Delete,
            Verb::Get,
            Verb::List,
            Verb::Patch,
            Verb::Update,
            Verb::Watch,
        ]
    }

    fn subresources(&self) -> &'static [(&'static str, Verb)] {
        &[("finalize", Verb::Update)]
    }

    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        prepare(object);
        Ok(())
    }

    fn prepare_for_update(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        check_finalizer_names(object)?;
        // An empty list is no list in the Go type (`omitempty`): v1.36 answers `"spec": {}`.
        if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
            && spec
                .get("finalizers")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
        {
            spec.remove("finalizers");
        }
        Ok(())
    }

    fn held(&self, object: &Value) -> bool {
        !strings_at(object, "/spec/finalizers").is_empty()
    }

    fn terminates(&self) -> bool {
        true
    }
}

/// `spec.finalizers` hold standard names (`kubernetes`, `orphan`, `foregroundDeletion`) or
/// qualified ones (`example.com/x`), as apimachinery's `ValidateFinalizerName` wants.
///
/// # Errors
/// 422 `Namespace "<n>" is invalid: spec.finalizers[<i>]: Invalid value: "<f>": name is neither a
/// standard finalizer name nor is it fully qualified` (worded as v1.36).
fn check_finalizer_names(object: &Map<String, Value>) -> Result<(), ApiError> {
    let value = Value::Object(object.clone());
    let causes: Vec<_> = strings_at(&value, "/spec/finalizers")
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            let standard = matches!(f.as_str(), "kubernetes" | "orphan" | "foregroundDeletion");
            !standard && !f.contains('/')
        })
        .map(|(i, f)| {
            let message = format!(
                "Invalid value: {f:?}: name is neither a standard finalizer name nor is it fully qualified"
            );
            cause("FieldValueInvalid", &format!("spec.finalizers[{i}]"), message)
        })
        .collect();
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "",
        "Namespace",
        meta_str(&value, "name"),
        causes,
    ))
}

/// The storage key of the namespaces.
pub(crate) fn namespaces() -> ResourceKey {
    ResourceKey::new("", "v1", "namespaces")
}

/// The storage key of namespace `name`.
pub(crate) fn ns_key(name: &str) -> ObjectKey {
    (String::new(), name.to_string())
}

/// Creates one of the namespaces every cluster starts with.
pub(crate) fn create_initial(state: &mut State, name: &str) {
    let mut object = json!({
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "uid": uuid::Uuid::new_v4().to_string(), "creationTimestamp": now()},
    });
    if let Some(map) = object.as_object_mut() {
        prepare(map);
    }
    state.store.insert(&namespaces(), ns_key(name), object);
}

/// Defaults of a new namespace: the `kubernetes` finalizer, phase Active, the name label.
fn prepare(object: &mut Map<String, Value>) {
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

/// Starts deleting a namespace, as the namespace registry does: `deletionTimestamp` and phase
/// `Terminating`, or removal right away when neither `spec.finalizers` nor `metadata.finalizers`
/// hold anything. Returns the namespace as it is after this call (None when removed).
pub(crate) fn terminate(state: &mut State, name: &str) -> Option<Stored> {
    let key = ns_key(name);
    let current = state.store.get(&namespaces(), &key)?.clone();
    let finalized = strings_at(&current.value, "/spec/finalizers").is_empty()
        && finalizers_of(&current.value).is_empty();
    if finalized {
        state.store.remove(&namespaces(), &key);
        return None;
    }
    if current
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_some()
    {
        return Some(current);
    }
    let mut next = (*current.value).clone();
    next["metadata"]["deletionTimestamp"] = now().into();
    next["metadata"]["deletionGracePeriodSeconds"] = 0.into();
    next["status"] = json!({"phase": "Terminating"});
    Some(state.store.replace(&namespaces(), key, next))
}
