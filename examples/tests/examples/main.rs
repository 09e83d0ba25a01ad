//! The examples end to end: each example's library code against kubegen-testserver and, when
//! `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig, against a real cluster (the `_on_cluster`
//! twins, `#[ignore]`d otherwise so nextest reports them as skipped; `scripts/test.sh` runs them
//! when the variable is set).
//!
//! One test binary for the package: each binary links the whole dependency graph.
#![allow(clippy::unwrap_used)]

mod fleet;
mod harness;
mod network;
mod provisioner;
mod vm;
