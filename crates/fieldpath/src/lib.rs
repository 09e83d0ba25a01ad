//! kubegen-fieldpath: the field sets of server-side apply, written once for the two sides that
//! need them. Mirrors structured-merge-diff's `fieldpath` package (`set.go`, `serialize.go`) and
//! the extraction half of its `typed` package (`ExtractItems`), which client-go's
//! `Extract<Kind>` functions call.
//!
//! # Why a crate of its own
//! The server side (the test server's apply merge and its `managedFields` bookkeeping) and the
//! client side (`kubegen_client::extract`, the apply configuration a field manager owns) read the
//! same `fieldsV1` encoding. Both depend on this leaf crate (serde_json only), so neither depends
//! on the other for it.
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
