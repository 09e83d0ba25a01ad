//! The generator end to end: golden fixtures, the bad-input corpus, use from another project,
//! `kubegen init`.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod bad;
mod golden;
mod import;
mod init;
mod project;
