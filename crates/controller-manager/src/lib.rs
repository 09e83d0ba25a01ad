//! `kubegen-controller-manager`: kube-controller-manager's controllers, in process, on kubegen's
//! own informers (`kubegen-cache`) and workqueue (`kubegen-workqueue`).
//!
//! # Why
//! An API server alone never finishes deleting a namespace (its `kubernetes` finalizer waits for
//! the namespace controller), never garbage-collects owned objects, never creates the `default`
//! ServiceAccount. envtest users have hit this for years (controller-runtime issue 880).
//! `kubegen-testserver` runs a [`ControllerManager`] beside itself (on by default, switchable
//! off), so tests see what a real cluster does; any client can run one against any server.
//!
//! Each controller is built the way client-go controllers are: informers feed event handlers
//! that enqueue keys into a rate-limited workqueue; workers read listers and write through
//! `kubegen-client` (`worker.rs`). Every observable step (requests, events, final states) is
//! checked against the real kube-controller-manager v1.36 by this crate's `_on_cluster` tests.
//!
//! | kube-controller-manager (`--controllers` name) | Kubernetes source mirrored | here |
//! |---|---|---|
//! | `namespace-controller` | `pkg/controller/namespace/namespace_controller.go`, `deletion/namespaced_resources_deleter.go` | `namespace/` |
//! | `garbage-collector-controller` | `pkg/controller/garbagecollector/` (`graph_builder.go`, `graph.go`, `garbagecollector.go`) | `garbagecollector/` |
//! | `serviceaccount-controller` | `pkg/controller/serviceaccount/serviceaccounts_controller.go` | `serviceaccount/mod.rs` |
//! | `serviceaccount-token-controller` | `pkg/controller/serviceaccount/tokens_controller.go` | `serviceaccount/tokens.rs` |
//! | `root-ca-certificate-publisher-controller` | `pkg/controller/certificates/rootcacertpublisher/publisher.go` | `serviceaccount/rootca.rs` |
//! | `deployment-controller` | `pkg/controller/deployment/*.go`, `deployment/util/*.go` | `apps/deployment/` |
//! | `replicaset-controller` | `pkg/controller/replicaset/replica_set.go` | `apps/replicaset.rs` |
//! | `statefulset-controller` | `pkg/controller/statefulset/*.go`, `pkg/controller/history/controller_history.go` | `apps/statefulset/` |
//! | `daemonset-controller` | `pkg/controller/daemon/*.go`, `daemon/util/daemonset_util.go` | `apps/daemonset/` |
//! | `endpointslice-controller` | `pkg/controller/endpointslice/endpointslice_controller.go`, `staging/src/k8s.io/endpointslice/{reconciler,utils}.go` | `endpointslice/` |
//! | `validatingadmissionpolicy-status-controller` | `pkg/controller/validatingadmissionpolicystatus/controller.go`, apiserver `pkg/admission/plugin/policy/validating/typechecking.go` | `admissionpolicy/` |
//! | `node-lifecycle-controller` | `pkg/controller/nodelifecycle/node_lifecycle_controller.go`, `pkg/controller/util/node/controller_utils.go` | `nodelifecycle/` |
//! | `taint-eviction-controller` | `pkg/controller/tainteviction/taint_eviction.go`, `timed_workers.go` | `tainteviction/` |
//! | `job-controller` | `pkg/controller/job/*.go` | `batch/job/` |
//! | `cronjob-controller` | `pkg/controller/cronjob/*.go` | `batch/cronjob/` |
//! | ControllerRefManager, expectations, pod ranking, template hash | `pkg/controller/controller_ref_manager.go`, `controller_utils.go` | `workload/controller_ref.rs`, `workload/expectations.rs`, `workload/pods.rs`, `workload/hash.rs` |
//! | `StartControllers`, shared informer factory | `cmd/kube-controller-manager/app/controllermanager.go` | `manager.rs` |
//!
//! # Defaults
//! Every controller above but the root-CA publisher: a `kube-root-ca.crt` ConfigMap appearing in
//! every namespace would change what existing tests that count ConfigMaps see. Turn it on with
//! `ControllerManagerOptions::default().with(Controller::RootCaCertificatePublisher)` and a CA.
//!
//! # Resources known only at run time
//! The namespace controller and the garbage collector reach every served resource, custom ones
//! included, through `kubegen_client::ResourceClient::dynamic_metadata` (addressed by an
//! `ApiResource` found by `kubegen_client::discover`) and metadata-only informers over it
//! (`kubegen_cache::ClientListWatch`): the same verb and informer code the typed clients use.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `manager`
//! - `admissionpolicy`, `apps`, `batch`, `endpointslice`, `garbagecollector`, `namespace`, `serviceaccount`, `tainteviction`
//! - `nodelifecycle`
//! - `workload`
//! - `context`, `served`, `worker`
//! - `error`, `options`

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod admissionpolicy;
mod apps;
mod batch;
mod context;
mod endpointslice;
mod error;
mod garbagecollector;
mod manager;
mod namespace;
mod nodelifecycle;
mod options;
mod served;
mod serviceaccount;
mod tainteviction;
mod worker;
mod workload;

pub use error::{Error, Result};
pub use manager::ControllerManager;
pub use options::{Clock, Controller, ControllerManagerOptions, NodeLifecycleOptions};
