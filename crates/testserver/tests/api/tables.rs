//! Table responses as kubectl asks for them, shapes copied from real kube-apiservers.

use crate::common::*;
use serde_json::{Value, json};

/// What kubectl 1.2x+ sends for `kubectl get`.
pub const KUBECTL_TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn column_names(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// The cells of a row with the age cell at `age` replaced by `"<age>"`, after checking it is a
/// seconds count (the test may straddle a second boundary).
fn cells_without_age(row: &Value, age: usize) -> Value {
    let mut cells = row["cells"].clone();
    let text = cells[age].as_str().unwrap().to_string();
    assert!(
        text.ends_with('s') && text[..text.len() - 1].parse::<u32>().is_ok(),
        "{text}"
    );
    cells[age] = json!("<age>");
    cells
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

#[tokio::test]
async fn list_as_table_has_the_deployment_printer_columns() {
    let h = start_without_controllers().await;
    assert_eq!(
        h.http.post(DEPLOYMENTS, deployment("web", 3)).await.code,
        201
    );
    let reply = h.http.get_accept(DEPLOYMENTS, KUBECTL_TABLE).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    // Real servers (1.15 and 1.36) label Table responses plain `application/json`.
    assert_eq!(reply.headers["content-type"], "application/json");
    let table = &reply.body;
    assert_eq!(
        (&table["kind"], &table["apiVersion"]),
        (&json!("Table"), &json!("meta.k8s.io/v1"))
    );
    assert_eq!(
        column_names(table),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let priorities: Vec<i64> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["priority"].as_i64().unwrap())
        .collect();
    assert_eq!(priorities, [0, 0, 0, 0, 0, 1, 1, 1]);
    let row = &table["rows"][0];
    assert_eq!(
        cells_without_age(row, 4),
        json!(["web", "0/3", 0, 0, "<age>", "web", "nginx:1.27", "app=web"])
    );
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(row["object"]["metadata"]["name"], "web");
    assert_eq!(
        table["metadata"]["resourceVersion"],
        h.server.api().resource_version().to_string()
    );
}

#[tokio::test]
async fn get_as_table_is_one_row_and_include_object_is_honoured() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let one = h.http.get_accept(&format!("{CM}/a"), KUBECTL_TABLE).await;
    assert_eq!(one.body["rows"].as_array().unwrap().len(), 1);
    assert_eq!(column_names(&one.body), ["Name", "Data", "Age"]);
    assert_eq!(
        cells_without_age(&one.body["rows"][0], 2),
        json!(["a", 1, "<age>"])
    );
    let whole = h
        .http
        .get_accept(&format!("{CM}/a?includeObject=Object"), KUBECTL_TABLE)
        .await;
    assert_eq!(whole.body["rows"][0]["object"]["kind"], "ConfigMap");
    assert_eq!(whole.body["rows"][0]["object"]["data"], json!({"k": "v"}));
    let none = h
        .http
        .get_accept(&format!("{CM}?includeObject=None"), KUBECTL_TABLE)
        .await;
    assert_eq!(none.body["rows"][0]["object"], Value::Null);
    let bad = h
        .http
        .get_accept(&format!("{CM}?includeObject=All"), KUBECTL_TABLE)
        .await;
    assert_status(&bad, 400, "BadRequest");
    assert_eq!(
        bad.body["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
}

#[tokio::test]
async fn older_kubectl_gets_a_v1beta1_table_and_plain_json_stays_a_list() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let beta = h
        .http
        .get_accept(
            CM,
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json",
        )
        .await;
    assert_eq!(beta.body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta.body["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    let plain = h.http.get_accept(CM, "application/json").await;
    assert_eq!(plain.body["kind"], "ConfigMapList");
}

#[tokio::test]
async fn paged_table_keeps_continue_and_remaining_item_count() {
    let h = start().await;
    for name in ["a", "b", "c"] {
        h.http.post(CM, configmap(name, json!({}))).await;
    }
    let page = h
        .http
        .get_accept(&format!("{CM}?limit=1"), KUBECTL_TABLE)
        .await;
    assert!(page.body["metadata"]["continue"].is_string());
    assert_eq!(page.body["metadata"]["remainingItemCount"], 2);
    assert_eq!(page.body["rows"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn custom_resources_print_their_additional_printer_columns() {
    let h = start().await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1,
                         "description": "the color"},
                        {"name": "Ready", "type": "string",
                         "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]},
                    {"name": "v2", "served": true, "storage": false}]},
    });
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(h.http.post(path, crd).await.code, 201);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let widget = json!({"metadata": {"name": "w"}, "spec": {"size": 3, "color": "red"},
                        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    assert_eq!(h.http.post(widgets, widget).await.code, 201);
    let table = h.http.get_accept(widgets, KUBECTL_TABLE).await.body;
    assert_eq!(
        column_names(&table),
        ["Name", "Size", "Color", "Ready", "Age"]
    );
    assert_eq!(table["columnDefinitions"][2]["description"], "the color");
    assert_eq!(table["columnDefinitions"][2]["priority"], 1);
    assert_eq!(
        table["columnDefinitions"][1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.size"
    );
    assert_eq!(
        cells_without_age(&table["rows"][0], 4),
        json!(["w", 3, "red", "True", "<age>"])
    );
    // A version without columns prints the default Age.
    let v2 = "/apis/example.com/v2/namespaces/default/widgets";
    h.http.post(v2, json!({"metadata": {"name": "x"}})).await;
    let table = h.http.get_accept(v2, KUBECTL_TABLE).await.body;
    assert_eq!(column_names(&table), ["Name", "Age"]);
    // CRDs themselves use the default convertor.
    let crds = h.http.get_accept(path, KUBECTL_TABLE).await.body;
    assert_eq!(column_names(&crds), ["Name", "Created At"]);
}

#[tokio::test]
async fn a_table_watch_sends_one_row_per_event_and_headers_once() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let mut watch = h
        .http
        .watch_accept(&format!("{CM}?watch=1"), KUBECTL_TABLE)
        .await;
    let first = watch.next().await.unwrap();
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(column_names(&first["object"]), ["Name", "Data", "Age"]);
    assert_eq!(first["object"]["rows"][0]["cells"][0], "a");
    h.http.post(CM, configmap("b", json!({}))).await;
    let second = watch.next().await.unwrap();
    assert_eq!(second["type"], "ADDED");
    assert_eq!(second["object"]["columnDefinitions"], Value::Null);
    assert_eq!(second["object"]["rows"][0]["cells"][0], "b");
    assert_eq!(
        second["object"]["metadata"]["resourceVersion"],
        second["object"]["rows"][0]["object"]["metadata"]["resourceVersion"]
    );
    h.http.delete(&format!("{CM}/b")).await;
    let gone = watch.next().await.unwrap();
    assert_eq!(gone["type"], "DELETED");
    assert_eq!(gone["object"]["rows"][0]["cells"][0], "b");
}
