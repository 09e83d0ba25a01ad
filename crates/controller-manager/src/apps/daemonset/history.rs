//! A DaemonSet's ControllerRevisions: every template it has had, kept so that Pods can be told
//! apart by `controller-revision-hash` and `kubectl rollout undo` can restore one. The current
//! revision's hash is the label new Pods get.
//!
//! Mirrors `constructHistory`, `controlledHistories`, `dedupCurHistories`, `snapshot`, `Match`,
//! `getPatch` and `cleanupHistory` of `pkg/controller/daemon/update.go`.
//!
//! # Rules
//! - The revisions the DaemonSet's selector selects and that it controls or nobody does are its
//!   own (orphans are adopted).
//! - A revision whose data is the template's (`{"spec":{"template":{...,"$patch":"replace"}}}`)
//!   is current; several such are merged into the newest (their Pods relabelled). A current
//!   revision older than another is renumbered to be the newest (a rollback).
//! - Without one, a revision `<ds>-<hash>` is created numbered after the newest; a name taken
//!   by other data raises `status.collisionCount` and the sync is retried.
//! - Old revisions beyond `revisionHistoryLimit` (default 10) that no Pod uses are deleted,
//!   oldest first.

use std::{collections::HashSet, sync::Arc};

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kube_core::Selector;
use kubegen_cache::Lister;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, Patch, PatchOptions, ResourceClient,
    UpdateOptions,
};
use serde_json::{Value, json};

use super::daemon::REVISION_LABEL;
use crate::workload::hash::{go_json, template_hash};
use crate::workload::meta::{controller_ref, describe};
use crate::workload::shared::FIELD_MANAGER;
use crate::workload::versioned::Field;
use crate::{Error, Result, error::request};

/// A DaemonSet's revisions.
pub(crate) struct History {
    pub(crate) client: Client,
    pub(crate) revisions: Lister<ControllerRevision>,
}

fn name(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

fn number(r: &ControllerRevision) -> i64 {
    r.revision.value().copied().unwrap_or(0)
}

fn hash_of(r: &ControllerRevision) -> Option<&str> {
    r.metadata
        .labels
        .as_ref()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}

/// The revision data of `ds`'s template (`getPatch`).
///
/// # Errors
/// The template cannot be serialized (never for a decoded object).
pub(crate) fn patch_of(ds: &DaemonSet) -> Result<Value> {
    let template = ds.spec.value().map(|s| &s.template);
    let mut template = serde_json::to_value(template).map_err(|e| Error::InvalidObject {
        object: describe(ds),
        reason: e.to_string(),
    })?;
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), json!("replace"));
    }
    Ok(json!({"spec": {"template": template}}))
}

/// Whether `revision` holds `ds`'s template (`Match`: the same bytes as Go encodes them).
fn matches(patch: &Value, revision: &ControllerRevision) -> bool {
    revision
        .data
        .value()
        .is_some_and(|raw| go_json(&raw.0) == go_json(patch))
}

/// The revision `ds` would have now, numbered `number` (`snapshot`'s object).
///
/// # Errors
/// As [`patch_of`].
pub(crate) fn new_revision(ds: &DaemonSet, number: i64) -> Result<ControllerRevision> {
    let template = ds
        .spec
        .value()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let collision_count = ds.status.as_ref().and_then(|s| s.collision_count);
    let hash = template_hash(&template, collision_count);
    let mut labels = template.metadata.and_then(|m| m.labels).unwrap_or_default();
    labels.insert(REVISION_LABEL.into(), hash.clone());
    Ok(ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}-{hash}",
                ds.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: Some(vec![controller_ref(ds)]),
            ..ObjectMeta::default()
        },
        data: Field::of(RawExtension(patch_of(ds)?)),
        revision: Field::of(number),
    })
}

impl History {
    fn api(&self, ds: &DaemonSet) -> ResourceClient<ControllerRevision> {
        let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
        ResourceClient::namespaced(self.client.clone(), ns)
    }

