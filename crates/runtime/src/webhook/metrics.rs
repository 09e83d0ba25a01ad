//! controller-runtime's webhook families (`pkg/webhook/internal/metrics`), labelled by the
//! webhook's path, so dashboards written for Go operators read the same here:
//!
//! | family | labels | meaning |
//! |---|---|---|
//! | `controller_runtime_webhook_requests_total` | `webhook`, `code` | requests answered, by HTTP status (200 for every review answer, allowed or denied) |
//! | `controller_runtime_webhook_latency_seconds` | `webhook` | histogram of the time to answer |
//! | `controller_runtime_webhook_requests_in_flight` | `webhook` | requests being answered now |

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::metrics::ProcessMetrics;

/// Upper bounds (seconds) of the latency buckets: Prometheus's default buckets, which
/// controller-runtime's histogram uses.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabel {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    webhook: String,
    code: String,
}

/// The webhook series of one process; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct WebhookMetrics {
    requests: Family<CodeLabels, Counter>,
    latency: Family<WebhookLabel, Histogram>,
    in_flight: Family<WebhookLabel, Gauge>,
}

impl WebhookMetrics {
    /// Fresh series, registered in `metrics`.
    pub(crate) fn new(metrics: &ProcessMetrics) -> WebhookMetrics {
        let this = WebhookMetrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(|| Histogram::new(BUCKETS)),
            in_flight: Family::default(),
        };
        metrics.register(|registry| {
            registry.register(
                "controller_runtime_webhook_requests",
                "Total number of admission requests by HTTP status code.",
                this.requests.clone(),
            );
            registry.register(
                "controller_runtime_webhook_latency_seconds",
                "Histogram of the latency of processing admission requests",
                this.latency.clone(),
            );
            registry.register(
                "controller_runtime_webhook_requests_in_flight",
                "Current number of admission requests being served.",
                this.in_flight.clone(),
            );
        });
        this
    }

    pub(crate) fn started(&self, webhook: &str) {
        self.in_flight.get_or_create(&label(webhook)).inc();
    }

    pub(crate) fn finished(&self, webhook: &str, code: u16, took: Duration) {
        self.in_flight.get_or_create(&label(webhook)).dec();
        self.latency
            .get_or_create(&label(webhook))
            .observe(took.as_secs_f64());
        let labels = CodeLabels {
            webhook: webhook.to_owned(),
            code: code.to_string(),
        };
        self.requests.get_or_create(&labels).inc();
    }
}

fn label(webhook: &str) -> WebhookLabel {
    WebhookLabel {
        webhook: webhook.to_owned(),
    }
}
