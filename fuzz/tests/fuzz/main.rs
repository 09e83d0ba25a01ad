//! Property-based fuzz targets, one module per parser.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod codegen_tags;
mod kubeconfig;
mod protobuf_decoders;
mod stream_decoders;
mod testserver_http;
