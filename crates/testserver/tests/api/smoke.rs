//! The basic contract other crates depend on first: start, CRUD, list, watch, kubeconfig.
use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn create_get_list_and_watch_a_configmap() {
    let h = start().await;
    let created = h.http.post(CM, configmap("a", json!({"app": "web"}))).await;
    assert_eq!(created.code, 201, "{}", created.body);
    assert!(created.body["metadata"]["uid"].is_string());
    let got = h.http.get(&format!("{CM}/a")).await;
    assert_eq!((got.code, &got.body), (200, &created.body));
    let list = h.http.get(CM).await;
    assert_eq!(list.body["kind"], "ConfigMapList");
    assert_eq!(names(&list.body), vec!["a"]);
    let mut watch = h.http.watch(&format!("{CM}?watch=true")).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "a".into())
    );
    h.http.post(CM, configmap("b", json!({}))).await;
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("ADDED".into(), "b".into())
    );
}

#[tokio::test]
async fn kubeconfig_points_at_the_server() {
    let h = start().await;
    let yaml: serde_yaml::Value = serde_yaml::from_str(&h.server.kubeconfig_yaml()).unwrap();
    assert_eq!(
        yaml["clusters"][0]["cluster"]["server"].as_str().unwrap(),
        h.server.url()
    );
    assert_eq!(
        yaml["current-context"].as_str().unwrap(),
        "kubegen-testserver"
    );
    assert_eq!(
        yaml["contexts"][0]["context"]["namespace"]
            .as_str()
            .unwrap(),
        "default"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    h.server.write_kubeconfig(&path).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        h.server.kubeconfig_yaml()
    );
}
