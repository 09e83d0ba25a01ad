//! The crate's one error enum, below the modules that return it.

/// Everything that can go wrong reading field sets.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// A `fieldsV1` value that is not the encoding (a non-object, an unknown element kind).
    #[error("{0}")]
    InvalidFieldsV1(String),
}
