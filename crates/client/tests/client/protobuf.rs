//! Protobuf against a real API server (`KUBEGEN_E2E_KUBECONFIG`): list, get and watch of built-in
//! kinds in protobuf give exactly the objects the same requests give in JSON, and so do their
//! metadata-only forms (`PartialObjectMetadata`).

use std::path::PathBuf;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod};
use kubegen_client::{
    ApiObject, Client, Config, CreateOptions, DeleteOptions, GetOptions, ListOptions, LoadOptions,
    PartialObjectMeta, ResourceClient, WatchEvent, WireFormat,
};

use crate::metadata::answers;

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn cluster_client() -> Result<Client, Box<dyn std::error::Error>> {
    let kubeconfig = std::env::var_os("KUBEGEN_E2E_KUBECONFIG")
        .map(PathBuf::from)
        .ok_or("set KUBEGEN_E2E_KUBECONFIG to a kubeconfig to run this against a real cluster")?;
    let config = Config::load(&LoadOptions::default().kubeconfig_path(kubeconfig)).await?;
    Ok(Client::new(config)?)
}

fn object<K: ApiObject + serde::de::DeserializeOwned>(json: serde_json::Value) -> K {
    serde_json::from_value(json).unwrap()
}

/// Lists, gets each object, and watches from `0` in both encodings; every answer must be equal.
async fn same_in_both<K: ApiObject + PartialEq>(client: &Client, namespace: &str) -> TestResult {
    let protobuf = ResourceClient::<K>::namespaced(client.clone(), namespace);
    let json = protobuf.clone().with_wire_format(WireFormat::Json);
    assert!(protobuf.asks_for_protobuf() && !json.asks_for_protobuf());
    let listed = protobuf.list(&ListOptions::default()).await?;
    let expected = json.list(&ListOptions::default()).await?;
    assert!(!listed.items.is_empty(), "{}", K::kind(&()));
    assert_eq!(listed.items, expected.items, "{}", K::kind(&()));
    for item in &expected.items {
        let name = item.meta().name.clone().unwrap_or_default();
        let got = protobuf.get(&name, &GetOptions::default()).await?;
        assert_eq!(&got, item, "{} {name}", K::kind(&()));
    }
    let opts = ListOptions::default()
        .resource_version("0")
        .timeout_seconds(1);
    let (mut from_protobuf, mut from_json) = (Vec::new(), Vec::new());
    for (client, events) in [(&protobuf, &mut from_protobuf), (&json, &mut from_json)] {
        let mut stream = client.watch(&opts).await?;
        while let Some(event) = stream.next().await {
            if let WatchEvent::Added(object) = event? {
                events.push(object);
            }
        }
    }
    let name = |o: &K| o.meta().name.clone();
    from_protobuf.sort_by_key(name);
    from_json.sort_by_key(name);
    assert_eq!(
        from_protobuf.len(),
        expected.items.len(),
        "{}",
        K::kind(&())
    );
    assert_eq!(from_protobuf, from_json, "{}", K::kind(&()));

    let protobuf =
        ResourceClient::<PartialObjectMeta<K>>::metadata_namespaced(client.clone(), namespace);
    let json = protobuf.clone().with_wire_format(WireFormat::Json);
    assert!(protobuf.asks_for_protobuf() && !json.asks_for_protobuf());
    let from_protobuf = answers(&protobuf).await?;
    assert_eq!(from_protobuf.len(), 3 * expected.items.len());
    assert_eq!(
        from_protobuf,
        answers(&json).await?,
        "{} metadata",
        K::kind(&())
    );
    Ok(())
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn protobuf_and_json_give_the_same_objects_on_cluster() -> TestResult {
    let client = cluster_client().await?;
    let namespace = format!("protoclient-e2e-{}", std::process::id());
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let create = CreateOptions::default();
    namespaces
        .create(
            &object(serde_json::json!({"metadata": {"name": namespace}})),
            &create,
        )
        .await?;
    let ns = namespace.as_str();
    for i in 0..3 {
        let cm = serde_json::json!({"metadata": {"name": format!("cm{i}"), "labels": {"i": i.to_string()}},
            "data": {"a": "1", "empty": ""}, "binaryData": {"b": "AAEC"}});
        ResourceClient::<ConfigMap>::namespaced(client.clone(), ns)
            .create(&object(cm), &create)
            .await?;
    }
    let deployment = serde_json::json!({"metadata": {"name": "d"}, "spec": {"replicas": 0,
        "selector": {"matchLabels": {"app": "d"}}, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}, "ports": [{"containerPort": 80}]}]}}}});
    ResourceClient::<Deployment>::namespaced(client.clone(), ns)
        .create(&object(deployment), &create)
        .await?;
    let pod = serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
        "env": [{"name": "A", "value": "b"}], "readinessProbe": {"httpGet": {"port": "http", "path": "/"}}}]}});
    ResourceClient::<Pod>::namespaced(client.clone(), ns)
        .create(&object(pod), &create)
        .await?;
    let lease = serde_json::json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me",
        "leaseDurationSeconds": 15, "renewTime": "2026-11-23T22:00:00.123456Z", "leaseTransitions": 0}});
    ResourceClient::<Lease>::namespaced(client.clone(), ns)
        .create(&object(lease), &create)
        .await?;
    let event = serde_json::json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p",
        "namespace": ns}, "reason": "Testing", "message": "protobuf", "type": "Normal", "count": 2,
        "firstTimestamp": "2026-11-23T22:00:00Z", "lastTimestamp": "2026-11-23T22:01:00Z"});
    ResourceClient::<Event>::namespaced(client.clone(), ns)
        .create(&object(event), &create)
        .await?;

    let result = async {
        same_in_both::<ConfigMap>(&client, ns).await?;
        same_in_both::<Deployment>(&client, ns).await?;
        same_in_both::<Pod>(&client, ns).await?;
        same_in_both::<Lease>(&client, ns).await?;
        same_in_both::<Event>(&client, ns).await?;
        // An error answered in protobuf is still the server's Status.
        let missing = ResourceClient::<ConfigMap>::namespaced(client.clone(), ns)
            .get("missing", &GetOptions::default())
            .await
            .unwrap_err();
        assert!(missing.is_not_found(), "{missing:?}");
        TestResult::Ok(())
    }
    .await;
    namespaces.delete(ns, &DeleteOptions::default()).await?;
    result
}
