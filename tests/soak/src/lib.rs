//! kubegen-soak: the reliability soak. An informer and a controller-style workqueue run against
//! kubegen-testserver while a churn driver writes and a fault schedule breaks things (dropped
//! watches, forced 410 expiries, 5% 429/500, latency spikes). At quiescence, [`SoakReport`] says
//! whether the informer converged on exactly the server's state and whether anything was lost,
//! duplicated or processed concurrently.
//!
//! `tests/soak.rs` runs it for `KUBEGEN_SOAK_SECS` seconds (30 by default, 600 for the long run).
//! Unlike unit tests this uses real time: it exercises real sockets and real timeouts.
//!
//! # What is checked (see [`SoakReport::failures`])
//! - The informer's indexer equals the server's list: same keys, same resourceVersions.
//! - The handlers' view (adds/updates minus deletes, replayed by [`recorder::Recorder`]) equals
//!   the server's list too: every object deleted on the server reached the handlers as a delete,
//!   its real final state or a tombstone; and per key the notifications alternate add, update*,
//!   delete.
//! - The workqueue drained, and no key was ever held by two workers at once.
//! - No panic anywhere in the process.
//! - The faults really happened (watch drops, expiries, failed requests), and memory stayed
//!   bounded (RSS sampled every second; the late peak may not exceed twice the early peak + 64 MiB).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `run`
//! - `chaos`
//! - `churn`, `memory`, `recorder`, `workers`

pub mod chaos;
pub mod churn;
pub mod memory;
pub mod recorder;
mod run;
pub mod workers;

pub use run::{SoakConfig, SoakReport, run};
