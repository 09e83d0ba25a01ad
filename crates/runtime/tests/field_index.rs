//! Field-selector lists from the cached client against kubegen-testserver: an index over
//! `spec.nodeName` registered before and after the informer started, namespaced and
//! cluster-wide lists, the error for a field without an index, and a list that sees a pod bound
//! after the first one (the index follows updates).

// Tests may unwrap: a panic is exactly how a test reports failure.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube_core::Selector;
use kubegen_client::{CreateOptions, ResourceClient};
use kubegen_runtime::{CachedClient, Error, Manager, ManagerOptions, MatchingFields};
use kubegen_testserver::TestServer;
use serde_json::json;

fn node_of(pod: &Pod) -> Vec<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .into_iter()
        .collect()
}

async fn create_pod(server: &TestServer, ns: &str, name: &str, node: Option<&str>) {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    let pod: Pod =
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
    ResourceClient::<Pod>::namespaced(server.client(), ns)
        .create(&pod, &CreateOptions::default())
        .await
        .unwrap();
}

async fn names(
    cached: &CachedClient,
    namespace: Option<&str>,
    fields: &MatchingFields,
) -> Result<Vec<String>, Error> {
    let pods = cached
        .list_by_fields::<Pod>(namespace, &Selector::default(), fields)
        .await?;
    let mut names: Vec<String> = pods
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p.metadata.namespace.as_deref().unwrap_or_default(),
                p.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    names.sort();
    Ok(names)
}

#[tokio::test]
async fn pods_are_listed_by_node_through_a_field_index() {
    let server = TestServer::start().await;
    for ns in ["a", "b"] {
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        ResourceClient::<Namespace>::cluster(server.client())
            .create(&namespace, &CreateOptions::default())
            .await
            .unwrap();
    }
    create_pod(&server, "a", "one", Some("n1")).await;
    create_pod(&server, "a", "two", Some("n2")).await;
    create_pod(&server, "b", "three", Some("n1")).await;
    create_pod(&server, "b", "waiting", None).await;

    let manager = Manager::new(server.client(), ManagerOptions::default());
    let cached = manager.cached_client();
    let on_n1 = MatchingFields::parse("spec.nodeName=n1").unwrap();

    let err = names(&cached, Some("a"), &on_n1).await.unwrap_err();
    assert!(
        matches!(&err, Error::FieldNotIndexed { field, .. } if field == "spec.nodeName"),
        "{err}"
    );

    cached
        .index_field::<Pod, _>("spec.nodeName", node_of)
        .unwrap();
    assert_eq!(names(&cached, Some("a"), &on_n1).await.unwrap(), ["a/one"]);
    assert_eq!(
        names(&cached, None, &on_n1).await.unwrap(),
        ["a/one", "b/three"]
    );
    let by_name = MatchingFields::new([("metadata.name", "three")]);
    assert_eq!(names(&cached, None, &by_name).await.unwrap(), ["b/three"]);
    let err = cached
        .index_field::<Pod, _>("spec.nodeName", node_of)
        .unwrap_err();
    assert!(matches!(err, Error::IndexFieldFailed { .. }), "{err}");

    // Binding the waiting pod moves it into the index once the informer sees the update.
    ResourceClient::<Pod>::namespaced(server.client(), "b")
        .create_subresource::<_, serde_json::Value>(
            "waiting",
            "binding",
            &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
            &CreateOptions::default(),
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..200 {
        seen = names(&cached, Some("b"), &on_n1).await.unwrap();
        if seen.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, ["b/three", "b/waiting"]);
}
