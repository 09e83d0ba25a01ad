//! Fills a server with a dataset, as fast as the server accepts writes, and empties it again.
//!
//! Loading goes through [`RawClient`] with 32 requests in flight: plain HTTP to a test server, or
//! a real API server through its kubeconfig, so the same loader serves the benchmarks, the soak
//! and a real cluster alike. It is idempotent and resumable: objects that already exist count as
//! created, so an interrupted load continues where it stopped and a rerun costs one conflict per
//! object.

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream;
use http::{Method, StatusCode};
use serde::Serialize;

use crate::data;
use crate::http::{RawClient, continue_token};
use crate::roles::Dataset;

/// Requests in flight while loading.
const CONCURRENCY: usize = 32;

/// Creates `namespace` (an existing one is fine).
pub async fn ensure_namespace(client: &RawClient, namespace: &str) -> Result<()> {
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}
    });
    let (status, reply) = client
        .send(
            Method::POST,
            "/api/v1/namespaces",
            Bytes::from(body.to_string()),
        )
        .await?;
    if status.is_success() || status == StatusCode::CONFLICT {
        return Ok(());
    }
    bail!(
        "creating namespace {namespace}: {status}: {}",
        String::from_utf8_lossy(&reply)
    )
}

/// Creates objects `0..count` of `dataset` in `namespace`. Objects that already exist count as
/// created, so a rerun against the same server is cheap.
pub async fn load(
    client: &RawClient,
    dataset: Dataset,
    namespace: &str,
    count: usize,
) -> Result<()> {
    ensure_namespace(client, namespace).await?;
    let collection = dataset.collection(namespace);
    match dataset {
        Dataset::ConfigMaps => {
            create_all(
                client,
                &collection,
                (0..count).map(|i| data::config_map(namespace, i)),
            )
            .await
        }
        Dataset::Deployments => {
            create_all(
                client,
                &collection,
                (0..count).map(|i| data::deployment(namespace, i)),
            )
            .await
        }
    }
}

/// POSTs every object to `collection`, `CONCURRENCY` at a time.
pub async fn create_all<T: Serialize>(
    client: &RawClient,
    collection: &str,
    objects: impl Iterator<Item = T>,
) -> Result<()> {
    let bodies = objects.map(|object| serde_json::to_vec(&object).map(Bytes::from));
    let mut results = stream::iter(bodies)
        .map(|body| async move {
            let (status, reply) = client.send(Method::POST, collection, body?).await?;
            if status.is_success() || status == StatusCode::CONFLICT {
                return Ok(());
            }
            bail!(
                "POST {collection}: {status}: {}",
                String::from_utf8_lossy(&reply)
            )
        })
        .buffer_unordered(CONCURRENCY);
    while let Some(result) = results.next().await {
        result?;
    }
    Ok(())
}

/// How many objects of `dataset` `namespace` holds, read page by page from the server (not from
/// its watch cache). It can be more than were loaded: a controller-manager publishes a
/// `kube-root-ca.crt` ConfigMap into every namespace, and the informers sync it too.
///
/// # Errors
/// A page cannot be fetched or decoded.
pub async fn count(client: &RawClient, dataset: Dataset, namespace: &str) -> Result<usize> {
    #[derive(serde::Deserialize)]
    struct Page {
        items: Vec<serde::de::IgnoredAny>,
    }
    let collection = dataset.collection(namespace);
    let mut total = 0;
    let mut next = String::new();
    loop {
        let body = client
            .get(&format!("{collection}?limit=5000&continue={next}"))
            .await?;
        let page: Page = serde_json::from_slice(&body)
            .with_context(|| format!("decoding a page of {collection}"))?;
        total += page.items.len();
        next = continue_token(&body)?;
        if next.is_empty() {
            return Ok(total);
        }
    }
}

/// Deletes every object of `dataset` in `namespace` (one delete-collection), then the namespace.
/// Without a controller-manager the namespace then stays `Terminating`.
///
/// # Errors
/// Either deletion failed (a missing namespace or collection is fine).
pub async fn delete_all(client: &RawClient, dataset: Dataset, namespace: &str) -> Result<()> {
    let collection = dataset.collection(namespace);
    let namespace_path = format!("/api/v1/namespaces/{namespace}");
    for path in [collection.as_str(), namespace_path.as_str()] {
        let (status, reply) = client.send(Method::DELETE, path, Bytes::new()).await?;
        if !status.is_success() && status != StatusCode::NOT_FOUND {
            bail!(
                "DELETE {path}: {status}: {}",
                String::from_utf8_lossy(&reply)
            );
        }
    }
    Ok(())
}
