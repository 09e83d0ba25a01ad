//! The election loop: acquire, renew until renewal fails past the deadline or shutdown, then stop.
//! Mirrors `LeaderElector` (`Run`, `acquire`, `renew`, `IsLeader`, `Check`) in client-go
//! `tools/leaderelection/leaderelection.go` and `healthzadaptor.go`.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::time::Duration;

use kubegen_client::Client;
use parking_lot::Mutex;
use tokio::time::{Instant, sleep, sleep_until, timeout, timeout_at};

use crate::attempt::Attempt;
use crate::callbacks::{LeaderCallbacks, Leadership, LeadershipSender};
use crate::config::{JITTER_FACTOR, LeaderElectionConfig};
use crate::error::{Error, Result};
use crate::lease_lock::LeaseLock;
use crate::state::{Shared, State};

/// Why [`LeaderElector::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// The shutdown future resolved (before or during leadership).
    ShutdownRequested,
    /// We led, then could not renew within the renew deadline or saw another holder. Like
    /// client-go, `run` does not try to lead again: call it again (or exit and restart).
    LeadershipLost,
}

/// One candidate in a Lease-based election.
///
/// # Guarantees
/// - At most one candidate *believes* it leads at a time, provided the clocks of candidates run at
///   roughly the same rate (not the same time: expiry is judged by local observation, never by the
///   record's timestamps) and `lease_duration - renew_deadline` exceeds request latency.
/// - A leader stops (its [`Leadership`] token resolves) as soon as it has gone `renew_deadline`
///   without a successful renewal, counted from the start of the last successful one.
/// - Writes are optimistic: a 409 Conflict never overwrites a rival's record.
///
/// # Differences from client-go
/// - A leader that reads a record held by someone else stops at once instead of retrying until the
///   renew deadline: the lock is provably lost.
/// - `run` takes a shutdown future instead of a context; dropping the `run` future also ends the
///   term (the token reports lost), but only an explicit shutdown can release the lease.
#[derive(Clone)]
pub struct LeaderElector {
    shared: Arc<Shared>,
}

impl LeaderElector {
    /// A candidate for `config`'s lock, talking to the API server through `client`.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] if `config` breaks the timing rules.
    pub fn new(client: Client, config: LeaderElectionConfig) -> Result<LeaderElector> {
        config.validate()?;
        let lock = LeaseLock::new(client, &config.lock_namespace, &config.lock_name)
            .with_labels(config.lease_labels.clone());
        let state = State::new(&config.identity);
        Ok(LeaderElector {
            shared: Arc::new(Shared {
                config,
                lock,
                state: Mutex::new(state),
            }),
        })
    }

