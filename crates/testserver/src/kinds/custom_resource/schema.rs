//! What a custom resource's CRD schema does to its writes and reads: pruning, defaulting and
//! validation through `kubegen-apiextensions` (apiextensions-apiserver's
//! `customresource_handler.go` decoding with `schemaCoercingConverter` / `unstructuredDefaulter`,
//! and `pkg/registry/customresource/strategy.go`'s `Validate` / `ValidateUpdate`).
//!
//! - [`decode`]: a request body is pruned and defaulted before admission, so mutating webhooks
//!   see what the real server's decoder gives them;
//! - [`settle`] and [`validate`]: every write of a custom resource (create, update, every patch
//!   type and server-side apply, `/status`, `/scale`, dry runs) prunes and defaults the object
//!   the write would store, then validates it against the stored one (transition rules,
//!   ratcheting) with the rules of the endpoint written (a `/status` write checks the status
//!   alone against the schema); problems are one 422 `Invalid` with a cause each. A write that
//!   names another version than the storage version is validated in the version it names
//!   ([`admit`], `crate::kinds::stages`).
//! - [`default_stored`]: after a CRD is written, objects stored before a default was added get it,
//!   as the real server fills defaults in whenever it reads from etcd (without a new
//!   resourceVersion or watch event).
//!
//! The compiled schema of a CRD version is cached by the CRD's uid and resourceVersion.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use kubegen_apiextensions::Schema;
use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::numbers;
use crate::registry::{ResourceDefinition, ResourceKey};
use crate::request::scope::Scope;
use crate::status::{ApiError, cause};
use crate::storage::State;

/// Compiled schemas by (CRD uid, CRD resourceVersion, version).
type Cache = HashMap<(String, u64, String), Option<Arc<Schema>>>;

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

/// At most this many compiled schemas are kept (CRDs of all servers of the process).
const CACHE_SIZE: usize = 512;

fn crd_key() -> ResourceKey {
    ResourceKey::new("apiextensions.k8s.io", "v1", "customresourcedefinitions")
}

/// The schema of `def` when a stored CRD defines it.
fn schema_of(state: &State, def: &ResourceDefinition) -> Option<Arc<Schema>> {
    let name = (String::new(), format!("{}.{}", def.plural, def.group));
    let crd = state.store.get(&crd_key(), &name)?;
    let uid = crd.value.pointer("/metadata/uid").and_then(Value::as_str)?;
    let key = (uid.to_string(), crd.rv, def.version.clone());
    let mut cache = CACHE.lock();
    if let Some(found) = cache.get(&key) {
        return found.clone();
    }
    let schema = Schema::from_crd(&crd.value, &def.version)
        .ok()
        .flatten()
        .map(Arc::new);
    if cache.len() >= CACHE_SIZE {
        cache.clear();
    }
    cache.insert(key, schema.clone());
    schema
}

/// Prunes and defaults an incoming custom resource (the real server's decoding of a body).
pub(crate) fn decode(state: &State, def: &ResourceDefinition, object: &mut Map<String, Value>) {
    object.values_mut().for_each(numbers::as_go_keeps);
    let Some(schema) = schema_of(state, def) else {
        return;
    };
    let mut value = Value::Object(std::mem::take(object));
    schema.prune(&mut value);
    schema.default(&mut value);
    if let Value::Object(map) = value {
        *object = map;
    }
}

/// Which strategy validates a write of a custom resource: the resource's own, or that of its
/// `/status` subresource (apiextensions `customResourceStrategy` / `statusStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Object,
    Status,
}

/// Prunes and defaults `object`, a custom resource about to be stored, as the real server's
/// codec does. Nothing happens for kinds no CRD schema covers.
pub(crate) fn settle(state: &State, def: &ResourceDefinition, object: &mut Value) {
    numbers::as_go_keeps(object);
    if let Some(schema) = schema_of(state, def) {
        schema.prune(object);
        schema.default(object);
    }
}

/// Validates `object`, a custom resource about to be stored through `endpoint` (`old`, the
/// stored version, on update: transition rules and ratcheting). Nothing happens for kinds no
/// CRD schema covers.
///
/// # Errors
/// 422 Invalid with one cause per problem, worded as v1.36.
fn validate(
    state: &State,
    def: &ResourceDefinition,
    name: &str,
    (object, old): (&Value, Option<&Value>),
    endpoint: Endpoint,
) -> Result<(), ApiError> {
    let Some(schema) = schema_of(state, def) else {
        return Ok(());
    };
    let errors = match (endpoint, old) {
        (Endpoint::Status, Some(old)) => schema.validate_status(object, old),
        _ => schema.validate(object, old),
    };
    if errors.is_empty() {
        return Ok(());
    }
    let causes = errors
        .iter()
        .map(|e| cause(e.kind.reason(), &e.field, e.message()))
        .collect();
    Err(ApiError::invalid(&def.group, &def.kind, name, causes))
}

/// Prunes and defaults `object`, about to be stored through `target` (`old` on update), and
/// validates it — unless `target` is the storage scope of a write in another version, which
/// was validated in its admission scope (`crate::kinds::stages`).
///
/// # Errors
/// 422 Invalid, as [`validate`].
pub(crate) fn admit(
    state: &State,
    target: &Scope,
    name: &str,
    object: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    settle(state, &target.def, object);
    if target.request_version.is_some() {
        return Ok(());
    }
    let endpoint = match target.subresource.as_deref() {
        Some("status") => Endpoint::Status,
        _ => Endpoint::Object,
    };
    validate(state, &target.def, name, (object, old), endpoint)
}

/// Fills the defaults of `crd`'s schemas into the objects stored under it.
pub(crate) fn default_stored(state: &mut State, crd: &Value) {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
    for version in versions
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
    {
        let Ok(Some(schema)) = Schema::from_crd(crd, version) else {
            continue;
        };
        let key = ResourceKey::new(group, version, plural);
        let changed: Vec<_> = state
            .store
            .collection(&key)
            .into_iter()
            .flat_map(|c| c.iter())
            .filter_map(|(name, stored)| {
                let mut value = (*stored.value).clone();
                schema.default(&mut value);
                (value != *stored.value).then(|| (name.clone(), value, stored.rv))
            })
            .collect();
        for (name, value, rv) in changed {
            state.store.restore(key.clone(), name, value, rv);
        }
    }
}
