//! `kubegen-examples`: the seed controllers as runnable examples, each one command on the
//! embedded test server (`--embedded`) or a real cluster (`--kubeconfig`):
//!
//! | binary | kind | shows |
//! |---|---|---|
//! | `network-controller` | `samplecrd.example.com/v1` `Network` | an informer alone: each add/update/delete traced reflector → DeltaFIFO → indexer → handler ([`network`]) |
//! | `cluster-provisioner` | `clusterprovisioner.example.com/v1alpha1` `Cluster`, `Kubeconfig` | informer callbacks, a rate-limited workqueue, retries with backoff and requeue-after around a slow, failing provisioner ([`provisioner`]) |
//! | `fleet-policy` | `police.example.com/v1beta1` `WhiteList` (hub), apps/v1 `Deployment` (members) | a multi-cluster fleet: image-police's WhiteLists written in the hub enforced in every member cluster its Cluster API kubeconfig Secrets name, members engaged and disengaged as the Secrets change ([`fleet`]) |
//! | `vm-controller` | `cloudnative.example.com/v1alpha1` `VirtualMachine` | a controller on kubegen-runtime: finalizer, status phases and conditions, requeue-after, around a simulated hypervisor ([`vm`]) |
//!
//! Each binary's `main` is a few lines: parse flags, [`target::Target::connect`], run the
//! example's library function. The library functions are what the e2e tests
//! (`tests/examples/`) drive, on the test server and, with `KUBEGEN_E2E_KUBECONFIG`, on a real
//! cluster.
//!
//! `--embedded` is kubegen-embedded's, the same set-up image-police's `--embedded` runs on, and
//! the shutdown signal is the runtime's (`kubegen_runtime::shutdown_signal`): the examples repeat
//! none of the machinery an operator gets from the libraries.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `fleet`, `network`, `provisioner`, `vm`
//! - `target`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod fleet;
pub mod network;
pub mod provisioner;
pub mod target;
pub mod vm;
