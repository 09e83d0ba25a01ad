//! [`extract`]: the apply configuration holding exactly the fields one field manager owns, read
//! from `metadata.managedFields`, typed. Mirrors client-go's `applyconfigurations/<group>/<version>`
//! `Extract<Kind>` / `Extract<Kind>Status`; the extraction itself (`managedfields.ExtractInto`)
//! is `kubegen_apply::extract`, the same engine the test server applies with.
//!
//! # Why
//! A controller that applies part of an object (say `spec.replicas`) must send, on every apply,
//! *all* the fields it wants to keep owning: a field it leaves out is released (and removed when
//! nobody else owns it). `extract` gives it back what it applied last time, to modify and apply
//! again, instead of a full object whose other fields would be taken over.
//!
//! # Guarantees
//! - Only the entry of `field_manager` with operation `Apply` (and the given subresource) counts,
//!   as in client-go: fields the manager wrote with `Update` are not part of its apply intent.
//! - `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` are always set, so the result
//!   can be applied as is; applying it again with the same manager changes nothing.
//!
//! # Differences from client-go
//! client-go's `ExtractInto` returns an empty configuration for an object without
//! `managedFields`. Applied back, that configuration releases every field the manager owned. An
//! informer that strips managed fields (`kubegen_cache::strip_managed_fields`, a common memory
//! saving) hands out exactly such objects, so here it is [`Error::ManagedFieldsMissing`] instead.
//! An object whose `managedFields` is present but lacks the manager still gets the identity-only
//! configuration, as in client-go: that manager owns nothing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Error, Result};

/// The fields of `object` that `field_manager` owns through apply (on `subresource`, e.g.
/// `Some("status")`, or the main resource with `None`), as apply configuration `A`. The generated
/// `extract_<kind>` functions call it with their kind's configuration type.
///
/// # Errors
/// [`Error::ManagedFieldsMissing`] when `object` has no `managedFields` at all (stripped);
/// [`Error::ExtractFailed`] when the manager's `fieldsV1` is malformed or the owned fields do not
/// fit `A`.
pub fn extract<K, A>(object: &K, field_manager: &str, subresource: Option<&str>) -> Result<A>
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Serialize,
    A: DeserializeOwned,
{
    let meta = object.metadata();
    let what = format!(
        "{} {} {}/{}",
        K::API_VERSION,
        K::KIND,
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    );
    let failed = |message: String| Error::ExtractFailed {
        what: what.clone(),
        manager: field_manager.to_owned(),
        message,
    };
    if meta.managed_fields.is_none() {
        return Err(Error::ManagedFieldsMissing {
            what,
            manager: field_manager.to_owned(),
        });
    }
    let whole = serde_json::to_value(object).map_err(|e| failed(e.to_string()))?;
    let config = kubegen_apply::extract(&whole, field_manager, subresource)
        .map_err(|e| failed(e.to_string()))?;
    serde_json::from_value(config).map_err(|e| failed(e.to_string()))
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
