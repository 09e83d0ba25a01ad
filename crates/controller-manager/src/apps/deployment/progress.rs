//! Deployment conditions: `Available`, `Progressing` (with its deadline) and `ReplicaFailure`,
//! and the pause bookkeeping.
//!
//! Mirrors `pkg/controller/deployment/progress.go` and the condition helpers of
//! `util/deployment_util.go` (`NewDeploymentCondition`, `SetDeploymentCondition`,
//! `DeploymentComplete`, `DeploymentProgressing`, `DeploymentTimedOut`).
//!
//! # Why a deadline needs a timer
//! Nothing changes when a rollout is stuck, so no event would ever trigger the sync that notices
//! `progressDeadlineSeconds` has passed. After every sync of an unfinished rollout we re-add the
//! Deployment to the queue for when the deadline falls (`requeueStuckDeployment`).

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::{
    Inner,
    util::{self, Spec},
};
use crate::Result;
use crate::workload::meta::key_of;
use crate::workload::versioned::{string, text};

/// Now, to the second: what the API server stores and returns, so a condition written now
/// compares equal to itself read back.
fn now() -> Time {
    let now = Timestamp::now();
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// A condition that changed now (`NewDeploymentCondition`).
pub(super) fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: string(type_),
        status: string(status),
        reason: Some(reason.into()),
        message: Some(message),
        last_update_time: Some(now()),
        last_transition_time: Some(now()),
    }
}

/// The condition of `type_` in the Deployment's status.
pub(super) fn condition<'a>(d: &'a Deployment, type_: &str) -> Option<&'a DeploymentCondition> {
    find(d.status.as_ref()?, type_)
}

fn find<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| text(&c.type_) == type_)
}

/// Sets a condition in the Deployment's status.
pub(super) fn set(d: &mut Deployment, condition: DeploymentCondition) {
    set_in(d.status.get_or_insert_with(Default::default), condition);
}

/// `SetDeploymentCondition`: unchanged if status and reason are the same; otherwise moved to
/// the end, keeping its transition time when only the reason changed.
pub(super) fn set_in(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = find(status, text(&condition.type_)) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    let type_ = text(&condition.type_).to_owned();
    remove(status, &type_);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(condition);
}

/// `RemoveDeploymentCondition`; no conditions left is `None`, as Go's nil slice.
fn remove(status: &mut DeploymentStatus, type_: &str) {
    if let Some(conditions) = status.conditions.as_mut() {
        conditions.retain(|c| text(&c.type_) != type_);
        if conditions.is_empty() {
            status.conditions = None;
        }
    }
}

fn counts(s: &DeploymentStatus) -> (i32, i32, i32, i32) {
    (
        s.replicas.unwrap_or(0),
        s.updated_replicas.unwrap_or(0),
        s.ready_replicas.unwrap_or(0),
        s.available_replicas.unwrap_or(0),
    )
}

/// All replicas updated and available, and the latest generation observed (`DeploymentComplete`).
pub(super) fn complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let replicas = Spec::of(d).replicas;
    let (total, updated, _, available) = counts(status);
    updated == replicas
        && total == replicas
        && available == replicas
        && status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// More updated, ready or available replicas, or fewer old ones (`DeploymentProgressing`).
fn progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = d.status.clone().unwrap_or_default();
    let (o_total, o_updated, o_ready, o_available) = counts(&old);
    let (n_total, n_updated, n_ready, n_available) = counts(new);
    n_updated > o_updated
        || n_total - n_updated < o_total - o_updated
        || n_ready > o_ready
        || n_available > o_available
}

/// The Progressing condition was last updated more than the deadline ago (`DeploymentTimedOut`).
fn timed_out(d: &Deployment, status: &DeploymentStatus) -> bool {
    let Some(deadline) = Spec::of(d).progress_deadline_seconds else {
        return false;
    };
    let Some(c) = find(status, "Progressing") else {
        return false;
    };
    match c.reason.as_deref() {
        Some("NewReplicaSetAvailable") => false,
        Some("ProgressDeadlineExceeded") => true,
        _ => c.last_update_time.as_ref().is_some_and(|t| {
            t.0.as_millisecond() + i64::from(deadline) * 1000 < Timestamp::now().as_millisecond()
        }),
    }
}

fn rs_name(new: Option<&ReplicaSet>) -> Option<&str> {
    new.and_then(|rs| rs.metadata.name.as_deref())
}

