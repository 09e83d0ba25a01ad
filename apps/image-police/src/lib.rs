//! `kubegen-controller`: the `image-police` controller. It deletes Deployments whose containers
//! (or init containers) run images that no WhiteList of their namespace allows, records core/v1
//! Events about it, and reports what it did in the status of each WhiteList of the namespace.
//!
//! Built the way client-go's sample-controller is, on kubegen-runtime: the generated clientset,
//! listers and informers plus the runtime's controller builder, workers, manager (leader
//! election, probes, metrics, shutdown) and Event recorder do all the machinery; this crate holds
//! only the policy, the reconcile, and the wiring.
//!
//! ```text
//! WhiteList / Deployment informers (one SharedInformerFactory)
//!   --handlers--> RateLimitingQueue of namespaces                           controller.rs
//!   --workers--> Reconciler::reconcile_namespace: listers -> Policy -> Writer          reconcile.rs
//!                (delete Deployment, create Events, update WhiteList status)
//! ```
//!
//! | client-go / sample-controller          | here                                    | file             |
//! |----------------------------------------|-----------------------------------------|------------------|
//! | `main.go` (flags, signals, informers)  | [`run::run`] (a runtime `Manager`), `image-police` binary | `run.rs`, `main.rs` |
//! | `controller.go` `NewController`        | [`controller::build`] (a runtime builder) | `controller.rs`  |
//! | `controller.go` `syncHandler`          | [`reconcile::Reconciler::reconcile_namespace`]| `reconcile.rs`   |
//! | `updateFooStatus`                      | [`status::next_status`]                 | `status.rs`      |
//! | `record.EventRecorder`                 | [`kubegen_runtime::Recorder`] (client-go's aggregation) | runtime |
//! | `controller_test.go` fixture           | `reconcile_tests.rs`, `tests/controller/e2e.rs`|                  |
//! | `distribution/reference` (image names) | [`image_ref::ImageRef`]                 | `image_ref.rs`   |
//! | (the policy itself)                    | [`policy::Policy`]                      | `policy.rs`      |
//! | `kubectl api-versions` (which CRD manifest) | [`deploy::crd_manifest`]            | `deploy.rs`      |
//! | `healthz`, `/metrics` (one registry)   | the runtime's `Manager`, [`metrics::PoliceMetrics`] | `metrics.rs` |
//!
//! # Differences from sample-controller
//! - The workqueue holds namespaces, not `namespace/name` keys: all WhiteLists of a namespace
//!   together form its policy, so the namespace is what one reconcile judges.
//! - Standby replicas sync their caches too (ready, warm), and only the Lease holder runs workers.
//! - Status writes retry a 409 on a fresh read before requeueing, so violations are not lost.
//! - `--embedded` runs everything against an in-process API server (`embedded.rs`, behind the
//!   default cargo feature `embedded`; the in-cluster image is built without it, so it does not
//!   carry the test server).

pub mod controller;
pub mod deploy;
#[cfg(feature = "embedded")]
pub mod embedded;
pub mod flags;
pub mod image_ref;
pub mod metrics;
pub mod namespaces;
pub mod pod_template;
pub mod policy;
pub mod reconcile;
pub mod run;
pub mod service_account;
pub mod status;
pub mod webhook;
pub mod writer;

pub use kubegen_runtime::Error;
