//! What the workload controllers (`crate::apps`: deployment, replicaset, statefulset;
//! `crate::batch`: job, cronjob) share: adopting and releasing by ControllerRef, expectations of
//! their own creates and deletes, the index of the Pods each controls, pod ranking and the Pod a
//! template stamps out, Events, and the reading of object metadata.
//!
//! Mirrors `pkg/controller/controller_utils.go` and `pkg/controller/controller_ref_manager.go`,
//! which every workload controller of kube-controller-manager imports.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `controller_ref`, `events`, `pod_index`
//! - `expectations`, `hash`, `intstr`, `meta`, `pods`, `shared`, `versioned`

pub(crate) mod controller_ref;
pub(crate) mod events;
pub(crate) mod expectations;
pub(crate) mod hash;
pub(crate) mod intstr;
pub(crate) mod meta;
pub(crate) mod pod_index;
pub(crate) mod pods;
pub(crate) mod shared;
pub(crate) mod versioned;
