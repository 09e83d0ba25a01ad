//! Reading and writing a StatefulSet's ControllerRevisions: list the set's own and orphaned
//! ones, adopt orphans, create the update revision (resolving hash collisions), renumber a
//! revision rolled back to, and delete history beyond `revisionHistoryLimit`.
//!
//! Mirrors `realHistory` of `pkg/controller/history/controller_history.go` and
//! `getStatefulSetRevisions` / `truncateHistory` of
//! `pkg/controller/statefulset/stateful_set_control.go`.
//!
//! # Differences from v1.36
//! v1.36 also treats the newest revision as current when re-encoding it with today's defaults
//! gives the proposed data (`StatefulSetSemanticRevisionComparison`, a guard against
//! serialization changes between apiserver versions). One server's encoding never changes, so
//! here equal data is compared byte for byte only.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube_core::Selector;
use kubegen_cache::Lister;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, Patch, PatchOptions, ResourceClient,
    UpdateOptions,
};
use serde_json::json;

use super::identity::{pod_revision, spec};
use super::revision::{self, equal, new_revision, next_number};
use crate::workload::meta::{controller_of, controller_ref, describe, selects};
use crate::workload::shared::FIELD_MANAGER;
use crate::workload::versioned::Field;
use crate::{Result, error::request};

/// A set's ControllerRevisions.
pub(crate) struct History {
    pub(crate) client: Client,
    pub(crate) revisions: Lister<ControllerRevision>,
}

/// The revisions a sync works from.
pub(crate) struct Revisions {
    /// The revision the set's status names current (the update revision on first sync).
    pub(crate) current: ControllerRevision,
    /// The revision of the set's template now.
    pub(crate) update: ControllerRevision,
    /// `status.collisionCount` after resolving hash collisions.
    pub(crate) collision_count: i32,
}

