//! Work queues for Kubernetes controllers: the counterpart of client-go's `util/workqueue`.
//!
//! # Where it sits
//! ```text
//! informer event handlers --add("namespace/name")--> RateLimitingQueue --get--> workers
//!                                                    ^                            |
//!                                                    +-- add_rate_limited (failed) +
//! ```
//! Handlers only enqueue *keys*; workers read the current object from a lister. Because the queue
//! deduplicates, a burst of events for one object becomes one reconcile, and because a key is never
//! handed to two workers at once, a controller can run many workers without per-object locks.
//!
//! # The worker loop
//! Every controller runs the same loop: take a key, process it, then tell the rate limiter how it
//! went (`forget` on success, `add_rate_limited` on failure) and *always* call `done`, or the key can
//! never be processed again.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kubegen_workqueue::{NoopMetrics, RateLimitingQueue, default_controller_rate_limiter};
//!
//! async fn reconcile(key: &str) -> Result<(), String> {
//!     if key.ends_with("broken") { Err(format!("cannot reconcile {key}")) } else { Ok(()) }
//! }
//!
//! async fn worker(queue: RateLimitingQueue<String>) {
//!     while let Some(key) = queue.get().await {
//!         match reconcile(&key).await {
//!             Ok(()) => queue.forget(&key),
//!             Err(_) if queue.num_requeues(&key) >= 5 => queue.forget(&key), // give up
//!             Err(_) => queue.add_rate_limited(key.clone()),
//!         }
//!         queue.done(&key);
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let queue = RateLimitingQueue::new("deployments", default_controller_rate_limiter(), NoopMetrics::shared());
//! let workers: Vec<_> = (0..2).map(|_| tokio::spawn(worker(queue.clone()))).collect();
//! queue.add("default/web".to_string());
//! queue.add("default/broken".to_string());
//! // On SIGTERM: stop handing out keys and give in-flight reconciles 10 s to finish.
//! # tokio::time::sleep(Duration::from_millis(200)).await;
//! let drained = queue.shut_down_with_drain(Duration::from_secs(10)).await;
//! assert!(drained);
//! for worker in workers {
//!     worker.await.expect("worker task");
//! }
//! # }
//! ```
//!
//! # client-go names
//! | client-go (`util/workqueue`)          | kubegen-workqueue                     | file                         |
//! |---------------------------------------|---------------------------------------|------------------------------|
//! | `Interface`, `New`, `NewNamed`        | [`Queue`], [`Queue::new`]             | `queue.rs`                   |
//! | `DelayingInterface`, `AddAfter`       | [`DelayingQueue`]                     | `delaying.rs`                |
//! | `RateLimitingInterface`               | [`RateLimitingQueue`]                 | `rate_limiting.rs`           |
//! | `RateLimiter`                         | [`RateLimiter`]                       | `rate_limiters/mod.rs`       |
//! | `DefaultControllerRateLimiter`        | [`default_controller_rate_limiter`]   | `rate_limiters/mod.rs`       |
//! | `ItemExponentialFailureRateLimiter`   | [`ItemExponentialBackoff`]            | `rate_limiters/exponential.rs` |
//! | `ItemFastSlowRateLimiter`             | [`ItemFastSlow`]                      | `rate_limiters/fast_slow.rs` |
//! | `BucketRateLimiter`                   | [`TokenBucket`] (on `kubegen-flowcontrol`) | `rate_limiters/token_bucket.rs` |
//! | `MaxOfRateLimiter`                    | [`MaxOf`]                             | `rate_limiters/combinators.rs` |
//! | `WithMaxWaitRateLimiter`              | [`WithMaxWait`]                       | `rate_limiters/combinators.rs` |
//! | `MetricsProvider`                     | [`MetricsProvider`], [`QueueMetrics`] | `metrics.rs`                 |
//! | controller-runtime `workqueue_*`      | [`PrometheusMetrics`] (`prometheus-client`) | `prometheus.rs`        |
//! | a controller's `processNextWorkItem` / `handleErr` | [`workers::spawn`]       | `workers.rs`                 |
//!
//! # Differences from client-go
//! - Shutdown discards keys that are still waiting and `get` returns `None` at once; see
//!   [`Queue`'s docs](Queue#shutdown-and-still-queued-keys).
//! - [`RateLimitingQueue::add_rate_limited`] does not consult the limiter for a key that is
//!   already waiting, so deduplicated adds spend no bucket token and count no failure.
//! - Unfinished-work metrics are computed at scrape time, not sampled by a ticker.
//! - [`TokenBucket::new`] returns an error for a rate no bucket can honour instead of panicking
//!   or silently not limiting.
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `workers`
//! - `rate_limiting`
//! - `delaying`, `rate_limiters`
//! - `prometheus`, `queue`
//! - `metrics`

mod delaying;
mod metrics;
mod prometheus;
mod queue;
mod rate_limiters;
mod rate_limiting;
pub mod workers;

pub use delaying::DelayingQueue;
pub use kubegen_flowcontrol::InvalidRate;
pub use metrics::{MetricsProvider, NoopMetrics, QueueMetrics};
pub use prometheus::PrometheusMetrics;
pub use queue::{Key, Queue};
pub use rate_limiters::{
    ItemExponentialBackoff, ItemFastSlow, MaxOf, RateLimiter, TokenBucket, WithMaxWait,
    default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;
