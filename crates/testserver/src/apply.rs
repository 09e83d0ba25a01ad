//! Server-side apply and field ownership in the request path: `PATCH` with
//! `application/apply-patch+yaml`, and `metadata.managedFields` kept by every write. The engine
//! (merge by schema, ownership, conflicts: structured-merge-diff and apiserver `fieldmanager`) is
//! the `kubegen-apply` crate; this module is what only a server has: the [`Writer`] read from the
//! request, the configuration decoded from the body and checked against the URL, the kind's
//! schema looked up among the served OpenAPI documents, `now`, and each [`Error`] answered with
//! the real server's `Status`.
//!
//! - Writes name their manager by `?fieldManager=`, else by the `User-Agent` up to its first `/`
//!   (`curl/8.5` -> `curl`); an apply requires `fieldManager` (422 otherwise).
//! - An apply to a missing object creates it (201).
//! - A custom resource served in several versions is converted between the engine's steps by
//!   `crate::handlers::crd_write` and `crate::handlers::crd_prune`, as structured-merge-diff
//!   compares the object converted to each manager's version.

use http::HeaderMap;
use http::header::USER_AGENT;
use kubegen_apply::{Config, Endpoint, Error, Schema, Tracker, Writer};
use serde_json::Value;

use crate::object::metadata_mut;
use crate::openapi::{GroupSchemas, crd::installed_in, kind_root};
use crate::registry::ResourceDefinition;
use crate::request::query::Query;
use crate::request::route::normalize_namespace;
use crate::request::scope::Scope;
use crate::status::{ApiError, Cause};
use crate::storage::State;

/// Whether a write still has its managedFields to record, or an apply has set them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fields {
    /// Record the write as an `Update` manager.
    Track,
    /// A write through the `scale` subresource: an `Update` manager with `subresource: scale`
    /// (what v1.36 records for `kubectl scale`: `f:spec.f:replicas`).
    TrackScale,
    /// Set by [`Tracker::apply`].
    Applied,
}

/// Who writes, from the request: `?fieldManager=`, `?force=true` and the `User-Agent` up to its
/// first `/` (apiserver `prefixFromUserAgent`).
pub(crate) fn writer(headers: &HeaderMap, query: &Query) -> Writer {
    let agent = headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    Writer {
        field_manager: query.get("fieldManager").map(String::from),
        agent: agent.split('/').next().unwrap_or("").to_string(),
        force: query.flag("force"),
    }
}

/// The schemas of the kind a request writes, loaded under the state lock.
pub(crate) struct KindSchemas {
    schemas: Option<GroupSchemas>,
}

impl KindSchemas {
    /// # Errors
    /// 500 when the shipped documents are unreadable.
    pub(crate) fn load(state: &State, def: &ResourceDefinition) -> Result<KindSchemas, ApiError> {
        let schemas = GroupSchemas::load((&def.group, &def.version), || installed_in(state))?;
        Ok(KindSchemas { schemas })
    }

    /// The tracker of `target`'s write, at the current time.
    pub(crate) fn tracker<'a>(&'a self, target: &'a Scope) -> Tracker<'a> {
        let def = &target.def;
        let schema = match &self.schemas {
            None => Schema::deduced(),
            Some(schemas) => {
                let components = schemas.get();
                let root = kind_root(components, (&def.group, &def.version, &def.kind));
                let schema = Schema::openapi(components, root);
                match schemas {
                    GroupSchemas::Builtin(_) => schema.built_in(),
                    GroupSchemas::Custom(_) => schema,
                }
            }
        };
        let endpoint = Endpoint {
            api_version: def.api_version(),
            subresource: target.subresource.clone().unwrap_or_default(),
            status_subresource: def.status_subresource,
        };
        Tracker::new(schema, endpoint, &target.writer, &crate::object::now())
    }
}