    /// The revisions `ds` controls after adopting orphans and releasing strays
    /// (`controlledHistories`).
    ///
    /// # Errors
    /// An adoption, a release or the recheck of `ds` failed.
    pub(crate) async fn controlled<F, Fut>(
        &self,
        ds: &DaemonSet,
        selector: Option<&Selector>,
        recheck: F,
    ) -> Result<Vec<Arc<ControllerRevision>>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<DaemonSet>>,
    {
        let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
        let all = self.revisions.namespaced(ns).list(&Selector::default());
        crate::workload::controller_ref::claim(&self.client, ds, selector, all, recheck).await
    }

    /// The current revision and the old ones (`constructHistory`).
    ///
    /// # Errors
    /// A revision could not be labelled, created, renumbered or deduplicated; or a hash
    /// collision was counted (the sync retries with the new count).
    pub(crate) async fn construct(
        &self,
        ds: &DaemonSet,
        revisions: Vec<Arc<ControllerRevision>>,
        pods: &[Arc<Pod>],
    ) -> Result<(ControllerRevision, Vec<ControllerRevision>)> {
        let patch = patch_of(ds)?;
        let (mut current, mut old) = (Vec::new(), Vec::new());
        for revision in revisions {
            let mut revision = (*revision).clone();
            if hash_of(&revision).is_none() {
                revision = self.label_with_name(ds, revision).await?;
            }
            if matches(&patch, &revision) {
                current.push(revision);
            } else {
                old.push(revision);
            }
        }
        let next = old.iter().map(number).max().unwrap_or(0) + 1;
        let current = match current.len() {
            0 => self.snapshot(ds, next, &patch).await?,
            _ => {
                let keep = self.dedup(ds, current, pods).await?;
                if number(&keep) < next {
                    let mut renumbered = keep.clone();
                    renumbered.revision = Field::of(next);
                    self.api(ds)
                        .update(
                            &renumbered,
                            &UpdateOptions::default().field_manager(FIELD_MANAGER),
                        )
                        .await
                        .map_err(request(format!(
                            "update ControllerRevision {}",
                            name(&keep)
                        )))?;
                }
                keep
            }
        };
        Ok((current, old))
    }

    /// Labels a revision written before revisions carried their hash with its name.
    async fn label_with_name(
        &self,
        ds: &DaemonSet,
        mut revision: ControllerRevision,
    ) -> Result<ControllerRevision> {
        let own = name(&revision).to_owned();
        revision
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(REVISION_LABEL.into(), own.clone());
        self.api(ds)
            .update(
                &revision,
                &UpdateOptions::default().field_manager(FIELD_MANAGER),
            )
            .await
            .map_err(request(format!("update ControllerRevision {own}")))
    }

