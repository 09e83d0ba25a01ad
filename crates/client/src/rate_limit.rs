//! [`RateLimit`]: the optional client-side QPS/burst limit every request of a
//! [`Client`](crate::Client) passes through.
//!
//! Mirrors client-go `rest.Config.QPS` and `Burst`, which build a
//! `flowcontrol.NewTokenBucketRateLimiter`; the bucket itself is
//! [`kubegen_flowcontrol::TokenBucket`], shared with the workqueue. Waits are exported as
//! `rest_client_rate_limiter_duration_seconds` ([`ClientMetrics`](crate::ClientMetrics)).
//!
//! # Why off by default
//! Modern API servers protect themselves with priority and fairness and answer 429 with
//! `Retry-After`, which the client honours. A client-side limit on top mostly slows informers'
//! initial lists, so it is opt-in ([`crate::Config::rate_limit`]).
//!
//! # Differences from client-go
//! A `qps` that is not a finite number above zero, or a `burst` of 0, makes
//! [`Client::new`](crate::Client::new) fail with [`Error::RateLimitInvalid`]; client-go treats a
//! zero QPS as "use the default" and accepts anything else.

use kubegen_flowcontrol::TokenBucket;

use crate::error::{Error, Result};

/// Requests per second and burst size for [`crate::Config::rate_limit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second: a finite number above 0.
    pub qps: f64,
    /// Requests allowed at once after a quiet period: at least 1.
    pub burst: u32,
}

impl RateLimit {
    /// The token bucket enforcing this limit.
    ///
    /// # Errors
    /// [`Error::RateLimitInvalid`] for a qps or burst no bucket can honour.
    pub(crate) fn bucket(self) -> Result<TokenBucket> {
        TokenBucket::new(self.qps, self.burst).map_err(|source| Error::RateLimitInvalid { source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_limits_are_a_configuration_error() {
        for (qps, burst) in [
            (0.0, 10),
            (-5.0, 10),
            (f64::NAN, 10),
            (f64::INFINITY, 10),
            (5.0, 0),
        ] {
            let result = RateLimit { qps, burst }.bucket();
            assert!(
                matches!(result, Err(Error::RateLimitInvalid { source }) if source.burst == burst),
                "qps {qps} burst {burst}"
            );
        }
        assert!(
            RateLimit {
                qps: 5.0,
                burst: 10
            }
            .bucket()
            .is_ok()
        );
    }
}
