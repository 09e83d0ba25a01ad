//! Creates, updates, patches and server-side applies of a custom resource whose CRD serves several
//! versions, computed in the version the request names (apiextensions-apiserver gives each
//! version its own codec and field manager: the object is decoded, patched and tracked in the
//! request's version and converted to the storage version to be stored; structured-merge-diff's
//! `versionConverter` compares it in the version of each managedFields entry).
//!
//! # How
//! In the request's version R:
//! 1. the stored object is converted to R and to the version of each managedFields entry;
//! 2. the incoming object is made there: a PUT's body or the patch applied to the converted
//!    object (both pruned and defaulted by R's schema, as the real decoder does), or the
//!    configuration merged into it; an apply then prunes what its manager stopped applying,
//!    across versions when the managers wrote through several ([`crate::handlers::crd_prune`]);
//! 3. it is converted to each entry's version, and every manager settles against what changed
//!    in its own version (`kubegen_apply::Tracker`): the writer's entry is in R with R's field names, an
//!    apply conflicts with the managers of other versions on what changed in theirs;
//! 4. the object, managedFields set, goes through the update handler in R — admission, the
//!    strategy, validation with R's schema — and is converted to the storage version to be
//!    stored (`crate::handlers::crd_validation`'s stages); when the stored object changed
//!    meanwhile, all starts over, as the real `GuaranteedUpdate` retries a patch.
//!
//! A create converts its body (or an apply's merged configuration) once, to store it. A patch
//! in R of an object whose managers all wrote in R or in the storage version costs two
//! conversions (each a webhook call for strategy `Webhook`), plus the answer's, as on v1.36. A
//! write of `/scale` is an update whose incoming object is the stored one in R with the
//! Scale's replicas set (`crate::handlers::crd_scale`).

use bytes::Bytes;
use http::{HeaderMap, Response};
use kubegen_apply::{Config, Merged, Tracker, managed_fields};
use serde_json::{Map, Value};

use crate::apply::{Fields, KindSchemas, parse_config};
use crate::body::BoxBody;
use crate::handlers::crd_conversion::{Edge, in_version};
use crate::handlers::crd_validation::{Old, Stages};
use crate::handlers::{create, scale, update};
use crate::kinds::custom_resource;
use crate::object::parse_object;
use crate::patch::PatchKind;
use crate::request::route::existing;
use crate::request::scope::Scope;
use crate::request::verb::Verb;
use crate::status::ApiError;
use crate::storage::objects::{ObjectKey, Stored};
use crate::storage::{State, Storage};
use crate::validation::check_type_meta;

/// What an update does to the stored object.
enum Change {
    Put(Bytes),
    Patch(PatchKind, Bytes),
    Apply(Config),
    /// A `PUT` (`None`) or a patch of its `/scale` (`crate::handlers::crd_scale`).
    Scale(Option<PatchKind>, Bytes),
}

/// The incoming object in the request's version, before its managers settle.
enum Incoming {
    Update(Value),
    Apply(Box<Merged>),
}

/// One object in several versions, by version name.
type Views = Vec<(String, Value)>;

fn view<'v>(views: &'v Views, version: &str) -> Option<&'v Value> {
    views
        .iter()
        .find(|(v, _)| v == version)
        .map(|(_, object)| object)
}

/// The schemas of the versions a write settles in, with the request's scope in each: what the
/// trackers of each version need, loaded once under the storage lock.
pub(super) struct VersionSchemas(Vec<(Scope, KindSchemas)>);

impl VersionSchemas {
    fn load(state: &State, edge: &Edge, versions: &[String]) -> Result<VersionSchemas, ApiError> {
        versions
            .iter()
            .map(|version| {
                let scope = in_version(&edge.request_scope, version);
                KindSchemas::load(state, &scope.def).map(|schemas| (scope, schemas))
            })
            .collect::<Result<_, _>>()
            .map(VersionSchemas)
    }

    /// The tracker of this write in `version`, if it is one of those loaded.
    pub(super) fn tracker(&self, version: &str) -> Option<Tracker<'_>> {
        let (scope, schemas) = self.0.iter().find(|(s, _)| s.def.version == version)?;
        Some(schemas.tracker(scope))
    }
}