    /// Keeps the newest of several current revisions, relabels the Pods of the others, deletes
    /// them (`dedupCurHistories`).
    async fn dedup(
        &self,
        ds: &DaemonSet,
        mut current: Vec<ControllerRevision>,
        pods: &[Arc<Pod>],
    ) -> Result<ControllerRevision> {
        if current.len() == 1 {
            return Ok(current.remove(0));
        }
        let keep_at = current.iter().enumerate().fold(0, |best, (i, r)| {
            if number(r) >= number(&current[best]) {
                i
            } else {
                best
            }
        });
        let keep = current.remove(keep_at);
        let keep_hash = hash_of(&keep).unwrap_or_default().to_owned();
        let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
        let pod_api: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), ns);
        for pod in pods {
            let hash = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(REVISION_LABEL));
            if hash.is_some_and(|h| *h == keep_hash) {
                continue;
            }
            let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
            let patch = Patch::Merge(json!({"metadata": {"labels": {REVISION_LABEL: keep_hash}}}));
            pod_api
                .patch(
                    pod_name,
                    &patch,
                    &PatchOptions::default().field_manager(FIELD_MANAGER),
                )
                .await
                .map_err(request(format!("relabel Pod {ns}/{pod_name}")))?;
        }
        for duplicate in &current {
            self.api(ds)
                .delete(name(duplicate), &DeleteOptions::default())
                .await
                .map_err(request(format!(
                    "delete ControllerRevision {}",
                    name(duplicate)
                )))?;
        }
        Ok(keep)
    }

    /// Creates the revision of the current template (`snapshot`); on a name taken by other data,
    /// raises `status.collisionCount` and fails so the sync retries with the next name.
    async fn snapshot(
        &self,
        ds: &DaemonSet,
        number: i64,
        patch: &Value,
    ) -> Result<ControllerRevision> {
        let revision = new_revision(ds, number)?;
        let api = self.api(ds);
        let action = || format!("create ControllerRevision for {}", describe(ds));
        let created = api
            .create(
                &revision,
                &CreateOptions::default().field_manager(FIELD_MANAGER),
            )
            .await;
        let err = match created {
            Ok(created) => return Ok(created),
            Err(e) if e.is_already_exists() => e,
            Err(e) => return Err(request(action())(e)),
        };
        let existing = api
            .get(name(&revision), &GetOptions::default())
            .await
            .map_err(request(action()))?;
        if matches(patch, &existing) {
            return Ok(existing);
        }
        self.count_collision(ds).await?;
        Err(request(action())(err))
    }

    /// Raises `status.collisionCount` of a fresh copy of `ds`, unless another sync did already.
    async fn count_collision(&self, ds: &DaemonSet) -> Result<()> {
        let ns = ds.metadata.namespace.as_deref().unwrap_or_default();
        let ds_name = ds.metadata.name.as_deref().unwrap_or_default();
        let api: ResourceClient<DaemonSet> = ResourceClient::namespaced(self.client.clone(), ns);
        let action = || format!("update status of {}", describe(ds));
        let mut fresh = api
            .get(ds_name, &GetOptions::default())
            .await
            .map_err(request(action()))?;
        let count = |d: &DaemonSet| d.status.as_ref().and_then(|s| s.collision_count);
        if count(&fresh) != count(ds) {
            return Err(Error::InvalidObject {
                object: describe(ds),
                reason: format!(
                    "found a stale collision count ({:?}, expected {:?}); will retry until it is updated",
                    count(ds),
                    count(&fresh)
                ),
            });
        }
        let status = fresh.status.get_or_insert_with(Default::default);
        status.collision_count = Some(status.collision_count.unwrap_or(0).saturating_add(1));
        api.update_status(
            &fresh,
            &UpdateOptions::default().field_manager(FIELD_MANAGER),
        )
        .await
        .map(drop)
        .map_err(request(action()))
    }

    /// Deletes the oldest of `old` that no Pod uses, beyond `revisionHistoryLimit`
    /// (`cleanupHistory`).
    ///
    /// # Errors
    /// A delete failed.
    pub(crate) async fn cleanup(
        &self,
        ds: &DaemonSet,
        mut old: Vec<ControllerRevision>,
        pods: &[Arc<Pod>],
    ) -> Result<()> {
        let limit = ds
            .spec
            .value()
            .and_then(|s| s.revision_history_limit)
            .unwrap_or(10);
        let mut excess = i64::try_from(old.len()).unwrap_or(i64::MAX) - i64::from(limit);
        if excess <= 0 {
            return Ok(());
        }
        let live: HashSet<&str> = pods
            .iter()
            .filter_map(|p| p.metadata.labels.as_ref()?.get(REVISION_LABEL))
            .map(String::as_str)
            .filter(|h| !h.is_empty())
            .collect();
        old.sort_by_key(number);
        for revision in &old {
            if excess <= 0 {
                break;
            }
            if hash_of(revision).is_some_and(|h| live.contains(h)) {
                continue;
            }
            self.api(ds)
                .delete(name(revision), &DeleteOptions::default())
                .await
                .map_err(request(format!(
                    "delete ControllerRevision {}",
                    name(revision)
                )))?;
            excess -= 1;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
