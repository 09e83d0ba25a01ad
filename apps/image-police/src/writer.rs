//! The controller's writes to the API: delete a Deployment, create an Event, update a WhiteList's
//! status, all through the generated clientset. Reads come from the informer caches (listers),
//! except the fresh GET that retries a conflicting status write.
//!
//! Kept in one small type so reconcile code reads as intent (`delete_deployment`) and the RBAC
//! rules in deploy/rbac.yaml can be checked against one list of calls.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_client::{DeleteOptions, GetOptions, PropagationPolicy, UpdateOptions};
use kubegen_clientset::Clientset;

/// API writes of image-police. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    clientset: Clientset,
}

impl Writer {
    /// Writes through `clientset`.
    pub fn new(clientset: Clientset) -> Writer {
        Writer { clientset }
    }

    /// Deletes Deployment `namespace/name` if its uid is still `uid` (a Deployment re-created
    /// under the same name since the cache saw it is left alone). Dependents (ReplicaSets, Pods)
    /// are removed by the garbage collector in the background.
    ///
    /// Returns `Ok(false)` when there was nothing to delete: already gone (404) or replaced (409
    /// from the uid precondition).
    ///
    /// # Errors
    /// Any other API error.
    pub async fn delete_deployment(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<String>,
    ) -> Result<bool, kubegen_client::Error> {
        let options = DeleteOptions::default()
            .preconditions(Preconditions {
                uid,
                resource_version: None,
            })
            .propagation_policy(PropagationPolicy::Background);
        let deployments = self.clientset.apps_v1().deployments(namespace);
        match deployments.delete(name, &options).await {
            Ok(()) => Ok(true),
            Err(error) if error.is_not_found() || error.is_conflict() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Reads WhiteList `namespace/name` from the API server (not the cache): used only to retry a
    /// status write that conflicted.
    ///
    /// # Errors
    /// The API error.
    pub async fn get_whitelist(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<WhiteList, kubegen_client::Error> {
        let whitelists = self.clientset.police_v1beta1().white_lists(namespace);
        whitelists.get(name, &GetOptions::default()).await
    }

    /// Writes `whitelist.status` through the `/status` subresource, guarded by the object's
    /// resourceVersion (409 Conflict when the cache was stale).
    ///
    /// # Errors
    /// The API error.
    pub async fn update_whitelist_status(
        &self,
        whitelist: &WhiteList,
    ) -> Result<(), kubegen_client::Error> {
        let namespace = whitelist.metadata.namespace.as_deref().unwrap_or_default();
        let whitelists = self.clientset.police_v1beta1().white_lists(namespace);
        whitelists
            .update_status(whitelist, &UpdateOptions::default())
            .await
            .map(drop)
    }
}
