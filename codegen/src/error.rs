//! The crate's one error enum, below every step that fails with it.

use std::path::PathBuf;

use crate::diag::Diagnostic;

/// Everything that can stop a generation run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `kubegen.toml` could not be read.
    #[error("cannot read config {path}: {source}")]
    ReadConfig {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `kubegen.toml` is not valid.
    #[error("invalid config {path}: {message}")]
    BadConfig {
        /// The config file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The input has problems; nothing was written.
    #[error("{} problem(s) in the API definitions:\n{}", .0.len(), render(.0))]
    Invalid(Vec<Diagnostic>),
    /// The boilerplate file could not be read.
    #[error("cannot read boilerplate {path}: {source}")]
    ReadBoilerplate {
        /// The boilerplate file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A generated file could not be written or a stale one deleted.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `kubegen init` was pointed at a directory that has entries; nothing was written.
    #[error(
        "cannot init {path}: the directory is not empty (kubegen init writes a new repository \
         into an empty or missing directory)"
    )]
    InitNotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// A `kubegen init` option is invalid; nothing was written.
    #[error("invalid --{option} `{value}`: {message}")]
    InitOption {
        /// The option, without `--`.
        option: &'static str,
        /// What was given.
        value: String,
        /// What is expected.
        message: String,
    },
    /// `kubegen import` found problems in the CRDs; nothing was written.
    #[error("{} problem(s) in the CRDs:\n{}", .0.len(), .0.join("\n"))]
    Import(Vec<String>),
    /// A bug in kubegen: generated code that does not parse.
    #[error("internal error (please report): {0}")]
    Internal(String),
}

impl Error {
    /// The input problems, when the run failed because of them.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Invalid(diagnostics) => diagnostics,
            _ => &[],
        }
    }
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
