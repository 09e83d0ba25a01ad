//! Which version's schema validates a write of a custom resource: that of the version the
//! request names. apiextensions-apiserver serves each version with its own strategy, so an
//! object is decoded, defaulted, pruned and validated (OpenAPI, `x-kubernetes-validations`
//! with `oldSelf`, ratcheting) in the request's version, against the old object converted to
//! it, and only then converted to the storage version. A rule only one version has holds for
//! writes in that version alone, field paths and messages are spelled in its names, and an
//! invalid object answers 422 even when the conversion webhook could not convert it.
//!
//! # How
//! A write goes through two scopes, its [`Stages`]: the one it is admitted in — mutating
//! webhooks, the kind's strategy, validation, validating webhooks, as a dry run — and the one
//! it is stored in. For a custom resource written in another version R than its storage
//! version S (`crate::handlers::crd_conversion`), the first is R's: the object is converted to
//! S only once the validating webhooks let it through (`crate::handlers::update::admit_once`,
//! `crate::handlers::create::insert_via`), then pruned and defaulted in S and stored there
//! without being validated again ([`admit`]: the storage scope names R as its
//! `request_version`). Everything else is admitted and stored in one scope.
//!
//! A `/status` write is validated with the status strategy's rules
//! (`crate::kinds::custom_resource::Endpoint`).

use serde_json::{Map, Value};

use crate::kinds::conversion::CrdVersions;
use crate::kinds::custom_resource::{self, Endpoint};
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::objects::{ObjectKey, Stored};
use crate::storage::{State, Storage};

/// The object an update starts from, under `key`: as its admission stage sees it (in the
/// version the request names) and as it is stored — the same object unless the [`Stages`]
/// convert.
pub(crate) struct Old {
    pub(crate) seen: Stored,
    pub(crate) stored: Stored,
    pub(crate) key: ObjectKey,
}

/// The scopes a write goes through: admitted in one, stored in the other, converted between
/// them when they name different versions of a custom resource.
pub(crate) struct Stages<'a> {
    /// Where the write is admitted, prepared and validated: the request's version.
    pub(crate) admit: &'a Scope,
    /// Where it is stored: the storage version.
    pub(crate) store: &'a Scope,
    versions: Option<&'a CrdVersions>,
}

impl<'a> Stages<'a> {
    /// A write admitted and stored in `scope`.
    pub(crate) fn direct(scope: &'a Scope) -> Stages<'a> {
        Stages {
            admit: scope,
            store: scope,
            versions: None,
        }
    }

    /// A write admitted in `admit` and stored, converted by `versions`, in `store`.
    pub(crate) fn converting(
        admit: &'a Scope,
        store: &'a Scope,
        versions: &'a CrdVersions,
    ) -> Stages<'a> {
        Stages {
            admit,
            store,
            versions: Some(versions),
        }
    }

    /// Whether the object is converted between the stages.
    pub(crate) fn converts(&self) -> bool {
        self.versions.is_some()
    }

    /// `object`, admitted, as it is stored: converted to the storage version, pruned and
    /// defaulted there.
    ///
    /// # Errors
    /// The conversion's 500 (`crate::kinds::conversion`).
    pub(crate) async fn to_storage(
        &self,
        store: &Storage,
        object: Map<String, Value>,
    ) -> Result<Map<String, Value>, ApiError> {
        let Some(versions) = self.versions else {
            return Ok(object);
        };
        let mut converted = versions
            .convert_one(Value::Object(object), &versions.storage)
            .await?;
        custom_resource::settle(&store.lock(), &self.store.def, &mut converted);
        match converted {
            Value::Object(object) => Ok(object),
            _ => Err(ApiError::internal("the converted object is not an object")),
        }
    }
}

/// Prunes and defaults `object`, about to be stored through `target` (`old` on update), and
/// validates it — unless `target` is the storage scope of a write in another version, which
/// was validated in its admission scope ([`Stages`]).
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
    let endpoint = match target.subresource.as_deref() {
        Some("status") => Endpoint::Status,
        _ => Endpoint::Object,
    };
    custom_resource::validate(state, &target.def, name, (object, old), endpoint)
}