fn name(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

impl History {
    fn api(&self, set: &StatefulSet) -> ResourceClient<ControllerRevision> {
        let ns = set.metadata.namespace.as_deref().unwrap_or_default();
        ResourceClient::namespaced(self.client.clone(), ns)
    }

    /// The revisions `selector` selects that `set` controls or nobody does, oldest first
    /// (`ListControllerRevisions`, sorted).
    pub(crate) fn list(
        &self,
        set: &StatefulSet,
        selector: Option<&Selector>,
    ) -> Vec<ControllerRevision> {
        let ns = set.metadata.namespace.as_deref().unwrap_or_default();
        let uid = set.metadata.uid.as_deref().unwrap_or_default();
        let mut revisions: Vec<ControllerRevision> = self
            .revisions
            .namespaced(ns)
            .list(&Selector::default())
            .into_iter()
            .filter(|r| selects(selector, r.metadata.labels.as_ref()))
            .filter(|r| controller_of(r.as_ref()).is_none_or(|c| c.uid == uid))
            .map(|r| (*r).clone())
            .collect();
        revision::sort(&mut revisions);
        revisions
    }

    /// Makes `set` the controller of the orphans among `revisions` (`AdoptControllerRevision`).
    ///
    /// # Errors
    /// A patch failed.
    pub(crate) async fn adopt_orphans(
        &self,
        set: &StatefulSet,
        revisions: &[ControllerRevision],
    ) -> Result<()> {
        for orphan in revisions.iter().filter(|r| controller_of(*r).is_none()) {
            let patch = json!({"metadata": {
                "ownerReferences": [controller_ref(set)],
                "uid": orphan.metadata.uid,
            }});
            self.api(set)
                .patch(
                    name(orphan),
                    &Patch::Strategic(patch),
                    &PatchOptions::default().field_manager(FIELD_MANAGER),
                )
                .await
                .map_err(request(format!(
                    "adopt ControllerRevision {} for {}",
                    name(orphan),
                    describe(set)
                )))?;
        }
        Ok(())
    }

    /// The current and update revisions of `set` (`getStatefulSetRevisions`): the update
    /// revision is the newest revision with the template's data, renumbered to be the newest
    /// if it was older (a rollback), or a new revision.
    ///
    /// # Errors
    /// A revision could not be created or renumbered.
    pub(crate) async fn revisions(
        &self,
        set: &StatefulSet,
        revisions: &[ControllerRevision],
    ) -> Result<Revisions> {
        let status = set.status.clone().unwrap_or_default();
        let mut collision_count = status.collision_count.unwrap_or(0);
        let proposed = new_revision(set, next_number(revisions), collision_count)?;
        let equals: Vec<_> = revisions.iter().filter(|r| equal(r, &proposed)).collect();
        let update = match (equals.last(), revisions.last()) {
            (Some(found), Some(newest)) if equal(newest, found) => newest.clone(),
            (Some(found), _) => self.renumber(found, revision::number_of(&proposed)).await?,
            (None, _) => self.create(set, proposed, &mut collision_count).await?,
        };
        let current_name = status.current_revision.unwrap_or_default();
        let current = revisions
            .iter()
            .find(|r| name(r) == current_name)
            .cloned()
            .unwrap_or_else(|| update.clone());
        Ok(Revisions {
            current,
            update,
            collision_count,
        })
    }

    /// `UpdateControllerRevision`.
    async fn renumber(
        &self,
        found: &ControllerRevision,
        number: i64,
    ) -> Result<ControllerRevision> {
        let mut next = found.clone();
        next.revision = Field::of(number);
        let namespace = found.metadata.namespace.clone().unwrap_or_default();
        let api: ResourceClient<ControllerRevision> =
            ResourceClient::namespaced(self.client.clone(), &namespace);
        let options = UpdateOptions::default().field_manager(FIELD_MANAGER);
        let action = || format!("update ControllerRevision {namespace}/{}", name(found));
        match api.update(&next, &options).await {
            Ok(updated) => Ok(updated),
            Err(e) if e.is_conflict() => {
                let mut fresh = api
                    .get(name(found), &GetOptions::default())
                    .await
                    .map_err(request(action()))?;
                fresh.revision = Field::of(number);
                api.update(&fresh, &options)
                    .await
                    .map_err(request(action()))
            }
            Err(e) => Err(request(action())(e)),
        }
    }

    /// `CreateControllerRevision`: on a name taken by different data, counts a collision and
    /// tries the next hash.
    async fn create(
        &self,
        set: &StatefulSet,
        mut proposed: ControllerRevision,
        collision_count: &mut i32,
    ) -> Result<ControllerRevision> {
        let api = self.api(set);
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        loop {
            let data = revision::data_of(&proposed).cloned().unwrap_or_default();
            let hash = revision::hash(&data, *collision_count);
            let prefix: String = set
                .metadata
                .name
                .as_deref()
                .unwrap_or_default()
                .chars()
                .take(223)
                .collect();
            proposed.metadata.name = Some(format!("{prefix}-{hash}"));
            let action = || format!("create ControllerRevision for {}", describe(set));
            match api.create(&proposed, &options).await {
                Err(e) if e.is_already_exists() => {
                    let exists = api
                        .get(name(&proposed), &GetOptions::default())
                        .await
                        .map_err(request(action()))?;
                    if equal(&exists, &proposed) {
                        return Ok(exists);
                    }
                    *collision_count = collision_count.saturating_add(1);
                }
                other => return other.map_err(request(action())),
            }
        }
    }

    /// Deletes the oldest revisions no Pod and neither the current nor the update revision use,
    /// beyond `revisionHistoryLimit` (`truncateHistory`).
    ///
    /// # Errors
    /// A delete failed.
    pub(crate) async fn truncate(
        &self,
        set: &StatefulSet,
        pods: &[std::sync::Arc<Pod>],
        revisions: &[ControllerRevision],
        live: [&str; 2],
    ) -> Result<()> {
        let mut in_use: HashSet<&str> = live.into_iter().collect();
        in_use.extend(pods.iter().map(|p| pod_revision(p)));
        let history: Vec<_> = revisions
            .iter()
            .filter(|r| !in_use.contains(name(r)))
            .collect();
        let Ok(limit) = usize::try_from(spec(set).revision_history_limit.unwrap_or(10)) else {
            return Ok(());
        };
        if history.len() <= limit {
            return Ok(());
        }
        for old in &history[..history.len() - limit] {
            self.api(set)
                .delete(name(old), &DeleteOptions::default())
                .await
                .map_err(request(format!("delete ControllerRevision {}", name(old))))?;
        }
        Ok(())
    }
}
