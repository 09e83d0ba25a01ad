//! One object of a sharded kind as the handover protocol sees it: its key, its resourceVersion, the
//! shard its label names, and the conditional write that moves it to another shard. Both the
//! replica's own passes (`assigner.rs`) and its dependents (`dependents.rs`) move objects this way.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{ApiObject, Client, Patch, PatchOptions, ResourceClient};
use serde_json::{Value, json};

use crate::config::ReplicaConfig;

/// `namespace/name` of an object.
pub(crate) fn object_key(meta: &ObjectMeta) -> String {
    let namespace = meta.namespace.as_deref().unwrap_or("");
    format!("{namespace}/{}", meta.name.as_deref().unwrap_or(""))
}

/// The object's resourceVersion as a number (0 when absent or not a number).
pub(crate) fn resource_version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The shard an object is labelled with ("" when none).
pub(crate) fn holder(config: &ReplicaConfig, meta: &ObjectMeta) -> String {
    let labels = meta.labels.as_ref();
    let shard = labels.and_then(|l| l.get(&config.ring.shard_label()));
    shard.cloned().unwrap_or_default()
}

/// Sets the shard label of the `T` with `meta` to `shard` (None: removes it) and removes the
/// drain label, if the object is still at the version in `meta`. The new resourceVersion, None
/// when not written.
pub(crate) async fn relabel<T: ApiObject>(
    client: &Client,
    config: &ReplicaConfig,
    meta: &ObjectMeta,
    shard: Option<&str>,
) -> Option<u64> {
    let name = meta.name.as_deref()?;
    let objects = match meta.namespace.as_deref() {
        Some(namespace) => ResourceClient::<T>::namespaced(client.clone(), namespace),
        None => ResourceClient::<T>::cluster(client.clone()),
    };
    let patch = json!({"metadata": {
        "resourceVersion": meta.resource_version,
        "labels": {
            config.ring.shard_label(): shard.map_or(Value::Null, Value::from),
            config.ring.drain_label(): Value::Null,
        },
    }});
    match objects
        .patch(name, &Patch::Merge(patch), &PatchOptions::default())
        .await
    {
        Ok(written) => Some(resource_version(written.meta())),
        Err(error) => {
            tracing::debug!(shard = %config.identity, object = %object_key(meta), %error, "relabel skipped");
            None
        }
    }
}
