//! Waiting for caches to fill before acting on them.
//!
//! Mirrors client-go `tools/cache/shared_informer.go` (`WaitForCacheSync`,
//! `WaitForNamedCacheSync`).
//!
//! # Why wait?
//! Until its informer has stored the first full list, a lister answers "not found" for objects
//! that exist. A controller that reconciled then would, for example, recreate objects that are
//! already there. So controllers start informers, wait for sync, then start workers.

use std::time::Duration;

use kube_core::Resource;

use crate::{error::Error, informer::HandlerRegistration, informer::SharedIndexInformer};

/// Something that fills up and then reports itself synced: an informer or a handler
/// registration.
pub trait Synced: Send + Sync {
    /// A name for error messages.
    fn name(&self) -> String;
    /// Whether it was started at all (otherwise it will never sync).
    fn has_started(&self) -> bool;
    /// Whether it has synced.
    fn has_synced(&self) -> bool;
}

impl<K: Resource + Clone + Send + Sync + 'static> Synced for SharedIndexInformer<K> {
    fn name(&self) -> String {
        SharedIndexInformer::name(self).to_owned()
    }
    fn has_started(&self) -> bool {
        SharedIndexInformer::has_started(self)
    }
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
}

impl Synced for HandlerRegistration {
    fn name(&self) -> String {
        format!("{} (handler registration)", self.informer_name())
    }
    fn has_started(&self) -> bool {
        self.informer_started()
    }
    fn has_synced(&self) -> bool {
        HandlerRegistration::has_synced(self)
    }
}

/// How often sync is re-checked (client-go polls every 100 ms too).
const POLL: Duration = Duration::from_millis(100);

/// Waits until every one of `informers` has synced.
///
/// # Errors
/// - [`Error::NotStarted`] at once if one was never started: it could never sync.
/// - [`Error::SyncTimeout`] naming the laggards if `timeout` passes first.
pub async fn wait_for_cache_sync(
    timeout: Duration,
    informers: &[&dyn Synced],
) -> Result<(), Error> {
    if let Some(idle) = informers.iter().find(|i| !i.has_started()) {
        return Err(Error::NotStarted { name: idle.name() });
    }
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let pending: Vec<String> = informers
            .iter()
            .filter(|i| !i.has_synced())
            .map(|i| i.name())
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::SyncTimeout { timeout, pending });
        }
        tokio::time::sleep(
            POLL.min(deadline.saturating_duration_since(tokio::time::Instant::now())),
        )
        .await;
    }
}
