//! Labels every object with the shard the ring of `r0..r<N-1>` gives it, before a labelled
//! group of N replicas starts, and clears those labels before a group that does not use them.
//!
//! # Why the parent does it
//! A labelled replica only ever watches its own label and the unlabelled objects. In a running
//! system objects are labelled when they are created (timebertt's sharder does it in an
//! admission webhook; kubegen's replicas within an assignment period), so the unlabelled set is
//! small. Left to the replicas, a benchmark that starts N fresh replicas over 10,000 unlabelled
//! objects would instead measure a one-off migration: every replica caching all 10,000
//! unlabelled objects at once (their peak RSS would be one replica's, whatever N), then one
//! PATCH per object, one at a time. Placing the labels first, with the same ring the replicas
//! compute ([`HashRing`] over their names, keyed by [`ring_key`]), starts each replica on its
//! own share, as after a rolling restart of a running ring. The replicas still check every
//! label against their own ring, and move any object it disagrees with themselves.

use anyhow::{Context, Result};
use futures_util::StreamExt;
use futures_util::stream;
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{Client, ListOptions, Patch, PatchOptions, ResourceClient};
use kubegen_sharding::{HashRing, Ring, ring_key};
use serde_json::{Value, json};

use super::{RING, SELECTOR, identity};

/// Patches in flight.
const CONCURRENCY: usize = 32;

/// Labels each bench ConfigMap ([`SELECTOR`]) of `namespace` with its shard of a ring of `replicas` replicas (and
/// clears a drain label); returns how many it had to change.
///
/// # Errors
/// The list or a patch failed.
pub async fn label(client: &Client, namespace: &str, replicas: usize) -> Result<usize> {
    let objects = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    let moves = moves(&objects, namespace, replicas).await?;
    let labels = Ring::new(RING, namespace);
    let (shard_label, drain_label) = (labels.shard_label(), labels.drain_label());
    let patches = moves.into_iter().map(|(name, shard)| {
        let labels = json!({shard_label.as_str(): shard, drain_label.as_str(): Value::Null});
        (name, labels)
    });
    patch_labels(&objects, patches.collect()).await
}

/// Removes the shard and drain labels from each bench ConfigMap of `namespace` that carries one;
/// returns how many it had to change.
///
/// A group that does not select by label (unsharded, shard-selector) runs over unlabelled
/// objects, so a run in which it follows a labelled group does not count a label it never uses
/// in its bytes.
///
/// # Errors
/// The list or a patch failed.
pub async fn unlabel(client: &Client, namespace: &str) -> Result<usize> {
    let objects = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    let labels = Ring::new(RING, namespace);
    let (shard_label, drain_label) = (labels.shard_label(), labels.drain_label());
    let list = objects
        .list(&ListOptions::default().labels(SELECTOR))
        .await
        .context("listing the objects to unlabel")?;
    let patches = list.items.into_iter().filter_map(|object| {
        let labels = object.metadata.labels?;
        (labels.contains_key(&shard_label) || labels.contains_key(&drain_label)).then(|| {
            let cleared =
                json!({shard_label.as_str(): Value::Null, drain_label.as_str(): Value::Null});
            (object.metadata.name.unwrap_or_default(), cleared)
        })
    });
    patch_labels(&objects, patches.collect()).await
}

/// Merge-patches `metadata.labels` of each named object, [`CONCURRENCY`] at a time; returns how
/// many it patched.
async fn patch_labels(
    objects: &ResourceClient<ConfigMap>,
    patches: Vec<(String, Value)>,
) -> Result<usize> {
    let count = patches.len();
    let mut patching = stream::iter(patches)
        .map(|(name, labels)| {
            let objects = objects.clone();
            async move {
                let patch = json!({"metadata": {"labels": labels}});
                objects
                    .patch(&name, &Patch::Merge(patch), &PatchOptions::default())
                    .await
                    .with_context(|| format!("labelling {name}"))
            }
        })
        .buffer_unordered(CONCURRENCY);
    while let Some(result) = patching.next().await {
        result?;
    }
    Ok(count)
}

