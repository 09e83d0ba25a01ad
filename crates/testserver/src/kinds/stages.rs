//! The scopes a write goes through: the one it is admitted in — mutating webhooks, the kind's
//! strategy and validation, validating webhooks, as a dry run — and the one it is stored in.
//! apiserver handlers decode a body into the version the request names and the storage encodes
//! it into the storage version; for a kind served in one version both are the same scope.
//!
//! # Why two
//! A custom resource written in another version R than its storage version S
//! (`crate::kinds::custom_resource::edge`) is validated with R's schema — rules only R has hold
//! for writes in R, field paths and messages are spelled in R's names, an invalid object answers
//! 422 even when the conversion webhook could not convert it — and only then converted to S
//! ([`Stages::to_storage`]), pruned and defaulted there and stored without being validated again
//! (the storage scope names R as its `request_version`, which the strategy's `validate` reads).
//! The generic create and update (`crate::handlers::{create, update}`) take a `Stages` and never
//! ask which kind they write.

use serde_json::{Map, Value};

use crate::kinds::custom_resource::edge::Edge;
use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::Storage;

/// The scopes a write goes through: admitted in one, stored in the other, converted between
/// them by the kind's [`Edge`] when they name different versions.
pub(crate) struct Stages<'a> {
    /// Where the write is admitted, prepared and validated: the request's version.
    pub(crate) admit: &'a Scope,
    /// Where it is stored: the storage version.
    pub(crate) store: &'a Scope,
    edge: Option<&'a Edge>,
}

impl<'a> Stages<'a> {
    /// A write admitted and stored in `scope`.
    pub(crate) fn direct(scope: &'a Scope) -> Stages<'a> {
        Stages {
            admit: scope,
            store: scope,
            edge: None,
        }
    }

    /// A write admitted in the request's version of `edge` and stored, converted, in its storage
    /// version.
    pub(crate) fn converting(edge: &'a Edge) -> Stages<'a> {
        Stages {
            admit: &edge.request_scope,
            store: &edge.storage_scope,
            edge: Some(edge),
        }
    }

    /// Whether the object is converted between the stages.
    pub(crate) fn converts(&self) -> bool {
        self.edge.is_some()
    }

    /// `object`, admitted, as it is stored: converted to the storage version, pruned and
    /// defaulted there.
    ///
    /// # Errors
    /// The conversion's 500 (`crate::kinds::custom_resource::conversion`).
    pub(crate) async fn to_storage(
        &self,
        store: &Storage,
        object: Map<String, Value>,
    ) -> Result<Map<String, Value>, ApiError> {
        match self.edge {
            Some(edge) => edge.to_storage(store, object).await,
            None => Ok(object),
        }
    }
}
