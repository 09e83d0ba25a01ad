//! [`ControllerManagerOptions`]: which controllers run and with what, built with builder methods
//! so a test in another crate can write
//! `ControllerManagerOptions::default().without(Controller::GarbageCollector)`.

use std::{collections::BTreeSet, fmt, sync::Arc, time::Duration};

use k8s_openapi::jiff::Timestamp;

/// A controller of kube-controller-manager, by the name its `--controllers` flag uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    /// `namespace-controller`: empties and finalizes terminating namespaces.
    Namespace,
    /// `garbage-collector-controller`: ownerReferences, background/foreground/orphan deletion.
    GarbageCollector,
    /// `serviceaccount-controller`: a `default` ServiceAccount in every active namespace.
    ServiceAccount,
    /// `serviceaccount-token-controller`: fills ServiceAccount token Secrets.
    ServiceAccountToken,
    /// `root-ca-certificate-publisher-controller`: a `kube-root-ca.crt` ConfigMap per namespace.
    RootCaCertificatePublisher,
    /// `deployment-controller`.
    Deployment,
    /// `replicaset-controller`.
    ReplicaSet,
    /// `statefulset-controller`.
    StatefulSet,
    /// `daemonset-controller`.
    DaemonSet,
    /// `job-controller`.
    Job,
    /// `cronjob-controller`.
    CronJob,
    /// `endpointslice-controller`: the EndpointSlices of Services with a selector.
    EndpointSlice,
    /// `validatingadmissionpolicy-status-controller`: type-checks admission policies and writes
    /// `status.typeChecking`.
    ValidatingAdmissionPolicyStatus,
    /// `node-lifecycle-controller`: Node conditions go `Unknown` when heartbeats stop, and the
    /// Nodes get the taints their conditions call for.
    NodeLifecycle,
    /// `taint-eviction-controller`: deletes Pods from Nodes with `NoExecute` taints they do not
    /// tolerate.
    TaintEviction,
}

impl Controller {
    /// Every controller this crate knows.
    pub const ALL: [Controller; 15] = [
        Controller::Namespace,
        Controller::GarbageCollector,
        Controller::ServiceAccount,
        Controller::ServiceAccountToken,
        Controller::RootCaCertificatePublisher,
        Controller::Deployment,
        Controller::ReplicaSet,
        Controller::StatefulSet,
        Controller::DaemonSet,
        Controller::Job,
        Controller::CronJob,
        Controller::EndpointSlice,
        Controller::ValidatingAdmissionPolicyStatus,
        Controller::NodeLifecycle,
        Controller::TaintEviction,
    ];

    /// kube-controller-manager's name for it (`namespace-controller`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Controller::Namespace => "namespace-controller",
            Controller::GarbageCollector => "garbage-collector-controller",
            Controller::ServiceAccount => "serviceaccount-controller",
            Controller::ServiceAccountToken => "serviceaccount-token-controller",
            Controller::RootCaCertificatePublisher => "root-ca-certificate-publisher-controller",
            Controller::Deployment => "deployment-controller",
            Controller::ReplicaSet => "replicaset-controller",
            Controller::StatefulSet => "statefulset-controller",
            Controller::DaemonSet => "daemonset-controller",
            Controller::Job => "job-controller",
            Controller::CronJob => "cronjob-controller",
            Controller::EndpointSlice => "endpointslice-controller",
            Controller::ValidatingAdmissionPolicyStatus => {
                "validatingadmissionpolicy-status-controller"
            }
            Controller::NodeLifecycle => "node-lifecycle-controller",
            Controller::TaintEviction => "taint-eviction-controller",
        }
    }

    /// The controller kube-controller-manager calls `name`, if this crate has it.
    pub fn from_name(name: &str) -> Option<Controller> {
        Controller::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// What time it is for the controllers that act at wall-clock times (the cronjob controller's
/// schedules). The system clock by default; a test can shift it to stand just before a
/// scheduled minute (`Clock::new(|| Timestamp::now() + offset)`), as the real controller's
/// tests inject a fake clock. Waits still pass in real time.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock(Arc::new(Timestamp::now))
    }

    /// A clock reading `now`.
    pub fn new(now: impl Fn() -> Timestamp + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    /// The time now.
    pub fn now(&self) -> Timestamp {
        (self.0)()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Clock({})", self.now())
    }
}

/// The node-lifecycle controller's timings and eviction rates: kube-controller-manager's
/// `--node-monitor-period`, `--node-monitor-grace-period`, `--node-startup-grace-period`,
/// `--node-eviction-rate`, `--secondary-node-eviction-rate`, `--large-cluster-size-threshold` and
/// `--unhealthy-zone-threshold`. [`Default`] gives v1.36's defaults; tests shorten the periods so
/// they need not wait 50 s for a silent Node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLifecycleOptions {
    /// How often Node health is checked (5 s).
    pub monitor_period: Duration,
    /// How long a Node that posted status may stay silent before it is `Unknown` (50 s).
    pub monitor_grace_period: Duration,
    /// How long a Node that never posted status may stay silent (60 s).
    pub startup_grace_period: Duration,
    /// Nodes per second that get `NoExecute` taints in a healthy zone (0.1).
    pub eviction_rate: f32,
    /// Nodes per second in a partially disrupted zone larger than
    /// `large_cluster_size_threshold` (0.01; 0 in smaller zones).
    pub secondary_eviction_rate: f32,
    /// Zone size above which the secondary rate applies (50).
    pub large_cluster_size_threshold: usize,
    /// Share of not-Ready Nodes (when more than 2) that makes a zone partially disrupted (0.55).
    pub unhealthy_zone_threshold: f32,
}

