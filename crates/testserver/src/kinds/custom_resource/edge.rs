//! Custom resources in a version other than their CRD's storage version: apiextensions-apiserver's
//! `crdConversionRESTOptionsGetter`, the edge a request crosses on its way in and out (the
//! conversions themselves are `super::conversion`). The custom-resource strategy hands it out
//! (`crate::kinds::Strategy::edge`); the request path reads one way: the request, converted in
//! here, the generic handlers and the kind's strategy in the request's version
//! (`crate::handlers::versioned`), the store in the storage version, the answer converted out
//! here.
//!
//! # How
//! Every served version of a CRD shares the storage version's objects. A request for a custom
//! resource whose CRD serves several versions runs the handlers *in the storage version*
//! ([`Edge::storage_scope`]). Reads and deletes in another version get every object of the answer
//! (the object, each list item, each watch event's object) converted to the request's version
//! ([`Edge::response`]): one conversion per request, all of a list's items in one
//! `ConversionReview`, as the real server converts lists. Creates, updates and patches compute
//! their object in the request's version first, managedFields included (`super::managers`,
//! `super::prune`), are validated in it and converted to the storage version to be stored
//! ([`Edge::to_storage`], `crate::kinds::stages`); `/scale` reads and writes the object in it.
//!
//! # Failures (as v1.36 answers them, `codegen/generated-tests/.../conversion.rs` checks both
//! real servers)
//! A failed conversion fails the request with its 500 (`super::conversion`); a watch
//! ends with that Status as an `ERROR` event.
//!
//! # Differences from the real server
//! - v1.36 answers a *list* with 429 `storage is (re)initializing` while its watch cache cannot
//!   convert; this server answers it like a get (500).
//! - Table answers use the request version's printer columns on the stored object, before any
//!   conversion.
//! - Pruning and defaulting run in the request's version and again in the storage version (the
//!   real server prunes the converted object; it defaults when it reads).

use std::sync::Arc;

use bytes::Bytes;
use http::Response;
use http_body_util::BodyExt as _;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::body::{BoxBody, ChannelBody};
use crate::kinds::custom_resource::conversion::CrdVersions;
use crate::kinds::custom_resource::schema;
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::{State, Storage};

/// A request for a custom resource served in several versions: the scope the handlers run with
/// and the way between the request's version and the storage version.
pub(crate) struct Edge {
    /// The request's scope, in the version it names.
    pub(crate) request_scope: Scope,
    /// The request's scope, its definition moved to the storage version (its printer columns and
    /// subresources kept): what the handlers run with.
    pub(crate) storage_scope: Scope,
    /// The CRD's versions and how its objects convert between them.
    pub(crate) versions: CrdVersions,
}

/// One object in several versions, by version name.
pub(crate) type Views = Vec<(String, Value)>;

/// The object of `views` in `version`.
pub(crate) fn view<'v>(views: &'v Views, version: &str) -> Option<&'v Value> {
    views
        .iter()
        .find(|(v, _)| v == version)
        .map(|(_, object)| object)
}

impl Edge {
    /// The edge of a request for a custom resource whose CRD serves several versions, or that
    /// names another version than the storage version; `None` for everything else.
    pub(crate) fn for_scope(state: &State, scope: &Scope) -> Option<Edge> {
        let versions = CrdVersions::of(state, &scope.def)?;
        if versions.served.len() < 2 && versions.storage == scope.def.version {
            return None;
        }
        let mut storage_scope = in_version(scope, &versions.storage);
        if versions.storage != scope.def.version {
            storage_scope.request_version = Some(scope.def.version.clone());
        }
        Some(Edge {
            request_scope: scope.clone(),
            storage_scope,
            versions,
        })
    }

    /// Whether answers are converted: the request names another version than the storage one.
    pub(crate) fn converts_answers(&self) -> bool {
        self.request_scope.def.version != self.versions.storage
    }

    /// The version the request names.
    pub(crate) fn request_version(&self) -> &str {
        &self.request_scope.def.version
    }

