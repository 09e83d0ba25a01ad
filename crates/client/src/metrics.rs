//! [`ClientMetrics`]: per-request counters and latency histograms of a [`Client`](crate::Client),
//! rendered in the Prometheus text exposition format.
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
//! Hand-written rather than a metrics crate: three families do not justify a dependency, and the
//! exposition format is a few lines of text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use parking_lot::Mutex;

/// Upper bounds (seconds) of the duration histogram buckets, as client-go's.
pub const DURATION_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// The `code` label of a request that got no response.
pub const NO_RESPONSE_CODE: &str = "<error>";

const REQUESTS: &str = "rest_client_requests_total";
const DURATION: &str = "rest_client_request_duration_seconds";
const RATE_LIMITER: &str = "rest_client_rate_limiter_duration_seconds";

/// A cheap-to-clone handle to the request metrics of one [`Client`](crate::Client) and all its
/// clones (they share one set of series).
#[derive(Clone)]
pub struct ClientMetrics {
    inner: Arc<Inner>,
}

struct Inner {
    /// The `host` label: the server's `host:port` (empty for a client over a custom transport).
    host: String,
    series: Mutex<Series>,
}

#[derive(Default)]
struct Series {
    /// Attempts by `(method, code)`.
    requests: BTreeMap<(String, String), u64>,
    /// Request durations by method.
    durations: BTreeMap<String, Histogram>,
    /// Client-side rate-limiter waits by method.
    rate_limiter: BTreeMap<String, Histogram>,
}

#[derive(Default)]
struct Histogram {
    /// Observations falling into each bucket (not cumulative): `counts[i]` holds those
    /// `<= DURATION_BUCKETS[i]` and above the previous bound; the last entry is `+Inf`.
    /// Invariant: the entries sum to `count`.
    counts: [u64; DURATION_BUCKETS.len() + 1],
    count: u64,
    sum_seconds: f64,
}

impl Histogram {
    fn observe(&mut self, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = DURATION_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(DURATION_BUCKETS.len());
        self.counts[bucket] += 1;
        self.count += 1;
        self.sum_seconds += seconds;
    }
}

impl std::fmt::Debug for ClientMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientMetrics")
            .field("host", &self.inner.host)
            .finish_non_exhaustive()
    }
}

impl ClientMetrics {
    pub(crate) fn new(host: &str) -> ClientMetrics {
        ClientMetrics {
            inner: Arc::new(Inner {
                host: host.to_owned(),
                series: Mutex::default(),
            }),
        }
    }

    /// Attempts of `method` (e.g. `"GET"`) that ended with `code` (e.g. `"200"`, or
    /// [`NO_RESPONSE_CODE`]) so far.
    pub fn requests_total(&self, method: &str, code: &str) -> u64 {
        let series = self.inner.series.lock();
        series
            .requests
            .get(&(method.to_owned(), code.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Counts one attempt of `method`: its response status, or `None` when none came back.
    pub(crate) fn count_attempt(&self, method: &Method, status: Option<StatusCode>) {
        let code = status.map_or_else(|| NO_RESPONSE_CODE.to_owned(), |s| s.as_u16().to_string());
        let mut series = self.inner.series.lock();
        *series
            .requests
            .entry((method.as_str().to_owned(), code))
            .or_default() += 1;
    }

    /// Records how long one `Client::send` of `method` took.
    pub(crate) fn observe_duration(&self, method: &Method, took: Duration) {
        let mut series = self.inner.series.lock();
        series
            .durations
            .entry(method.as_str().to_owned())
            .or_default()
            .observe(took);
    }

    /// Records how long one request of `method` waited for the client-side rate limiter.
    pub(crate) fn observe_rate_limiter(&self, method: &Method, waited: Duration) {
        let mut series = self.inner.series.lock();
        series
            .rate_limiter
            .entry(method.as_str().to_owned())
            .or_default()
            .observe(waited);
    }

    /// Appends the three `rest_client_*` families to `out`, in the Prometheus text format
    /// (version 0.0.4). Families without observations still get their `HELP`/`TYPE` lines.
    pub fn render_prometheus(&self, out: &mut String) {
        let host = escape_label(&self.inner.host);
        let series = self.inner.series.lock();
        header(
            out,
            REQUESTS,
            "counter",
            "Number of HTTP requests, partitioned by status code, method, and host.",
        );
        for ((method, code), value) in &series.requests {
            let (method, code) = (escape_label(method), escape_label(code));
            let _ = writeln!(
                out,
                "{REQUESTS}{{code=\"{code}\",host=\"{host}\",method=\"{method}\"}} {value}"
            );
        }
        header(
            out,
            DURATION,
            "histogram",
            "Request latency in seconds, until the response headers. Broken down by verb and host.",
        );
        render_histograms(out, DURATION, &host, &series.durations);
        header(
            out,
            RATE_LIMITER,
            "histogram",
            "Client-side rate limiter latency in seconds. Broken down by verb and host.",
        );
        render_histograms(out, RATE_LIMITER, &host, &series.rate_limiter);
    }

    /// The whole rendering as a new string (see [`render_prometheus`](Self::render_prometheus)).
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_prometheus(&mut out);
        out
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        let series = self.inner.series.lock();
        for histogram in series
            .durations
            .values()
            .chain(series.rate_limiter.values())
        {
            assert_eq!(histogram.counts.iter().sum::<u64>(), histogram.count);
        }
    }
}

/// Records the duration of one `Client::send` when dropped, so a request abandoned mid-way (its
/// future dropped by a timeout) is measured too.
pub(crate) struct DurationGuard<'a> {
    metrics: &'a ClientMetrics,
    method: Method,
    started: tokio::time::Instant,
}

impl<'a> DurationGuard<'a> {
    pub(crate) fn start(metrics: &'a ClientMetrics, method: &Method) -> DurationGuard<'a> {
        DurationGuard {
            metrics,
            method: method.clone(),
            started: tokio::time::Instant::now(),
        }
    }
}

impl Drop for DurationGuard<'_> {
    fn drop(&mut self) {
        self.metrics
            .observe_duration(&self.method, self.started.elapsed());
    }
}

/// Counts one attempt: with its status via [`finish`](Self::finish), or as
/// [`NO_RESPONSE_CODE`] when dropped before (the attempt was abandoned).
pub(crate) struct AttemptGuard<'a> {
    metrics: &'a ClientMetrics,
    method: &'a Method,
    done: bool,
}

impl<'a> AttemptGuard<'a> {
    pub(crate) fn start(metrics: &'a ClientMetrics, method: &'a Method) -> AttemptGuard<'a> {
        AttemptGuard {
            metrics,
            method,
            done: false,
        }
    }

    pub(crate) fn finish(mut self, status: Option<StatusCode>) {
        self.done = true;
        self.metrics.count_attempt(self.method, status);
    }
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.metrics.count_attempt(self.method, None);
        }
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn render_histograms(
    out: &mut String,
    name: &str,
    host: &str,
    histograms: &BTreeMap<String, Histogram>,
) {
    for (verb, histogram) in histograms {
        let labels = format!("host=\"{host}\",verb=\"{}\"", escape_label(verb));
        let mut cumulative = 0;
        for (bound, count) in DURATION_BUCKETS.iter().zip(&histogram.counts) {
            cumulative += count;
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels},le=\"+Inf\"}} {}",
            histogram.count
        );
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", histogram.sum_seconds);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", histogram.count);
    }
}

/// Escapes a label value as the exposition format requires (`\`, `"` and newline).
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
