//! `kubegen-runtime`: what controller-runtime and kube-rs's `runtime` give a controller author,
//! written once on kubegen's own pieces (kubegen-cache informers, kubegen-workqueue,
//! kubegen-leaderelection, kubegen-client).
//!
//! | controller-runtime / client-go                  | here                                   | module          |
//! |-------------------------------------------------|----------------------------------------|-----------------|
//! | `builder.ControllerManagedBy().For().Owns().Watches()` | [`Controller::builder`], [`Builder`] | `controller.rs` |
//! | `reconcile.Reconciler`, `reconcile.Result`      | [`Reconciler`], [`Action`], [`Context`] | `controller.rs` |
//! | `manager.Manager` (leader election, probes, metrics server) | [`Manager`]                | `manager.rs`    |
//! | `controllerutil.AddFinalizer`, kube-rs `finalizer` | [`finalizer::step`]                 | `finalizer.rs`  |
//! | `meta.SetStatusCondition`                       | [`conditions::set_condition`]          | `conditions.rs` |
//! | `record.EventRecorder`, `EventCorrelator`      | [`Recorder`], [`correlator::Correlator`] | `events.rs`, `correlator.rs` |
//! | `healthz`, `metrics.Registry`                   | [`endpoints`], [`metrics`]             | `endpoints.rs`, `metrics.rs` |
//!
//! Read the crate README for the design and the differences from controller-runtime.

pub mod conditions;
pub mod controller;
pub mod correlator;
pub mod endpoints;
mod error;
pub mod events;
pub mod finalizer;
pub mod manager;
pub mod metrics;

pub use controller::{Action, Builder, Context, Controller, Object, Reconciler};
pub use endpoints::Health;
pub use error::Error;
pub use events::{EventType, Recorder};
pub use manager::{Manager, ManagerOptions, serve_endpoints};
pub use metrics::{AppMetrics, ProcessMetrics};
