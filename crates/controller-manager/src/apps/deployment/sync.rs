//! What every kind of Deployment sync shares: finding or creating the new ReplicaSet and
//! keeping revisions, scaling ReplicaSets (proportionally when several are active), cleaning up
//! old ones, and computing and writing the status.
//!
//! Mirrors `pkg/controller/deployment/sync.go`.

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kubegen_client::{CreateOptions, DeleteOptions, ResourceClient, UpdateOptions};
use kubegen_runtime::EventType;

use super::{
    Inner, progress,
    util::{self, Spec},
};
use crate::workload::meta::{controller_ref, describe};
use crate::workload::shared::{FIELD_MANAGER, go_message};
use crate::workload::versioned::Field;
use crate::{Result, error::request};

/// The new ReplicaSet (if any) and all the others.
pub(super) type Split = (Option<Arc<ReplicaSet>>, Vec<Arc<ReplicaSet>>);

impl Inner {
    pub(super) fn rs_client(&self, d: &Deployment) -> ResourceClient<ReplicaSet> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        ResourceClient::namespaced(self.client.clone(), namespace)
    }

    /// `UpdateStatus` of `d` as it is, stale resourceVersion included.
    pub(super) async fn write_status(&self, d: &Deployment) -> Result<()> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        let client: ResourceClient<Deployment> =
            ResourceClient::namespaced(self.client.clone(), namespace);
        client
            .update_status(d, &UpdateOptions::default().field_manager(FIELD_MANAGER))
            .await
            .map(drop)
            .map_err(request(format!("update status of {}", describe(d))))
    }

    /// Splits `rss` into new and old and brings the new one's revision up to date
    /// (`getAllReplicaSetsAndSyncRevision`); creates the new one if `create`.
    pub(super) async fn new_and_old(
        &self,
        d: &mut Deployment,
        rss: Vec<Arc<ReplicaSet>>,
        create: bool,
    ) -> Result<Split> {
        let (existing, old) = util::split_new_old(d, rss);
        let new_revision = util::max_revision(&old) + 1;
        let new = match existing {
            Some(rs) => Some(self.sync_new_rs(d, &rs, new_revision).await?),
            None if create => Some(self.create_new_rs(d, &old, new_revision).await?),
            None => None,
        };
        Ok((new, old))
    }

    /// The existing new ReplicaSet: its annotations and `minReadySeconds` follow the
    /// Deployment; the Deployment's revision follows it (`getNewReplicaSet`, existing branch).
    async fn sync_new_rs(
        &self,
        d: &mut Deployment,
        rs: &Arc<ReplicaSet>,
        new_revision: i64,
    ) -> Result<Arc<ReplicaSet>> {
        let mut copy = (**rs).clone();
        let annotations_updated = util::set_new_rs_annotations(d, &mut copy, new_revision, true);
        let min_ready = Spec::of(d).min_ready_seconds;
        let spec = copy.spec.value_mut();
        if annotations_updated || spec.min_ready_seconds.unwrap_or(0) != min_ready {
            spec.min_ready_seconds = Some(min_ready).filter(|s| *s != 0);
            let updated = self
                .rs_client(d)
                .update(
                    &copy,
                    &UpdateOptions::default().field_manager(FIELD_MANAGER),
                )
                .await
                .map_err(request(format!("update {}", describe(&copy))))?;
            return Ok(Arc::new(updated));
        }
        let revision = util::revision(&copy).to_string();
        let mut needs_update = set_revision(d, &revision);
        if Spec::of(d).progress_deadline_seconds.is_some()
            && progress::condition(d, "Progressing").is_none()
        {
            let message = format!(
                "Found new replica set {:?}",
                copy.metadata.name.as_deref().unwrap_or_default()
            );
            progress::set(
                d,
                progress::new_condition("Progressing", "True", "FoundNewReplicaSet", message),
            );
            needs_update = true;
        }
        if needs_update {
            self.write_status(d).await?;
        }
        Ok(Arc::new(copy))
    }

    /// Creates the ReplicaSet for the current template (`getNewReplicaSet`, create branch),
    /// counting a hash collision in `status.collisionCount`.
    async fn create_new_rs(
        &self,
        d: &mut Deployment,
        old: &[Arc<ReplicaSet>],
        new_revision: i64,
    ) -> Result<Arc<ReplicaSet>> {
        let mut rs = new_rs_object(d);
        let mut all = old.to_vec();
        all.push(Arc::new(rs.clone()));
        let replicas = util::new_rs_replicas(&Spec::of(d), &all, 0);
        rs.spec.value_mut().replicas = Some(replicas);
        util::set_new_rs_annotations(d, &mut rs, new_revision, false);
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        let (created, already_existed) = match self.rs_client(d).create(&rs, &options).await {
            Ok(created) => (created, false),
            Err(e) if e.is_already_exists() => (self.existing_or_collision(d, &rs, e).await?, true),
            Err(e) => return Err(self.report_create_failure(d, &rs, e).await),
        };
        let created = Arc::new(created);
        if !already_existed && replicas > 0 {
            let name = created.metadata.name.as_deref().unwrap_or_default();
            let message = format!("Scaled up replica set {name} from 0 to {replicas}");
            self.events
                .record(d, EventType::Normal, "ScalingReplicaSet", message);
        }
        let mut needs_update = set_revision(d, &new_revision.to_string());
        if Spec::of(d).progress_deadline_seconds.is_some() && !already_existed {
            let message = format!(
                "Created new replica set {:?}",
                created.metadata.name.as_deref().unwrap_or_default()
            );
            progress::set(
                d,
                progress::new_condition("Progressing", "True", "NewReplicaSetCreated", message),
            );
            needs_update = true;
        }
        if needs_update {
            self.write_status(d).await?;
        }
        Ok(created)
    }

    /// On AlreadyExists: the cached ReplicaSet of that name is ours if we control it and its
    /// template matches; otherwise it is a hash collision.
    async fn existing_or_collision(
        &self,
        d: &mut Deployment,
        rs: &ReplicaSet,
        error: kubegen_client::Error,
    ) -> Result<ReplicaSet> {
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        let action = format!("create {}", describe(rs));
        let Some(found) = self.replica_sets.get(d.metadata.namespace.as_deref(), name) else {
            return Err(request(action)(error));
        };
        let template = |r: &ReplicaSet| {
            r.spec
                .value()
                .and_then(|s| s.template.clone())
                .unwrap_or_default()
        };
        let ours = crate::workload::meta::controller_of(found.as_ref())
            .is_some_and(|r| Some(&r.uid) == d.metadata.uid.as_ref());
        if ours && util::equal_ignore_hash(&template(rs), &template(&found)) {
            return Ok((*found).clone());
        }
        let status = d.status.get_or_insert_with(Default::default);
        status.collision_count = Some(status.collision_count.unwrap_or(0) + 1);
        let _ = self.write_status(d).await;
        Err(request(action)(error))
    }

    /// Reports a failed create in the Progressing condition (`ReplicaSetCreateError`).
    async fn report_create_failure(
        &self,
        d: &mut Deployment,
        rs: &ReplicaSet,
        error: kubegen_client::Error,
    ) -> crate::Error {
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        let failure = request(format!("create {}", describe(rs)))(error);
        let message = format!(
            "Failed to create new replica set {name:?}: {}",
            go_message(&failure)
        );
        if Spec::of(d).progress_deadline_seconds.is_some() {
            progress::set(
                d,
                progress::new_condition(
                    "Progressing",
                    "False",
                    "ReplicaSetCreateError",
                    message.clone(),
                ),
            );
            let _ = self.write_status(d).await;
        }
        let reason = "ReplicaSetCreateError";
        self.events.record(&*d, EventType::Warning, reason, message);
        failure
    }

    /// Whether `spec.replicas` changed since the active ReplicaSets were last annotated
    /// (`isScalingEvent`).
    pub(super) async fn is_scaling_event(
        &self,
        d: &mut Deployment,
        rss: &[Arc<ReplicaSet>],
    ) -> Result<bool> {
        let (new, old) = self.new_and_old(d, rss.to_vec(), false).await?;
        let replicas = Spec::of(d).replicas;
        let all: Vec<_> = old.into_iter().chain(new).collect();
        Ok(util::active(&all).iter().any(|rs| {
            util::int_annotation(rs, util::DESIRED_REPLICAS).is_some_and(|n| n != replicas)
        }))
    }

    /// A scaling event or a paused Deployment: scale, clean up when paused, write the status
    /// (`sync`).
    pub(super) async fn sync_scale(
        &self,
        d: &mut Deployment,
        rss: Vec<Arc<ReplicaSet>>,
    ) -> Result<()> {
        let (new, old) = self.new_and_old(d, rss, false).await?;
        self.scale(d, new.as_ref(), &old).await?;
        if Spec::of(d).paused {
            self.cleanup(d, &old).await?;
        }
        let all: Vec<_> = old.into_iter().chain(new.clone()).collect();
        self.sync_status(d, &all, new.as_deref()).await
    }

    /// A Deployment being deleted: only its status (`syncStatusOnly`).
    pub(super) async fn sync_status_only(
        &self,
        d: &mut Deployment,
        rss: Vec<Arc<ReplicaSet>>,
    ) -> Result<()> {
        let (new, old) = self.new_and_old(d, rss, false).await?;
        let all: Vec<_> = old.into_iter().chain(new.clone()).collect();
        self.sync_status(d, &all, new.as_deref()).await
    }

    /// Writes the computed status if it differs (`syncDeploymentStatus`).
    pub(super) async fn sync_status(
        &self,
        d: &mut Deployment,
        all: &[Arc<ReplicaSet>],
        new: Option<&ReplicaSet>,
    ) -> Result<()> {
        let status = progress::calculate_status(d, all, new);
        if d.status.as_ref() == Some(&status) {
            return Ok(());
        }
        d.status = Some(status);
        self.write_status(d).await
    }

    /// Scales the active ReplicaSets to the Deployment's size (`scale`).
    pub(super) async fn scale(
        &self,
        d: &Deployment,
        new: Option<&Arc<ReplicaSet>>,
        old: &[Arc<ReplicaSet>],
    ) -> Result<()> {
        let spec = Spec::of(d);
        let mut by_age = old.to_vec();
        by_age.sort_by(|a, b| util::by_creation(b, a));
        let mut all: Vec<_> = by_age.iter().cloned().chain(new.cloned()).collect();
        let active = util::active(&all);
        let active_or_latest = match (active.len(), new) {
            (0, Some(new)) => Some(new.clone()),
            (0, None) => by_age.first().cloned(),
            (1, _) => active.first().cloned(),
            _ => None,
        };
        if let Some(rs) = active_or_latest {
            if util::replicas_of(&rs) != spec.replicas {
                self.scale_rs_checked(d, &rs, spec.replicas).await?;
            }
            return Ok(());
        }
        if util::is_saturated(&spec, new.map(|rs| rs.as_ref())) {
            for rs in util::active(old) {
                self.scale_rs_checked(d, &rs, 0).await?;
            }
            return Ok(());
        }
        if spec.recreate {
            return Ok(());
        }
        all = active;
        let allowed = if spec.replicas > 0 {
            spec.replicas + spec.max_surge()
        } else {
            0
        };
        let to_add = allowed - util::spec_replicas(&all);
        match to_add {
            n if n > 0 => all.sort_by(|a, b| util::by_size_newer(a, b)),
            n if n < 0 => all.sort_by(|a, b| util::by_size_older(a, b)),
            _ => {}
        }
        let status_replicas = d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0);
        let mut added = 0;
        let mut sizes: Vec<i32> = Vec::with_capacity(all.len());
        for rs in &all {
            let p = util::proportion(rs, &spec, status_replicas, to_add, added);
            sizes.push(util::replicas_of(rs) + p);
            added += p;
        }
        if let Some(first) = sizes.first_mut().filter(|_| to_add != 0) {
            *first = (*first + to_add - added).max(0);
        }
        for (rs, size) in all.iter().zip(sizes) {
            self.scale_rs(d, rs, size).await?;
        }
        Ok(())
    }

    /// Scales `rs` to `size` unless it already has it (`scaleReplicaSetAndRecordEvent`).
    /// Returns whether its size changed, and the ReplicaSet as written.
    pub(super) async fn scale_rs_checked(
        &self,
        d: &Deployment,
        rs: &Arc<ReplicaSet>,
        size: i32,
    ) -> Result<(bool, Arc<ReplicaSet>)> {
        if util::replicas_of(rs) == size {
            return Ok((false, rs.clone()));
        }
        self.scale_rs(d, rs, size).await
    }

    /// Writes `rs` with `size` and the Deployment's replica annotations when either differs
    /// (`scaleReplicaSet`).
    pub(super) async fn scale_rs(
        &self,
        d: &Deployment,
        rs: &Arc<ReplicaSet>,
        size: i32,
    ) -> Result<(bool, Arc<ReplicaSet>)> {
        let spec = Spec::of(d);
        let (desired, max) = (spec.replicas, spec.replicas + spec.max_surge());
        let old_size = util::replicas_of(rs);
        let size_changed = old_size != size;
        if !size_changed && !util::replicas_annotations_differ(rs, desired, max) {
            return Ok((false, rs.clone()));
        }
        let mut copy = (**rs).clone();
        copy.spec.value_mut().replicas = Some(size);
        util::set_replicas_annotations(&mut copy, desired, max);
        let updated = self
            .rs_client(d)
            .update(
                &copy,
                &UpdateOptions::default().field_manager(FIELD_MANAGER),
            )
            .await
            .map_err(request(format!("scale {} to {size}", describe(&copy))))?;
        if size_changed {
            let direction = if old_size < size { "up" } else { "down" };
            let name = updated.metadata.name.as_deref().unwrap_or_default();
            let message =
                format!("Scaled {direction} replica set {name} from {old_size} to {size}");
            self.events
                .record(d, EventType::Normal, "ScalingReplicaSet", message);
        }
        Ok((size_changed, Arc::new(updated)))
    }

    /// Deletes the oldest revisions beyond `revisionHistoryLimit` that hold no Pods
    /// (`cleanupDeployment`).
    pub(super) async fn cleanup(&self, d: &Deployment, old: &[Arc<ReplicaSet>]) -> Result<()> {
        let Some(limit) = Spec::of(d).revision_history_limit else {
            return Ok(());
        };
        let mut cleanable: Vec<_> = old
            .iter()
            .filter(|rs| rs.metadata.deletion_timestamp.is_none())
            .cloned()
            .collect();
        let diff = i64::try_from(cleanable.len()).unwrap_or(i64::MAX) - i64::from(limit);
        if diff <= 0 {
            return Ok(());
        }
        cleanable.sort_by(|a, b| util::by_revision(a, b));
        for rs in cleanable.iter().take(usize::try_from(diff).unwrap_or(0)) {
            let status = rs.status.clone().unwrap_or_default();
            if status.replicas != 0
                || util::replicas_of(rs) != 0
                || rs.metadata.generation > status.observed_generation
            {
                continue;
            }
            let name = rs.metadata.name.as_deref().unwrap_or_default();
            match self
                .rs_client(d)
                .delete(name, &DeleteOptions::default())
                .await
            {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(request(format!("delete {}", describe(rs.as_ref())))(e)),
            }
        }
        Ok(())
    }
}

