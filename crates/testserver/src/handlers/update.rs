//! `update` and `patch`, on the main endpoint and on `/status` (apiserver
//! `endpoints/handlers/{update,patch}.go`, registry `Store.Update`, `rest.BeforeUpdate`).
//!
//! Both verbs end in [`commit`], which applies the rules every update obeys: optimistic concurrency,
//! immutable metadata, the status/spec split of the status subresource, generation bumps, no new
//! finalizers on a terminating object, removal once the last finalizer is gone, and no write (and
//! no event) when nothing changed.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use serde_json::{Map, Value};

use crate::admission::webhook::Webhooks;
use crate::admission::{self, Attributes, Operation};
use crate::apply::{Fields, KindSchemas, name_to_create, parse_config, record_write};
use crate::body::BoxBody;
use crate::body::add_warnings;
use crate::encode::object_response;
use crate::handlers::create;
use crate::kinds::{Stages, Strategy, deletion, strategy_for};
use crate::object::{finalizers_of, metadata_mut, parse_object};
use crate::patch::{self, PatchKind};
use crate::request::route::normalize_namespace;
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::storage::State;
use crate::storage::Storage;
use crate::storage::objects::{ObjectKey, Stored};
use crate::validation::check_type_meta;

/// `PUT .../<plural>/<name>[/status]`.
pub(crate) async fn update(
    store: &Storage,
    target: &Scope,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let object = put_object(target, body)?;
    admitted(store, target, Fields::Track, &|_, _| Ok(object.clone())).await
}

/// A PUT's body as the incoming object, its type, name and namespace checked against the URL.
///
/// # Errors
/// 400 for a body that is no object or names another object.
pub(crate) fn put_object(target: &Scope, body: &Bytes) -> Result<Map<String, Value>, ApiError> {
    let mut object = parse_object(body)?;
    check_type_meta(&mut object, &target.def)?;
    check_name(target, &mut object)?;
    Ok(object)
}

/// The incoming object's name against the URL's, and its namespace normalized.
fn check_name(target: &Scope, object: &mut Map<String, Value>) -> Result<(), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    let meta = metadata_mut(object)?;
    let body_name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    if body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    normalize_namespace(meta, target)
}

/// The patch type of a `PATCH` (its `Content-Type`); `force` is for applies only.
///
/// # Errors
/// 415 for a type the kind does not take, 400 for `force` on another patch.
pub(crate) fn patch_kind(target: &Scope, headers: &HeaderMap) -> Result<PatchKind, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let kind = PatchKind::from_content_type(content_type, target.def.strategic_merge)?;
    if kind != PatchKind::Apply {
        target.writer.check_no_force()?;
    }
    Ok(kind)
}

/// `PATCH .../<plural>/<name>[/status]`.
pub(crate) async fn patch(
    store: &Storage,
    target: &Scope,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let kind = patch_kind(target, headers)?;
    if kind == PatchKind::Apply {
        return apply(store, target, body).await;
    }
    let patched = |_: &State, old: &Stored| patched_object(target, kind, &old.value, body);
    admitted(store, target, Fields::Track, &patched).await
}

/// `old` patched by `body`, as the incoming object of an update.
///
/// # Errors
/// The patch does not apply (see `crate::patch`), or its result is no object or names another.
pub(crate) fn patched_object(
    target: &Scope,
    kind: PatchKind,
    old: &Value,
    body: &Bytes,
) -> Result<Map<String, Value>, ApiError> {
    let Value::Object(mut object) = patch::apply(kind, old, body, &target.def)? else {
        return Err(ApiError::bad_request(
            "the patched object is not a JSON object",
        ));
    };
    check_type_meta(&mut object, &target.def)?;
    check_name(target, &mut object)?;
    Ok(object)
}

