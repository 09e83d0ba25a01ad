//! The crate's one error type: only seeding can fail; requests report errors the way a real server
//! does, through the client.

/// Why seeding a fake failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object cannot be seeded as given (not JSON, no apiVersion/kind/name, kind not served).
    #[error("cannot seed object: {reason}")]
    SeedInvalid {
        /// What is wrong with it.
        reason: String,
    },
    /// The server refused the object.
    #[error("seeding {object} failed with HTTP {code}: {message}")]
    SeedRejected {
        /// `Kind name` of the object.
        object: String,
        /// HTTP status of the refusal.
        code: u16,
        /// The server's `Status` message.
        message: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
