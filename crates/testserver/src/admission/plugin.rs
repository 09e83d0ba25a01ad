//! What an admission plugin is: the [`Plugin`] trait and the [`Attributes`] of the write it
//! judges (apiserver `pkg/admission/interfaces.go`).

use serde_json::{Map, Value};

use crate::request::scope::Scope;
use crate::status::ApiError;
use crate::storage::State;

/// What a write does to the object (admission's `Operation`; a server-side apply that creates
/// is a `Create`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
    Delete,
}

/// One write as admission sees it (admission `Attributes`).
pub(crate) struct Attributes<'a> {
    pub(crate) operation: Operation,
    /// The request: resource, namespace, subresource, user, dry run.
    pub(crate) scope: &'a Scope,
    /// The object's name (empty on a create with `generateName`, before a name is chosen).
    pub(crate) name: &'a str,
    /// The stored objects, for plugins that look things up (as the real ones use informers).
    pub(crate) state: &'a State,
    /// The stored object an update or delete changes (admission's `GetOldObject`).
    pub(crate) old: Option<&'a Value>,
}

/// An admission plugin. Both hooks default to admitting.
pub(crate) trait Plugin: Sync {
    /// The mutating phase: may change the incoming object (None on delete).
    ///
    /// # Errors
    /// The `Status` that rejects the write.
    fn admit(
        &self,
        _attributes: &Attributes<'_>,
        _object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The validating phase: sees the object as it will be stored (None on delete).
    ///
    /// # Errors
    /// The `Status` that rejects the write.
    fn validate(
        &self,
        _attributes: &Attributes<'_>,
        _object: Option<&Value>,
    ) -> Result<(), ApiError> {
        Ok(())
    }
}

impl<'a> Attributes<'a> {
    pub(crate) fn new(
        operation: Operation,
        scope: &'a Scope,
        name: &'a str,
        state: &'a State,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            scope,
            name,
            state,
            old: None,
        }
    }

    /// The same write, naming the stored object it changes.
    pub(crate) fn with_old(self, old: &'a Value) -> Attributes<'a> {
        Attributes {
            old: Some(old),
            ..self
        }
    }
}
