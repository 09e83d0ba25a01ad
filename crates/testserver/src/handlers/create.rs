//! `create` (apiserver `endpoints/handlers/create.go`, `registry/rest/create.go` `BeforeCreate`).

use std::borrow::Cow;

use bytes::Bytes;
use http::{Response, StatusCode};
use rand::Rng;
use serde_json::{Map, Value};

use crate::admission::webhook::Webhooks;
use crate::admission::{self, Attributes, Operation};
use crate::apply::{Fields, record_write};
use crate::body::BoxBody;
use crate::body::add_warnings;
use crate::encode::object_response;
use crate::kinds::{Stages, strategy_for};
use crate::object::{metadata_mut, now, parse_object};
use crate::registry::ResourceDefinition;
use crate::request::route::key_of;
use crate::request::route::normalize_namespace;
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::storage::State;
use crate::storage::Storage;
use crate::storage::objects::{ObjectKey, Stored};
use crate::validation::{check_type_meta, name_causes, prefix_causes};

/// `POST .../<plural>`.
pub(crate) async fn create(
    store: &Storage,
    target: &Scope,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let def = &target.def;
    if def.namespaced && target.namespace.is_none() {
        return Err(ApiError::unknown_path());
    }
    let object = parse_object(body)?;
    insert(store, target, object, Fields::Track).await
}

/// Creates `object` (from a create's body, or an apply's merged configuration whose
/// managedFields `fields` says are set already).
pub(crate) async fn insert(
    store: &Storage,
    target: &Scope,
    object: Map<String, Value>,
    fields: Fields,
) -> Result<Response<BoxBody>, ApiError> {
    insert_via(store, &Stages::direct(target), object, fields).await
}

/// Creates `object` through `stages`: decoded, admitted and validated in the first scope (the
/// request's version), stored (converted when the stages convert) in the second. The admission webhooks run outside the
/// storage lock: the mutating ones on the incoming object, the validating ones on the object
/// about to be stored (`crate::admission::webhook`).
pub(crate) async fn insert_via(
    store: &Storage,
    stages: &Stages<'_>,
    mut object: Map<String, Value>,
    fields: Fields,
) -> Result<Response<BoxBody>, ApiError> {
    let target = stages.admit;
    let def = &target.def;
    check_type_meta(&mut object, def)?;
    let meta = metadata_mut(&mut object)?;
    normalize_namespace(meta, target)?;
    if meta
        .get("resourceVersion")
        .and_then(Value::as_str)
        .is_some_and(|rv| !rv.is_empty())
    {
        return Err(ApiError::unknown(
            500,
            "resourceVersion should not be set on objects to be created",
        ));
    }
    let given_name = meta_name(meta).to_string();
    let mut webhooks = {
        let state = store.lock();
        strategy_for(def).decode(&state, def, &mut object);
        let attributes = Attributes::new(Operation::Create, target, &given_name, &state);
        admission::admit(&attributes, Some(&mut object))?;
        let incoming = Value::Object(object.clone());
        Webhooks::load(&attributes, Some(&incoming), create_options(target))
    };
    webhooks.mutate(Some(&mut object)).await?;
    let (key, object) = prepare(&store.lock(), target, object, fields)?;
    if webhooks.has_validating() {
        webhooks.set_name(&key.1);
        webhooks.validate(Some(&object)).await?;
    }
    let object = match object {
        Value::Object(object) if stages.converts() => {
            Value::Object(stages.to_storage(store, object).await?)
        }
        object => object,
    };
    let mut response = store_new(store, stages.store, key, object)?;
    add_warnings(&mut response, &webhooks.warnings);
    Ok(response)
}

/// A create by the server itself, before anyone could install an admission webhook (the RBAC
/// bootstrap objects): the built-in admission only, synchronously.
///
/// # Errors
/// As a create's.
pub(crate) fn bootstrap(store: &Storage, target: &Scope, object: Value) -> Result<(), ApiError> {
    let Value::Object(mut object) = object else {
        return Err(ApiError::internal("a bootstrap object is not an object"));
    };
    check_type_meta(&mut object, &target.def)?;
    let name = meta_name(metadata_mut(&mut object)?).to_string();
    let (key, object) = {
        let state = store.lock();
        let attributes = Attributes::new(Operation::Create, target, &name, &state);
        admission::admit(&attributes, Some(&mut object))?;
        prepare(&state, target, object, Fields::Track)?
    };
    store_new(store, target, key, object).map(drop)
}

/// Stores the admitted, prepared `object` at `key` (or previews it on a dry run).
fn store_new(
    store: &Storage,
    target: &Scope,
    key: ObjectKey,
    object: Value,
) -> Result<Response<BoxBody>, ApiError> {
    let def = &target.def;
    let mut state = store.lock();
    if state.store.get(&def.key(), &key).is_some() {
        return Err(ApiError::already_exists(target.qualified(), &key.1));
    }
    if target.dry_run {
        let preview = Stored::new(object, 0);
        return Ok(object_response(
            StatusCode::CREATED,
            &preview.without_resource_version(),
        ));
    }
    let stored = state.store.insert(&def.key(), key, object);
    strategy_for(def).after_write(&mut state, &stored.value);
    store.notify(state.store.current_rv());
    Ok(object_response(StatusCode::CREATED, &stored))
}

