//! The server-side path: a shard's arcs of the ring as a KEP-5866 `shardSelector`, served by the
//! test server with `ServerOptions::sharded_list_and_watch`, select exactly the objects the ring
//! gives that shard by UID hash; a server without the gate ignores the selector.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_client::{CreateOptions, ListOptions, ResourceClient};
use kubegen_sharding::{HashRing, SelectorField, hash};
use kubegen_testserver::{ServerOptions, TestServer};

async fn seeded(sharded: bool) -> (TestServer, ResourceClient<ConfigMap>) {
    let mut options = ServerOptions::default();
    options.sharded_list_and_watch = sharded;
    options.controller_manager = false;
    let server = TestServer::start_with(options).await;
    let api = ResourceClient::<ConfigMap>::namespaced(server.client(), "default");
    for i in 0..60 {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("cm-{i:02}")),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        api.create(&cm, &CreateOptions::default()).await.unwrap();
    }
    (server, api)
}

fn names(items: &[ConfigMap]) -> BTreeSet<String> {
    items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect()
}

#[tokio::test]
async fn each_shard_lists_exactly_the_objects_the_ring_gives_it_by_uid() {
    let (_server, api) = seeded(true).await;
    let everything = api.list(&ListOptions::default()).await.unwrap().items;
    let ring = HashRing::new(["a", "b", "c"]);
    let mut seen = BTreeSet::new();
    for member in ring.members() {
        let selector = ring.shard_selector(member, SelectorField::Uid).unwrap();
        let listed = api
            .list(&ListOptions::default().shard_selector(selector))
            .await
            .unwrap()
            .items;
        let expected: Vec<ConfigMap> = everything
            .iter()
            .filter(|c| {
                let uid = c.metadata.uid.as_deref().unwrap();
                ring.owner_of_hash(hash(uid)) == Some(member)
            })
            .cloned()
            .collect();
        assert_eq!(names(&listed), names(&expected), "shard {member}");
        assert!(!listed.is_empty(), "shard {member} got nothing of 60");
        seen.extend(names(&listed));
    }
    assert_eq!(seen, names(&everything));
}

#[tokio::test]
async fn a_server_without_the_gate_answers_every_shard_with_everything() {
    let (_server, api) = seeded(false).await;
    let ring = HashRing::new(["a", "b", "c"]);
    let selector = ring.shard_selector("a", SelectorField::Uid).unwrap();
    let listed = api
        .list(&ListOptions::default().shard_selector(selector))
        .await
        .unwrap()
        .items;
    assert_eq!(listed.len(), 60);
}
