//! image-police's metrics: the runtime's one registry ([`ProcessMetrics`]: reconciles as
//! `image_police_reconcile_*`, client, workqueue, informers) plus the two series only this
//! controller has ([`PoliceMetrics`]).

use kubegen_runtime::AppMetrics;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

/// Every metric of the image-police process, in one registry.
pub type ProcessMetrics = kubegen_runtime::ProcessMetrics<PoliceMetrics>;

/// The series only image-police has. Cheap to clone: clones share the series.
#[derive(Clone, Debug, Default)]
pub struct PoliceMetrics {
    deployments_deleted: Counter,
    events_failed: Counter,
}

impl AppMetrics for PoliceMetrics {
    const PREFIX: &'static str = "image_police";

    fn register(&self, registry: &mut Registry) {
        let prefixed = registry.sub_registry_with_prefix(Self::PREFIX);
        prefixed.register(
            "deployments_deleted",
            "Deployments deleted for running a denied image",
            self.deployments_deleted.clone(),
        );
        prefixed.register(
            "events_failed",
            "Events that could not be recorded",
            self.events_failed.clone(),
        );
    }
}

impl PoliceMetrics {
    /// Counts one Deployment deleted for running a denied image.
    pub fn deployment_deleted(&self) {
        self.deployments_deleted.inc();
    }

    /// Counts one Event that could not be written (Events are best effort).
    pub fn event_failed(&self) {
        self.events_failed.inc();
    }
}

#[cfg(test)]
impl PoliceMetrics {
    /// The value of the unlabelled sample `metric` in a parsed scrape of these series alone.
    pub(crate) fn scraped(&self, metric: &str) -> Option<f64> {
        let mut registry = Registry::default();
        self.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).ok()?;
        let scrape =
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).ok()?;
        scrape
            .samples
            .into_iter()
            .find(|s| s.metric == metric && s.labels.is_empty())
            .and_then(|s| match s.value {
                prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => {
                    Some(v)
                }
                _ => None,
            })
    }
}