/// A server-side apply (`application/apply-patch+yaml`): merges the configuration into the
/// object, or creates it (201) when there is none.
async fn apply(
    store: &Storage,
    target: &Scope,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let manager = target.writer.applier()?;
    let config = parse_config(body, target)?;
    let created = {
        let state = store.lock();
        match state.existing(&target.def, target.object_key()) {
            Ok(_) => None,
            Err(missing) if missing.code == 404 && target.subresource.is_none() => {
                name_to_create(&config, target)?;
                let schemas = KindSchemas::load(&state, &target.def)?;
                let tracker = schemas.tracker(target);
                let Value::Object(object) = tracker.apply(None, &config, manager)? else {
                    return Err(ApiError::internal("the applied object is not an object"));
                };
                Some(object)
            }
            Err(other) => return Err(other),
        }
    };
    if let Some(object) = created {
        return create::insert(store, target, object, Fields::Applied).await;
    }
    let applied = |state: &State, old: &Stored| {
        let schemas = KindSchemas::load(state, &target.def)?;
        let tracker = schemas.tracker(target);
        let Value::Object(next) = tracker.apply(Some(&old.value), &config, manager)? else {
            return Err(ApiError::internal("the applied object is not an object"));
        };
        Ok(next)
    };
    admitted(store, target, Fields::Applied, &applied).await
}

/// The object an update starts from, under `key`: as its admission stage sees it (in the
/// version the request names) and as it is stored — the same object unless the [`Stages`]
/// convert.
pub(crate) struct Old {
    pub(crate) seen: Stored,
    pub(crate) stored: Stored,
    pub(crate) key: ObjectKey,
}

/// How a write makes the incoming object from the stored one (a PUT's body, a patch applied).
pub(crate) type Incoming<'a> =
    dyn Fn(&State, &Stored) -> Result<Map<String, Value>, ApiError> + Send + Sync + 'a;

/// How often an update whose object changed while its webhooks ran starts over (the real
/// `GuaranteedUpdate` retries too) before answering 409.
pub(crate) const ATTEMPTS: usize = 5;

/// An update through the admission webhooks ([`admit_once`]), started over when the stored
/// object changed meanwhile.
pub(crate) async fn admitted(
    store: &Storage,
    target: &Scope,
    fields: Fields,
    incoming: &Incoming<'_>,
) -> Result<Response<BoxBody>, ApiError> {
    let stages = Stages::direct(target);
    for _ in 0..ATTEMPTS {
        let (old, object) = {
            let state = store.lock();
            let (old, key) = state.existing(&target.def, target.object_key())?;
            let object = incoming(&state, old)?;
            let old = Old {
                seen: old.clone(),
                stored: old.clone(),
                key,
            };
            (old, object)
        };
        if let Some(response) = admit_once(store, &stages, fields, &old, object).await? {
            return Ok(response);
        }
    }
    let name = target.name.as_deref().unwrap_or_default();
    Err(ApiError::conflict(
        target.qualified(),
        name,
        ApiError::MODIFIED,
    ))
}

/// One attempt of an update of `old` to `object`: the mutating webhooks see the incoming
/// object, the validating ones the object [`commit`] would store — a dry run in the scope the
/// `stages` admit in, where a custom resource is validated — all outside the storage lock;
/// then the object, converted to the storage version when the stages convert, is committed if
/// the stored object is still `old`. `None` when it is not.
///
/// # Errors
/// The webhooks', the update rules' (see [`commit`]) and the conversion's.
pub(crate) async fn admit_once(
    store: &Storage,
    stages: &Stages<'_>,
    fields: Fields,
    old: &Old,
    mut object: Map<String, Value>,
) -> Result<Option<Response<BoxBody>>, ApiError> {
    let target = stages.admit;
    let name = target.name.clone().unwrap_or_default();
    let mut webhooks = {
        let state = store.lock();
        strategy_for(&target.def).decode(&state, &target.def, &mut object);
        let attributes =
            Attributes::new(Operation::Update, target, &name, &state).with_old(&old.seen.value);
        let value = Value::Object(object.clone());
        Webhooks::load(&attributes, Some(&value), update_options(target))
    };
    webhooks.mutate(Some(&mut object)).await?;
    if webhooks.has_validating() || stages.converts() {
        let preview_scope = Scope {
            dry_run: true,
            ..target.clone()
        };
        let key = old.key.clone();
        let preview = commit(
            &mut store.lock(),
            &preview_scope,
            key,
            &old.seen,
            object.clone(),
            fields,
        )?;
        webhooks.validate(Some(&preview.value)).await?;
        if let Value::Object(previewed) = &*preview.value
            && stages.converts()
        {
            object = stages.to_storage(store, previewed.clone()).await?;
        }
    }
    let target = stages.store;
    let mut state = store.lock();
    if state.existing(&target.def, target.object_key())?.0.rv != old.stored.rv {
        return Ok(None);
    }
    let stored = commit(
        &mut state,
        target,
        old.key.clone(),
        &old.stored,
        object,
        fields,
    )?;
    store.notify(state.store.current_rv());
    let mut response = object_response(StatusCode::OK, &stored);
    add_warnings(&mut response, &webhooks.warnings);
    Ok(Some(response))
}

