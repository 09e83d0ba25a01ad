//! The `/scale` subresource of any resource that has one: an `autoscaling/v1` `Scale` (desired
//! replicas in `spec`, current replicas and the label selector in `status`) that autoscalers and
//! `kubectl scale` read and write without knowing the workload's kind.
//!
//! Mirrors client-go's typed `GetScale` / `UpdateScale` of Deployments, ReplicaSets and
//! StatefulSets (`kubernetes/typed/apps/v1`) and the polymorphic `scale.ScalesGetter`
//! (`k8s.io/client-go/scale`), which does the same for any group-resource, custom resources
//! included: here both are the methods below on [`ResourceClient`], whether it is typed
//! (`ResourceClient::<Deployment>::namespaced`) or built from an [`ApiResource`](crate::ApiResource)
//! at run time ([`ResourceClient::dynamic`]).
//!
//! # What servers answer (v1.36 and v1.15)
//! - A missing object: 404 `deployments.apps "missing" not found` ([`Error::is_not_found`]).
//! - A resource without a scale subresource: 404 with the server's plain `404 page not found`
//!   (also [`Error::is_not_found`]).
//! - An update whose `metadata.resourceVersion` is stale: 409 on the parent
//!   (`deployments.apps "web"`, [`Error::is_conflict`]); an empty one writes unconditionally.
//! - Negative replicas: 422 `The Scale "web" is invalid: spec.replicas: Invalid value: -1: must be
//!   greater than or equal to 0` ([`Error::is_invalid`]).
//!
//! # Differences from client-go
//! client-go's polymorphic client asks discovery which `Scale` version each resource serves and
//! converts `extensions/v1beta1` and `apps/v1beta1|2` Scales; every server from 1.15 on serves
//! `autoscaling/v1` Scales for the `apps/v1` workloads and custom resources, so only that one is
//! spoken.

use k8s_openapi::api::autoscaling::v1::Scale;

use crate::error::{Error, Result};
use crate::options::{Patch, PatchOptions, UpdateOptions};
use crate::resource_client::{AnyObject, ResourceClient};

/// The subresource's name.
const SCALE: &str = "scale";

impl<K> ResourceClient<K>
where
    K: AnyObject,
{
    /// Reads the `Scale` of `name`: `GET {name}/scale`.
    ///
    /// # Errors
    /// The server's error (see the module doc), typed as for [`ResourceClient::get`].
    pub async fn get_scale(&self, name: &str) -> Result<Scale> {
        self.get_subresource(name, SCALE).await
    }

    /// Writes `scale` (its `spec.replicas`) to the object it names in `metadata.name`:
    /// `PUT {name}/scale`. A `metadata.resourceVersion` makes it conditional.
    ///
    /// # Errors
    /// [`Error::BuildRequest`] without `metadata.name`; the server's error otherwise (409 for a
    /// stale resourceVersion, 422 for negative replicas).
    pub async fn update_scale(&self, scale: &Scale, opts: &UpdateOptions) -> Result<Scale> {
        let name = scale.metadata.name.as_deref().unwrap_or_default();
        if name.is_empty() {
            return Err(Error::BuildRequest(format!(
                "update_scale in {}: the Scale has no metadata.name",
                self.collection_path()
            )));
        }
        self.update_subresource(name, SCALE, scale, opts).await
    }

    /// Patches the `Scale` of `name`, e.g. `Patch::Merge(json!({"spec": {"replicas": 3}}))`:
    /// `PATCH {name}/scale` (client-go's `Scales(ns).Patch`, `kubectl scale`).
    ///
    /// # Errors
    /// The server's error, as for [`ResourceClient::update_scale`].
    pub async fn patch_scale(
        &self,
        name: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<Scale> {
        self.patch_subresource(name, SCALE, patch, opts).await
    }
}

#[cfg(test)]
#[path = "scale_tests.rs"]
mod tests;
