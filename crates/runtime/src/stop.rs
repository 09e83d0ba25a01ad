//! A one-shot stop signal shared by the manager and the shard replica: the manager stops its
//! controllers with it, and a replica that loses its shard stops them too. It lives below both
//! (`manager.rs` runs a replica from `sharding.rs`, and each hands the other a `Stop`), so neither
//! imports the other for it.

use std::sync::Arc;

use tokio::sync::watch;

/// A one-shot, cloneable stop signal: `trigger` once, any number of `wait`ers wake.
#[derive(Clone, Debug)]
pub(crate) struct Stop(Arc<watch::Sender<bool>>);

impl Stop {
    pub(crate) fn new() -> Stop {
        Stop(Arc::new(watch::channel(false).0))
    }

    pub(crate) fn trigger(&self) {
        self.0.send_replace(true);
    }

    pub(crate) fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    pub(crate) async fn wait(&self) {
        let mut stopped = self.0.subscribe();
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }
}
