//! A replica that starts over objects already labelled with its shard (a restart, or objects
//! labelled when they were created) writes nothing on them: its first assignment passes run
//! before its Lease informer shows the ring with itself in it, and a ring without this shard
//! must not read as "every object now belongs elsewhere".
//!
//! Found by the scale-out benchmark (`kubegen-bench`'s `scale-out`): without the guard, a
//! replica started over 10,000 objects labelled with its shard released every one of them in
//! its first pass and labelled them all again in the next, 20,000 sequential writes and ~100 MiB
//! of watch traffic before it settled. Real time: membership reads Lease timestamps.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory};
use kubegen_client::{CreateOptions, ListOptions, ResourceClient};
use kubegen_sharding::{Replica, ReplicaConfig, Ring, Selection};
use kubegen_testserver::{ServerOptions, TestServer};

const NAMESPACE: &str = "default";

/// `name` → resourceVersion of every ConfigMap in the namespace.
async fn versions(api: &ResourceClient<ConfigMap>) -> BTreeMap<String, String> {
    let list = api.list(&ListOptions::default()).await.unwrap();
    list.items
        .into_iter()
        .map(|cm| {
            let meta = cm.metadata;
            (meta.name.unwrap(), meta.resource_version.unwrap())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_starting_over_its_own_labelled_objects_writes_nothing_on_them() {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let client = server.client();
    let ring = Ring::new("restart", NAMESPACE);
    let api = ResourceClient::<ConfigMap>::namespaced(client.clone(), NAMESPACE);
    for index in 0..20 {
        let labels = BTreeMap::from([(ring.shard_label(), "r0".to_owned())]);
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{index}")),
                labels: Some(labels),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&cm, &CreateOptions::default()).await.unwrap();
    }
    let before = versions(&api).await;

    let mut config = ReplicaConfig::new(ring, "r0");
    config.namespace = Some(NAMESPACE.to_owned());
    config.selection = Selection::Labels;
    config.assign_period = Duration::from_millis(50);
    // As a controller manager runs it: the shard's informer synced before the replica starts.
    let options = FactoryOptions::default().namespace(NAMESPACE.to_owned());
    let factory = InformerFactory::new(ClientListWatchSource::new(client.clone()), options);
    let replica = Replica::<ConfigMap>::in_factory(client, config, &factory).unwrap();
    factory.start();
    let synced = async {
        while replica.informer().indexer().len() < before.len() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), synced)
        .await
        .unwrap();
    let runner = replica.clone();
    let run = tokio::spawn(async move { runner.run(std::future::pending()).await });
    let active = async {
        while !replica.is_active() || replica.ring().members() != ["r0"] {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), active)
        .await
        .unwrap();
    // Twenty more assignment passes with the ring settled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    run.abort();

    assert_eq!(versions(&api).await, before);
}
