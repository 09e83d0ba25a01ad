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
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `extract`
//! - `set`
//! - `error`

mod error;
mod extract;
mod set;

pub use error::Error;
pub use set::{FieldSet, display, field};
