//! Writes of a kind served in several versions, in the version the request names, across the
//! edge its strategy hands out (`crate::kinds::Strategy::edge`; custom resources, whose
//! apiextensions-apiserver gives each version its own codec and field manager: the object is
//! decoded, patched and tracked in the request's version and converted to the storage version
//! to be stored; structured-merge-diff's `versionConverter` compares it in the version of each
//! managedFields entry).
//!
//! # How: request → convert in → strategy → store → convert out
//! In the request's version R:
//! 1. the stored object is converted in, to R and to the version of each managedFields entry
//!    (`Edge::views`);
//! 2. the incoming object is made there by the generic update's own steps: a PUT's body or the
//!    patch applied to the converted object (both decoded by the kind's strategy, as the real
//!    decoder does), or the configuration merged into it; an apply then prunes what its manager
//!    stopped applying, across versions when the managers wrote through several
//!    (`crate::kinds::custom_resource::prune`);
//! 3. it is converted to each entry's version, and every manager settles against what changed
//!    in its own version (`crate::kinds::custom_resource::managers`);
//! 4. the object, managedFields set, goes through the generic update in R — admission, the
//!    strategy, validation with R's schema — and is converted to the storage version to be
//!    stored ([`Stages::converting`]); when the stored object changed meanwhile, all starts
//!    over, as the real `GuaranteedUpdate` retries a patch. The pipeline converts the answer out.
//!
//! A create converts its body (or an apply's merged configuration) once, to store it. A patch
//! in R of an object whose managers all wrote in R or in the storage version costs two
//! conversions (each a webhook call for strategy `Webhook`), plus the answer's, as on v1.36.
//!
//! # `/scale`
//! apiextensions-apiserver serves a `ScaleREST` per version, with that version's
//! `specReplicasPath`, `statusReplicasPath` and `labelSelectorPath` (a v1 CRD gives each version
//! its own), over the object converted to it. A get converts the stored object to R and reads the
//! Scale there (`crate::handlers::scale::scale_of`). A put or a patch is an update of the object
//! in R whose incoming object is the stored one with the Scale's replicas set at R's path,
//! validated in R with the object's rules, and recorded as the writer's `Update` entry
//! `subresource: scale` in R — the replicas field leaves the entries of the managers who set it,
//! in each one's version, as structured-merge-diff's `ScaleHandler` moves it; scale entries carry
//! no `time`, as there. The answer is the Scale of the stored object converted to R.
//!
//! # Differences from the real server
//! Admission webhooks whose rules name `<plural>/scale` get the custom resource, where v1.36
//! sends them the Scale.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::Value;

use kubegen_apply::Config;

use crate::apply::{Fields, KindSchemas, name_to_create, parse_config};
use crate::body::{BoxBody, json_response};
use crate::handlers::create;
use crate::handlers::scale::{self, scale_of};
use crate::handlers::update::{self, Old};
use crate::kinds::custom_resource::edge::{Edge, view};
use crate::kinds::custom_resource::managers::{Incoming, VersionSchemas};
use crate::kinds::{Stages, builtin_defaults, strategy_for};
use crate::object::parse_object;
use crate::patch::PatchKind;
use crate::status::ApiError;
use crate::storage::objects::{ObjectKey, Stored};
use crate::storage::{State, Storage};
use crate::validation::check_type_meta;
use crate::verb::Verb;

/// What an update does to the stored object.
enum Change {
    Put(Bytes),
    Patch(PatchKind, Bytes),
    Apply(Config),
    /// A `PUT` (`None`) or a patch of its `/scale`.
    Scale(Option<PatchKind>, Bytes),
}

/// A create, update or patch (`verb` of the request's scope) across `edge`.
///
/// # Errors
/// As the handlers', and the conversions' (`crate::kinds::custom_resource::conversion`).
pub(crate) async fn write(
    store: &Storage,
    edge: &Edge,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let scope = &edge.request_scope;
    let change = match (scope.verb, scope.subresource.as_deref()) {
        (_, Some("scale")) => Change::Scale(scale::scale_patch(scope, headers)?, body.clone()),
        (Verb::Create, _) => return create_in(store, edge, body).await,
        (Verb::Update, _) => Change::Put(body.clone()),
        _ => match update::patch_kind(scope, headers)? {
            PatchKind::Apply => Change::Apply(parse_config(body, scope)?),
            kind => Change::Patch(kind, body.clone()),
        },
    };
    let target = &edge.storage_scope;
    for _ in 0..update::ATTEMPTS {
        let stored = store
            .lock()
            .existing(&target.def, target.object_key())
            .map(|(old, key)| (old.clone(), key));
        let old = match (stored, &change) {
            (Ok(old), _) => old,
            (Err(missing), Change::Apply(config))
                if missing.code == 404 && scope.subresource.is_none() =>
            {
                name_to_create(config, scope)?;
                return apply_create(store, edge, config).await;
            }
            (Err(other), _) => return Err(other),
        };
        if let Some(response) = update_once(store, edge, &change, old).await? {
            return Ok(response);
        }
    }
    let name = scope.name.as_deref().unwrap_or_default();
    Err(ApiError::conflict(
        scope.qualified(),
        name,
        ApiError::MODIFIED,
    ))
}

