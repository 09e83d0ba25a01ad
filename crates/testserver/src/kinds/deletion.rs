//! Deletion with finalizers, shared by `delete`, `deletecollection`, an update removing the last
//! finalizer and namespace termination (registry `Store.Delete` with `BeforeDelete`, the
//! finalizer handling of `genericregistry.Store`, and `AfterDelete`).
//!
//! An object with finalizers is not removed: it gets `deletionTimestamp` (and a generation bump)
//! and disappears when an update removes its last finalizer. The propagation policy adds or
//! drops the `foregroundDeletion` / `orphan` finalizers first (`crate::request::delete_options`).

use serde_json::Value;

use crate::kinds::lookup::strategy_for;
use crate::object::{finalizers_of, now};
use crate::registry::ResourceDefinition;
use crate::request::delete_options::DeleteOptions;
use crate::storage::State;
use crate::storage::objects::{ObjectKey, Stored};

/// What a delete did.
pub(crate) enum Outcome {
    /// Finalizers remain: the object now carries `deletionTimestamp`.
    Pending(Stored),
    /// The object is gone; this is its last state.
    Gone(Stored),
}

/// Deletes one object: marks it when finalizers remain after `options` (running the removal
/// hooks otherwise). None when it does not exist.
pub(crate) fn delete_object(
    state: &mut State,
    def: &ResourceDefinition,
    key: &ObjectKey,
    options: &DeleteOptions,
) -> Option<Outcome> {
    let stored = state.store.get(&def.key(), key)?.clone();
    let current = finalizers_of(&stored.value);
    let finalizers = options.finalizers(&current);
    if finalizers.is_empty() {
        return remove(state, def, key).map(Outcome::Gone);
    }
    let deleting = stored
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_some();
    if deleting && finalizers == current {
        return Some(Outcome::Pending(stored));
    }
    let mut next = (*stored.value).clone();
    next["metadata"]["finalizers"] = finalizers.into();
    if !deleting {
        next["metadata"]["deletionTimestamp"] = now().into();
        next["metadata"]["deletionGracePeriodSeconds"] = 0.into();
        if let Some(generation) = next.pointer("/metadata/generation").and_then(Value::as_i64) {
            next["metadata"]["generation"] = (generation + 1).into();
        }
    }
    Some(Outcome::Pending(state.store.replace(
        &def.key(),
        key.clone(),
        next,
    )))
}

/// Removes an object for good and runs what must follow: the kind's `after_delete` (a CRD takes
/// its resource with it).
pub(crate) fn remove(
    state: &mut State,
    def: &ResourceDefinition,
    key: &ObjectKey,
) -> Option<Stored> {
    let last = state.store.remove(&def.key(), key)?;
    strategy_for(def).after_delete(state, &last.value);
    Some(last)
}
