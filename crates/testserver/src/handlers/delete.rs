//! `delete` and `deletecollection` (apiserver `endpoints/handlers/delete.go`): options and
//! preconditions, admission, then the shared deletion with finalizers (`crate::kinds::deletion`)
//! or, for a kind whose strategy terminates (namespaces), termination
//! (`crate::kinds::namespace::terminate`).
//!
//! Like the real server, a delete that leaves the object in place answers 200 with the object;
//! 202 only when the request set `orphanDependents: false`.

use bytes::Bytes;
use http::{Response, StatusCode};

use crate::admission::webhook::Webhooks;
use crate::admission::{self, Attributes, Operation};
use crate::body::BoxBody;
use crate::body::add_warnings;
use crate::body::json_response;
use crate::encode::object_response;
use crate::encode::{ItemTypes, json_list_body};
use crate::kinds::deletion::{Outcome, delete_object};
use crate::kinds::{namespace, strategy_for};
use crate::object::finalizers_of;
use crate::object::meta_str;
use crate::request::delete_options::DeleteOptions;
use crate::request::query::{ListParams, Query};
use crate::request::scope::Scope;
use crate::status::{ApiError, success_status};
use crate::storage::State;
use crate::storage::Storage;
use crate::storage::objects::{ListQuery, ObjectKey, Stored};
use serde_json::Value;

/// `DELETE .../<plural>/<name>`. The admission webhooks run outside the storage lock, on the
/// object as it was; the delete then goes ahead on the object as it is.
pub(crate) async fn delete(
    store: &Storage,
    target: &Scope,
    body: &Bytes,
    query: &Query,
) -> Result<Response<BoxBody>, ApiError> {
    let options = DeleteOptions::parse(body, query)?;
    let mut webhooks = {
        let state = store.lock();
        let (stored, key) = state.existing(&target.def, target.object_key())?;
        options.check(&target.def.group, &target.def.kind, &key.1, stored)?;
        let attributes =
            Attributes::new(Operation::Delete, target, &key.1, &state).with_old(&stored.value);
        admission::admit(&attributes, None)?;
        Webhooks::load(&attributes, None, delete_options(body, target))
    };
    webhooks.mutate(None).await?;
    webhooks.validate(None).await?;
    let mut state = store.lock();
    let (stored, key) = state.existing(&target.def, target.object_key())?;
    let name = key.1.clone();
    options.check(&target.def.group, &target.def.kind, &name, stored)?;
    let attributes = Attributes::new(Operation::Delete, target, &name, &state);
    admission::validate(&attributes, None)?;
    let mut response = deleted(store, &mut state, target, &options, key)?;
    add_warnings(&mut response, &webhooks.warnings);
    Ok(response)
}

/// The request's `DeleteOptions` as an admission review carries them: the body's, typed.
fn delete_options(body: &Bytes, target: &Scope) -> Value {
    let mut options = serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}));
    options["kind"] = "DeleteOptions".into();
    options["apiVersion"] = "meta.k8s.io/v1".into();
    if target.dry_run {
        options["dryRun"] = serde_json::json!(["All"]);
    }
    options
}

/// Deletes (or terminates, or previews) the admitted object at `key`.
fn deleted(
    store: &Storage,
    state: &mut State,
    target: &Scope,
    options: &DeleteOptions,
    key: ObjectKey,
) -> Result<Response<BoxBody>, ApiError> {
    let name = key.1.clone();
    let Some(stored) = state.store.get(&target.def.key(), &key) else {
        return Err(ApiError::not_found(target.qualified(), &name));
    };
    if target.dry_run {
        return Ok(dry_run_response(target, &name, stored, options));
    }
    let response = if strategy_for(&target.def).terminates() {
        match namespace::terminate(state, &name) {
            Some(ns) => object_response(StatusCode::OK, &ns),
            None => json_response(
                StatusCode::OK,
                success_status(target.qualified(), &name, ""),
            ),
        }
    } else {
        match delete_object(state, &target.def, &key, options) {
            Some(Outcome::Pending(now)) => object_response(pending_code(options), &now),
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
    store.notify(state.store.current_rv());
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
    target: &Scope,
    name: &str,
    stored: &Stored,
    options: &DeleteOptions,
) -> Response<BoxBody> {
    let held = !options.finalizers(&finalizers_of(&stored.value)).is_empty();
    if held {
        object_response(pending_code(options), stored)
    } else if target.def.delete_returns_object || strategy_for(&target.def).terminates() {
        object_response(StatusCode::OK, stored)
    } else {
        let uid = meta_str(&stored.value, "uid");
        json_response(
            StatusCode::OK,
            success_status(target.qualified(), name, uid),
        )
    }
}

/// `DELETE .../<plural>`: deletes every object matching the selectors and returns them as a list.
///
/// As the real store's `DeleteCollection` (apiserver `registry/generic/registry/store.go`): it
/// lists, then deletes item by item, each after the validating admission of its own delete
/// (webhooks and policies see `oldObject` = the item and no name, so a denial names "Unknown",
/// apiserver `admission/errors.go`); the first refusal ends the request with that error, the
/// items deleted before it staying deleted. No mutating admission runs, as in the real handler.
/// Dry run validates too, then deletes nothing.
pub(crate) async fn delete_collection(
    store: &Storage,
    target: &Scope,
    query: &Query,
    body: &Bytes,
    sharded_list: bool,
) -> Result<Response<BoxBody>, ApiError> {
    let mut params = ListParams::parse(query, &target.def, false)?;
    // The real store's DeleteCollection lists with the same options, so the shard filter applies.
    params.read_shard_selector(query, sharded_list)?;
    let options = DeleteOptions::parse(body, query)?;
    let items = {
        let state = store.lock();
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
        items
    };
    let mut deleted = Vec::with_capacity(items.len());
    let mut warnings = Vec::new();
    for item in items {
        let key = (
            meta_str(&item.value, "namespace").to_string(),
            meta_str(&item.value, "name").to_string(),
        );
        let mut webhooks = {
            let state = store.lock();
            let attributes =
                Attributes::new(Operation::Delete, target, "", &state).with_old(&item.value);
            Webhooks::load(&attributes, None, delete_options(body, target))
        };
        webhooks.validate(None).await?;
        for warning in webhooks.warnings {
            // The real server's warning recorder keeps each distinct text once per request.
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
        if target.dry_run {
            deleted.push(item);
            continue;
        }
        let mut state = store.lock();
        let attributes = Attributes::new(Operation::Delete, target, &key.1, &state);
        admission::admit(&attributes, None)?;
        admission::validate(&attributes, None)?;
        match delete_object(&mut state, &target.def, &key, &options) {
            Some(Outcome::Pending(s) | Outcome::Gone(s)) => deleted.push(s),
            None => {}
        }
        store.notify(state.store.current_rv());
    }
    let state = store.lock();
    let rv = state.store.current_rv();
    drop(state);
    let meta = crate::encode::list_meta(rv, None, None);
    let head = crate::encode::list_head(&target.def.kind, &target.def.api_version(), meta);
    let body = json_list_body(head, deleted, ItemTypes::of(&target.def));
    let mut response =
        crate::body::with_json_type(Response::builder().status(StatusCode::OK), body);
    add_warnings(&mut response, &warnings);
    Ok(response)
}
