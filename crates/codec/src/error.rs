//! The crate's one error type.

/// Why a body could not be read or written in a Kubernetes wire format. Each variant names the step
/// that failed and the message or field it was at, so a server can answer a clear 400 and a client
/// can log what the peer sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The body does not start with the 4-byte protobuf magic `k8s\0`.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    MissingMagic,
    /// The `runtime.Unknown` envelope after the magic is malformed.
    #[error("the runtime.Unknown envelope is malformed: {0}")]
    EnvelopeDecodeFailed(String),
    /// The envelope names a compressed body (`contentEncoding`), which no Kubernetes release writes.
    #[error("content encoding {0:?} of the protobuf envelope is not supported")]
    UnsupportedEncoding(String),
    /// No built-in kind has this `apiVersion` and `kind` (custom resources have no protobuf form).
    #[error("no protobuf schema for kind {kind:?} in {api_version:?}")]
    UnknownKind {
        /// `apiVersion` as given.
        api_version: String,
        /// `kind` as given.
        kind: String,
    },
    /// The message bytes of a kind are not valid protobuf for its schema.
    #[error("{message}: malformed protobuf: {reason}")]
    MessageDecodeFailed {
        /// Full protobuf name of the message, e.g. `k8s.io.api.apps.v1.Deployment`.
        message: String,
        /// What the protobuf decoder reported.
        reason: String,
    },
    /// A field holds a value that has no JSON form (a bad timestamp, an unknown IntOrString type,
    /// embedded JSON that does not parse, a non-finite float) or, when encoding, a JSON value that
    /// does not fit the field.
    #[error("{path}: {reason}")]
    InvalidField {
        /// JSON path of the field, e.g. `spec.template.metadata.creationTimestamp`.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl CodecError {
    /// Whether the kind has no protobuf form here (so a server answers 415, not 400).
    pub fn is_unknown_kind(&self) -> bool {
        matches!(self, CodecError::UnknownKind { .. })
    }

    pub(crate) fn field(path: &str, reason: impl Into<String>) -> CodecError {
        CodecError::InvalidField {
            path: path.to_string(),
            reason: reason.into(),
        }
    }

    /// Puts `segment` in front of the JSON path of a field error, as it propagates out of a field.
    pub(crate) fn within(self, segment: &str) -> CodecError {
        match self {
            CodecError::InvalidField { path, reason } => {
                let path = if path.is_empty() {
                    segment.to_string()
                } else if path.starts_with('[') {
                    format!("{segment}{path}")
                } else {
                    format!("{segment}.{path}")
                };
                CodecError::InvalidField { path, reason }
            }
            other => other,
        }
    }
}

/// Result of the codec's operations.
pub type Result<T, E = CodecError> = std::result::Result<T, E>;