impl Edge {
    /// A create, update or patch (`verb` of the request's scope) through this edge.
    ///
    /// # Errors
    /// As the handlers', and the conversions' (`crate::kinds::conversion`).
    pub(crate) async fn write(
        &self,
        store: &Storage,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<Response<BoxBody>, ApiError> {
        let scope = &self.request_scope;
        let change = match (scope.verb, scope.subresource.as_deref()) {
            (_, Some("scale")) => Change::Scale(scale::scale_patch(scope, headers)?, body.clone()),
            (Verb::Create, _) => return self.create(store, body).await,
            (Verb::Update, _) => Change::Put(body.clone()),
            _ => match update::patch_kind(scope, headers)? {
                PatchKind::Apply => Change::Apply(parse_config(body, scope)?),
                kind => Change::Patch(kind, body.clone()),
            },
        };
        for _ in 0..update::ATTEMPTS {
            let stored =
                existing(&store.lock(), &self.storage_scope).map(|(old, key)| (old.clone(), key));
            let old = match (stored, &change) {
                (Ok(old), _) => old,
                (Err(missing), Change::Apply(config))
                    if missing.code == 404 && scope.subresource.is_none() =>
                {
                    return self.apply_create(store, config).await;
                }
                (Err(other), _) => return Err(other),
            };
            if let Some(response) = self.update_once(store, &change, old).await? {
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

    /// Steps 1 to 4 of the module docs against `old` (stored under `key`); `None` when the
    /// stored object changed meanwhile.
    async fn update_once(
        &self,
        store: &Storage,
        change: &Change,
        (old, key): (Stored, ObjectKey),
    ) -> Result<Option<Response<BoxBody>>, ApiError> {
        let versions = self.settling_versions(&old.value);
        let olds = self.views(&old.value, &versions).await?;
        let request = self.request_version();
        let (schemas, incoming) = {
            let state = store.lock();
            let schemas = VersionSchemas::load(&state, self, &versions)?;
            let old = view(&olds, request).unwrap_or(&old.value);
            let incoming = self.incoming(&state, &schemas, change, old)?;
            (schemas, incoming)
        };
        let incoming = match incoming {
            Incoming::Apply(mut merged) => {
                self.prune(&schemas, &mut merged).await?;
                Incoming::Apply(merged)
            }
            update => update,
        };
        let object = match &incoming {
            Incoming::Update(object) => object,
            Incoming::Apply(merged) => &merged.object,
        };
        let news = self.views(object, &versions).await?;
        let object = self.settle(&schemas, incoming, &olds, &news)?;
        let seen = view(&olds, request)
            .cloned()
            .unwrap_or_else(|| (*old.value).clone());
        let old = Old {
            seen: Stored::new(seen, old.rv),
            stored: old,
            key,
        };
        update::admit_once(store, &self.stages(), Fields::Applied, &old, object).await
    }

    /// The stages of a write through this edge: admitted in the request's version, stored in
    /// the storage version (`crate::handlers::crd_validation`).
    fn stages(&self) -> Stages<'_> {
        if self.converts_answers() {
            Stages::converting(&self.request_scope, &self.storage_scope, &self.versions)
        } else {
            Stages::direct(&self.storage_scope)
        }
    }

    pub(super) fn request_version(&self) -> &str {
        &self.request_scope.def.version
    }

    /// The request's version and those of `object`'s managedFields entries the CRD serves.
    fn settling_versions(&self, object: &Value) -> Vec<String> {
        let mut versions = vec![self.request_version().to_owned()];
        let entries = managed_fields(object).unwrap_or_default();
        for entry in entries {
            if let Some(version) = self.version_of(&entry.api_version)
                && !versions.iter().any(|v| v == version)
            {
                versions.push(version.to_owned());
            }
        }
        versions
    }

    /// The version of a managedFields entry's `apiVersion`, when the CRD serves it.
    pub(super) fn version_of<'a>(&self, api_version: &'a str) -> Option<&'a str> {
        let version = api_version.rsplit('/').next()?;
        let ours = api_version == self.versions.api_version(version);
        (ours && self.versions.served.iter().any(|v| v == version)).then_some(version)
    }

    /// `object` in each of `versions`.
    async fn views(&self, object: &Value, versions: &[String]) -> Result<Views, ApiError> {
        let mut views = Vec::with_capacity(versions.len());
        for version in versions {
            let converted = self.versions.convert_one(object.clone(), version).await?;
            views.push((version.clone(), converted));
        }
        Ok(views)
    }

    /// Step 2: the incoming object in the request's version, from `old` in it (an apply's not
    /// pruned yet).
    fn incoming(
        &self,
        state: &State,
        schemas: &VersionSchemas,
        change: &Change,
        old: &Value,
    ) -> Result<Incoming, ApiError> {
        let scope = &self.request_scope;
        let mut object = match change {
            Change::Put(body) => update::put_object(scope, body)?,
            Change::Patch(kind, body) => update::patched_object(scope, *kind, old, body)?,
            Change::Apply(config) => {
                let tracker = self.request_tracker(schemas)?;
                let manager = scope.writer.applier()?;
                let merged = tracker.merge(Some(old), config, manager)?;
                return Ok(Incoming::Apply(Box::new(merged)));
            }
            Change::Scale(patch, body) => {
                let paths = scale::paths(scope)?;
                let object = scale::scaled(scope, (*patch, body), old, &paths)?;
                return Ok(Incoming::Update(Value::Object(object)));
            }
        };
        custom_resource::decode(state, &scope.def, &mut object);
        Ok(Incoming::Update(Value::Object(object)))
    }

    pub(super) fn request_tracker<'s>(
        &self,
        schemas: &'s VersionSchemas,
    ) -> Result<Tracker<'s>, ApiError> {
        schemas
            .tracker(self.request_version())
            .ok_or_else(|| ApiError::internal("the request's version is not served"))
    }

    /// Step 3: the managers settled, each in its own version; the object in the request's
    /// version with its managedFields.
    fn settle(
        &self,
        schemas: &VersionSchemas,
        incoming: Incoming,
        olds: &Views,
        news: &Views,
    ) -> Result<Map<String, Value>, ApiError> {
        let request = self.request_version();
        let mut elsewhere = Vec::new();
        for (version, old) in olds.iter().filter(|(version, _)| version != request) {
            let (Some(tracker), Some(new)) = (schemas.tracker(version), view(news, version)) else {
                continue;
            };
            if let Some(changes) = tracker.changes(Some(old), new) {
                elsewhere.push((self.versions.api_version(version), changes));
            }
        }
        let tracker = self.request_tracker(schemas)?;
        let object = match incoming {
            Incoming::Update(mut object) => {
                tracker.record_update(view(olds, request), &mut object, &elsewhere)?;
                object
            }
            Incoming::Apply(merged) => tracker.settle(*merged, &elsewhere)?,
        };
        match object {
            Value::Object(object) => Ok(object),
            _ => Err(ApiError::internal("the tracked object is not an object")),
        }
    }

    /// A create: its body pruned, defaulted and tracked in the request's version.
    async fn create(&self, store: &Storage, body: &Bytes) -> Result<Response<BoxBody>, ApiError> {
        let scope = &self.request_scope;
        if scope.def.namespaced && scope.namespace.is_none() {
            return Err(ApiError::unknown_path());
        }
        let mut object = parse_object(body)?;
        check_type_meta(&mut object, &scope.def)?;
        let object = {
            let state = store.lock();
            custom_resource::decode(&state, &scope.def, &mut object);
            let mut object = Value::Object(object);
            let schemas = KindSchemas::load(&state, &scope.def)?;
            schemas
                .tracker(scope)
                .record_update(None, &mut object, &[])?;
            object
        };
        self.insert(store, object).await
    }

    /// An apply that creates: the configuration merged into nothing in the request's version.
    async fn apply_create(
        &self,
        store: &Storage,
        config: &Config,
    ) -> Result<Response<BoxBody>, ApiError> {
        let scope = &self.request_scope;
        let object = {
            let state = store.lock();
            let schemas = KindSchemas::load(&state, &scope.def)?;
            schemas
                .tracker(scope)
                .apply(None, config, scope.writer.applier()?)?
        };
        self.insert(store, object).await
    }

    /// Creates `object` (in the request's version, managedFields set): admitted there, stored in
    /// the storage version.
    async fn insert(&self, store: &Storage, object: Value) -> Result<Response<BoxBody>, ApiError> {
        let Value::Object(object) = object else {
            return Err(ApiError::internal("the created object is not an object"));
        };
        create::insert_via(store, &self.stages(), object, Fields::Applied).await
    }
}
