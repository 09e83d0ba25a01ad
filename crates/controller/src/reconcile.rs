//! One reconcile of one WhiteList: the controller's business logic, between the workqueue (which
//! hands out `namespace/name` keys) and the API (deletions, Events, status). The counterpart of
//! sample-controller's `syncHandler`.
//!
//! # Steps
//! 1. Read the WhiteList from the informer cache. Gone: nothing to do (its Deployments are no
//!    longer policed by it; other WhiteLists of the namespace have their own keys).
//! 2. In a protected namespace ([`ProtectedNamespaces`]): report it in status, touch nothing.
//! 3. Invalid spec ([`RuleError`]): report every problem in status, touch nothing. No requeue: the
//!    fix is a spec edit, which bumps `generation` and enqueues the key again.
//! 4. Otherwise judge every Deployment of the namespace against the union of the namespace's
//!    valid WhiteLists (so adding a second list can only allow more, and two lists never fight),
//!    delete each offender (precondition: its uid, so a re-created Deployment of the same name is never hit),
//!    and record a Warning Event on the Deployment and one on the WhiteList.
//! 5. Write the status computed by [`next_status`], only if it changed.
//!
//! # Errors and retries
//! A failed deletion or status write returns an error so the worker requeues the key with
//! backoff; deletions that did succeed are not repeated (the Deployments are gone). A status
//! write that conflicts (the cache has not yet seen our own previous status write, typically) is
//! first retried on a fresh GET of the WhiteList (client-go's `retry.RetryOnConflict` pattern),
//! because the violations it carries would otherwise be lost; only a persisting conflict
//! requeues. Events are best effort: a failure is logged and counted, never retried.
//!
//! # Known limit
//! If the status write still fails after deletions, those deletions are missing from
//! `status.lastViolations` (the Events still record them): the next reconcile no longer sees the
//! deleted Deployments.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::Selector;
use kubegen_api::police::v1beta1::{Violation, WhiteList, WhiteListSpec};
use kubegen_listers::apps::v1::DeploymentLister;
use kubegen_listers::police::v1beta1::WhiteListLister;

use crate::events::{EventBuilder, EventType};
use crate::metrics::Metrics;
use crate::namespaces::ProtectedNamespaces;
use crate::policy::{ContainerViolation, Policy, RuleError, RuleInput};
use crate::status::{Readiness, next_status, status_differs, violation_record};
use crate::writer::Writer;

/// Reason of the Event recorded on a deleted Deployment.
pub const REASON_DELETED: &str = "DeletedForbiddenImage";
/// How often a conflicting status write is retried on a fresh read before the key is requeued.
pub const STATUS_ATTEMPTS: usize = 3;
/// Reason of the Event recorded on the WhiteList that caused a deletion.
pub const REASON_ENFORCED: &str = "DeploymentDeleted";

