//! One reconcile of one namespace: the controller's business logic, between the workqueue (which
//! hands out namespaces) and the API (deletions, Events, status). The counterpart of
//! sample-controller's `syncHandler`.
//!
//! # Why the unit is the namespace
//! The policy of a namespace is the union of all its WhiteLists, so a change to any one of them
//! (added, edited, deleted, turned invalid) changes what every Deployment of the namespace may run
//! and what every other list's status must say. Reconciling one list at a time missed exactly that:
//! deleting the list that allowed an image left the Deployment running, because nothing re-judged
//! the namespace. So the key is the namespace, every event touching it enqueues it, and each
//! reconcile recomputes everything from the caches: the outcome depends only on what the caches
//! hold, never on which event came first.
//!
//! # Steps
//! 1. Read every WhiteList of the namespace from the informer cache (namespace index). None: nothing
//!    to do, in particular after the last list was deleted: nothing is enforced there any more and
//!    there is no status left to write.
//! 2. In a protected namespace ([`ProtectedNamespaces`]): report it in every status, touch nothing.
//! 3. Any invalid list ([`RuleError`]): pause enforcement in the namespace (below); report the
//!    problems in that list's status and the pause in every other's. No requeue: the fix is a spec
//!    edit (or deleting the list), which enqueues the namespace again.
//! 4. Otherwise judge every Deployment of the namespace against the union of the lists (so adding
//!    a second list can only allow more, and two lists never fight), delete each offender
//!    (precondition: its uid, so a re-created Deployment of the same name is never hit), and record
//!    a Warning Event on the Deployment and one on each WhiteList of the namespace.
//! 5. Write each list's status computed by [`next_status`], only if it changed. Every list of the
//!    namespace records the violations handled, since they all make up the policy enforced.
//!
//! # An invalid WhiteList pauses its namespace (fail-safe)
//! The alternative, ignoring the invalid list and enforcing the others, turns a typo in one list
//! into deletions of the Deployments it meant to allow, and deletion cannot be undone; with a single
//! list it would instead enforce nothing, so the two cases would disagree. Pausing is reversible
//! (fixing the list resumes enforcement and catches up on every Deployment), consistent for one or
//! many lists, and visible: every list of the namespace says `Ready=False` and why. It grants no
//! one anything new: whoever can create an invalid WhiteList in a namespace can as well create a
//! valid one allowing any image. While paused, nothing in the namespace is deleted, whichever event
//! (list or Deployment) triggers the reconcile.
//!
//! # Errors and retries
//! A failed deletion or status write returns an error so the worker requeues the namespace with
//! backoff; deletions that did succeed are not repeated (the Deployments are gone). A status
//! write that conflicts (the cache has not yet seen our own previous status write, typically) is
//! first retried on a fresh GET of the WhiteList (client-go's `retry.RetryOnConflict` pattern),
//! because the violations it carries would otherwise be lost; only a persisting conflict
//! requeues. Events are best effort: a failure is logged and counted, never retried.
//!
//! # Known limit
//! If a status write still fails after deletions, those deletions are missing from that list's
//! `status.lastViolations` (the Events still record them): the next reconcile no longer sees the
//! deleted Deployments.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::Selector;
use kubegen_api::police::v1beta1::{Violation, WhiteList, WhiteListSpec};
use kubegen_cache::ObjectKey;
use kubegen_listers::apps::v1::DeploymentLister;
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_runtime::{Action, Context, EventType, Recorder};

use crate::metrics::PoliceMetrics;
use crate::namespaces::ProtectedNamespaces;
use crate::policy::{ContainerViolation, Policy, RuleError, RuleInput};
use crate::status::{Readiness, next_status, status_differs, violation_record};
use crate::writer::Writer;

/// The component name written into every Event's `source` and `reportingComponent`.
pub const COMPONENT: &str = "image-police";
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
    /// Records the Events of each deletion (aggregated and rate limited as client-go does).
    pub(crate) events: Recorder,
    /// Where deletions and failed Events are counted.
    pub(crate) metrics: PoliceMetrics,
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

/// What one reconcile (or one admission review, or the fleet's reconcile in a member cluster)
/// decided for a whole namespace, before it acts.
#[derive(Debug)]
pub enum Verdict {
    /// A namespace the controller does not act in.
    Protected,
    /// At least one WhiteList is invalid: enforcement in the namespace waits until it is fixed.
    /// Holds every invalid list's name with its problems, in name order.
    Paused(Vec<(String, String)>),
    /// Every WhiteList is valid: enforce the union of them.
    Enforce(Policy),
}

/// Decides what to do in `namespace`, whose WhiteLists are `lists` (not empty).
pub fn judge(
    protected: &ProtectedNamespaces,
    namespace: &str,
    lists: &[Arc<WhiteList>],
) -> Verdict {
    if protected.contains(namespace) {
        return Verdict::Protected;
    }
    let mut policies = Vec::with_capacity(lists.len());
    let mut invalid = Vec::new();
    for list in lists {
        match spec_policy(&list.spec) {
            Ok(policy) => policies.push(policy),
            Err(problems) => {
                let name = list.metadata.name.clone().unwrap_or_default();
                invalid.push((name, join(&problems)));
            }
        }
    }
    if invalid.is_empty() {
        Verdict::Enforce(Policy::union(&policies))
    } else {
        Verdict::Paused(invalid)
    }
}

