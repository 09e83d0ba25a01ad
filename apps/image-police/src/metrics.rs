//! image-police's own metrics, registered next to the runtime's in the manager's one registry
//! (where its reconciles are `controller_runtime_reconcile_total{controller="image-police"}` and
//! friends): the two series only this controller has.

use kubegen_runtime::ProcessMetrics;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

/// The series only image-police has. Cheap to clone: clones share the series.
#[derive(Clone, Debug, Default)]
pub struct PoliceMetrics {
    deployments_deleted: Counter,
    events_failed: Counter,
}

impl PoliceMetrics {
    /// Registers `image_police_*` in the process's registry.
    pub fn register_in(&self, process: &ProcessMetrics) {
        process.register(|registry| self.register(registry));
    }

    fn register(&self, registry: &mut Registry) {
        let prefixed = registry.sub_registry_with_prefix("image_police");
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
