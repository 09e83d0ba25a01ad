//! Deletion with finalizers, shared by `delete`, `deletecollection`, an update removing the last
//! finalizer and namespace termination (registry `Store.Delete` with `BeforeDelete`, the
//! finalizer handling of `genericregistry.Store`, and `AfterDelete`).
//!
//! An object with finalizers is not removed: it gets `deletionTimestamp` (and a generation bump)
//! and disappears when an update removes its last finalizer. A kind with graceful deletion
//! (Pods on a Node) is marked the same way with a grace period, and removed by a later delete
//! with `gracePeriodSeconds: 0` (its kubelet's). The propagation policy adds or
//! drops the `foregroundDeletion` / `orphan` finalizers first (`crate::request::delete_options`).

use jiff::{SignedDuration, Timestamp};
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
    match graceful(def, &stored.value, options) {
        Grace::None => {}
        Grace::Pending => return Some(Outcome::Pending(stored)),
        Grace::Mark(next) => {
            let mut next = *next;
            next["metadata"]["finalizers"] = finalizers.into();
            return Some(Outcome::Pending(state.store.replace(
                &def.key(),
                key.clone(),
                next,
            )));
        }
    }
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

/// What graceful deletion makes of a delete.
enum Grace {
    /// Not graceful (or a grace period of 0): the finalizers decide.
    None,
    /// Already being deleted gracefully, and not sooner: nothing changes.
    Pending,
    /// Marked (or marked sooner): the object as it is to be stored.
    Mark(Box<Value>),
}

/// The graceful part of `BeforeDelete` (`registry/rest/delete.go`): a kind whose strategy gives
/// the object a grace period ([`crate::kinds::Strategy::grace_period`], Pods on a Node) is
/// marked with `deletionTimestamp` that far ahead and `deletionGracePeriodSeconds`, its
/// generation bumped; a later delete may only shorten the period (0 removes it when no
/// finalizer holds it).
fn graceful(def: &ResourceDefinition, object: &Value, options: &DeleteOptions) -> Grace {
    let meta = &object["metadata"];
    if meta.get("deletionTimestamp").is_some() {
        let current = meta["deletionGracePeriodSeconds"].as_i64().unwrap_or(0);
        if current == 0 {
            return Grace::None;
        }
        return match options.grace_period_seconds {
            Some(0) => Grace::None,
            Some(period) if period < current => {
                let since = timestamp(meta["deletionTimestamp"].as_str())
                    .map(|t| t - SignedDuration::from_secs(current));
                let mut next = object.clone();
                next["metadata"]["deletionTimestamp"] = at(since, period).into();
                next["metadata"]["deletionGracePeriodSeconds"] = period.into();
                Grace::Mark(Box::new(next))
            }
            _ => Grace::Pending,
        };
    }
    let period = strategy_for(def).grace_period(object, options.grace_period_seconds);
    if period <= 0 {
        return Grace::None;
    }
    let mut next = object.clone();
    next["metadata"]["deletionTimestamp"] = at(None, period).into();
    next["metadata"]["deletionGracePeriodSeconds"] = period.into();
    if let Some(generation) = next.pointer("/metadata/generation").and_then(Value::as_i64) {
        next["metadata"]["generation"] = (generation + 1).into();
    }
    Grace::Mark(Box::new(next))
}

fn timestamp(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(|t| t.parse().ok())
}

/// `seconds` after `since` (now when `None`), as a `metav1.Time`.
fn at(since: Option<Timestamp>, seconds: i64) -> String {
    let then = since.unwrap_or_else(Timestamp::now) + SignedDuration::from_secs(seconds);
    then.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
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
