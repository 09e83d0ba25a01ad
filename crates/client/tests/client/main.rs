//! The client against real servers: the test server, a TLS server, and its logs.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod apply_e2e;
mod logging;
mod metadata;
mod pod_streams_e2e;
mod protobuf;
mod scale_e2e;
mod testserver;
mod tls;