/// Records a write in `next`'s managedFields as `fields` says: as an `Update` (through `scale`
/// for [`Fields::TrackScale`]), or not at all for an apply, whose merge recorded it already.
///
/// # Errors
/// 400 for malformed managedFields; 500 when the kind's schemas cannot be loaded.
pub(crate) fn record_write(
    state: &State,
    target: &Scope,
    fields: Fields,
    old: Option<&Value>,
    next: &mut Value,
) -> Result<(), ApiError> {
    if fields == Fields::Applied {
        return Ok(());
    }
    let schemas = KindSchemas::load(state, &target.def)?;
    let mut tracker = schemas.tracker(target);
    if fields == Fields::TrackScale {
        tracker = tracker.through("scale");
    }
    Ok(tracker.record_update(old, next, &[])?)
}

/// Reads an apply patch (YAML, or JSON, which is YAML) as the configuration of `target`'s object.
///
/// # Errors
/// 400 for YAML that is not an object, another kind or version (`invalid object type:
/// /v1, Kind=Secret`), another name or namespace than the URL's (checked on v1.36).
pub(crate) fn parse_config(body: &[u8], target: &Scope) -> Result<Config, ApiError> {
    let value: Value = serde_yaml::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    let Value::Object(mut config) = value else {
        return Err(ApiError::bad_request(
            "error decoding YAML: the configuration is not an object",
        ));
    };
    let text = |map: &serde_json::Map<String, Value>, key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let (api_version, kind) = (text(&config, "apiVersion"), text(&config, "kind"));
    let gvk = match api_version.contains('/') {
        true => format!("{api_version}, Kind={kind}"),
        false => format!("/{api_version}, Kind={kind}"),
    };
    let def = &target.def;
    if api_version != def.api_version() || kind != def.kind {
        return Err(ApiError::bad_request(format!("invalid object type: {gvk}")));
    }
    let meta = metadata_mut(&mut config)?;
    let (namespace, given) = (text(meta, "namespace"), text(meta, "name"));
    let name = target.name.as_deref().unwrap_or_default();
    // A configuration without a name applies to the object the URL names, if it exists
    // ([`name_to_create`] refuses it otherwise).
    if !given.is_empty() && given != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    normalize_namespace(meta, target)?;
    let ident = format!("{namespace}/{given}; {gvk}");
    Ok(Config::new(Value::Object(config), ident))
}

/// Refuses an apply that would create an object from a configuration without a name, as v1.36
/// does (its name is "undeterminable" although the URL has one).
pub(crate) fn name_to_create(config: &Config, target: &Scope) -> Result<(), ApiError> {
    let named = config.value()["metadata"]["name"]
        .as_str()
        .is_some_and(|name| !name.is_empty());
    if named {
        return Ok(());
    }
    let name = target.name.as_deref().unwrap_or_default();
    Err(ApiError::bad_request(format!(
        "the name of the object ({name} based on URL) was undeterminable: name must be provided"
    )))
}

/// The `Status` the real server answers each refusal of its field manager with.
impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        let message = error.to_string();
        let options = |reason: &str, message: &str, field: &str| {
            let cause = Cause {
                reason: reason.into(),
                message: message.into(),
                field: field.into(),
            };
            ApiError::invalid("meta.k8s.io", "PatchOptions", "", vec![cause])
        };
        match error {
            Error::InvalidManagedFields(_) | Error::ManagedFieldsInConfiguration => {
                ApiError::bad_request(message)
            }
            Error::UntypedConfiguration { .. } | Error::Untyped(_) => {
                ApiError::unknown(500, message)
            }
            Error::Conflicts(conflicts) => {
                let causes = conflicts
                    .into_iter()
                    .map(|c| Cause {
                        reason: "FieldManagerConflict".into(),
                        message: format!("conflict with {}", c.manager),
                        field: c.field,
                    })
                    .collect();
                ApiError::apply_conflict(message, causes)
            }
            Error::FieldManagerRequired => options(
                "FieldValueRequired",
                "Required value: is required for apply patch",
                "fieldManager",
            ),
            Error::ForceOutsideApply => options(
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
                "force",
            ),
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
