//! The test server checked through its wire protocol, one module per area.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod access_review;
mod admission_policies;
mod admission_webhooks;
mod apply;
mod audit;
mod bad_input;
mod binary;
mod binding;
mod cel_cost;
mod common;
mod crd_conversion;
mod crd_conversion_scale;
mod crd_conversion_validation;
mod crud;
mod custom_resources;
mod discovery;
mod faults;
mod fidelity;
mod list;
mod namespaces;
mod negotiation;
mod node_taint;
mod openapi;
mod policy_cost;
mod rbac;
mod scale;
mod services;
mod shard_selector;
mod smoke;
mod tables;
mod tokens;
mod twin;
mod watch;
mod watch_timing;
