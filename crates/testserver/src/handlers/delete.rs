//! `delete` and `deletecollection` (apiserver `endpoints/handlers/delete.go`, registry
//! `Store.Delete` with `BeforeDelete` and finalizer handling).
//!
//! An object with finalizers is not removed: it gets `deletionTimestamp` (and a generation bump)
//! and disappears when an update removes its last finalizer (see `update.rs`). The propagation
//! policy adds or drops the `foregroundDeletion` / `orphan` finalizers first (see
//! `delete_options.rs`). Like the real server, a delete that leaves the object in place answers
//! 200 with the object; 202 only when the request set `orphanDependents: false`.

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::Value;

use crate::body::BoxBody;
use crate::encoding::{ItemTypes, json_list_body};
use crate::handlers::delete_options::DeleteOptions;
use crate::handlers::finalizers_of;
use crate::handlers::{crd, existing, meta_str, namespace, now, object_response};
use crate::query::{ListParams, Query};
use crate::registry::ResourceDefinition;
use crate::route::Target;
use crate::shared::{ApiServer, json_response};
use crate::state::State;
use crate::status::{ApiError, success_status};
use crate::store::{ListQuery, ObjectKey, Stored};

/// What a delete did.
pub(crate) enum Outcome {
    /// Finalizers remain: the object now carries `deletionTimestamp`.
    Pending(Stored),
    /// The object is gone; this is its last state.
    Gone(Stored),
}

/// `DELETE .../<plural>/<name>`.
pub(crate) fn delete(
    api: &ApiServer,
    target: &Target,
    body: &Bytes,
    query: &Query,
) -> Result<Response<BoxBody>, ApiError> {
    let options = DeleteOptions::parse(body, query)?;
    let mut state = api.inner.state.lock();
    let (stored, key) = existing(&state, target)?;
    let name = key.1.clone();
    options.check(&target.def.group, &target.def.kind, &name, stored)?;
    if target.dry_run {
        return Ok(dry_run_response(target, &name, stored, &options));
    }
    let namespace_delete = target.def.group.is_empty() && target.def.plural == "namespaces";
    if namespace_delete && matches!(name.as_str(), "default" | "kube-system" | "kube-public") {
        // The NamespaceLifecycle admission plugin protects the system namespaces.
        let why = "this namespace may not be deleted";
        return Err(ApiError::forbidden(target.qualified(), &name, why));
    }
    let response = if namespace_delete {
        let after = namespace::terminate(&mut state, &name);
        match after {
            Some(ns) => object_response(StatusCode::OK, &ns),
            None => json_response(
                StatusCode::OK,
                success_status(target.qualified(), &name, ""),
            ),
        }
    } else {
        match delete_object(&mut state, &target.def, &key, &options) {
            Some(Outcome::Pending(now)) => object_response(pending_code(&options), &now),
            Some(Outcome::Gone(last)) if target.def.delete_returns_object => {
                object_response(StatusCode::OK, &last)
            }
            Some(Outcome::Gone(last)) => {
                let uid = meta_str(&last.value, "uid");
                json_response(
                    StatusCode::OK,
                    success_status(target.qualified(), &name, uid),
                )
            }
            None => return Err(ApiError::not_found(target.qualified(), &name)),
        }
    };
    api.notify(state.store.current_rv());
    Ok(response)
}

/// 200 for a delete that left the object in place, unless the client set the deprecated
/// `orphanDependents: false` (the real handler's only 202).
fn pending_code(options: &DeleteOptions) -> StatusCode {
    if options.orphan_dependents == Some(false) {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    }
}

/// What a delete would answer, without deleting: objects that finalizers would hold (and
/// namespaces) would be marked, others removed.
fn dry_run_response(
    target: &Target,
    name: &str,
    stored: &Stored,
    options: &DeleteOptions,
) -> Response<BoxBody> {
    let held = !options.finalizers(&finalizers_of(&stored.value)).is_empty();
    if held {
        object_response(pending_code(options), stored)
    } else if target.def.delete_returns_object || target.def.plural == "namespaces" {
        object_response(StatusCode::OK, stored)
    } else {
        let uid = meta_str(&stored.value, "uid");
        json_response(
            StatusCode::OK,
            success_status(target.qualified(), name, uid),
        )
    }
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

/// Removes an object for good and runs what must follow: a CRD takes its resource with it.
pub(crate) fn remove(
    state: &mut State,
    def: &ResourceDefinition,
    key: &ObjectKey,
) -> Option<Stored> {
    let last = state.store.remove(&def.key(), key)?;
    if crd::is_crd(def) {
        crd::unregister(state, &last.value);
    }
    Some(last)
}

/// `DELETE .../<plural>`: deletes every object matching the selectors and returns them as a list.
pub(crate) fn delete_collection(
    api: &ApiServer,
    target: &Target,
    query: &Query,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let params = ListParams::parse(query, &target.def, false)?;
    let options = DeleteOptions::parse(body, query)?;
    let mut state = api.inner.state.lock();
    let keep = |s: &Stored| params.matches(&s.value);
    let list_query = ListQuery {
        namespace: target.namespace.as_deref(),
        at: None,
        after: None,
        limit: None,
        keep: &keep,
    };
    let (items, _) = state
        .store
        .list(&target.def.key(), &list_query)
        .unwrap_or_default();
    let mut deleted = Vec::with_capacity(items.len());
    for item in items {
        if target.dry_run {
            deleted.push(item);
            continue;
        }
        let key = (
            meta_str(&item.value, "namespace").to_string(),
            meta_str(&item.value, "name").to_string(),
        );
        match delete_object(&mut state, &target.def, &key, &options) {
            Some(Outcome::Pending(s) | Outcome::Gone(s)) => deleted.push(s),
            None => {}
        }
    }
    let rv = state.store.current_rv();
    api.notify(rv);
    drop(state);
    let meta = crate::handlers::read::list_meta(rv, None, None);
    let head = crate::handlers::read::list_head(&target.def.kind, &target.def.api_version(), meta);
    let body = json_list_body(head, deleted, ItemTypes::of(&target.def));
    Ok(crate::shared::with_json_type(
        Response::builder().status(StatusCode::OK),
        body,
    ))
}