/// What a Deployment did wrong, for Event messages: `container "c0" runs "redis:7" (reason: why)`.
fn offenses(found: &[ContainerViolation]) -> String {
    found
        .iter()
        .map(|v| {
            format!(
                "container {:?} runs {:?} ({}: {})",
                v.container,
                v.image,
                v.denial.reason(),
                v.denial
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a reconcile must be retried.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// Deleting an offending Deployment failed (other than "already gone").
    #[error("deleting Deployment {namespace}/{name} failed")]
    DeleteFailed {
        /// Namespace of the Deployment.
        namespace: String,
        /// Name of the Deployment.
        name: String,
        /// The API error.
        #[source]
        source: kubegen_client::Error,
    },
    /// Writing the WhiteList's status failed (a conflict means the cache was stale).
    #[error("updating status of WhiteList {key} failed")]
    StatusUpdateFailed {
        /// `namespace/name` of the WhiteList.
        key: String,
        /// The API error.
        #[source]
        source: kubegen_client::Error,
    },
}

impl ReconcileError {
    /// Whether the API answered 409 Conflict (stale cache; the retry will see a newer object).
    pub fn is_conflict(&self) -> bool {
        match self {
            ReconcileError::DeleteFailed { source, .. }
            | ReconcileError::StatusUpdateFailed { source, .. } => source.is_conflict(),
        }
    }
}

/// Everything a reconcile reads and writes. Cheap to clone; shared by all workers.
#[derive(Clone)]
pub struct Reconciler {
    /// The WhiteList informer's cache.
    pub(crate) whitelists: WhiteListLister,
    /// The Deployment informer's cache.
    pub(crate) deployments: DeploymentLister,
    /// API writes: deletions, Events, status.
    pub(crate) writer: Writer,
    /// Namespaces not to act in.
    pub(crate) protected: ProtectedNamespaces,
    /// Builds the Events recorded for each deletion.
    pub(crate) events: EventBuilder,
    /// Where outcomes are counted.
    pub(crate) metrics: Metrics,
}

/// The policy a WhiteList's own spec describes.
///
/// # Errors
/// Every problem of the spec.
pub fn spec_policy(spec: &WhiteListSpec) -> Result<Policy, Vec<RuleError>> {
    let rules = spec.images.iter().map(|rule| RuleInput {
        name: &rule.name,
        tags: &rule.tags,
    });
    Policy::new(rules, spec.allow_none.unwrap_or(false))
}

impl Reconciler {
    /// Reconciles the WhiteList with key `namespace/name`.
    ///
    /// # Errors
    /// A [`ReconcileError`] when a deletion or the status write failed; the caller requeues.
    pub async fn reconcile(&self, key: &str) -> Result<(), ReconcileError> {
        let Some((namespace, _)) = key.split_once('/') else {
            tracing::warn!(key, "ignoring a key that is not namespace/name");
            return Ok(());
        };
        let Some(whitelist) = self.whitelists.get_by_key(key) else {
            tracing::debug!(key, "WhiteList is gone; nothing to do");
            return Ok(());
        };
        let now = Time(Timestamp::now());
        let mut first_error = None;
        let (readiness, handled) = if self.protected.contains(namespace) {
            (
                Readiness::ProtectedNamespace(namespace.to_owned()),
                Vec::new(),
            )
        } else {
            match spec_policy(&whitelist.spec) {
                Err(problems) => (Readiness::InvalidSpec(join(&problems)), Vec::new()),
                Ok(own) => {
                    let policy = self.namespace_policy(namespace).unwrap_or(own);
                    let (handled, error) = self.enforce(&whitelist, namespace, &policy, &now).await;
                    first_error = error;
                    (Readiness::Enforcing, handled)
                }
            }
        };
        if let Err(error) = self
            .write_status(key, &whitelist, &readiness, handled, &now)
            .await
        {
            // A status failure after a deletion failure: report the deletion, it matters more.
            return Err(first_error.unwrap_or(error));
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The union of all valid WhiteLists of `namespace`, read through the namespace index.
    fn namespace_policy(&self, namespace: &str) -> Option<Policy> {
        let lists = self
            .whitelists
            .white_lists(namespace)
            .list(&Selector::default());
        let valid: Vec<&Arc<WhiteList>> = lists
            .iter()
            .filter(|list| spec_policy(&list.spec).is_ok())
            .collect();
        let rules = valid.iter().flat_map(|list| {
            list.spec.images.iter().map(|rule| RuleInput {
                name: &rule.name,
                tags: &rule.tags,
            })
        });
        let allow_none = valid.iter().all(|list| list.spec.images.is_empty());
        Policy::new(rules, allow_none).ok()
    }

    /// Deletes every offending Deployment of `namespace`; returns the violations handled and the
    /// first deletion error, if any (the others are logged).
    async fn enforce(
        &self,
        whitelist: &WhiteList,
        namespace: &str,
        policy: &Policy,
        now: &Time,
    ) -> (Vec<Violation>, Option<ReconcileError>) {
        let mut deployments = self
            .deployments
            .deployments(namespace)
            .list(&Selector::default());
        deployments.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut handled = Vec::new();
        let mut first_error = None;
        for deployment in deployments {
            if deployment.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let found = policy.violations(&deployment);
            if found.is_empty() {
                continue;
            }
            let name = deployment.metadata.name.clone().unwrap_or_default();
            let uid = deployment.metadata.uid.clone();
            match self.writer.delete_deployment(namespace, &name, uid).await {
                Ok(true) => {}
                Ok(false) => continue, // already gone, or replaced by a new object
                Err(source) => {
                    tracing::warn!(namespace, deployment = name, error = %source, "delete failed");
                    let error = ReconcileError::DeleteFailed {
                        namespace: namespace.to_owned(),
                        name,
                        source,
                    };
                    first_error.get_or_insert(error);
                    continue;
                }
            }
            self.metrics.deployment_deleted();
            tracing::info!(
                namespace,
                deployment = name,
                "deleted Deployment running a denied image"
            );
            let offenses = offenses(&found);
            let list_name = whitelist.metadata.name.as_deref().unwrap_or_default();
            let on_deployment =
                format!("Deleted by image-police, WhiteList {list_name:?}: {offenses}");
            let on_whitelist = format!("Deleted Deployment {name:?}: {offenses}");
            self.record(deployment.as_ref(), REASON_DELETED, &on_deployment, now)
                .await;
            self.record(whitelist, REASON_ENFORCED, &on_whitelist, now)
                .await;
            handled.extend(found.iter().map(|v| violation_record(&name, v, now)));
        }
        (handled, first_error)
    }

    /// Records a Warning Event about `object`; best effort (a failure is logged and counted).
    async fn record<K>(&self, object: &K, reason: &str, message: &str, now: &Time)
    where
        K: kube_core::Resource<DynamicType = ()>,
    {
        let event = self
            .events
            .build(object, EventType::Warning, reason, message, now);
        if let Err(error) = self.writer.create_event(&event).await {
            self.metrics.event_failed();
            tracing::warn!(%error, reason, "recording an Event failed");
        }
    }

    /// Writes the status if it changed. On a 409 Conflict (the cache lags behind our own previous
    /// write, or someone else's) the WhiteList is read fresh from the API and the status
    /// recomputed on top of it, up to [`STATUS_ATTEMPTS`] times: the violations this reconcile
    /// handled must not be lost, since the deleted Deployments will not be seen again.
    async fn write_status(
        &self,
        key: &str,
        whitelist: &WhiteList,
        readiness: &Readiness,
        handled: Vec<Violation>,
        now: &Time,
    ) -> Result<(), ReconcileError> {
        let failed = |source| ReconcileError::StatusUpdateFailed {
            key: key.to_owned(),
            source,
        };
        // observedGeneration is the generation this reconcile judged, even if a fresh read is newer.
        let generation = whitelist.metadata.generation;
        let mut current = whitelist.clone();
        for attempt in 1..=STATUS_ATTEMPTS {
            let previous = current.status.as_ref();
            let next = next_status(previous, generation, readiness, handled.clone(), now);
            if !status_differs(previous, &next) {
                return Ok(());
            }
            current.status = Some(next);
            match self.writer.update_whitelist_status(&current).await {
                Ok(()) => return Ok(()),
                Err(error) if error.is_conflict() && attempt < STATUS_ATTEMPTS => {
                    tracing::debug!(
                        key,
                        attempt,
                        "status write conflicted; reading the WhiteList fresh"
                    );
                    let namespace = whitelist.metadata.namespace.as_deref().unwrap_or_default();
                    let name = whitelist.metadata.name.as_deref().unwrap_or_default();
                    match self.writer.get_whitelist(namespace, name).await {
                        Ok(fresh) => current = fresh,
                        Err(error) if error.is_not_found() => return Ok(()),
                        Err(error) => return Err(failed(error)),
                    }
                }
                Err(error) => return Err(failed(error)),
            }
        }
        Ok(())
    }
}

fn join(problems: &[RuleError]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
