//! kubegen-fieldpath: the field sets of server-side apply, written once for the two sides that
//! need them. Mirrors structured-merge-diff's `fieldpath` package (`set.go`, `serialize.go`) and
//! the extraction half of its `typed` package (`ExtractItems`), which client-go's
//! `Extract<Kind>` functions call.
//!
//! # Why a crate of its own
//! Field sets are the vocabulary of server-side apply, below its engine (`kubegen-apply`: the
//! test server's merge and `managedFields` bookkeeping, and the extraction behind
//! `kubegen_client::extract`), which hands them to its callers: a leaf crate (serde_json only)
//! that anything reading `fieldsV1` can depend on without the engine.
//!
//! | structured-merge-diff          | here                     | file         |
//! |--------------------------------|--------------------------|--------------|
//! | `fieldpath.Set`, `FromJSON`, `ToJSON` | [`FieldSet`]      | `set.rs`     |
//! | `typed.TypedValue.ExtractItems` | [`FieldSet::extract`]   | `extract.rs` |

mod extract;
mod set;

pub use set::{FieldSet, display, field};

/// Everything that can go wrong reading field sets.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// A `fieldsV1` value that is not the encoding (a non-object, an unknown element kind).
    #[error("{0}")]
    InvalidFieldsV1(String),
}
