//! The Recreate strategy: scale every old ReplicaSet to 0, wait until their Pods are gone, then
//! create and scale up the new one.
//!
//! Mirrors `pkg/controller/deployment/recreate.go`.

use std::{collections::HashMap, sync::Arc};

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::Pod,
};

use super::{
    Inner, progress,
    util::{self, Spec},
};
use crate::Result;

impl Inner {
    /// `rolloutRecreate`.
    pub(super) async fn rollout_recreate(
        &self,
        d: &mut Deployment,
        rss: Vec<Arc<ReplicaSet>>,
        pods: &HashMap<String, Vec<Arc<Pod>>>,
    ) -> Result<()> {
        let (mut new, mut old) = self.new_and_old(d, rss.clone(), false).await?;
        let mut all: Vec<_> = old.iter().cloned().chain(new.clone()).collect();
        let mut scaled_down = false;
        for rs in util::active(&old) {
            scaled_down |= self.scale_rs_checked(d, &rs, 0).await?.0;
        }
        if scaled_down || old_pods_running(new.as_deref(), &old, pods) {
            return self.sync_rollout_status(d, &all, new.as_deref()).await;
        }
        if new.is_none() {
            (new, old) = self.new_and_old(d, rss, true).await?;
            all = old.iter().cloned().chain(new.clone()).collect();
        }
        if let Some(rs) = &new {
            self.scale_rs_checked(d, rs, Spec::of(d).replicas).await?;
        }
        let current = d.status.clone().unwrap_or_default();
        if progress::complete(d, &current) {
            self.cleanup(d, &old).await?;
        }
        self.sync_rollout_status(d, &all, new.as_deref()).await
    }
}

/// Whether old ReplicaSets still report replicas or own unfinished Pods (`oldPodsRunning`).
fn old_pods_running(
    new: Option<&ReplicaSet>,
    old: &[Arc<ReplicaSet>],
    pods: &HashMap<String, Vec<Arc<Pod>>>,
) -> bool {
    if util::actual_replicas(old) > 0 {
        return true;
    }
    let new_uid = new
        .and_then(|rs| rs.metadata.uid.as_deref())
        .unwrap_or_default();
    pods.iter()
        .filter(|(uid, _)| uid.as_str() != new_uid)
        .flat_map(|(_, list)| list)
        .any(|pod| {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            !matches!(phase, Some("Failed" | "Succeeded"))
        })
}
