//! The inline stand-in for the namespace controller (kube-controller-manager's
//! `pkg/controller/namespace`): deleting a namespace marks it `Terminating`, deletes its content
//! at once (honouring finalizers) and removes the namespace once nothing is left in it. A real
//! apiserver only marks it; the controller deletes the content and then calls `finalize`
//! ([`super::namespace`]), after which the registry removes it. This file is the piece to drop
//! when the server moves to that model.

use serde_json::json;

use crate::kinds::namespace::{namespaces, ns_key};
use crate::object::{finalizers_of, now, strings_at};
use crate::registry::ResourceDefinition;
use crate::storage::State;
use crate::storage::objects::{ObjectKey, Stored};

/// Starts deleting a namespace: Terminating phase, then its content (each object through
/// `delete`, the generic deletion, as the controller deletes through the API), then itself when
/// empty. Returns the namespace as it is after this call (None when already gone).
pub(crate) fn terminate(
    state: &mut State,
    name: &str,
    delete: impl Fn(&mut State, &ResourceDefinition, &ObjectKey),
) -> Option<Stored> {
    let key = ns_key(name);
    let current = state.store.get(&namespaces(), &key)?.clone();
    if current
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_none()
    {
        let mut next = (*current.value).clone();
        next["metadata"]["deletionTimestamp"] = now().into();
        next["metadata"]["deletionGracePeriodSeconds"] = 0.into();
        next["status"] = json!({"phase": "Terminating"});
        state.store.replace(&namespaces(), key.clone(), next);
    }
    let resources: Vec<_> = state
        .registry
        .all()
        .filter(|d| d.namespaced)
        .cloned()
        .collect();
    for def in resources {
        let keys: Vec<ObjectKey> = match state.store.collection(&def.key()) {
            Some(c) => c.keys().filter(|k| k.0 == name).cloned().collect(),
            None => continue,
        };
        for object_key in keys {
            delete(state, &def, &object_key);
        }
    }
    finish_if_empty(state, name);
    state.store.get(&namespaces(), &key).cloned()
}

/// Finalizes a terminating namespace once no namespaced object is left in it, as the controller
/// does through `finalize`: the `kubernetes` finalizer leaves `spec.finalizers`, and the namespace
/// is removed when no finalizer (in `spec` or `metadata`) remains; otherwise it stays
/// `Terminating` until their owners remove them.
pub(crate) fn finish_if_empty(state: &mut State, name: &str) {
    let key = ns_key(name);
    let Some(namespace) = state.store.get(&namespaces(), &key) else {
        return;
    };
    if namespace
        .value
        .pointer("/metadata/deletionTimestamp")
        .is_none()
    {
        return;
    }
    let has_content = state.registry.all().filter(|d| d.namespaced).any(|def| {
        state.store.collection(&def.key()).is_some_and(|c| {
            c.range((name.to_string(), String::new())..)
                .next()
                .is_some_and(|(k, _)| k.0 == name)
        })
    });
    if has_content {
        return;
    }
    let spec_finalizers = strings_at(&namespace.value, "/spec/finalizers");
    let remaining: Vec<String> = spec_finalizers
        .iter()
        .filter(|f| *f != "kubernetes")
        .cloned()
        .collect();
    if remaining.is_empty() && finalizers_of(&namespace.value).is_empty() {
        state.store.remove(&namespaces(), &key);
    } else if remaining != spec_finalizers {
        let mut next = (*namespace.value).clone();
        next["spec"]["finalizers"] = remaining.into();
        state.store.replace(&namespaces(), key, next);
    }
}
