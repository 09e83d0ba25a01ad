//! The tokio tasks one informer spawned, so that shutdown can wait for them.
//!
//! client-go's factory `Shutdown` waits on a `sync.WaitGroup` of the goroutines it started. A
//! `JoinHandle` per task does the same here, and also lets us abort what outlives the bound.

use std::{future::Future, time::Duration};

use parking_lot::Mutex;
use tokio::{task::JoinHandle, time::Instant};

/// Every task spawned for one informer, with a name for reports.
#[derive(Default)]
pub(crate) struct Tasks {
    /// Invariant: holds every task spawned through `spawn` that `join` has not yet awaited
    /// (finished ones are pruned at the next `spawn`).
    handles: Mutex<Vec<(String, JoinHandle<()>)>>,
}

impl Tasks {
    /// Spawns `task` on the current tokio runtime and remembers it as `name`.
    pub(crate) fn spawn(&self, name: String, task: impl Future<Output = ()> + Send + 'static) {
        let handle = tokio::spawn(task);
        let mut handles = self.handles.lock();
        handles.retain(|(_, h)| !h.is_finished());
        handles.push((name, handle));
    }

    /// Waits for every task spawned so far, and for any spawned while waiting, for at most
    /// `timeout`. Past it, the tasks still running are aborted and their names returned.
    ///
    /// An abort takes effect at the task's next `.await`: a task stuck in synchronous code (a
    /// handler that never returns) keeps its thread until it returns, and then ends.
    pub(crate) async fn join(&self, timeout: Duration) -> Result<(), Vec<String>> {
        let deadline = Instant::now() + timeout;
        loop {
            let batch = std::mem::take(&mut *self.handles.lock());
            if batch.is_empty() {
                return Ok(());
            }
            let mut late = Vec::new();
            for (name, mut handle) in batch {
                if tokio::time::timeout_at(deadline, &mut handle)
                    .await
                    .is_err()
                {
                    handle.abort();
                    late.push(name);
                }
            }
            if !late.is_empty() {
                return Err(late);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn join_waits_for_tasks_spawned_while_waiting() {
        let tasks = std::sync::Arc::new(Tasks::default());
        let inner = std::sync::Arc::clone(&tasks);
        tasks.spawn("parent".into(), async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            inner.spawn("child".into(), tokio::time::sleep(Duration::from_secs(2)));
        });
        let started = Instant::now();
        assert_eq!(tasks.join(Duration::from_secs(10)).await, Ok(()));
        assert_eq!(started.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn join_aborts_and_names_tasks_past_the_bound() {
        let tasks = Tasks::default();
        tasks.spawn("quick".into(), tokio::time::sleep(Duration::from_secs(1)));
        tasks.spawn("stuck".into(), std::future::pending());
        let started = Instant::now();
        assert_eq!(
            tasks.join(Duration::from_secs(5)).await,
            Err(vec!["stuck".to_owned()])
        );
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert_eq!(
            tasks.join(Duration::from_secs(5)).await,
            Ok(()),
            "forgotten"
        );
    }
}
