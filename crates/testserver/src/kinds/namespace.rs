//! Namespace lifecycle: namespaced writes need an existing, active namespace; deleting a namespace
//! marks it `Terminating`, deletes its content (honouring finalizers) and removes it once empty —
//! what the real namespace registry plus the namespace controller do together.

use serde_json::{Map, Value, json};

use crate::apiserver::ApiServer;
use crate::object::now;
use crate::registry::ResourceKey;
use crate::request::route::Target;
use crate::status::{ApiError, Qualified};
use crate::storage::State;
use crate::storage::objects::ObjectKey;

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

/// Starts deleting a namespace: Terminating phase, then its content, then itself when empty.
/// Returns the namespace as it is after this call (None when already gone).
pub(crate) fn terminate(state: &mut State, name: &str) -> Option<crate::storage::objects::Stored> {
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
            crate::handlers::delete::delete_object(state, &def, &object_key, &Default::default());
        }
    }
    finish_if_empty(state, name);
    state.store.get(&namespaces(), &key).cloned()
}

/// Removes a terminating namespace once no namespaced object is left in it.
pub(crate) fn finish_if_empty(state: &mut State, name: &str) {
    let key = ns_key(name);
    let terminating = state
        .store
        .get(&namespaces(), &key)
        .is_some_and(|ns| ns.value.pointer("/metadata/deletionTimestamp").is_some());
    if !terminating {
        return;
    }
    let has_content = state.registry.all().filter(|d| d.namespaced).any(|def| {
        state.store.collection(&def.key()).is_some_and(|c| {
            c.range((name.to_string(), String::new())..)
                .next()
                .is_some_and(|(k, _)| k.0 == name)
        })
    });
    if !has_content {
        state.store.remove(&namespaces(), &key);
    }
}
