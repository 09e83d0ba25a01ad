//! The RollingUpdate strategy: grow the new ReplicaSet within `replicas + maxSurge` Pods, shrink
//! old ones while at least `replicas - maxUnavailable` Pods stay available.
//!
//! Mirrors `pkg/controller/deployment/rolling.go`.
//!
//! # Where a rollout stalls without a kubelet
//! Pods never become available, so old ReplicaSets shrink only by their *unhealthy* Pods and
//! only while `all - minAvailable - newUnavailable > 0`. E.g. 3 replicas at 25%/25%: surge 1,
//! unavailable 0, so the new ReplicaSet gets 1 Pod and the old one keeps all 3.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use super::{
    Inner, progress,
    util::{self, Spec},
};
use crate::Result;

impl Inner {
    /// `rolloutRolling`.
    pub(super) async fn rollout_rolling(
        &self,
        d: &mut Deployment,
        rss: Vec<Arc<ReplicaSet>>,
    ) -> Result<()> {
        let (new, old) = self.new_and_old(d, rss, true).await?;
        let Some(new) = new else {
            return Ok(()); // `new_and_old` with `create` always yields one
        };
        let all: Vec<_> = old.iter().cloned().chain([new.clone()]).collect();
        if self.reconcile_new(d, &all, &new).await? {
            return self.sync_rollout_status(d, &all, Some(&new)).await;
        }
        if self
            .reconcile_old(d, &all, util::active(&old), &new)
            .await?
        {
            return self.sync_rollout_status(d, &all, Some(&new)).await;
        }
        let current = d.status.clone().unwrap_or_default();
        if progress::complete(d, &current) {
            self.cleanup(d, &old).await?;
        }
        self.sync_rollout_status(d, &all, Some(&new)).await
    }

    /// Scales the new ReplicaSet toward `replicas` within the surge (`reconcileNewReplicaSet`).
    async fn reconcile_new(
        &self,
        d: &Deployment,
        all: &[Arc<ReplicaSet>],
        new: &Arc<ReplicaSet>,
    ) -> Result<bool> {
        let spec = Spec::of(d);
        let current = util::replicas_of(new);
        let target = match current.cmp(&spec.replicas) {
            std::cmp::Ordering::Equal => return Ok(false),
            std::cmp::Ordering::Greater => spec.replicas,
            std::cmp::Ordering::Less => util::new_rs_replicas(&spec, all, current),
        };
        Ok(self.scale_rs_checked(d, new, target).await?.0)
    }

    /// Scales old ReplicaSets down as far as availability allows (`reconcileOldReplicaSets`).
    async fn reconcile_old(
        &self,
        d: &Deployment,
        all: &[Arc<ReplicaSet>],
        old: Vec<Arc<ReplicaSet>>,
        new: &Arc<ReplicaSet>,
    ) -> Result<bool> {
        if util::spec_replicas(&old) == 0 {
            return Ok(false);
        }
        let spec = Spec::of(d);
        let min_available = spec.replicas - spec.max_unavailable();
        let new_available = new
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        let new_unavailable = util::replicas_of(new) - new_available;
        let max_scaled_down = util::spec_replicas(all) - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(false);
        }
        let (old, cleaned) = self.cleanup_unhealthy(d, old, max_scaled_down).await?;
        let all: Vec<_> = old.iter().cloned().chain([new.clone()]).collect();
        let scaled = self.scale_down_old(d, &all, old).await?;
        Ok(cleaned + scaled > 0)
    }

    /// Removes up to `max` unavailable replicas from old ReplicaSets, oldest first
    /// (`cleanupUnhealthyReplicas`).
    async fn cleanup_unhealthy(
        &self,
        d: &Deployment,
        mut old: Vec<Arc<ReplicaSet>>,
        max: i32,
    ) -> Result<(Vec<Arc<ReplicaSet>>, i32)> {
        old.sort_by(|a, b| util::by_creation(a, b));
        let mut total = 0;
        for rs in &mut old {
            if total >= max {
                break;
            }
            let replicas = util::replicas_of(rs);
            let available = rs
                .status
                .as_ref()
                .and_then(|s| s.available_replicas)
                .unwrap_or(0);
            if replicas == 0 || replicas == available {
                continue;
            }
            let count = (max - total).min(replicas - available);
            let (_, updated) = self.scale_rs_checked(d, rs, replicas - count).await?;
            *rs = updated;
            total += count;
        }
        Ok((old, total))
    }

    /// Scales old ReplicaSets down by what is available beyond the minimum
    /// (`scaleDownOldReplicaSetsForRollingUpdate`).
    async fn scale_down_old(
        &self,
        d: &Deployment,
        all: &[Arc<ReplicaSet>],
        mut old: Vec<Arc<ReplicaSet>>,
    ) -> Result<i32> {
        let spec = Spec::of(d);
        let min_available = spec.replicas - spec.max_unavailable();
        let available = util::available_replicas(all);
        if available <= min_available {
            return Ok(0);
        }
        old.sort_by(|a, b| util::by_creation(a, b));
        let wanted = available - min_available;
        let mut total = 0;
        for rs in &old {
            if total >= wanted {
                break;
            }
            let replicas = util::replicas_of(rs);
            if replicas == 0 {
                continue;
            }
            let count = replicas.min(wanted - total);
            self.scale_rs_checked(d, rs, replicas - count).await?;
            total += count;
        }
        Ok(total)
    }
}
