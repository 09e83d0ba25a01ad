//! What a reconcile of the fleet is given: the [`ClusterContext`] (the queued key, the failures
//! so far, and the [`Cluster`] the key belongs to), and the [`FleetReconciler`] trait an
//! application implements. The counterpart of multicluster-runtime's `mcreconcile.Request`
//! (`pkg/reconcile`: a `reconcile.Request` plus `ClusterName`) and `mcreconcile.Func`.
//!
//! # Same reconciler, one cluster or many
//! A [`FleetReconciler`] written against [`ClusterContext::cluster`] runs unchanged on a fleet of
//! one (a static provider with the local kubeconfig) or of hundreds. Each engaged cluster gets
//! its own [`crate::Controller`] (queue, workers, informer handlers) running the same shared
//! reconciler through [`OnCluster`], which fills in the cluster and counts the outcome under the
//! cluster's label.

use std::future::Future;
use std::sync::Arc;

use kubegen_cache::ObjectKey;

use crate::multicluster::cluster::Cluster;
use crate::multicluster::metrics::FleetMetrics;
use crate::reconcile::{Action, Context, Object, OnError, Reconciler};

/// What one reconcile of the fleet knows besides the object: the key, the failures in a row,
/// and the member cluster it runs for (its client, cache and recorder).
#[derive(Clone, Debug)]
pub struct ClusterContext {
    context: Context,
    cluster: Cluster,
}

impl ClusterContext {
    /// A context for `key` in `cluster` (for tests of reconcilers).
    pub fn new(context: Context, cluster: Cluster) -> ClusterContext {
        ClusterContext { context, cluster }
    }

    /// The member cluster this key belongs to.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The cluster's name (multicluster-runtime's `req.ClusterName`).
    pub fn cluster_name(&self) -> &str {
        self.cluster.name()
    }

    /// The queued key.
    pub fn key(&self) -> &ObjectKey {
        self.context.key()
    }

    /// How many reconciles of this key in this cluster failed in a row before this one.
    pub fn failures(&self) -> u32 {
        self.context.failures()
    }
}

/// The application's business logic for the primary kind `K`, across member clusters.
pub trait FleetReconciler<K>: Send + Sync + 'static {
    /// Why a reconcile failed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Makes `request.cluster()` match `object`. Must be idempotent.
    fn reconcile(
        &self,
        object: Arc<K>,
        request: &ClusterContext,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// What to do after `error`. The default retries with backoff (in that cluster's queue).
    fn on_error(&self, error: &Self::Error, request: &ClusterContext) -> OnError {
        let _ = (error, request);
        OnError::Backoff
    }
}

/// The fleet's reconciler bound to one cluster: a plain [`Reconciler`] for that cluster's
/// [`crate::Controller`]. It calls the application's reconciler only while the cluster is
/// engaged: from the moment the fleet disengages a cluster, none of its reconciles starts.
pub(crate) struct OnCluster<R> {
    pub(crate) reconciler: Arc<R>,
    pub(crate) cluster: Cluster,
    pub(crate) controller: String,
    pub(crate) metrics: FleetMetrics,
}

impl<K: Object, R: FleetReconciler<K>> Reconciler<K> for OnCluster<R> {
    type Error = R::Error;

    async fn reconcile(&self, object: Arc<K>, context: &Context) -> Result<Action, R::Error> {
        // A key the queue handed out just before the cluster was disengaged: its workers are
        // stopping, and the reconcile must not start.
        if !self.cluster.is_engaged() {
            tracing::debug!(
                cluster = self.cluster.name(),
                key = context.key().as_str(),
                "cluster disengaged; not reconciled"
            );
            return Ok(Action::Done);
        }
        let request = ClusterContext::new(context.clone(), self.cluster.clone());
        let result = self.reconciler.reconcile(object, &request).await;
        let outcome = match &result {
            Ok(Action::Done) => "success",
            Ok(Action::RequeueAfter(_)) => "requeue_after",
            Err(_) => "error",
        };
        self.metrics
            .reconciled(&self.controller, self.cluster.name(), outcome);
        result
    }

    fn on_error(&self, error: &R::Error, context: &Context) -> OnError {
        let request = ClusterContext::new(context.clone(), self.cluster.clone());
        self.reconciler.on_error(error, &request)
    }
}