/// The request's `CreateOptions`, as an admission review carries them.
fn create_options(target: &Scope) -> Value {
    let mut options = serde_json::json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"});
    if target.dry_run {
        options["dryRun"] = serde_json::json!(["All"]);
    }
    options
}

/// The object as it will be stored, from the admitted incoming one: name chosen and checked,
/// server metadata stamped, the kind's strategy and managedFields applied, the built-in
/// validating admission passed.
///
/// # Errors
/// 422 Invalid, or a validating plugin's rejection (a duplicate is found later, by `store_new`).
fn prepare(
    state: &State,
    target: &Scope,
    mut object: Map<String, Value>,
    fields: Fields,
) -> Result<(ObjectKey, Value), ApiError> {
    let def = &target.def;
    let meta = metadata_mut(&mut object)?;
    let name = choose_name(state, target, meta)?;
    check_names(def, meta, &name)?;
    let key = key_of(target, &name);
    // No existence check here: v1.36 validates (and admits) first and answers a create that is
    // both invalid and a duplicate 422 Invalid; only storing finds the duplicate (`store_new`).
    stamp_new_metadata(metadata_mut(&mut object)?, &name, def.tracks_generation);
    if def.status_subresource {
        object.remove("status");
    }
    let strategy = strategy_for(def);
    strategy.prepare_for_create(&mut object)?;
    let mut object = Value::Object(object);
    strategy.validate(state, target, &name, (&mut object, None))?;
    record_write(state, target, fields, None, &mut object)?;
    strategy.validate_stored(target, &name, &object)?;
    let attributes = Attributes::new(Operation::Create, target, &name, state);
    admission::validate(&attributes, Some(&object))?;
    Ok((key, object))
}

/// The chosen name and the `generateName` it came from, if any, validated by the kind's rule.
///
/// # Errors
/// 422 Invalid with one cause per problem.
fn check_names(
    def: &ResourceDefinition,
    meta: &Map<String, Value>,
    name: &str,
) -> Result<(), ApiError> {
    let mut causes = match meta.get("generateName").and_then(Value::as_str) {
        Some(prefix) if !prefix.is_empty() => {
            prefix_causes(def.name_rule, prefix, "metadata.generateName")
        }
        _ => Vec::new(),
    };
    causes.extend(name_causes(def.name_rule, name, "metadata.name"));
    if !causes.is_empty() {
        return Err(ApiError::invalid(&def.group, &def.kind, name, causes));
    }
    Ok(())
}

fn meta_name(meta: &Map<String, Value>) -> &str {
    meta.get("name").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.name`, or a fresh one from `generateName`: its first 58 bytes and 5 random characters,
/// as the real server's `SimpleNameGenerator`. Validation comes after, on the result.
fn choose_name(
    state: &State,
    target: &Scope,
    meta: &mut Map<String, Value>,
) -> Result<String, ApiError> {
    let name = meta_name(meta).to_string();
    if !name.is_empty() {
        return Ok(name);
    }
    let prefix = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if prefix.is_empty() {
        let required = cause(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        );
        return Err(ApiError::invalid(
            &target.def.group,
            &target.def.kind,
            "",
            vec![required],
        ));
    }
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let base = generated_base(&prefix);
    let mut rng = rand::rng();
    for _ in 0..16 {
        let suffix: String = (0..5)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
            .collect();
        let candidate = format!("{base}{suffix}");
        if state
            .store
            .get(&target.def.key(), &key_of(target, &candidate))
            .is_none()
        {
            meta.insert("name".into(), candidate.clone().into());
            return Ok(candidate);
        }
    }
    Err(ApiError::already_exists(target.qualified(), &prefix))
}

/// The longest `generateName` prefix kept: a name has at most 63 characters, 5 are random.
const MAX_GENERATED_PREFIX: usize = 58;

/// `prefix` cut to [`MAX_GENERATED_PREFIX`] bytes. The real server cuts bytes, not characters, so a
/// multibyte character across the cut is split; its JSON encoder then writes the broken bytes as
/// U+FFFD, which is what `from_utf8_lossy` gives here (and such a name fails validation).
fn generated_base(prefix: &str) -> Cow<'_, str> {
    let bytes = prefix.as_bytes();
    String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_GENERATED_PREFIX)])
}

/// uid, creationTimestamp and generation; drops fields clients may not set on create.
fn stamp_new_metadata(meta: &mut Map<String, Value>, name: &str, generation: bool) {
    meta.insert("name".into(), name.into());
    meta.insert("uid".into(), uuid::Uuid::new_v4().to_string().into());
    meta.insert("creationTimestamp".into(), now().into());
    for field in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "resourceVersion",
    ] {
        meta.remove(field);
    }
    if generation {
        meta.insert("generation".into(), 1.into());
    } else {
        meta.remove("generation");
    }
}
