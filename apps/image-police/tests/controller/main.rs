//! The controller binary's loop end to end, and the deploy/ manifests.
//!
//! One test binary per crate: each binary links the whole dependency graph, so one per file
//! would multiply link time and disk use in CI for nothing.
#![allow(clippy::unwrap_used)]

mod deploy_manifests;
mod e2e;
mod harness;
mod latency_proxy;
mod rbac_rules;
mod webhook_e2e;
