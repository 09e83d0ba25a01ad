//! The committed generated crates, exercised as a user would.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod apply;
mod conversion;
mod conversion_patches;
mod conversion_validation;
mod crds;
mod fake_clientset;
mod informers;
mod markers;
mod serde_shape;
