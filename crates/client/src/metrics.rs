//! [`ClientMetrics`]: per-request counters and latency histograms of a [`Client`](crate::Client),
//! registered into the process's one `prometheus_client` [`Registry`].
//!
//! Mirrors client-go `tools/metrics` (the hooks) and the `rest_client_*` families that
//! component-base / controller-runtime register for them, under the same names and labels, so
//! existing dashboards and alerts work unchanged.
//!
//! # Why
//! When a controller misbehaves an operator first asks whether the API server is the problem:
//! - `rest_client_requests_total{code,host,method}`: are requests failing (403 from missing RBAC,
//!   409 conflicts, 429 throttling, 5xx, or `<error>` when no response came back at all)?
//! - `rest_client_request_duration_seconds{host,verb}`: is the server slow?
//! - `rest_client_rate_limiter_duration_seconds{host,verb}`: or is our own client-side QPS limit
//!   ([`Config::rate_limit`](crate::Config::rate_limit)) holding requests back?
//!
//! # What is recorded, and when
//! Everything is recorded in `Client::send`, the one place every request passes through, so the
//! metrics cover the real HTTP transport and any [`Transport`](crate::Transport) given to
//! `Client::with_transport` alike.
//! - One count per attempt: a 429 answer that is retried counts once as `429` and again for the
//!   retry's answer, as in client-go. A request abandoned before its response (request timeout,
//!   caller dropped the future) counts as `<error>`.
//! - One duration per `send`, from entry (before the rate limiter) until the response headers
//!   arrived or the request failed, including 429 retries (client-go measures the same span). For
//!   a watch that is when the stream opens, not when it ends; a list's body streaming afterwards
//!   is not included.
//! - The rate-limiter wait only when a client-side rate limit is configured.
//!
//! # Cost
//! Each record looks its series up in a `prometheus_client` family (a read lock and a hash of
//! the labels) and bumps an atomic counter or a histogram (a short mutex): well under a
//! microsecond, next to a request's network round trip.

use std::time::Duration;

use http::{Method, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upper bounds (seconds) of the duration histogram buckets, as client-go's.
const DURATION_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// The `code` label of a request that got no response.
pub const NO_RESPONSE_CODE: &str = "<error>";

/// Labels of `rest_client_requests_total`, in client-go's order.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    code: String,
    host: String,
    method: String,
}

/// Labels of the two duration histograms, in client-go's order.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    host: String,
    verb: String,
}

type Histograms = Family<LatencyLabels, Histogram, fn() -> Histogram>;

/// The `rest_client_*` series. Cheap to clone: clones share the series.
///
/// Every [`Client`](crate::Client) records into the `ClientMetrics` of its
/// [`Config::metrics`](crate::Config::metrics) (series are told apart by the `host` label), so a
/// process with several clients registers one `ClientMetrics` once:
///
/// ```
/// use prometheus_client::registry::Registry;
/// use kubegen_client::{ClientMetrics, Config};
///
/// let mut registry = Registry::default();
/// let metrics = ClientMetrics::default();
/// metrics.register(&mut registry);
/// let mut config = Config::new("https://10.0.0.1:6443".parse().expect("a URL"));
/// config.metrics = metrics.clone();
/// ```
#[derive(Clone, Debug)]
pub struct ClientMetrics {
    /// Attempts by status code, method and host.
    requests: Family<RequestLabels, Counter>,
    /// Durations of `Client::send` by host and method.
    durations: Histograms,
    /// Client-side rate-limiter waits by host and method.
    rate_limiter: Histograms,
}

impl Default for ClientMetrics {
    fn default() -> Self {
        let histogram: fn() -> Histogram = || Histogram::new(DURATION_BUCKETS);
        ClientMetrics {
            requests: Family::default(),
            durations: Family::new_with_constructor(histogram),
            rate_limiter: Family::new_with_constructor(histogram),
        }
    }
}

impl ClientMetrics {
    /// Registers the three `rest_client_*` families in `registry`. Call it once per process.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host",
            self.requests.clone(),
        );
        registry.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds, until the response headers. Broken down by verb and host",
            self.durations.clone(),
        );
        registry.register(
            "rest_client_rate_limiter_duration_seconds",
            "Client-side rate limiter latency in seconds. Broken down by verb and host",
            self.rate_limiter.clone(),
        );
    }

    /// Counts one attempt of `method` to `host`: its response status, or `None` when none came
    /// back.
    pub(crate) fn count_attempt(&self, host: &str, method: &Method, status: Option<StatusCode>) {
        let code = status.map_or_else(|| NO_RESPONSE_CODE.to_owned(), |s| s.as_u16().to_string());
        let labels = RequestLabels {
            code,
            host: host.to_owned(),
            method: method.as_str().to_owned(),
        };
        self.requests.get_or_create(&labels).inc();
    }

    /// Records how long one `Client::send` of `method` to `host` took.
    pub(crate) fn observe_duration(&self, host: &str, method: &Method, took: Duration) {
        observe(&self.durations, host, method, took);
    }

    /// Records how long one request of `method` to `host` waited for the client-side limiter.
    pub(crate) fn observe_rate_limiter(&self, host: &str, method: &Method, waited: Duration) {
        observe(&self.rate_limiter, host, method, waited);
    }
}

fn observe(family: &Histograms, host: &str, method: &Method, took: Duration) {
    let labels = LatencyLabels {
        host: host.to_owned(),
        verb: method.as_str().to_owned(),
    };
    family.get_or_create(&labels).observe(took.as_secs_f64());
}

/// Where one client's requests are recorded: the shared series and the client's `host` label.
#[derive(Clone, Debug)]
pub(crate) struct RequestRecorder {
    pub(crate) metrics: ClientMetrics,
    /// The server's `host:port` (empty for a client over a custom transport).
    pub(crate) host: String,
}

/// Records the duration of one `Client::send` when dropped, so a request abandoned mid-way (its
/// future dropped by a timeout) is measured too.
pub(crate) struct DurationGuard<'a> {
    recorder: &'a RequestRecorder,
    method: Method,
    started: tokio::time::Instant,
}

impl<'a> DurationGuard<'a> {
    pub(crate) fn start(recorder: &'a RequestRecorder, method: &Method) -> DurationGuard<'a> {
        DurationGuard {
            recorder,
            method: method.clone(),
            started: tokio::time::Instant::now(),
        }
    }
}

impl Drop for DurationGuard<'_> {
    fn drop(&mut self) {
        let recorder = self.recorder;
        recorder
            .metrics
            .observe_duration(&recorder.host, &self.method, self.started.elapsed());
    }
}

/// Counts one attempt: with its status via [`finish`](Self::finish), or as
/// [`NO_RESPONSE_CODE`] when dropped before (the attempt was abandoned).
pub(crate) struct AttemptGuard<'a> {
    recorder: &'a RequestRecorder,
    method: &'a Method,
    done: bool,
}

impl<'a> AttemptGuard<'a> {
    pub(crate) fn start(recorder: &'a RequestRecorder, method: &'a Method) -> AttemptGuard<'a> {
        AttemptGuard {
            recorder,
            method,
            done: false,
        }
    }

    pub(crate) fn finish(mut self, status: Option<StatusCode>) {
        self.done = true;
        let recorder = self.recorder;
        recorder
            .metrics
            .count_attempt(&recorder.host, self.method, status);
    }
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            let recorder = self.recorder;
            recorder
                .metrics
                .count_attempt(&recorder.host, self.method, None);
        }
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