impl Inner {
    /// Computes the status with the Progressing condition and writes it if it changed;
    /// otherwise schedules the deadline check (`syncRolloutStatus`).
    pub(super) async fn sync_rollout_status(
        &self,
        d: &mut Deployment,
        all: &[Arc<ReplicaSet>],
        new: Option<&ReplicaSet>,
    ) -> Result<()> {
        let mut status = calculate_status(d, all, new);
        let has_deadline = Spec::of(d).progress_deadline_seconds.is_some();
        if !has_deadline {
            remove(&mut status, "Progressing");
        }
        let current = condition(d, "Progressing").cloned();
        let (total, updated, ..) = counts(&status);
        let finished = total == updated
            && current
                .as_ref()
                .is_some_and(|c| c.reason.as_deref() == Some("NewReplicaSetAvailable"));
        let name = d.metadata.name.clone().unwrap_or_default();
        let subject = match rs_name(new) {
            Some(rs) => format!("ReplicaSet {rs:?}"),
            None => format!("Deployment {name:?}"),
        };
        if has_deadline && !finished {
            if complete(d, &status) {
                let message = format!("{subject} has successfully progressed.");
                set_in(
                    &mut status,
                    new_condition("Progressing", "True", "NewReplicaSetAvailable", message),
                );
            } else if progressing(d, &status) {
                let mut c = new_condition(
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    format!("{subject} is progressing."),
                );
                if let Some(current) = &current {
                    if text(&current.status) == "True" {
                        c.last_transition_time = current.last_transition_time.clone();
                    }
                    remove(&mut status, "Progressing");
                }
                set_in(&mut status, c);
            } else if timed_out(d, &status) {
                let message = format!("{subject} has timed out progressing.");
                set_in(
                    &mut status,
                    new_condition("Progressing", "False", "ProgressDeadlineExceeded", message),
                );
            }
        }
        match replica_failure(all, new) {
            Some(c) => set_in(&mut status, c),
            None => remove(&mut status, "ReplicaFailure"),
        }
        if d.status.as_ref() == Some(&status) {
            self.requeue_stuck(d, &status);
            return Ok(());
        }
        d.status = Some(status);
        self.write_status(d).await
    }

    /// Re-queues an unfinished rollout for when its progress deadline falls
    /// (`requeueStuckDeployment`).
    fn requeue_stuck(&self, d: &Deployment, status: &DeploymentStatus) {
        let Some(deadline) = Spec::of(d).progress_deadline_seconds else {
            return;
        };
        let Some(current) = condition(d, "Progressing") else {
            return;
        };
        if complete(d, status) || current.reason.as_deref() == Some("ProgressDeadlineExceeded") {
            return;
        }
        let Some(updated) = current.last_update_time.as_ref() else {
            return;
        };
        let due = updated.0.as_millisecond() + i64::from(deadline) * 1000;
        let after = due - Timestamp::now().as_millisecond();
        if after < 1000 {
            self.queue.add_rate_limited(key_of(d));
        } else {
            let millis = u64::try_from(after).unwrap_or(0) + 1000;
            self.queue
                .add_after(key_of(d), Duration::from_millis(millis));
        }
    }

    /// Records pausing and resuming in the Progressing condition so the deadline does not run
    /// while paused (`checkPausedConditions`).
    pub(super) async fn check_paused_conditions(&self, d: &mut Deployment) -> Result<()> {
        let spec = Spec::of(d);
        if spec.progress_deadline_seconds.is_none() {
            return Ok(());
        }
        let reason = condition(d, "Progressing").and_then(|c| c.reason.clone());
        if reason.as_deref() == Some("ProgressDeadlineExceeded") {
            return Ok(());
        }
        let paused_recorded = reason.as_deref() == Some("DeploymentPaused");
        let (new_reason, message) = match (spec.paused, paused_recorded) {
            (true, false) => ("DeploymentPaused", "Deployment is paused"),
            (false, true) => ("DeploymentResumed", "Deployment is resumed"),
            _ => return Ok(()),
        };
        set(
            d,
            new_condition("Progressing", "Unknown", new_reason, message.into()),
        );
        self.write_status(d).await
    }
}

/// The first `ReplicaFailure` condition of the new, then the old ReplicaSets, as a Deployment
/// condition (`getReplicaFailures`).
fn replica_failure(
    all: &[Arc<ReplicaSet>],
    new: Option<&ReplicaSet>,
) -> Option<DeploymentCondition> {
    let failure = |rs: &ReplicaSet| {
        rs.status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| text(&c.type_) == "ReplicaFailure")
            .cloned()
    };
    let found = new.and_then(failure).or_else(|| {
        all.iter()
            .filter(|rs| rs.metadata.uid != new.and_then(|n| n.metadata.uid.clone()))
            .find_map(|rs| failure(rs))
    })?;
    Some(DeploymentCondition {
        type_: found.type_,
        status: found.status,
        reason: found.reason,
        message: found.message,
        last_update_time: found.last_transition_time.clone(),
        last_transition_time: found.last_transition_time,
    })
}

/// `Some(n)` unless `n` is 0: the counts Go serializes with `omitempty`.
fn nonzero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

/// The status `d` should have over `all` its ReplicaSets (`calculateStatus`).
pub(super) fn calculate_status(
    d: &Deployment,
    all: &[Arc<ReplicaSet>],
    new: Option<&ReplicaSet>,
) -> DeploymentStatus {
    let spec = Spec::of(d);
    let available = util::available_replicas(all);
    let unavailable = (util::spec_replicas(all) - available).max(0);
    let old = d.status.clone().unwrap_or_default();
    let updated = new.map_or(0, |rs| rs.status.as_ref().map_or(0, |s| s.replicas));
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation.filter(|g| *g != 0),
        replicas: nonzero(util::actual_replicas(all)),
        updated_replicas: nonzero(updated),
        ready_replicas: nonzero(util::ready_replicas(all)),
        available_replicas: nonzero(available),
        unavailable_replicas: nonzero(unavailable),
        terminating_replicas: util::terminating_replicas(all),
        collision_count: old.collision_count,
        conditions: old.conditions.clone(),
    };
    let condition = if available >= spec.replicas - spec.max_unavailable() {
        new_condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
        )
    } else {
        new_condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
        )
    };
    set_in(&mut status, condition);
    status
}
