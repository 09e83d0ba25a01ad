//! The fleet's series, each labelled by cluster: controller-runtime's reconcile counters
//! (`controller_runtime_reconcile_total{controller, result}`, `pkg/internal/controller/metrics`)
//! with a `cluster` label, and the state of every engaged cluster.
//!
//! # Why a `multicluster_runtime_` prefix
//! A Prometheus family has one label set. The per-controller families of the single-cluster
//! runtime keep theirs (`controller`, `result`), so dashboards built for controller-runtime keep
//! working and count every cluster's reconciles together (the member clusters' controllers
//! record into them under the controller's name, as multicluster-runtime's one controller per
//! name does); the per-cluster split lives in families of the same names and shapes under the
//! `multicluster_runtime_` prefix, with `cluster` added.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use crate::metrics::ProcessMetrics;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    controller: String,
    cluster: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    controller: String,
    cluster: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClusterLabel {
    cluster: String,
}

/// The fleet's families, registered once in the process registry. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub(crate) struct FleetMetrics {
    reconciles: Family<ReconcileLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    engaged: Family<ClusterLabel, Gauge>,
    ready: Family<ClusterLabel, Gauge>,
    engaged_total: Gauge,
}

impl FleetMetrics {
    /// Fresh families, registered in `metrics`.
    pub(crate) fn new(metrics: &ProcessMetrics) -> FleetMetrics {
        let fleet = FleetMetrics::default();
        let copy = fleet.clone();
        metrics.register(move |registry| {
            registry.register(
                "multicluster_runtime_reconcile",
                "Total number of reconciliations per controller and member cluster",
                copy.reconciles,
            );
            registry.register(
                "multicluster_runtime_reconcile_errors",
                "Total number of reconciliation errors per controller and member cluster",
                copy.errors,
            );
            registry.register(
                "multicluster_runtime_cluster_engaged",
                "Whether the member cluster is engaged by this replica (1); absent once disengaged",
                copy.engaged,
            );
            registry.register(
                "multicluster_runtime_cluster_ready",
                "Whether the member cluster answers and its caches synced (1) or not (0)",
                copy.ready,
            );
            registry.register(
                "multicluster_runtime_engaged_clusters",
                "Number of member clusters this replica engages",
                copy.engaged_total,
            );
        });
        fleet
    }

    /// Counts one reconcile of `controller` in `cluster` ending with `result`
    /// (`success`, `requeue_after`, `error`).
    pub(crate) fn reconciled(&self, controller: &str, cluster: &str, result: &str) {
        let labels = ReconcileLabels {
            controller: controller.to_owned(),
            cluster: cluster.to_owned(),
            result: result.to_owned(),
        };
        self.reconciles.get_or_create(&labels).inc();
        if result == "error" {
            let labels = ErrorLabels {
                controller: controller.to_owned(),
                cluster: cluster.to_owned(),
            };
            self.errors.get_or_create(&labels).inc();
        }
    }

    /// Records that `cluster` is engaged (or, with `false`, drops its series).
    pub(crate) fn set_engaged(&self, cluster: &str, engaged: bool, total: usize) {
        let label = ClusterLabel {
            cluster: cluster.to_owned(),
        };
        if engaged {
            self.engaged.get_or_create(&label).set(1);
            self.ready.get_or_create(&label).set(0);
        } else {
            self.engaged.remove(&label);
            self.ready.remove(&label);
        }
        self.engaged_total
            .set(i64::try_from(total).unwrap_or(i64::MAX));
    }

    /// Records whether `cluster` answers and has synced.
    pub(crate) fn set_ready(&self, cluster: &str, ready: bool) {
        let label = ClusterLabel {
            cluster: cluster.to_owned(),
        };
        self.ready.get_or_create(&label).set(i64::from(ready));
    }
}
