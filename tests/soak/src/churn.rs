//! The churn driver: creates, patches and deletes ConfigMaps from a fixed pool of names, as fast as
//! the (faulty) server lets it, until told to stop.
//!
//! It keeps no model of the server: injected failures can make a write fail after it was applied,
//! so the truth at the end is whatever the server lists, never what the driver believes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{
    CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient, Result as ClientResult,
};
use rand::Rng;

/// What the driver did.
#[derive(Default)]
pub struct ChurnStats {
    /// Writes the server accepted (create, patch or delete).
    pub writes: AtomicU64,
    /// Of which deletes.
    pub deletes: AtomicU64,
    /// Requests that failed with an injected or transient error (and were retried or dropped).
    pub failures: AtomicU64,
}

/// Drives `client` with random writes over `pool` names until `stop` is set.
pub async fn run(
    client: ResourceClient<ConfigMap>,
    pool: usize,
    stop: Arc<AtomicBool>,
    stats: Arc<ChurnStats>,
) {
    let mut sequence = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let (index, choice) = {
            let mut rng = rand::rng();
            (rng.random_range(0..pool), rng.random_range(0..10u8))
        };
        let name = format!("obj-{index:04}");
        sequence += 1;
        let outcome = match choice {
            0..=3 => create(&client, &name, sequence).await,
            4..=7 => patch(&client, &name, sequence).await,
            _ => delete(&client, &name, &stats).await,
        };
        match outcome {
            Ok(true) => {
                stats.writes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(false) => {}
            Err(_) => {
                stats.failures.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// `Ok(true)` written, `Ok(false)` not applicable (exists already / does not exist), `Err` failed.
async fn create(
    client: &ResourceClient<ConfigMap>,
    name: &str,
    sequence: u64,
) -> ClientResult<bool> {
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([("soak".to_owned(), "true".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("seq".to_owned(), sequence.to_string())])),
        ..ConfigMap::default()
    };
    match client.create(&object, &CreateOptions::default()).await {
        Ok(_) => Ok(true),
        Err(error) if error.is_already_exists() => Ok(false),
        Err(error) => Err(error),
    }
}

async fn patch(
    client: &ResourceClient<ConfigMap>,
    name: &str,
    sequence: u64,
) -> ClientResult<bool> {
    let body = serde_json::json!({"data": {"seq": sequence.to_string()}});
    match client
        .patch(name, &Patch::Merge(body), &PatchOptions::default())
        .await
    {
        Ok(_) => Ok(true),
        Err(error) if error.is_not_found() => Ok(false),
        Err(error) => Err(error),
    }
}

async fn delete(
    client: &ResourceClient<ConfigMap>,
    name: &str,
    stats: &ChurnStats,
) -> ClientResult<bool> {
    match client.delete(name, &DeleteOptions::default()).await {
        Ok(_) => {
            stats.deletes.fetch_add(1, Ordering::Relaxed);
            Ok(true)
        }
        Err(error) if error.is_not_found() => Ok(false),
        Err(error) => Err(error),
    }
}