/// Steps 1 to 4 of the module docs against `old` (stored under `key`); `None` when the stored
/// object changed meanwhile.
async fn update_once(
    store: &Storage,
    edge: &Edge,
    change: &Change,
    (old, key): (Stored, ObjectKey),
) -> Result<Option<Response<BoxBody>>, ApiError> {
    let versions = edge.settling_versions(&old.value);
    let olds = edge.views(&old.value, &versions).await?;
    let request = edge.request_version();
    let (schemas, incoming) = {
        let state = store.lock();
        let schemas = VersionSchemas::load(&state, edge, &versions)?;
        let old = view(&olds, request).unwrap_or(&old.value);
        let incoming = incoming(&state, edge, &schemas, change, old)?;
        (schemas, incoming)
    };
    let incoming = match incoming {
        Incoming::Apply(mut merged) => {
            edge.prune(&schemas, &mut merged).await?;
            Incoming::Apply(merged)
        }
        update => update,
    };
    let news = edge.views(incoming.object(), &versions).await?;
    let object = edge.settle(&schemas, incoming, &olds, &news)?;
    let seen = view(&olds, request)
        .cloned()
        .unwrap_or_else(|| (*old.value).clone());
    let old = Old {
        seen: Stored::new(seen, old.rv),
        stored: old,
        key,
    };
    update::admit_once(store, &stages(edge), Fields::Applied, &old, object).await
}

/// The stages of a write across `edge`: admitted in the request's version, stored in the
/// storage version.
fn stages(edge: &Edge) -> Stages<'_> {
    if edge.converts_answers() {
        Stages::converting(edge)
    } else {
        Stages::direct(&edge.storage_scope)
    }
}

/// Step 2: the incoming object in the request's version, from `old` in it (an apply's not
/// pruned yet).
fn incoming(
    state: &State,
    edge: &Edge,
    schemas: &VersionSchemas,
    change: &Change,
    old: &Value,
) -> Result<Incoming, ApiError> {
    let scope = &edge.request_scope;
    let mut object = match change {
        Change::Put(body) => update::put_object(scope, body)?,
        Change::Patch(kind, body) => update::patched_object(scope, *kind, old, body)?,
        Change::Apply(config) => {
            let tracker = schemas.request_tracker(edge)?;
            let manager = scope.writer.applier()?;
            let mut merged = tracker.merge(Some(old), config, manager)?;
            if let Value::Object(object) = &mut merged.object {
                builtin_defaults::fill(&scope.def.group, &scope.def.plural, object);
            }
            return Ok(Incoming::Apply(Box::new(merged)));
        }
        Change::Scale(patch, body) => {
            let paths = scale::paths(scope)?;
            let object = scale::scaled(scope, (*patch, body), old, &paths)?;
            return Ok(Incoming::Update(Value::Object(object)));
        }
    };
    strategy_for(&scope.def).decode(state, &scope.def, &mut object);
    Ok(Incoming::Update(Value::Object(object)))
}

/// A create: its body decoded and tracked in the request's version.
async fn create_in(
    store: &Storage,
    edge: &Edge,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let scope = &edge.request_scope;
    if scope.def.namespaced && scope.namespace.is_none() {
        return Err(ApiError::unknown_path());
    }
    let mut object = parse_object(body)?;
    check_type_meta(&mut object, &scope.def)?;
    let object = {
        let state = store.lock();
        strategy_for(&scope.def).decode(&state, &scope.def, &mut object);
        let mut object = Value::Object(object);
        let schemas = KindSchemas::load(&state, &scope.def)?;
        schemas
            .tracker(scope)
            .record_update(None, &mut object, &[])?;
        object
    };
    insert(store, edge, object).await
}

/// An apply that creates: the configuration merged into nothing in the request's version.
async fn apply_create(
    store: &Storage,
    edge: &Edge,
    config: &Config,
) -> Result<Response<BoxBody>, ApiError> {
    let scope = &edge.request_scope;
    let mut object = {
        let state = store.lock();
        let schemas = KindSchemas::load(&state, &scope.def)?;
        schemas
            .tracker(scope)
            .apply(None, config, scope.writer.applier()?)?
    };
    if let Value::Object(object) = &mut object {
        builtin_defaults::fill(&scope.def.group, &scope.def.plural, object);
    }
    insert(store, edge, object).await
}

/// Creates `object` (in the request's version, managedFields set): admitted there, stored in
/// the storage version.
async fn insert(
    store: &Storage,
    edge: &Edge,
    object: Value,
) -> Result<Response<BoxBody>, ApiError> {
    let Value::Object(object) = object else {
        return Err(ApiError::internal("the created object is not an object"));
    };
    create::insert_via(store, &stages(edge), object, Fields::Applied).await
}

/// `GET|PUT|PATCH .../<plural>/<name>/scale` in the request's version (see the module docs).
///
/// # Errors
/// 404 for a missing object or a version without `scale`; the write's; a failed
/// conversion's 500.
pub(crate) async fn scale(
    store: &Storage,
    edge: &Edge,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    let scope = &edge.request_scope;
    let paths = scale::paths(scope)?;
    let (warnings, stored) = if scope.verb == Verb::Get {
        let target = &edge.storage_scope;
        let state = store.lock();
        let stored = state.existing(&target.def, target.object_key())?.0;
        (Vec::new(), (*stored.value).clone())
    } else {
        let (parts, body) = write(store, edge, headers, body).await?.into_parts();
        let warnings = parts.headers.get_all(header::WARNING).iter().cloned();
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let stored = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::internal(format!("the stored object: {e}")))?;
        (warnings.collect(), stored)
    };
    let object: Value = edge
        .versions
        .convert_one(stored, edge.request_version())
        .await?;
    let scale = scale_of(&scope.def, &paths, &object)?;
    let mut answer = json_response(StatusCode::OK, Bytes::from(scale.to_string()));
    for warning in warnings {
        answer.headers_mut().append(header::WARNING, warning);
    }
    Ok(answer)
}
