use std::sync::Arc;
use std::time::Duration;

use kubegen_client::{CacheOptions, CachedDiscovery, Client, RestMapper};
use kubegen_testserver::TestServer;
use serde_json::{Value, json};

use super::*;
use crate::{factory::FactoryOptions, test_util::per_store_mode};

/// Creates `body` in the collection `path` (`/apis/<group>/<version>[/namespaces/<ns>]/<plural>`).
async fn post(client: &Client, path: &str, body: Value) {
    let parts: Vec<&str> = path.trim_start_matches("/apis/").split('/').collect();
    let (group, version, namespace, plural) = match parts.as_slice() {
        [group, version, "namespaces", namespace, plural] => {
            (*group, *version, Some(*namespace), *plural)
        }
        [group, version, plural] => (*group, *version, None, *plural),
        _ => panic!("{path}"),
    };
    let resource = kubegen_client::ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: body["kind"].as_str().unwrap().into(),
        plural: plural.into(),
    };
    let object: DynamicObject = serde_json::from_value(body).unwrap();
    ResourceClient::dynamic(client.clone(), &resource, namespace)
        .create(&object, &Default::default())
        .await
        .unwrap();
}

fn crd(scope: &str, plural: &str, kind: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": scope,
                 "names": {"plural": plural, "kind": kind},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

per_store_mode! {
#[tokio::test]
async fn an_informer_over_a_custom_resource_without_generated_code_syncs_and_sees_creates(mode) {
    let server = TestServer::start().await;
    let client = server.client();
    post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd("Namespaced", "gizmos", "Gizmo"),
    )
    .await;
    post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd("Cluster", "gadgets", "Gadget"),
    )
    .await;
    post(
        &client,
        "/apis/example.com/v1/namespaces/default/gizmos",
        json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "before"}}),
    )
    .await;
    post(
        &client,
        "/apis/example.com/v1/namespaces/kube-system/gizmos",
        json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "elsewhere"}}),
    )
    .await;
    post(
        &client,
        "/apis/example.com/v1/gadgets",
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "global"}}),
    )
    .await;

    let mapper = RestMapper::new(Arc::new(CachedDiscovery::new(
        client.clone(),
        CacheOptions::default(),
    )));
    let gizmos = mapper.mapping_for("example.com/v1", "Gizmo").await.unwrap();
    let gadgets = mapper.mapping_for_resource("gadgets").await.unwrap();
    let factory = InformerFactory::new(
        ClientListWatchSource::new(client.clone()),
        FactoryOptions::default()
            .namespace("default".to_owned())
            .store_mode(mode),
    );
    let informer = factory.dynamic_informer_for(&gizmos);
    let cluster = factory.dynamic_informer_for(&gadgets);
    assert_eq!(
        informer.name(),
        factory.dynamic_informer_for(&gizmos).name(),
        "one informer per resource"
    );
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();

    let lister: DynamicLister = informer.lister();
    let names = |lister: &DynamicLister| {
        let mut names: Vec<String> = lister
            .list(&kube_core::Selector::default())
            .iter()
            .filter_map(|o| o.metadata.name.clone())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(&lister),
        ["before"],
        "the factory's namespace applies to a namespaced resource"
    );
    assert_eq!(
        names(&cluster.lister()),
        ["global"],
        "and not to a cluster-scoped one"
    );

    post(&client, "/apis/example.com/v1/namespaces/default/gizmos", json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "after"}, "spec": {"size": 2}})).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while names(&lister) != ["after", "before"] {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the create never arrived: {:?}",
            names(&lister)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = lister.namespaced("default").get("after").unwrap();
    assert_eq!(after.data["spec"]["size"], 2);
    let expected = ResourceClient::dynamic(client.clone(), &gizmos.resource, Some("default"))
        .get("after", &Default::default())
        .await
        .unwrap();
    assert_eq!(after.metadata, expected.metadata, "as a GET returns it, managedFields included");
    assert!(after.metadata.managed_fields.is_some());
    assert_eq!(after.data, expected.data);
    factory.shutdown().await;
}
}
