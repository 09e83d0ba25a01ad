//! The crate's one error enum, below the modules that return it.

/// What can be wrong with a CRD's schema for this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `openAPIV3Schema` of `version` is not a JSON object.
    #[error("the openAPIV3Schema of version {version} is not an object")]
    SchemaNotAnObject {
        /// The CRD version.
        version: String,
    },
    /// A CEL expression (e.g. a webhook's match condition) does not parse.
    #[error("compilation failed: {reason}")]
    CompileFailed {
        /// The parser's message.
        reason: String,
    },
}
