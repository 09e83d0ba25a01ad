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
    /// The audit policy ([`crate::AuditPolicy`], `--audit-policy-file`) cannot be read or is
    /// malformed; the reason names the field, as kube-apiserver's validation does.
    #[error("audit policy {origin}: {reason}")]
    AuditPolicyInvalid {
        /// The policy file, or `<inline>` for a policy given as text.
        origin: String,
        /// What is wrong, e.g. `rules[0].level: Required value`.
        reason: String,
    },
    /// The audit log file ([`crate::ServerOptions::audit_log_path`]) cannot be opened.
    #[error("audit log {}", path.display())]
    AuditLogFailed {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}
