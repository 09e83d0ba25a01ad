//! Lease-based leader election: of several replicas of a controller, exactly one does the work while
//! the others wait to take over. The Rust counterpart of client-go `tools/leaderelection` with its
//! `resourcelock.LeaseLock` (a `coordination.k8s.io/v1` Lease as the lock).
//!
//! Place in kubegen: the controller binary wraps its informers and workers in
//! [`LeaderCallbacks::started_leading`]; this crate depends only on `kubegen-client`.
//!
//! ```no_run
//! # async fn example(client: kubegen_client::Client) -> Result<(), kubegen_leaderelection::Error> {
//! use kubegen_leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, Leadership};
//!
//! struct Controller;
//! impl LeaderCallbacks for Controller {
//!     fn started_leading(&self, leadership: Leadership) {
//!         tokio::spawn(async move {
//!             tokio::select! {
//!                 () = leadership.lost() => {}              // stop reconciling at once
//!                 () = std::future::pending::<()>() => {}   // ... the real work
//!             }
//!         });
//!     }
//! }
//!
//! let mut config = LeaderElectionConfig::new("kube-system", "image-police", "pod-a");
//! config.release_on_cancel = true;
//! let elector = LeaderElector::new(client, config)?;
//! elector.run(Controller, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
//!
//! | client-go                           | kubegen                                   | file            |
//! |-------------------------------------|-------------------------------------------|-----------------|
//! | `LeaderElectionConfig`              | [`LeaderElectionConfig`]                  | `config.rs`     |
//! | `LeaderElector.Run`, `IsLeader`, `GetLeader` | [`LeaderElector::run`], [`LeaderElector::is_leader`], [`LeaderElector::leader`] | `elector.rs` |
//! | `tryAcquireOrRenew`, `release`      | (internal)                                | `attempt.rs`    |
//! | `LeaderElector`'s observed state    | (internal)                                | `state.rs`      |
//! | `observedRecord`, `isLeaseValid`    | (internal)                                | `observer.rs`   |
//! | `LeaderCallbacks`, `OnStartedLeading(ctx)` | [`LeaderCallbacks`], [`Leadership`] | `callbacks.rs`  |
//! | `resourcelock.LeaderElectionRecord` | [`LeaderElectionRecord`]                  | `record.rs`     |
//! | `resourcelock.LeaseLock`            | (internal)                                | `lease_lock.rs` |
//! | `HealthzAdaptor.Check`              | [`LeaderElector::check_health`]           | `elector.rs`    |
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `elector`
//! - `attempt`
//! - `state`
//! - `config`, `lease_lock`, `observer`
//! - `callbacks`, `error`, `record`

mod attempt;
mod callbacks;
mod config;
mod elector;
mod error;
mod lease_lock;
mod observer;
mod record;
mod state;

pub use callbacks::{LeaderCallbacks, Leadership};
pub use config::{JITTER_FACTOR, LeaderElectionConfig};
pub use elector::{LeaderElector, RunOutcome};
pub use error::{Error, Result};
pub use record::LeaderElectionRecord;
