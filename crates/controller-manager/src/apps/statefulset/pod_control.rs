//! Creating, updating and deleting a StatefulSet's Pods and claims, each recorded as an Event on
//! the set in v1.36's words.
//!
//! Mirrors `StatefulPodControl` of `pkg/controller/statefulset/stateful_pod_control.go`
//! (`CreateStatefulPod`, `UpdateStatefulPod`, `DeleteStatefulPod`,
//! `createPersistentVolumeClaims`, `recordPodEvent`, `recordClaimEvent`).
//!
//! # Events
//! - `SuccessfulCreate` "Create Claim data-db-0 Pod db-0 in StatefulSet db success", then
//!   `SuccessfulCreate` "Create Pod db-0 in StatefulSet db successful";
//! - `SuccessfulDelete` "Delete Pod db-1 in StatefulSet db successful";
//! - `SuccessfulUpdate` "Update Pod db-0 in StatefulSet db successful" after an identity fix;
//! - Warnings `FailedCreate` / `FailedDelete` / `FailedUpdate` "... failed error: `<message>`".
//!
//! # Claims and retention
//! Only the default `persistentVolumeClaimRetentionPolicy` (Retain when deleted and when scaled)
//! is carried out: claims are created and never owned or deleted by the controller. The `Delete`
//! policies, which make the set or the Pod own its claims, are not implemented.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kubegen_cache::Lister;
use kubegen_client::{Client, CreateOptions, DeleteOptions, ResourceClient, UpdateOptions};
use kubegen_runtime::EventType;

use super::consistency::Consistency;
use super::identity::{
    claims_for, identity_matches, ordinal, storage_matches, update_identity, update_storage,
};
use crate::workload::events::EventSink;
use crate::workload::meta::{describe, key_of};
use crate::workload::shared::{FIELD_MANAGER, api_message, go_message};
use crate::{Error, Result, error::request};

/// Writes a StatefulSet's Pods and claims.
pub(crate) struct PodControl {
    pub(crate) client: Client,
    pub(crate) pods: Lister<Pod>,
    pub(crate) claims: Lister<PersistentVolumeClaim>,
    pub(crate) events: EventSink,
    pub(crate) consistency: Arc<Consistency>,
}

fn name(obj: &Pod) -> &str {
    obj.metadata.name.as_deref().unwrap_or_default()
}

fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

fn namespace(set: &StatefulSet) -> &str {
    set.metadata.namespace.as_deref().unwrap_or_default()
}

impl PodControl {
    /// Records `verb` (`create`, `update`, `delete`) on `pod` (`recordPodEvent`).
    fn pod_event(&self, verb: &str, set: &StatefulSet, pod: &Pod, error: Option<&str>) {
        let title = title(verb);
        let (pod, owner) = (name(pod), set_name(set));
        match error {
            None => self.events.record(
                set,
                EventType::Normal,
                &format!("Successful{title}"),
                format!("{title} Pod {pod} in StatefulSet {owner} successful"),
            ),
            Some(e) => self.events.record(
                set,
                EventType::Warning,
                &format!("Failed{title}"),
                format!("{title} Pod {pod} in StatefulSet {owner} failed error: {e}"),
            ),
        }
    }

    /// Creates the claims of `pod` that do not exist yet (`createPersistentVolumeClaims`).
    ///
    /// # Errors
    /// Every claim that could not be created, or is being deleted, as one error.
    pub(crate) async fn create_claims(&self, set: &StatefulSet, pod: &Pod) -> Result<()> {
        let Some(ordinal) = ordinal(pod) else {
            return Ok(());
        };
        let claims: ResourceClient<PersistentVolumeClaim> =
            ResourceClient::namespaced(self.client.clone(), namespace(set));
        let mut failures = Vec::new();
        for (_, claim) in claims_for(set, ordinal) {
            let claim_name = claim.metadata.name.clone().unwrap_or_default();
            match self.claims.get(Some(namespace(set)), &claim_name) {
                Some(existing) if existing.metadata.deletion_timestamp.is_some() => {
                    failures.push(format!("pvc {claim_name} is being deleted"));
                }
                Some(_) => {}
                None => {
                    let options = CreateOptions::default().field_manager(FIELD_MANAGER);
                    let outcome = claims.create(&claim, &options).await;
                    let (title, pod, owner) = ("Create", name(pod), set_name(set));
                    match outcome {
                        Ok(created) => {
                            self.consistency.wrote_claim(set, &created, || {
                                self.claims.get(Some(namespace(set)), &claim_name)
                            });
                            self.events.record(
                                set,
                                EventType::Normal,
                                "SuccessfulCreate",
                                format!("{title} Claim {claim_name} Pod {pod} in StatefulSet {owner} success"),
                            );
                        }
                        Err(e) => {
                            let message =
                                format!("failed to create PVC {claim_name}: {}", api_message(&e));
                            if !e.is_already_exists() {
                                self.events.record(
                                    set,
                                    EventType::Warning,
                                    "FailedCreate",
                                    format!("{title} Claim {claim_name} for Pod {pod} in StatefulSet {owner} failed error: {message}"),
                                );
                            }
                            failures.push(message);
                        }
                    }
                }
            }
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(Error::InvalidObject {
                object: describe(set),
                reason: aggregate(&failures),
            }),
        }
    }

