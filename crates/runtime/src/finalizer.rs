//! The finalizer helper: cleanup that must run before an object goes away. The counterpart of
//! kube-rs's `runtime::finalizer` and controller-runtime's `controllerutil.AddFinalizer` /
//! `RemoveFinalizer` pattern.
//!
//! [`step`] decides, from the object alone, which of three things a reconcile must do:
//! 1. not being deleted and without our finalizer: add it (then reconcile on the next event,
//!    which the finalizer write itself triggers);
//! 2. not being deleted and with it: apply (the normal reconcile);
//! 3. being deleted (`deletionTimestamp` set) with our finalizer: clean up, then remove it; the
//!    API server deletes the object once no finalizer is left. Being deleted without our
//!    finalizer: nothing to do.
//!
//! [`with_finalizer`] and [`without_finalizer`] compute the JSON patch that adds or removes the
//! name, with a `test` of the current list so two writers never drop each other's finalizers
//! (kube-rs does the same; a failed test is a 422 and the reconcile is retried).
//!
//! # Differences from kube-rs
//! kube-rs's `finalizer()` runs the callbacks itself; here the reconcile matches on [`Step`], so
//! the control flow stays visible in the controller's code and no boxed closures are needed.

use kube_core::Resource;
use serde_json::{Value, json};

/// What a reconcile must do about the finalizer `name` of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Add the finalizer (JSON patch from [`with_finalizer`]) before acting.
    Add,
    /// Reconcile normally: the finalizer is in place.
    Apply,
    /// The object is being deleted: clean up, then remove the finalizer ([`without_finalizer`]).
    Cleanup,
    /// Being deleted, and our finalizer is already gone: nothing to do.
    Nothing,
}

/// Which [`Step`] `object` calls for, for the finalizer `name`.
pub fn step<K: Resource>(object: &K, name: &str) -> Step {
    let meta = object.meta();
    let has = meta.finalizers.iter().flatten().any(|f| f == name);
    match (meta.deletion_timestamp.is_some(), has) {
        (false, false) => Step::Add,
        (false, true) => Step::Apply,
        (true, true) => Step::Cleanup,
        (true, false) => Step::Nothing,
    }
}

/// A JSON patch (RFC 6902) adding `name` to `object`'s finalizers, guarded by a test of the
/// current list.
pub fn with_finalizer<K: Resource>(object: &K, name: &str) -> Value {
    match &object.meta().finalizers {
        None => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]),
        Some(current) => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": current},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]),
    }
}

/// A JSON patch removing `name` from `object`'s finalizers (keeping everyone else's), guarded
/// by a test of the current list.
pub fn without_finalizer<K: Resource>(object: &K, name: &str) -> Value {
    let current = object.meta().finalizers.clone().unwrap_or_default();
    let kept: Vec<&String> = current.iter().filter(|f| *f != name).collect();
    json!([
        {"op": "test", "path": "/metadata/finalizers", "value": current},
        {"op": "replace", "path": "/metadata/finalizers", "value": kept},
    ])
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn object(finalizers: Option<Vec<&str>>, deleting: bool) -> ConfigMap {
        let mut object = ConfigMap::default();
        object.metadata.finalizers = finalizers.map(|f| f.into_iter().map(Into::into).collect());
        object.metadata.deletion_timestamp = deleting.then_some(Time(Timestamp::UNIX_EPOCH));
        object
    }

    #[test]
    fn the_step_follows_deletion_and_presence_of_the_finalizer() {
        assert_eq!(step(&object(None, false), "x/f"), Step::Add);
        assert_eq!(step(&object(Some(vec!["other"]), false), "x/f"), Step::Add);
        assert_eq!(step(&object(Some(vec!["x/f"]), false), "x/f"), Step::Apply);
        assert_eq!(step(&object(Some(vec!["x/f"]), true), "x/f"), Step::Cleanup);
        assert_eq!(
            step(&object(Some(vec!["other"]), true), "x/f"),
            Step::Nothing
        );
    }

    #[test]
    fn adding_tests_the_current_list_first() {
        assert_eq!(
            with_finalizer(&object(None, false), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": ["x/f"]},
            ])
        );
        assert_eq!(
            with_finalizer(&object(Some(vec!["other"]), false), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": ["other"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "x/f"},
            ])
        );
    }

    #[test]
    fn removing_keeps_every_other_finalizer() {
        assert_eq!(
            without_finalizer(&object(Some(vec!["a", "x/f", "b"]), true), "x/f"),
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": ["a", "x/f", "b"]},
                {"op": "replace", "path": "/metadata/finalizers", "value": ["a", "b"]},
            ])
        );
    }
}
