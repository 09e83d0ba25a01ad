//! The controller's writes to the API: delete a Deployment, create an Event, update a WhiteList's
//! status. Reads never come here: they come from the informer caches.
//!
//! Kept in one small type so reconcile code reads as intent (`delete_deployment`) and the RBAC
//! rules in deploy/rbac.yaml can be checked against one list of calls.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, PropagationPolicy, ResourceClient, UpdateOptions,
};

/// API writes of image-police. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    client: Client,
}

impl Writer {
    /// Writes through `client`.
    pub fn new(client: Client) -> Writer {
        Writer { client }
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
        let deployments = ResourceClient::<Deployment>::namespaced(self.client.clone(), namespace);
        match deployments.delete(name, &options).await {
            Ok(()) => Ok(true),
            Err(error) if error.is_not_found() || error.is_conflict() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Creates `event` in its own namespace.
    ///
    /// # Errors
    /// The API error.
    pub async fn create_event(&self, event: &Event) -> Result<(), kubegen_client::Error> {
        let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
        let events = ResourceClient::<Event>::namespaced(self.client.clone(), namespace);
        events
            .create(event, &CreateOptions::default())
            .await
            .map(drop)
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
        let whitelists = ResourceClient::<WhiteList>::namespaced(self.client.clone(), namespace);
        whitelists
            .update_status(whitelist, &UpdateOptions::default())
            .await
            .map(drop)
    }
}