impl Verdict {
    /// The `Ready` state reported in the status of `whitelist`, one of the judged lists.
    fn readiness(&self, namespace: &str, whitelist: &WhiteList) -> Readiness {
        let name = whitelist.metadata.name.as_deref().unwrap_or_default();
        match self {
            Verdict::Protected => Readiness::ProtectedNamespace(namespace.to_owned()),
            Verdict::Enforce(_) => Readiness::Enforcing,
            Verdict::Paused(invalid) => match invalid.iter().find(|(list, _)| list == name) {
                Some((_, problems)) => Readiness::InvalidSpec(problems.clone()),
                None => Readiness::Paused(invalid.iter().map(|(list, _)| list.clone()).collect()),
            },
        }
    }
}

impl Reconciler {
    /// Reconciles namespace `namespace`: judges every Deployment there against all of its
    /// WhiteLists and refreshes the status of each of them.
    ///
    /// # Errors
    /// A [`ReconcileError`] when a deletion or a status write failed (the first such failure,
    /// deletions first); the caller requeues the namespace.
    pub async fn reconcile_namespace(&self, namespace: &str) -> Result<(), ReconcileError> {
        let mut lists = self
            .whitelists
            .white_lists(namespace)
            .list(&Selector::default());
        if lists.is_empty() {
            tracing::debug!(
                namespace,
                "no WhiteList in the namespace; nothing to enforce"
            );
            return Ok(());
        }
        lists.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let now = Time(Timestamp::now());
        let verdict = judge(&self.protected, namespace, &lists);
        let (handled, mut first_error) = match &verdict {
            Verdict::Enforce(policy) => self.enforce(namespace, &lists, policy, &now).await,
            Verdict::Protected | Verdict::Paused(_) => (Vec::new(), None),
        };
        if let Verdict::Paused(invalid) = &verdict {
            tracing::info!(namespace, invalid = ?invalid, "enforcement paused: invalid WhiteLists");
        }
        for list in &lists {
            let readiness = verdict.readiness(namespace, list);
            if let Err(error) = self.write_status(list, &readiness, &handled, &now).await {
                // After a deletion failure, report the deletion: it matters more.
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Deletes every offending Deployment of `namespace`, recording an Event on it and on each of
    /// `lists`; returns the violations handled and the first deletion error, if any (the others
    /// are logged).
    async fn enforce(
        &self,
        namespace: &str,
        lists: &[Arc<WhiteList>],
        policy: &Policy,
        now: &Time,
    ) -> (Vec<Violation>, Option<ReconcileError>) {
        let mut deployments = self
            .deployments
            .deployments(namespace)
            .list(&Selector::default());
        deployments.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let list_names = lists
            .iter()
            .map(|list| format!("{:?}", list.metadata.name.as_deref().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ");
        let mut handled = Vec::new();
        let mut first_error = None;
        for deployment in deployments {
            if deployment.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let found = policy.violations(&*deployment);
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
            self.record_deletion(&deployment, lists, &list_names, &found, now)
                .await;
            handled.extend(found.iter().map(|v| violation_record(&name, v, now)));
        }
        (handled, first_error)
    }

    /// Records the Events of one deletion: one on the Deployment, one on each of `lists`.
    async fn record_deletion(
        &self,
        deployment: &Deployment,
        lists: &[Arc<WhiteList>],
        list_names: &str,
        found: &[ContainerViolation],
        now: &Time,
    ) {
        let name = deployment.metadata.name.as_deref().unwrap_or_default();
        let offenses = offenses(found);
        let on_deployment = format!("Deleted by image-police, WhiteLists {list_names}: {offenses}");
        let on_whitelist = format!("Deleted Deployment {name:?}: {offenses}");
        self.record(deployment, REASON_DELETED, &on_deployment, now)
            .await;
        for list in lists {
            self.record(list.as_ref(), REASON_ENFORCED, &on_whitelist, now)
                .await;
        }
    }

    /// Records a Warning Event about `object`; best effort (a failure is logged and counted).
    async fn record<K>(&self, object: &K, reason: &str, message: &str, now: &Time)
    where
        K: kube_core::Resource<DynamicType = ()>,
    {
        let recorded = self
            .events
            .record(object, EventType::Warning, reason, message, now)
            .await;
        if let Err(error) = recorded {
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
        whitelist: &WhiteList,
        readiness: &Readiness,
        handled: &[Violation],
        now: &Time,
    ) -> Result<(), ReconcileError> {
        let key = ObjectKey::of(whitelist);
        let key = key.as_str();
        let failed = |source| ReconcileError::StatusUpdateFailed {
            key: key.to_owned(),
            source,
        };
        // observedGeneration is the generation this reconcile judged, even if a fresh read is newer.
        let generation = whitelist.metadata.generation;
        let mut current = whitelist.clone();
        for attempt in 1..=STATUS_ATTEMPTS {
            let previous = current.status.as_ref();
            let next = next_status(previous, generation, readiness, handled.to_vec(), now);
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

/// The runtime hands over the first WhiteList of a queued namespace; the namespace (the key)
/// is what is reconciled.
impl kubegen_runtime::Reconciler<WhiteList> for Reconciler {
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        _first: Arc<WhiteList>,
        context: &Context,
    ) -> Result<Action, ReconcileError> {
        self.reconcile_namespace(context.key().as_str()).await?;
        Ok(Action::Done)
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
