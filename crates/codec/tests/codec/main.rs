//! The codec against bodies that real Kubernetes components wrote (`tests/fixtures/README.md`).
//!
//! One test binary per crate: each binary links the whole dependency graph.
#![allow(clippy::unwrap_used)]

mod real_bodies;
mod streams;
mod typed_bodies;