/// The request's `UpdateOptions` (a patch's too, as the real server sends them).
fn update_options(target: &Scope) -> Value {
    let mut options = serde_json::json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
    if target.dry_run {
        options["dryRun"] = serde_json::json!(["All"]);
    }
    options
}

/// Stores `incoming` as the next version of `old` under the update rules (see the module docs).
/// Returns the stored version, or `old` itself when nothing changed.
pub(crate) fn commit(
    state: &mut State,
    target: &Scope,
    key: ObjectKey,
    old: &Stored,
    incoming: Map<String, Value>,
    fields: Fields,
) -> Result<Stored, ApiError> {
    let def = &target.def;
    let name = key.1.clone();
    check_preconditions(target, &name, old, &incoming)?;
    let status_only = target.subresource.as_deref() == Some("status");
    let status_metadata = strategy_for(def).status_update_metadata();
    // An apply's field tracker wrote the object's managedFields; a status write keeps the old
    // metadata otherwise, and would lose the applier's entry.
    let applied_fields = match fields {
        Fields::Applied => incoming
            .get("metadata")
            .and_then(|meta| meta.get("managedFields"))
            .cloned(),
        _ => None,
    };
    let mut next = merge_for_mode(
        old,
        incoming,
        status_only,
        def.status_subresource,
        status_metadata,
    );
    if let Some(managed) = applied_fields {
        next["metadata"]["managedFields"] = managed;
    }
    check_finalizers(target, &name, old, &next)?;
    drop_empty_finalizers(&mut next);
    if def.tracks_generation && spec_changed(&old.value, &next, def.status_subresource) {
        let generation = old
            .value
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        next["metadata"]["generation"] = (generation + 1).into();
    }
    let strategy = strategy_for(def);
    let attributes = Attributes::new(Operation::Update, target, &name, state);
    admission::admit(&attributes, next.as_object_mut())?;
    if !status_only && let Some(object) = next.as_object_mut() {
        strategy.prepare_for_update(object)?;
    }
    strategy.validate(state, target, &name, (&mut next, Some(&old.value)))?;
    record_write(state, target, fields, Some(&old.value), &mut next)?;
    strategy.validate_stored(target, &name, &next)?;
    next["metadata"]["resourceVersion"] = old.rv.to_string().into();
    if next == *old.value {
        return Ok(old.clone());
    }
    let attributes = Attributes::new(Operation::Update, target, &name, state);
    admission::validate(&attributes, Some(&next))?;
    if target.dry_run {
        return Ok(Stored::new(next, old.rv));
    }
    if finished(strategy, &next) {
        // The real store deletes instead of writing this update: watchers see only DELETED,
        // carrying the last stored state (finalizers included); the client gets the updated
        // object at the deletion's resourceVersion.
        let last = deletion::remove(state, def, &key)
            .ok_or_else(|| ApiError::not_found(target.qualified(), &name))?;
        return Ok(Stored::new(next, last.rv));
    }
    let stored = state.store.replace(&def.key(), key, next);
    strategy.after_write(state, &stored.value);
    Ok(stored)
}

/// Removes `metadata.finalizers` when an update left it empty (the last one removed by a merge
/// patch, `$deleteFromPrimitiveList` or a PUT): Go's `omitempty` drops it, so v1.36 never stores
/// or answers `finalizers: []` (checked with both patch types on a ConfigMap).
fn drop_empty_finalizers(next: &mut Value) {
    if let Some(meta) = next.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
    {
        meta.remove("finalizers");
    }
}