    /// Creates `pod` after its claims (`CreateStatefulPod`). A Pod that already exists is an
    /// error without an Event: the cache is behind and the next sync sees it.
    ///
    /// # Errors
    /// A claim or the Pod could not be created.
    pub(crate) async fn create(&self, set: &StatefulSet, pod: &Pod) -> Result<()> {
        if let Err(e) = self.create_claims(set, pod).await {
            self.pod_event("create", set, pod, Some(&go_message(&e)));
            return Err(e);
        }
        let pods: ResourceClient<Pod> =
            ResourceClient::namespaced(self.client.clone(), namespace(set));
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        match pods.create(pod, &options).await {
            Ok(created) => {
                self.consistency.wrote_pod(set, &created, || {
                    self.pods.get(Some(namespace(set)), name(pod))
                });
                self.pod_event("create", set, pod, None);
                Ok(())
            }
            Err(e) => {
                if !e.is_already_exists() {
                    self.pod_event("create", set, pod, Some(&api_message(&e)));
                }
                Err(request(format!(
                    "create Pod {}/{}",
                    namespace(set),
                    name(pod)
                ))(e))
            }
        }
    }

    /// Restores the identity and storage of `pod` if they drifted (`UpdateStatefulPod`), with
    /// one retry on a conflict from the cache's newer copy.
    ///
    /// # Errors
    /// A claim or the update failed.
    pub(crate) async fn update(&self, set: &StatefulSet, pod: &Pod) -> Result<()> {
        let pods: ResourceClient<Pod> =
            ResourceClient::namespaced(self.client.clone(), namespace(set));
        let mut pod = pod.clone();
        let mut attempts = 0;
        loop {
            let mut consistent = true;
            if !identity_matches(set, &pod) {
                update_identity(set, &mut pod);
                consistent = false;
            }
            if !storage_matches(set, &pod) {
                update_storage(set, &mut pod);
                consistent = false;
                if let Err(e) = self.create_claims(set, &pod).await {
                    self.pod_event("update", set, &pod, Some(&go_message(&e)));
                    return Err(e);
                }
            }
            if consistent {
                return Ok(());
            }
            let options = UpdateOptions::default().field_manager(FIELD_MANAGER);
            match pods.update(&pod, &options).await {
                Ok(updated) => {
                    self.consistency.wrote_pod(set, &updated, || {
                        self.pods.get(Some(namespace(set)), name(&pod))
                    });
                    self.pod_event("update", set, &pod, None);
                    return Ok(());
                }
                Err(e) if e.is_conflict() && attempts < 4 => {
                    attempts += 1;
                    if let Some(fresh) = self.pods.get(Some(namespace(set)), name(&pod)) {
                        pod = (*fresh).clone();
                    }
                }
                Err(e) => {
                    self.pod_event("update", set, &pod, Some(&api_message(&e)));
                    return Err(request(format!("update Pod {}", key_of(&pod)))(e));
                }
            }
        }
    }

    /// Deletes `pod` (`DeleteStatefulPod`); one already gone counts as deleted.
    ///
    /// # Errors
    /// The delete failed otherwise.
    pub(crate) async fn delete(&self, set: &StatefulSet, pod: &Pod) -> Result<()> {
        let pods: ResourceClient<Pod> =
            ResourceClient::namespaced(self.client.clone(), namespace(set));
        match pods.delete(name(pod), &DeleteOptions::default()).await {
            Err(e) if !e.is_not_found() => {
                self.pod_event("delete", set, pod, Some(&api_message(&e)));
                Err(request(format!("delete Pod {}", key_of(pod)))(e))
            }
            _ => {
                self.pod_event("delete", set, pod, None);
                Ok(())
            }
        }
    }
}

/// `create` → `Create` (`cases.Title`).
fn title(verb: &str) -> String {
    let mut chars = verb.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Several errors as apimachinery's `Aggregate` prints them: one as itself, more as
/// `[a, b]`.
pub(crate) fn aggregate(messages: &[String]) -> String {
    match messages {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_are_titled_as_go_cases_title_does() {
        assert_eq!(title("create"), "Create");
        assert_eq!(title("delete"), "Delete");
        assert_eq!(title(""), "");
    }

    #[test]
    fn one_error_prints_alone_several_in_brackets() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }
}
