//! A replica's lifetime: whatever ends `Replica::run`, the informers it started stop with it.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_cache::{Error as CacheError, HandlerFns};
use kubegen_sharding::{Replica, ReplicaConfig, Ring};
use kubegen_testserver::{ServerOptions, TestServer};

/// An aborted task drops `run` mid-way, as a killed process stops everything: the shard's
/// informer must not go on listing and watching (it would, on tasks of its own, for ever).
#[tokio::test]
async fn a_dropped_run_stops_the_informers_it_started() {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let mut config = ReplicaConfig::new(Ring::new("r", "default"), "replica-a");
    config.retry_period = Duration::from_millis(100);
    let replica = Replica::<ConfigMap>::new(server.client(), config).unwrap();
    let runner = replica.clone();
    let task = tokio::spawn(async move { runner.run(std::future::pending()).await });
    tokio::time::timeout(Duration::from_secs(10), async {
        while !replica.is_active() || !replica.informer().has_synced() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(!replica.is_active());
    let late = replica.informer().add_event_handler(HandlerFns::new());
    assert!(
        matches!(late, Err(CacheError::ShutDown { .. })),
        "the informer still runs"
    );
}