/// Whether an update leaves a deleted object without finalizers, so that the store removes it
/// instead (`ShouldDeleteDuringUpdate`, with the kind's own finalizers for namespaces).
fn finished(strategy: &dyn Strategy, next: &Value) -> bool {
    next.pointer("/metadata/deletionTimestamp").is_some()
        && next
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|f| f.is_empty())
        && !strategy.held(next)
}

/// resourceVersion and uid in the body act as preconditions.
fn check_preconditions(
    target: &Scope,
    name: &str,
    old: &Stored,
    incoming: &Map<String, Value>,
) -> Result<(), ApiError> {
    let meta = incoming.get("metadata");
    let field = |f: &str| {
        meta.and_then(|m| m.get(f))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(rv) = field("resourceVersion") {
        if rv.parse::<u64>().is_err() {
            return Err(ApiError::bad_request(format!(
                "invalid resourceVersion \"{rv}\""
            )));
        }
        if rv != old.rv.to_string() {
            return Err(ApiError::conflict(
                target.qualified(),
                name,
                ApiError::MODIFIED,
            ));
        }
    }
    let old_uid = crate::object::meta_str(&old.value, "uid");
    if let Some(uid) = field("uid").filter(|u| *u != old_uid) {
        let why = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {old_uid}"
        );
        return Err(ApiError::conflict(target.qualified(), name, &why));
    }
    Ok(())
}

/// Metadata the server owns: copied from the old object whatever the client sent.
const SERVER_OWNED: [&str; 6] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "namespace",
];

fn merge_for_mode(
    old: &Stored,
    mut incoming: Map<String, Value>,
    status_only: bool,
    status_subresource: bool,
    status_metadata: Option<&[&str]>,
) -> Value {
    let old_meta = old.value.get("metadata").and_then(Value::as_object);
    if status_only {
        // The status endpoint changes status and, for some kinds, metadata; nothing else.
        let mut next = (*old.value).clone();
        if let (Some(kept), Some(Value::Object(mut meta))) =
            (status_metadata, incoming.remove("metadata"))
        {
            for field in SERVER_OWNED.iter().chain(kept) {
                match old_meta.and_then(|m| m.get(*field)) {
                    Some(v) => meta.insert((*field).into(), v.clone()),
                    None => meta.remove(*field),
                };
            }
            next["metadata"] = Value::Object(meta);
        }
        match (next.as_object_mut(), incoming.remove("status")) {
            (Some(map), Some(status)) => {
                map.insert("status".into(), status);
            }
            (Some(map), None) => {
                map.remove("status");
            }
            _ => {}
        }
        return next;
    }
    if let Some(meta) = incoming.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_OWNED {
            match old_meta.and_then(|m| m.get(field)) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
    }
    if status_subresource {
        // The main endpoint ignores status changes when the status subresource exists.
        match old.value.get("status") {
            Some(status) => incoming.insert("status".into(), status.clone()),
            None => incoming.remove("status"),
        };
    }
    Value::Object(incoming)
}

fn check_finalizers(
    target: &Scope,
    name: &str,
    old: &Stored,
    next: &Value,
) -> Result<(), ApiError> {
    if old.value.pointer("/metadata/deletionTimestamp").is_none() {
        return Ok(());
    }
    let before = finalizers_of(&old.value);
    let added: Vec<String> = finalizers_of(next)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let message = format!(
        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
        added
            .iter()
            .map(|f| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let def = &target.def;
    Err(ApiError::invalid(
        &def.group,
        &def.kind,
        name,
        vec![cause("FieldValueForbidden", "metadata.finalizers", message)],
    ))
}

/// Whether anything outside metadata (and outside status, when status is a subresource) changed.
fn spec_changed(old: &Value, next: &Value, status_subresource: bool) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            map.remove("metadata");
            if status_subresource {
                map.remove("status");
            }
        }
        v
    };
    strip(old) != strip(next)
}