/// How many bench ConfigMaps of `namespace` do not (yet) carry the label of their shard in a ring of
/// `replicas` replicas, or still carry a drain label: 0 once a labelled group has finished
/// every handover.
///
/// # Errors
/// The list failed.
pub async fn misplaced(client: &Client, namespace: &str, replicas: usize) -> Result<usize> {
    let objects = ResourceClient::<ConfigMap>::namespaced(client.clone(), namespace);
    Ok(moves(&objects, namespace, replicas).await?.len())
}

/// `(name, shard)` of every object whose shard label is not its ring owner's, or that drains.
async fn moves(
    objects: &ResourceClient<ConfigMap>,
    namespace: &str,
    replicas: usize,
) -> Result<Vec<(String, String)>> {
    let ring = HashRing::new((0..replicas).map(identity));
    let labels = Ring::new(RING, namespace);
    let (shard_label, drain_label) = (labels.shard_label(), labels.drain_label());
    let list = objects
        .list(&ListOptions::default().labels(SELECTOR))
        .await
        .context("listing the objects to place")?;
    Ok(list
        .items
        .iter()
        .filter_map(|object| {
            let meta = &object.metadata;
            let want = ring.owner(&ring_key(meta))?;
            let labels = meta.labels.as_ref();
            let have = labels.and_then(|l| l.get(&shard_label));
            let draining = labels.is_some_and(|l| l.contains_key(&drain_label));
            (have.map(String::as_str) != Some(want) || draining)
                .then(|| (meta.name.clone().unwrap_or_default(), want.to_owned()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::config_map;

    #[tokio::test]
    async fn label_places_each_object_on_its_ring_owner_once() -> Result<()> {
        let server = kubegen_testserver::TestServer::start().await;
        let client = server.client();
        let objects = ResourceClient::<ConfigMap>::namespaced(client.clone(), "default");
        for index in 0..20 {
            objects
                .create(&config_map("default", index), &Default::default())
                .await?;
        }
        // Not a bench object (a real cluster puts kube-root-ca.crt in every namespace).
        let mut other = ConfigMap::default();
        other.metadata.name = Some("kube-root-ca.crt".to_owned());
        objects.create(&other, &Default::default()).await?;
        assert_eq!(misplaced(&client, "default", 3).await?, 20);
        assert_eq!(label(&client, "default", 3).await?, 20);
        assert_eq!(misplaced(&client, "default", 3).await?, 0);
        assert_eq!(label(&client, "default", 3).await?, 0);
        let ring = HashRing::new(["r0", "r1", "r2"]);
        let shard_label = Ring::new(RING, "default").shard_label();
        let other = objects.get("kube-root-ca.crt", &Default::default()).await?;
        assert_eq!(other.metadata.labels, None);
        for object in objects
            .list(&ListOptions::default().labels(SELECTOR))
            .await?
            .items
        {
            let meta = &object.metadata;
            let shard = meta.labels.as_ref().and_then(|l| l.get(&shard_label));
            assert_eq!(shard.map(String::as_str), ring.owner(&ring_key(meta)));
        }
        // Growing the ring moves only what the new replica takes.
        let grown = HashRing::new(["r0", "r1", "r2", "r3"]);
        let expected = (0..20)
            .map(|index| format!("default/{}", crate::data::config_map_name(index)))
            .filter(|key| ring.owner(key) != grown.owner(key))
            .count();
        assert!(expected < 20);
        assert_eq!(label(&client, "default", 4).await?, expected);
        // A group that selects otherwise starts over unlabelled objects.
        assert_eq!(unlabel(&client, "default").await?, 20);
        assert_eq!(unlabel(&client, "default").await?, 0);
        assert_eq!(misplaced(&client, "default", 4).await?, 20);
        for object in objects.list(&ListOptions::default()).await?.items {
            assert_eq!(
                object
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(&shard_label)),
                None
            );
        }
        Ok(())
    }
}
