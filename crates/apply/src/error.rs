//! [`Error`]: everything server-side apply refuses, each variant carrying what a server needs to
//! answer with the real apiserver's `Status` (its code, reason, message and causes), since the
//! wording is part of the protocol: kubectl and client-go match on it.

use kubegen_fieldpath::display;

/// Everything that can go wrong applying, tracking or extracting fields.
///
/// A server answers each with the `Status` named on the variant (the test server's
/// `apply.rs` adapter does); the messages are v1.36's.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// `metadata.managedFields` that cannot be decoded: 400 BadRequest with this message
    /// (`metadata.managedFields[0].operation: unknown value "Patch"`).
    #[error("{0}")]
    InvalidManagedFields(String),
    /// An apply configuration that sets `metadata.managedFields`: 400 BadRequest.
    #[error("metadata.managedFields must be nil")]
    ManagedFieldsInConfiguration,
    /// An apply configuration (or the object it merges into) the schema cannot type: 500 with
    /// this message and no reason. `object` names it as `namespace/name; group/version, Kind=kind`
    /// (`Config::new`); `reason` is [`Error::Untyped`]'s.
    #[error("failed to create typed patch object ({object}): {reason}")]
    UntypedConfiguration {
        /// The object, as the request named it.
        object: String,
        /// Where and why typing failed (`.spec.items: duplicate entries for key [name="a"]`).
        reason: String,
    },
    /// A value the schema cannot type, with the path where it fails (structured-merge-diff's
    /// wording: `.items: element 0: associative list with keys has an element that omits all key
    /// fields ["name"] ...`): 500.
    #[error("{0}")]
    Untyped(String),
    /// An apply that changes fields other managers own, without `force`: 409 Conflict with one
    /// `FieldManagerConflict` cause per conflict (its message `conflict with <manager>`, its field
    /// the path), worded as apiserver `NewConflictError`.
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
    /// An apply without `fieldManager`: 422 Invalid `PatchOptions.meta.k8s.io ""` with a
    /// `FieldValueRequired` cause on `fieldManager`.
    #[error("fieldManager: Required value: is required for apply patch")]
    FieldManagerRequired,
    /// `force` outside an apply: 422 Invalid `PatchOptions.meta.k8s.io ""` with a
    /// `FieldValueForbidden` cause on `force`.
    #[error("force: Forbidden: may not be specified for non-apply patch")]
    ForceOutsideApply,
}

impl Error {
    /// Whether this is an apply conflict (409).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflicts(_))
    }
}

/// One field an apply would take from another manager. Sorted by manager, then path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Conflict {
    /// The manager as conflicts name it (apiserver `printManager`): `"m"`, `"m" with subresource
    /// "status"`, and for an `Update` manager ` using <apiVersion>` after that.
    pub manager: String,
    /// The field, dotted (`.data.a`, `.spec.containers[name="c"].image`).
    pub field: String,
}

impl Conflict {
    pub(crate) fn new(manager: String, path: &[String]) -> Conflict {
        Conflict {
            manager,
            field: display(path),
        }
    }
}

/// `Apply failed with 1 conflict: conflict with "m" using v1: .data.a`; several are grouped by
/// manager: `Apply failed with 3 conflicts: conflicts with "m" using v1:\n- .a\n- .b`.
fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [Conflict { manager, field }] = conflicts {
        return format!("Apply failed with 1 conflict: conflict with {manager}: {field}");
    }
    let mut lines = Vec::new();
    for (i, conflict) in conflicts.iter().enumerate() {
        if i == 0 || conflicts[i - 1].manager != conflict.manager {
            lines.push(format!("conflicts with {}:", conflict.manager));
        }
        lines.push(format!("- {}", conflict.field));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}
