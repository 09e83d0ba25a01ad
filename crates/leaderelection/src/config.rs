//! What a candidate needs to know to take part in an election, and the timing rules that keep two
//! candidates from leading at once. Mirrors `LeaderElectionConfig` in client-go
//! `tools/leaderelection/leaderelection.go`.

use std::time::Duration;

use crate::error::{Error, Result};

/// Retry periods are stretched by up to this factor of random jitter while acquiring, so candidates
/// that start together do not hit the API server in lock-step (client-go's `JitterFactor`).
pub const JITTER_FACTOR: f64 = 1.2;

/// Configuration of one candidate.
///
/// # Timing rules (checked by [`validate`](Self::validate))
/// `lease_duration > renew_deadline > JITTER_FACTOR * retry_period`:
/// - a leader gives up when it could not renew for `renew_deadline`; the others only take over after
///   observing no change for `lease_duration`. The gap between the two absorbs request latency and
///   clock-rate differences, so the old leader stops before a new one starts.
/// - a leader must get at least one retry into every renew deadline.
///
/// Only whole seconds of `lease_duration` are written to the Lease (`leaseDurationSeconds`), so it must
/// be at least one second; a fraction is truncated, as in client-go.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LeaderElectionConfig {
    /// Namespace of the `coordination.k8s.io/v1` Lease used as the lock.
    pub lock_namespace: String,
    /// Name of the Lease. All candidates of one election use the same namespace and name.
    pub lock_name: String,
    /// This candidate's identity, unique among candidates (typically pod name plus a random suffix).
    pub identity: String,
    /// How long others wait, after they last saw the lease change, before taking it over.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failing renewal before it stops leading.
    pub renew_deadline: Duration,
    /// Pause between attempts to acquire or renew.
    pub retry_period: Duration,
    /// When `run` ends, release the lease (empty holder, 1 s duration) so a successor need not wait
    /// for it to expire. Only safe if all leader work has stopped by then: resolve the shutdown
    /// future passed to `run` only after draining (client-go puts the same duty on the caller).
    pub release_on_cancel: bool,
    /// Labels the Lease carries: set when the lock creates it and restored on every write that
    /// finds them missing. A shard Lease (`kubegen-sharding`) names its ring here, so peers find
    /// the ring's members with one label selector.
    pub lease_labels: std::collections::BTreeMap<String, String>,
}

impl Default for LeaderElectionConfig {
    /// client-go's recommended timings (15 s / 10 s / 2 s); namespace `default`, no name, no identity.
    fn default() -> Self {
        LeaderElectionConfig {
            lock_namespace: "default".to_owned(),
            lock_name: String::new(),
            identity: String::new(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: false,
            lease_labels: std::collections::BTreeMap::new(),
        }
    }
}

impl LeaderElectionConfig {
    /// The default timings for the lease `lock_namespace/lock_name`, competing as `identity`.
    pub fn new(lock_namespace: &str, lock_name: &str, identity: &str) -> Self {
        LeaderElectionConfig {
            lock_namespace: lock_namespace.to_owned(),
            lock_name: lock_name.to_owned(),
            identity: identity.to_owned(),
            ..LeaderElectionConfig::default()
        }
    }

    /// Checks the timing rules and that the lock and identity are named.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] naming the first broken rule.
    pub fn validate(&self) -> Result<()> {
        let invalid = |reason: String| Err(Error::InvalidConfig { reason });
        if self.identity.is_empty() {
            return invalid("identity must not be empty".to_owned());
        }
        if self.lock_namespace.is_empty() || self.lock_name.is_empty() {
            return invalid("lock namespace and name must not be empty".to_owned());
        }
        if self.lease_duration < Duration::from_secs(1) {
            return invalid(format!(
                "lease duration {:?} is below one second",
                self.lease_duration
            ));
        }
        if self.retry_period.is_zero() {
            return invalid("retry period must be positive".to_owned());
        }
        if self.lease_duration <= self.renew_deadline {
            return invalid(format!(
                "lease duration {:?} must be greater than renew deadline {:?}",
                self.lease_duration, self.renew_deadline
            ));
        }
        let jittered_retry = self.retry_period.mul_f64(JITTER_FACTOR);
        if self.renew_deadline <= jittered_retry {
            return invalid(format!(
                "renew deadline {:?} must be greater than {JITTER_FACTOR} x retry period {:?} = {jittered_retry:?}",
                self.renew_deadline, self.retry_period
            ));
        }
        Ok(())
    }

    /// `lease_duration` as written to the Lease: whole seconds, saturating.
    pub(crate) fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> LeaderElectionConfig {
        LeaderElectionConfig::new("kube-system", "image-police", "pod-a")
    }

    fn reason(config: &LeaderElectionConfig) -> String {
        match config.validate() {
            Err(Error::InvalidConfig { reason }) => reason,
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }

    #[test]
    fn default_timings_match_client_go() {
        let config = LeaderElectionConfig::default();
        assert_eq!(config.lease_duration, Duration::from_secs(15));
        assert_eq!(config.renew_deadline, Duration::from_secs(10));
        assert_eq!(config.retry_period, Duration::from_secs(2));
        assert!(!config.release_on_cancel);
        assert!(valid().validate().is_ok());
    }

    #[test]
    fn empty_identity_is_rejected() {
        let config = LeaderElectionConfig::new("ns", "lock", "");
        assert_eq!(reason(&config), "identity must not be empty");
    }

    #[test]
    fn missing_lock_name_is_rejected() {
        let mut config = valid();
        config.lock_name.clear();
        assert!(reason(&config).contains("lock namespace and name"));
    }

    #[test]
    fn lease_not_longer_than_renew_deadline_is_rejected() {
        let mut config = valid();
        config.lease_duration = Duration::from_secs(10);
        assert!(reason(&config).contains("must be greater than renew deadline"));
    }

    #[test]
    fn renew_deadline_within_jittered_retry_is_rejected() {
        let mut config = valid();
        config.retry_period = Duration::from_secs(5);
        config.renew_deadline = Duration::from_secs(6); // 1.2 x 5 s = 6 s: not strictly greater
        assert!(reason(&config).contains("1.2 x retry period"));
        config.renew_deadline = Duration::from_millis(6001);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn sub_second_lease_is_rejected() {
        let mut config = valid();
        config.lease_duration = Duration::from_millis(900);
        config.renew_deadline = Duration::from_millis(500);
        config.retry_period = Duration::from_millis(100);
        assert!(reason(&config).contains("below one second"));
    }

    #[test]
    fn lease_seconds_truncate_fractions() {
        let mut config = valid();
        config.lease_duration = Duration::from_millis(15_900);
        assert_eq!(config.lease_duration_seconds(), 15);
    }
}
