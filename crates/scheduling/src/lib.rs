//! `kubegen-scheduling`: the questions every Kubernetes component that places Pods asks the same
//! way, answered once. Does a Pod's toleration cover a Node's taint? Does a Node satisfy a Pod's
//! `nodeSelector` and required node affinity? kube-scheduler's filters, the DaemonSet
//! controller's placement and the taint-eviction controller all ask them, and in Kubernetes all
//! call one package for the answers, `k8s.io/component-helpers/scheduling/corev1` (with
//! `Toleration.ToleratesTaint` of `k8s.io/api/core/v1`). kubegen's callers are the same three:
//! the simulated scheduler (`kubegen-nodesim`) and the DaemonSet and taint-eviction controllers
//! (`kubegen-controller-manager`); this crate is why their answers cannot drift apart.
//!
//! | Kubernetes | here |
//! |---|---|
//! | `Toleration.ToleratesTaint`, `TolerationsTolerateTaint`, `FindMatchingUntoleratedTaint` | [`tolerates`], [`tolerated`], [`untolerated_taint`] |
//! | `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)` | [`RequiredNodeAffinity`] |
//!
//! Written by hand rather than taken from a crate: no Rust crate answers these on k8s-openapi's
//! types, and each rule is a few lines whose edge cases (an empty key, a term with nothing in it,
//! a requirement that does not parse) must be v1.36's exactly.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `node_affinity`, `toleration`

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod node_affinity;
mod toleration;

pub use node_affinity::{NODE_NAME_FIELD, RequiredNodeAffinity};
pub use toleration::{tolerated, tolerates, untolerated_taint};