    /// The request's version and those of `object`'s managedFields entries the CRD serves: the
    /// versions a write settles its managers in.
    pub(crate) fn settling_versions(&self, object: &Value) -> Vec<String> {
        let mut versions = vec![self.request_version().to_owned()];
        let entries = kubegen_apply::managed_fields(object).unwrap_or_default();
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
    pub(crate) fn version_of<'a>(&self, api_version: &'a str) -> Option<&'a str> {
        let version = api_version.rsplit('/').next()?;
        let ours = api_version == self.versions.api_version(version);
        (ours && self.versions.served.iter().any(|v| v == version)).then_some(version)
    }

    /// `object` in each of `versions` (converted in).
    ///
    /// # Errors
    /// A conversion failed.
    pub(crate) async fn views(
        &self,
        object: &Value,
        versions: &[String],
    ) -> Result<Views, ApiError> {
        let mut views = Vec::with_capacity(versions.len());
        for version in versions {
            let converted = self.versions.convert_one(object.clone(), version).await?;
            views.push((version.clone(), converted));
        }
        Ok(views)
    }

    /// `object`, admitted in the request's version, as it is stored: converted to the storage
    /// version, pruned and defaulted there.
    ///
    /// # Errors
    /// The conversion's 500 (`super::conversion`).
    pub(crate) async fn to_storage(
        &self,
        store: &Storage,
        object: Map<String, Value>,
    ) -> Result<Map<String, Value>, ApiError> {
        let mut converted = self
            .versions
            .convert_one(Value::Object(object), &self.versions.storage)
            .await?;
        schema::settle(&store.lock(), &self.storage_scope.def, &mut converted);
        match converted {
            Value::Object(object) => Ok(object),
            _ => Err(ApiError::internal("the converted object is not an object")),
        }
    }

    /// The handler's answer with every object of this kind in the request's version.
    ///
    /// # Errors
    /// The conversion failed (a watch reports it as an `ERROR` event instead).
    pub(crate) async fn response(
        self,
        response: Response<BoxBody>,
        watch: bool,
    ) -> Result<Response<BoxBody>, ApiError> {
        let (parts, body) = response.into_parts();
        if watch {
            let (tx, rx) = mpsc::channel(16);
            tokio::spawn(self.events(body, tx));
            return Ok(Response::from_parts(parts, ChannelBody::boxed(rx)));
        }
        let bytes = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
            return Ok(Response::from_parts(parts, crate::body::full(bytes)));
        };
        self.convert_answer(&mut value).await?;
        Ok(Response::from_parts(
            parts,
            crate::body::full(Bytes::from(value.to_string())),
        ))
    }

    /// Converts an object of this kind, or each item of a list of it, in place.
    async fn convert_answer(&self, value: &mut Value) -> Result<(), ApiError> {
        let def = &self.request_scope.def;
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == def.kind {
            *value = self
                .versions
                .convert_one(value.take(), &def.version)
                .await?;
        } else if kind == format!("{}List", def.kind) {
            let items = value["items"].take();
            let items = items.as_array().cloned().unwrap_or_default();
            value["items"] = Value::Array(self.versions.convert(items, &def.version).await?);
            value["apiVersion"] = Value::String(def.api_version());
        }
        Ok(())
    }

    /// Rewrites a watch stream line by line; a failed conversion ends it with an `ERROR` event.
    async fn events(self, mut body: BoxBody, tx: mpsc::Sender<Bytes>) {
        let mut pending: Vec<u8> = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            pending.extend_from_slice(&data);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let (out, failed) = self.event(&line).await;
                if tx.send(out).await.is_err() || failed {
                    return;
                }
            }
        }
    }

    /// One watch event line, converted; `true` when it is the `ERROR` of a failed conversion.
    async fn event(&self, line: &[u8]) -> (Bytes, bool) {
        let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
            return (Bytes::copy_from_slice(line), false);
        };
        match self.convert_answer(&mut event["object"]).await {
            Ok(()) => (Bytes::from(format!("{event}\n")), false),
            Err(error) => {
                let status: Value = serde_json::from_slice(&error.to_json()).unwrap_or_default();
                let event = json!({"type": "ERROR", "object": status});
                (Bytes::from(format!("{event}\n")), true)
            }
        }
    }
}

/// `scope` with its definition in `version` (everything else kept).
pub(crate) fn in_version(scope: &Scope, version: &str) -> Scope {
    let def = ResourceDefinition {
        version: version.to_owned(),
        ..(*scope.def).clone()
    };
    let mut moved = scope.clone();
    moved.target.def = Arc::new(def);
    moved
}
