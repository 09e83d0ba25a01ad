//! The crate's one error type.

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Binding the listening socket failed.
    #[error("binding 127.0.0.1:{port} failed")]
    BindFailed {
        /// The requested port.
        port: u16,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Generating the CA or server certificate, or configuring rustls, failed.
    #[error("setting up TLS failed: {0}")]
    TlsSetupFailed(String),
    /// Reading or writing the data directory ([`crate::ServerOptions::data_dir`]) failed.
    #[error("data directory: {}: {reason}", path.display())]
    DataDirFailed {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
}
