//! A simulated cloud API for `cluster-provisioner`: creating a cluster takes a while, and calls
//! fail now and then, which is what a controller around a real cloud has to cope with.
//!
//! Failures are injected deterministically ([`CloudOptions::fail_first_attempts`]), so tests
//! and the tour show the same retries every run. Time is tokio's, so unit tests run on virtual
//! time.

use std::collections::HashMap;
use std::time::Duration;

use kubegen_api::clusterprovisioner::v1alpha1::ClusterSpec;
use parking_lot::Mutex;
use tokio::time::Instant;

/// How the simulated cloud behaves.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CloudOptions {
    /// How long a cluster takes from the accepted create call until it is ready.
    pub provision_time: Duration,
    /// How many calls for each cluster fail (with a retryable error) before one is accepted.
    pub fail_first_attempts: u32,
}

impl Default for CloudOptions {
    fn default() -> Self {
        CloudOptions {
            provision_time: Duration::from_secs(2),
            fail_first_attempts: 2,
        }
    }
}

/// What one call to the cloud says about a cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Being created: ask again in `ready_in`.
    Creating {
        /// The remaining time.
        ready_in: Duration,
    },
    /// Ready: reachable at `server`.
    Ready {
        /// The API server URL.
        server: String,
    },
}

/// A failed cloud call. Always retryable here, as throttling and quota errors are.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("cloud API call {attempt} for cluster {cluster} failed: simulated throttling (429)")]
pub struct CloudError {
    /// The cluster.
    pub cluster: String,
    /// Which call for this cluster failed, from 1.
    pub attempt: u32,
}

/// The simulated cloud, shared by the workers.
#[derive(Debug)]
pub struct Cloud {
    options: CloudOptions,
    /// Per cluster name. Invariant: `started` is set only after `fail_first_attempts` calls.
    clusters: Mutex<HashMap<String, CloudCluster>>,
}

#[derive(Debug, Default)]
struct CloudCluster {
    /// Calls made for this cluster, failed ones included.
    calls: u32,
    /// When the create call was accepted.
    started: Option<Instant>,
}

impl Cloud {
    /// A cloud with no clusters.
    pub fn new(options: CloudOptions) -> Cloud {
        Cloud {
            options,
            clusters: Mutex::default(),
        }
    }

    /// Creates cluster `name`, or reports how far its creation is: one idempotent call, as a
    /// controller makes on every reconcile.
    ///
    /// # Errors
    /// [`CloudError`] for the first [`CloudOptions::fail_first_attempts`] calls per cluster.
    pub fn ensure_cluster(&self, name: &str, spec: &ClusterSpec) -> Result<Progress, CloudError> {
        let mut clusters = self.clusters.lock();
        let cluster = clusters.entry(name.to_owned()).or_default();
        cluster.calls += 1;
        if cluster.started.is_none() && cluster.calls <= self.options.fail_first_attempts {
            return Err(CloudError {
                cluster: name.to_owned(),
                attempt: cluster.calls,
            });
        }
        let started = *cluster.started.get_or_insert_with(Instant::now);
        let ready_at = started + self.options.provision_time;
        let now = Instant::now();
        if now < ready_at {
            return Ok(Progress::Creating {
                ready_in: ready_at - now,
            });
        }
        let region = spec.region.as_deref().unwrap_or("local");
        Ok(Progress::Ready {
            server: format!("https://{name}.{region}.clusters.example.invalid:6443"),
        })
    }

    /// Deletes cluster `name` (nothing if unknown).
    pub fn delete_cluster(&self, name: &str) {
        self.clusters.lock().remove(name);
    }

    /// Whether the cloud holds cluster `name`.
    pub fn has_cluster(&self, name: &str) -> bool {
        self.clusters.lock().contains_key(name)
    }

    /// How many calls cluster `name` has had, failed ones included (0 when unknown).
    pub fn calls(&self, name: &str) -> u32 {
        self.clusters.lock().get(name).map_or(0, |c| c.calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ClusterSpec {
        ClusterSpec {
            kubernetes_version: "1.33.1".to_owned(),
            workers: 3,
            region: Some("eu-west".to_owned()),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn first_calls_fail_then_creation_takes_the_provision_time() {
        let options = CloudOptions {
            provision_time: Duration::from_secs(5),
            fail_first_attempts: 2,
        };
        let cloud = Cloud::new(options);
        let failed = |attempt| {
            Err(CloudError {
                cluster: "a".to_owned(),
                attempt,
            })
        };
        assert_eq!(cloud.ensure_cluster("a", &spec()), failed(1));
        assert_eq!(cloud.ensure_cluster("a", &spec()), failed(2));
        let creating = |secs| {
            Ok(Progress::Creating {
                ready_in: Duration::from_secs(secs),
            })
        };
        assert_eq!(cloud.ensure_cluster("a", &spec()), creating(5));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(cloud.ensure_cluster("a", &spec()), creating(2));
        tokio::time::advance(Duration::from_secs(2)).await;
        let ready = Progress::Ready {
            server: "https://a.eu-west.clusters.example.invalid:6443".to_owned(),
        };
        assert_eq!(cloud.ensure_cluster("a", &spec()), Ok(ready));
    }

    #[tokio::test(start_paused = true)]
    async fn each_cluster_fails_its_own_first_attempts_and_delete_forgets_it() {
        let options = CloudOptions {
            provision_time: Duration::ZERO,
            fail_first_attempts: 1,
        };
        let cloud = Cloud::new(options);
        assert!(cloud.ensure_cluster("a", &spec()).is_err());
        assert!(cloud.ensure_cluster("b", &spec()).is_err());
        assert!(cloud.ensure_cluster("a", &spec()).is_ok());
        cloud.delete_cluster("a");
        assert!(!cloud.has_cluster("a"));
        assert_eq!((cloud.calls("a"), cloud.calls("b")), (0, 1));
        assert!(
            cloud.ensure_cluster("a", &spec()).is_err(),
            "a re-created cluster starts over"
        );
    }
}