/// Sets the Deployment's revision annotation; true if it changed (`SetDeploymentRevision`).
fn set_revision(d: &mut Deployment, revision: &str) -> bool {
    let annotations = d.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if annotations.get(util::REVISION).map(String::as_str) == Some(revision) {
        return false;
    }
    annotations.insert(util::REVISION.into(), revision.into());
    true
}

/// The ReplicaSet for the Deployment's current template, before sizing and annotations.
fn new_rs_object(d: &Deployment) -> ReplicaSet {
    let spec = d.spec.value().cloned().unwrap_or_default();
    let collision_count = d.status.as_ref().and_then(|s| s.collision_count);
    let mut template = spec.template.clone();
    let hash = crate::workload::hash::template_hash(&template, collision_count);
    let mut labels = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(util::POD_TEMPLATE_HASH.into(), hash.clone());
    template
        .metadata
        .get_or_insert_with(Default::default)
        .labels = Some(labels.clone());
    let mut match_labels = spec.selector.match_labels.clone().unwrap_or_default();
    match_labels.insert(util::POD_TEMPLATE_HASH.into(), hash.clone());
    let selector = LabelSelector {
        match_labels: Some(match_labels),
        ..spec.selector.clone()
    };
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}-{hash}",
                d.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: d.metadata.namespace.clone(),
            owner_references: Some(vec![controller_ref(d)]),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Field::of(ReplicaSetSpec {
            replicas: Some(0),
            min_ready_seconds: spec.min_ready_seconds.filter(|s| *s != 0),
            selector,
            template: Some(template),
        }),
        status: None,
    }
}