impl Default for NodeLifecycleOptions {
    fn default() -> Self {
        NodeLifecycleOptions {
            monitor_period: Duration::from_secs(5),
            monitor_grace_period: Duration::from_secs(50),
            startup_grace_period: Duration::from_secs(60),
            eviction_rate: 0.1,
            secondary_eviction_rate: 0.01,
            large_cluster_size_threshold: 50,
            unhealthy_zone_threshold: 0.55,
        }
    }
}

/// What a [`ControllerManager`](crate::ControllerManager) runs.
///
/// # Defaults
/// Every controller but [`Controller::RootCaCertificatePublisher`]: a `kube-root-ca.crt`
/// ConfigMap appearing in every namespace would change what tests that count ConfigMaps see, so
/// it is opt-in here although a real cluster runs it. Workers per controller: kube-controller-
/// manager's defaults (`--concurrent-namespace-syncs` 10, `--concurrent-gc-syncs` 20,
/// `--concurrent-serviceaccount-token-syncs` 5, `--concurrent-statefulset-syncs` 5, `--concurrent-daemonset-syncs` 2,
/// `--concurrent-job-syncs` 5, `--concurrent-cron-job-syncs` 5), which only matter under load.
#[derive(Clone, Debug)]
pub struct ControllerManagerOptions {
    pub(crate) controllers: BTreeSet<Controller>,
    pub(crate) root_ca_pem: Option<String>,
    pub(crate) workers: Option<usize>,
    pub(crate) clock: Clock,
    pub(crate) node_lifecycle: NodeLifecycleOptions,
}

impl Default for ControllerManagerOptions {
    fn default() -> Self {
        let controllers = Controller::ALL
            .into_iter()
            .filter(|c| *c != Controller::RootCaCertificatePublisher)
            .collect();
        ControllerManagerOptions {
            controllers,
            root_ca_pem: None,
            workers: None,
            clock: Clock::system(),
            node_lifecycle: NodeLifecycleOptions::default(),
        }
    }
}

impl ControllerManagerOptions {
    /// Runs `controller` too.
    pub fn with(mut self, controller: Controller) -> Self {
        self.controllers.insert(controller);
        self
    }

    /// Does not run `controller`.
    pub fn without(mut self, controller: Controller) -> Self {
        self.controllers.remove(&controller);
        self
    }

    /// Runs exactly `controllers`.
    pub fn only(mut self, controllers: impl IntoIterator<Item = Controller>) -> Self {
        self.controllers = controllers.into_iter().collect();
        self
    }

    /// The cluster's CA certificate (PEM): the token controller writes it as `ca.crt` and the
    /// root-CA publisher publishes it (kube-controller-manager's `--root-ca-file`). Without one,
    /// token Secrets get no `ca.crt` and the publisher does not run.
    pub fn root_ca_pem(mut self, pem: Option<String>) -> Self {
        self.root_ca_pem = pem;
        self
    }

    /// Workers of every controller (at least 1), instead of kube-controller-manager's defaults.
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers.max(1));
        self
    }

    /// The clock the cronjob controller schedules by ([`Clock::system`] by default).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The node-lifecycle controller's periods and rates (v1.36's defaults otherwise).
    pub fn node_lifecycle(mut self, options: NodeLifecycleOptions) -> Self {
        self.node_lifecycle = options;
        self
    }

    /// Whether `controller` runs.
    pub fn runs(&self, controller: Controller) -> bool {
        self.controllers.contains(&controller)
    }

    /// Workers for a controller whose kube-controller-manager default is `default`.
    pub(crate) fn workers_or(&self, default: usize) -> usize {
        self.workers.unwrap_or(default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_leaves_the_root_ca_publisher_out() {
        let options = ControllerManagerOptions::default();
        for controller in Controller::ALL {
            let expected = controller != Controller::RootCaCertificatePublisher;
            assert_eq!(options.runs(controller), expected, "{}", controller.name());
        }
    }

    #[test]
    fn controllers_are_found_by_kube_controller_manager_names() {
        for controller in Controller::ALL {
            assert_eq!(Controller::from_name(controller.name()), Some(controller));
        }
        assert_eq!(
            Controller::from_name("pod-garbage-collector-controller"),
            None
        );
    }

    #[test]
    fn builder_methods_add_remove_and_replace() {
        let options = ControllerManagerOptions::default()
            .without(Controller::GarbageCollector)
            .with(Controller::RootCaCertificatePublisher);
        assert!(!options.runs(Controller::GarbageCollector));
        assert!(options.runs(Controller::RootCaCertificatePublisher));
        let only = options.only([Controller::Namespace]);
        assert!(only.runs(Controller::Namespace));
        assert!(!only.runs(Controller::ServiceAccount));
    }
}
