//! Which version's schema validates a write of a custom resource: that of the version the
//! request names. apiextensions-apiserver serves each version with its own strategy, so an
//! object is decoded, defaulted, pruned and validated (OpenAPI, `x-kubernetes-validations`
//! with `oldSelf`, ratcheting) in the request's version, the old object converted to it, and
//! only then converted to the storage version. A rule only one version has holds for writes
//! in that version alone, and field paths and messages are spelled in its names.
//!
//! # How
//! The handlers run in the storage version (`crate::handlers::crd_conversion`). Every write
//! prunes and defaults in the storage version ([`admit`]); a write in the storage version
//! validates there too, under the storage lock. A write in another version R
//! (`Scope::request_version`) is validated by [`in_request_version`] instead, outside the lock
//! once its admission webhooks have mutated it: the object it would store (a dry run of the
//! write) and the stored one are converted to R in one `ConversionReview`, pruned and defaulted
//! there, and validated with R's schema — a `/status` write with the status strategy's rules
//! (`crate::kinds::custom_resource::Endpoint`). The validating admission webhooks come after,
//! as on the real server.
//!
//! # Differences from the real server
//! - The object validated in R is the one about to be stored converted back to R, so a write
//!   in R costs one `ConversionReview` more than on v1.36 (two objects, on update);
//!   conversions that round-trip give the real server's object.
//! - The body is converted to the storage version before it is validated: a write in R that
//!   is invalid *and* refused by the conversion webhook answers the conversion's 500 where
//!   v1.36 answers the 422.

use serde_json::Value;

use crate::kinds::conversion::CrdVersions;
use crate::kinds::custom_resource::{self, Endpoint};
use crate::registry::ResourceDefinition;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::{State, Storage};

/// The strategy that validates a write through `target`.
fn endpoint(target: &Scope) -> Endpoint {
    match target.subresource.as_deref() {
        Some("status") => Endpoint::Status,
        _ => Endpoint::Object,
    }
}

/// Prunes and defaults `object`, about to be stored through `target` (`old` on update), and
/// validates it — unless the request named another version, whose validation
/// [`in_request_version`] makes.
///
/// # Errors
/// 422 Invalid, as `crate::kinds::custom_resource::validate`.
pub(crate) fn admit(
    state: &State,
    target: &Scope,
    name: &str,
    object: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    custom_resource::settle(state, &target.def, object);
    if target.request_version.is_some() {
        return Ok(());
    }
    custom_resource::validate(state, &target.def, name, (object, old), endpoint(target))
}

/// Validates `object`, what a write through `target` would store (`old`, the stored object, on
/// update), in the version the request named, when it named another than `target`'s.
///
/// # Errors
/// 422 Invalid; a failed conversion's 500 (`crate::kinds::conversion`).
pub(crate) async fn in_request_version(
    store: &Storage,
    target: &Scope,
    name: &str,
    (object, old): (&Value, Option<&Value>),
) -> Result<(), ApiError> {
    let Some(version) = target.request_version.as_deref() else {
        return Ok(());
    };
    let Some(versions) = CrdVersions::of(&store.lock(), &target.def) else {
        return Ok(());
    };
    let objects = std::iter::once(object).chain(old).cloned().collect();
    let mut converted = versions.convert(objects, version).await?.into_iter();
    let (Some(mut object), mut old) = (converted.next(), converted.next()) else {
        return Err(ApiError::internal("the conversion returned no object"));
    };
    let def = ResourceDefinition {
        version: version.to_owned(),
        ..(*target.def).clone()
    };
    let state = store.lock();
    custom_resource::settle(&state, &def, &mut object);
    if let Some(old) = &mut old {
        custom_resource::settle(&state, &def, old);
    }
    let objects = (&object, old.as_ref());
    custom_resource::validate(&state, &def, name, objects, endpoint(target))
}