    /// Competes for the lock until `shutdown` resolves or leadership, once gained, is lost.
    ///
    /// Tries to acquire every `retry_period` (plus up to 1.2x jitter); once leading, calls
    /// `started_leading`, renews every `retry_period`, and on the way out calls `stopped_leading`
    /// (releasing first if `release_on_cancel` is set). API errors are logged and retried, never
    /// returned.
    ///
    /// # Errors
    /// [`Error::AlreadyRunning`] if another `run` of this elector (or a clone) is active.
    pub async fn run(
        &self,
        callbacks: impl LeaderCallbacks,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<RunOutcome> {
        let _running = RunGuard::enter(&self.shared)?;
        let mut shutdown = pin!(shutdown);
        if !self.acquire(&callbacks, shutdown.as_mut()).await {
            return Ok(RunOutcome::ShutdownRequested);
        }
        tracing::info!(lock = %self.shared.lock.describe(), identity = %self.shared.config.identity, "started leading");
        let (leadership, sender) = Leadership::new_term();
        let term = Term::begin(&self.shared, sender);
        callbacks.started_leading(leadership);
        let outcome = self.renew(&callbacks, shutdown.as_mut()).await;
        drop(term);
        if self.shared.config.release_on_cancel {
            self.shared.release().await;
        }
        tracing::info!(lock = %self.shared.lock.describe(), ?outcome, "stopped leading");
        callbacks.stopped_leading();
        Ok(outcome)
    }

    /// Whether this candidate is leading right now (a term is active).
    pub fn is_leader(&self) -> bool {
        self.shared.state.lock().leading
    }

    /// The holder of the lock as last observed, if any (may be us).
    pub fn leader(&self) -> Option<String> {
        self.shared
            .state
            .lock()
            .observer
            .holder()
            .map(str::to_owned)
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        &self.shared.config.identity
    }

    /// Health check for a liveness probe: a leader that has not renewed for longer than the lease
    /// duration plus `tolerance` is stuck (others may already lead) and should be restarted.
    /// Non-leaders are always healthy.
    ///
    /// # Errors
    /// [`Error::RenewalOverdue`] as described.
    pub fn check_health(&self, tolerance: Duration) -> Result<()> {
        let state = self.shared.state.lock();
        let Some(last) = state.last_renewal.filter(|_| state.leading) else {
            return Ok(());
        };
        let allowed = self.shared.config.lease_duration + tolerance;
        let since_renewal = last.elapsed();
        if since_renewal > allowed {
            return Err(Error::RenewalOverdue {
                since_renewal,
                allowed,
            });
        }
        Ok(())
    }

    /// Tries until the lock is ours (`true`) or shutdown (`false`).
    async fn acquire(
        &self,
        callbacks: &impl LeaderCallbacks,
        mut shutdown: Pin<&mut impl Future<Output = ()>>,
    ) -> bool {
        let config = &self.shared.config;
        loop {
            let attempt = tokio::select! {
                () = shutdown.as_mut() => return false,
                attempt = timeout(config.renew_deadline, self.shared.try_acquire_or_renew()) => attempt,
            };
            self.report_leader(callbacks);
            match attempt {
                Ok(Attempt::Holding) => return true,
                Ok(Attempt::HeldBy(holder)) => {
                    tracing::debug!(%holder, "lease is held by another candidate")
                }
                Ok(Attempt::Failed) => {}
                Err(_elapsed) => {
                    tracing::warn!(lock = %self.shared.lock.describe(), "acquire attempt timed out")
                }
            }
            let pause = config.retry_period
                + config
                    .retry_period
                    .mul_f64(JITTER_FACTOR * rand::random::<f64>());
            tokio::select! {
                () = shutdown.as_mut() => return false,
                () = sleep(pause) => {}
            }
        }
    }

    /// Renews every `retry_period` until shutdown or until renewal has failed for `renew_deadline`.
    async fn renew(
        &self,
        callbacks: &impl LeaderCallbacks,
        mut shutdown: Pin<&mut impl Future<Output = ()>>,
    ) -> RunOutcome {
        let config = &self.shared.config;
        loop {
            tokio::select! {
                () = shutdown.as_mut() => return RunOutcome::ShutdownRequested,
                () = sleep(config.retry_period) => {}
            }
            let last = self
                .shared
                .state
                .lock()
                .last_renewal
                .unwrap_or_else(Instant::now);
            let deadline = last + config.renew_deadline;
            loop {
                let attempt = tokio::select! {
                    () = shutdown.as_mut() => return RunOutcome::ShutdownRequested,
                    attempt = timeout_at(deadline, self.shared.try_acquire_or_renew()) => attempt,
                };
                self.report_leader(callbacks);
                match attempt {
                    Ok(Attempt::Holding) => break,
                    Ok(Attempt::HeldBy(holder)) => {
                        tracing::warn!(%holder, "lease was taken over by another candidate");
                        return RunOutcome::LeadershipLost;
                    }
                    Ok(Attempt::Failed) => {}
                    Err(_elapsed) => {}
                }
                if Instant::now() >= deadline {
                    tracing::warn!(lock = %self.shared.lock.describe(), "failed to renew the lease within the renew deadline");
                    return RunOutcome::LeadershipLost;
                }
                tokio::select! {
                    () = shutdown.as_mut() => return RunOutcome::ShutdownRequested,
                    () = sleep_until(deadline.min(Instant::now() + config.retry_period)) => {}
                }
            }
        }
    }

    /// Calls `new_leader` when the observed holder differs from the last one reported.
    fn report_leader(&self, callbacks: &impl LeaderCallbacks) {
        let changed = {
            let mut state = self.shared.state.lock();
            let holder = state.observer.holder().map(str::to_owned);
            if holder.is_some() && holder != state.reported_leader {
                state.reported_leader.clone_from(&holder);
                holder
            } else {
                None
            }
        };
        if let Some(holder) = changed {
            tracing::info!(%holder, "new leader observed");
            callbacks.new_leader(&holder);
        }
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.shared.state.lock().check_invariants();
    }
}

/// Marks a `run` as active; clears the mark however `run` ends (return, error or drop).
struct RunGuard<'a> {
    shared: &'a Shared,
}

impl<'a> RunGuard<'a> {
    fn enter(shared: &'a Shared) -> Result<Self> {
        let mut state = shared.state.lock();
        if state.running {
            return Err(Error::AlreadyRunning);
        }
        state.running = true;
        Ok(RunGuard { shared })
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.shared.state.lock().running = false;
    }
}

/// An active leadership term; ending it (drop, including when the `run` future is dropped) clears
/// `leading` and resolves the application's [`Leadership`] token.
struct Term<'a> {
    shared: &'a Shared,
    sender: LeadershipSender,
}

impl<'a> Term<'a> {
    fn begin(shared: &'a Shared, sender: LeadershipSender) -> Self {
        shared.state.lock().leading = true;
        Term { shared, sender }
    }
}

impl Drop for Term<'_> {
    fn drop(&mut self) {
        self.shared.state.lock().leading = false;
        self.sender.end();
    }
}

#[cfg(test)]
#[path = "elector_tests.rs"]
mod tests;
