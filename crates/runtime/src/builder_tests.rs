//! Tests of the builder: which events enqueue which keys (informers over the fake client, so
//! events really flow through list, watch and the handlers).

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory};
use kubegen_client::{CreateOptions, ResourceClient};
use kubegen_fake::FakeClient;

use super::*;

fn meta(namespace: &str, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        ..ObjectMeta::default()
    }
}

fn owner(kind: &str, name: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        controller: Some(controller),
        ..OwnerReference::default()
    }
}

fn secret(name: &str, owners: Vec<OwnerReference>) -> Secret {
    let mut metadata = meta("ns", name);
    metadata.owner_references = Some(owners);
    Secret {
        metadata,
        ..Secret::default()
    }
}

#[test]
fn an_owned_object_maps_to_its_controller_owner_of_the_primary_kind_only() {
    let key = |owners| owner_key::<ConfigMap, Secret>(&secret("s", owners), Grouping::Object);
    assert_eq!(
        key(vec![owner("ConfigMap", "cm", true)]),
        Some(ObjectKey::new(Some("ns"), "cm"))
    );
    assert_eq!(
        key(vec![owner("ConfigMap", "cm", false)]),
        None,
        "not the controller"
    );
    assert_eq!(
        key(vec![owner("Deployment", "d", true)]),
        None,
        "another kind"
    );
    assert_eq!(key(Vec::new()), None);
    let grouped = owner_key::<ConfigMap, Secret>(
        &secret("s", vec![owner("ConfigMap", "cm", true)]),
        Grouping::Namespace,
    );
    assert_eq!(grouped, Some(ObjectKey::new(None, "ns")));
}

async fn create<K: kubegen_client::ApiObject>(client: &kubegen_client::Client, object: K) {
    ResourceClient::<K>::namespaced(client.clone(), "ns")
        .create(&object, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
}

/// Takes every queued key, waiting up to 5 s for at least `at_least` of them.
async fn take(queue: &RateLimitingQueue<ObjectKey>, at_least: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while queue.len() < at_least && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut keys = Vec::new();
    while !queue.is_empty() {
        if let Some(key) = queue.get().await {
            queue.done(&key);
            keys.push(key.as_str().to_owned());
        }
    }
    keys.sort();
    keys
}

#[tokio::test]
async fn primaries_owned_and_watched_objects_enqueue_their_keys() {
    let fake = FakeClient::new();
    let client = fake.client();
    let namespace = k8s_openapi::api::core::v1::Namespace {
        metadata: ObjectMeta {
            name: Some("ns".into()),
            ..ObjectMeta::default()
        },
        ..Default::default()
    };
    ResourceClient::cluster(client.clone())
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("namespace: {e}"));
    let factory = InformerFactory::new(
        ClientListWatchSource::new(client.clone()),
        FactoryOptions::default(),
    );
    let (configmaps, secrets) = (
        factory.informer::<ConfigMap>(),
        factory.informer::<Secret>(),
    );
    let controller = Controller::builder("test", &configmaps)
        .owns(&secrets)
        .watches(&secrets, |secret: &Secret| {
            let name = secret.metadata.name.as_deref().unwrap_or_default();
            vec![ObjectKey::new(Some("watched"), name)]
        })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    factory.start();
    controller
        .wait_for_sync(Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    create(
        &client,
        ConfigMap {
            metadata: meta("ns", "cm"),
            ..ConfigMap::default()
        },
    )
    .await;
    assert_eq!(take(controller.queue(), 1).await, ["ns/cm"]);
    create(
        &client,
        secret("owned", vec![owner("ConfigMap", "cm", true)]),
    )
    .await;
    assert_eq!(
        take(controller.queue(), 2).await,
        ["ns/cm", "watched/owned"]
    );
    create(&client, secret("free", Vec::new())).await;
    assert_eq!(take(controller.queue(), 1).await, ["watched/free"]);
    factory.shutdown().await;
}
