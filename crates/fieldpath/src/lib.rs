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
