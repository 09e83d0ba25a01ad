//! The worker loop of the scheduler and the kubelet: kubegen-workqueue's
//! [`kubegen_workqueue::workers`], as the in-process controller-manager uses it, retrying a
//! failing Pod key with backoff until it syncs.
//!
//! The backoff is per Pod only (5 ms doubling to 10 s, kube-scheduler's `podMaxBackoffDuration`),
//! without the controllers' shared 10 qps bucket: neither kube-scheduler's backoff queue nor the
//! kubelet's status manager has one, and with thousands of Pods a shared bucket turns a burst of
//! failed writes into a queue-wide stall of ten retries a second.

use std::{future::Future, sync::Arc, time::Duration};

use kubegen_workqueue::workers::{self, Retries, Workers};
use kubegen_workqueue::{ItemExponentialBackoff, NoopMetrics, RateLimitingQueue};

use crate::Result;

pub(crate) use kubegen_workqueue::workers::Next;

/// How long stopping waits for in-flight syncs.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The first retry's delay of a failing Pod key; it doubles on each failure.
const BACKOFF_BASE: Duration = Duration::from_millis(5);

/// The longest delay between retries of one Pod (kube-scheduler's `podMaxBackoffDuration`).
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// A queue of `namespace/name` keys, named for its metrics.
pub(crate) fn queue(name: &str) -> RateLimitingQueue<String> {
    RateLimitingQueue::new(
        name,
        ItemExponentialBackoff::new(BACKOFF_BASE, BACKOFF_MAX),
        Arc::new(NoopMetrics),
    )
}

/// Spawns `count` workers taking keys from `queue` and passing them to `sync`; a failing key is
/// retried with backoff until it syncs.
pub(crate) fn spawn<F, Fut>(
    queue: RateLimitingQueue<String>,
    count: usize,
    sync: F,
) -> Workers<String>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Next>> + Send + 'static,
{
    workers::spawn(queue, count, Retries::Forever, DRAIN_TIMEOUT, sync)
}

/// `namespace/name` of a Pod.
pub(crate) fn key_of(pod: &k8s_openapi::api::core::v1::Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}
