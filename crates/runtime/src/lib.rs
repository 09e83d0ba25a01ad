//! `kubegen-runtime`: what controller-runtime and kube-rs's `runtime` give an operator author,
//! written once on kubegen's own pieces (kubegen-cache informers, kubegen-workqueue,
//! kubegen-leaderelection, kubegen-client).
//!
//! | controller-runtime / client-go                  | here                                   | module          |
//! |-------------------------------------------------|----------------------------------------|-----------------|
//! | `ctrl.NewManager(cfg, ctrl.Options{..})`, `mgr.Start(ctx)` | [`Manager`], [`ManagerOptions`] | `manager.rs`    |
//! | `builder.ControllerManagedBy().For().Owns().Watches()` (`pkg/builder`) | [`Manager::controller`], [`Builder`] | `builder.rs` |
//! | `reconcile.Reconciler`, `reconcile.Request`, `reconcile.Result`, `reconcile.TerminalError` (`pkg/reconcile`) | [`Reconciler`], [`Context`], [`Action`], [`OnError`] | `reconcile.rs` |
//! | `controller.Controller`, its workers (`pkg/internal/controller`) | [`Controller`] | `controller.rs` |
//! | `mgr.GetClient()` (cache reads, server writes)  | [`CachedClient`]                       | `cached.rs`     |
//! | `mgr.GetFieldIndexer().IndexField`, `client.MatchingFields` | [`CachedClient::index_field`], [`CachedClient::list_by_fields`], [`MatchingFields`] | `cached.rs`, `field_index.rs` |
//! | `controllerutil.AddFinalizer`, kube-rs `finalizer()` | [`finalizer::finalizer`]          | `finalizer.rs`  |
//! | `meta.SetStatusCondition`, `metav1.ConditionStatus` | [`conditions::set_condition`], [`conditions::ConditionStatus`] | `conditions.rs` |
//! | `record.EventRecorder`, `EventCorrelator`      | [`Recorder`], [`correlator::Correlator`] | `events.rs`, `correlator.rs` |
//! | `tools/events` (`EventRecorder.Eventf`, series, `NewEventBroadcasterAdapter`) | [`EventsRecorder`], [`EventRecorder`], [`event_series`] | `events_v1.rs`, `event_series.rs` |
//! | `healthz`, `metrics.Registry`                   | [`endpoints`], [`ProcessMetrics`]      | `endpoints.rs`, `metrics.rs` |
//! | the `--metrics-bind-address`, `--leader-elect`, ... flags, zap's JSON logs | [`ManagerFlags`] | `flags.rs` |
//! | timebertt's sharding (`ControllerRing`, shard Leases) | [`ManagerOptions::sharding`] | `sharding.rs` |
//! | sigs.k8s.io/multicluster-runtime (`mcmanager`, providers, `mcreconcile.Request`) | [`multicluster::Fleet`], [`multicluster::Provider`], [`multicluster::ClusterContext`] | `multicluster/` |
//! | `ctrl.SetupSignalHandler()`                     | [`shutdown_signal`]                    | `signal.rs`     |
//! | `pkg/webhook` (admission, conversion, certwatcher) | [`webhook`], [`Manager::webhook_server`] | `webhook/` |
//! | `kubectl create -f`, envtest's CRD install      | [`manifests`], [`crds`]                | `manifests.rs`, `crds.rs` |
//! | `kubectl apply --server-side -f` (multi-document, any kinds) | [`apply::apply_yaml`] | `apply.rs` |
//! | `kubectl create token`, a kubeconfig with it   | [`service_account::issue_token`], [`service_account::kubeconfig_with_token`] | `service_account.rs` |
//! | (each controller's switch over workload kinds) | [`pod_template::PodTemplate`]          | `pod_template.rs` |
//!
//! An operator's `--embedded` mode (an in-process API server set up as a cluster) is
//! `kubegen-embedded`: it starts a `kubegen-testserver`, which itself depends on this crate.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `flags`, `multicluster`
//! - `manager`
//! - `builder`, `options`
//! - `controller`, `cached`, `finalizer`
//! - `field_index`
//! - `events_v1`
//! - `sharding`, `endpoints`, `events`, `webhook`, `crds`, `apply`, `service_account`
//! - `reconcile`, `metrics`, `stop`, `correlator`, `event_series`, `manifests`
//! - `error`, `conditions`, `pod_template`, `signal`
//!
//! Read the crate README for the design and the differences from controller-runtime.

// Tests may unwrap: a panic is exactly how a test reports failure.
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod apply;
pub mod builder;
mod cached;
pub mod conditions;
pub mod controller;
pub mod correlator;
pub mod crds;
pub mod endpoints;
mod error;
pub mod event_series;
pub mod events;
mod events_v1;
mod field_index;
pub mod finalizer;
pub mod flags;
pub mod manager;
pub mod manifests;
pub mod metrics;
pub mod multicluster;
mod options;
pub mod pod_template;
pub mod reconcile;
pub mod service_account;
mod sharding;
mod signal;
mod stop;
pub mod webhook;

pub use builder::Builder;
pub use cached::CachedClient;
pub use controller::Controller;
pub use endpoints::Health;
pub use error::Error;
pub use events::{EventType, Recorder};
pub use events_v1::{EventRecorder, EventsRecorder};
pub use field_index::MatchingFields;
pub use flags::{CacheStore, ManagerFlags};
pub use manager::{Manager, ManagerOptions};
pub use metrics::ProcessMetrics;
pub use reconcile::{Action, Context, Object, OnError, Reconciler};
pub use signal::shutdown_signal;
