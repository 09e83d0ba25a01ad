//! Custom resources in a version other than the storage version (`handlers/crd_conversion.rs`):
//! one storage for every version, strategy `None` rewriting `apiVersion` on reads, lists,
//! watches and writes, and a `Webhook` that cannot be reached failing as v1.36 fails. (The webhook
//! converting for real, against kubegen-runtime's server, is
//! `codegen/generated-tests/tests/generated/conversion.rs`, which runs on this server and on real
//! ones.)

use crate::common::*;
use serde_json::{Value, json};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const V1: &str = "/apis/fleet.example.com/v1/namespaces/default/ships";
const V2: &str = "/apis/fleet.example.com/v2/namespaces/default/ships";

/// `ships.fleet.example.com`: v1 stored, v2 served, converting with `conversion`.
fn crd(conversion: Value) -> Value {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "ships.fleet.example.com"},
        "spec": {
            "group": "fleet.example.com", "scope": "Namespaced",
            "names": {"plural": "ships", "singular": "ship", "kind": "Ship", "listKind": "ShipList"},
            "versions": [version("v1", true), version("v2", false)],
            "conversion": conversion,
        },
    })
}

fn ship(version: &str, name: &str) -> Value {
    json!({"apiVersion": format!("fleet.example.com/{version}"), "kind": "Ship",
           "metadata": {"name": name}, "spec": {"crew": 3}})
}

#[tokio::test]
async fn strategy_none_serves_one_storage_in_every_version() {
    let h = start().await;
    assert_eq!(
        h.http
            .post(CRDS, crd(json!({"strategy": "None"})))
            .await
            .code,
        201
    );
    let created = h.http.post(V2, ship("v2", "written-v2")).await;
    assert_eq!(
        (created.code, created.body["apiVersion"].clone()),
        (201, json!("fleet.example.com/v2"))
    );
    h.http.post(V1, ship("v1", "written-v1")).await;
    let read = h.http.get(&format!("{V1}/written-v2")).await.body;
    assert_eq!(
        (read["apiVersion"].clone(), read["spec"].clone()),
        (json!("fleet.example.com/v1"), json!({"crew": 3}))
    );
    let read = h.http.get(&format!("{V2}/written-v1")).await.body;
    assert_eq!(read["apiVersion"], "fleet.example.com/v2");
    let list = h.http.get(V2).await.body;
    let items: Vec<(Value, Value)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["metadata"]["name"].clone(), item["apiVersion"].clone()))
        .collect();
    assert_eq!(list["apiVersion"], "fleet.example.com/v2");
    assert_eq!(
        items,
        [
            (json!("written-v1"), json!("fleet.example.com/v2")),
            (json!("written-v2"), json!("fleet.example.com/v2")),
        ]
    );
    let mut updated = read.clone();
    updated["spec"]["crew"] = json!(4);
    let put = h.http.put(&format!("{V2}/written-v1"), updated).await;
    assert_eq!(
        (
            put.code,
            put.body["apiVersion"].clone(),
            put.body["spec"]["crew"].clone()
        ),
        (200, json!("fleet.example.com/v2"), json!(4))
    );
    let crd = h
        .http
        .get(&format!("{CRDS}/ships.fleet.example.com"))
        .await
        .body;
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
}

#[tokio::test]
async fn a_watch_in_a_non_storage_version_gets_converted_events() {
    let h = start().await;
    h.http.post(CRDS, crd(json!({"strategy": "None"}))).await;
    h.http.post(V1, ship("v1", "a")).await;
    let mut watch = h.http.watch(&format!("{V2}?watch=true")).await;
    let added = watch.next().await.unwrap();
    assert_eq!(
        (added["type"].clone(), added["object"]["apiVersion"].clone()),
        (json!("ADDED"), json!("fleet.example.com/v2"))
    );
    h.http.delete(&format!("{V1}/a")).await;
    let deleted = watch.next().await.unwrap();
    assert_eq!(
        (
            deleted["type"].clone(),
            deleted["object"]["apiVersion"].clone()
        ),
        (json!("DELETED"), json!("fleet.example.com/v2"))
    );
}

#[tokio::test]
async fn an_unreachable_webhook_fails_reads_and_writes_in_the_other_version_as_v1_36() {
    let h = start().await;
    let webhook = json!({
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://127.0.0.1:1/convert"}},
    });
    h.http.post(CRDS, crd(webhook)).await;
    assert_eq!(h.http.post(V1, ship("v1", "stored")).await.code, 201);
    let dial = "Post \"https://127.0.0.1:1/convert?timeout=30s\": dial tcp 127.0.0.1:1: connect: \
                connection refused";
    for (reply, from) in [
        (h.http.get(&format!("{V2}/stored")).await, "v1"),
        (h.http.get(V2).await, "v1"),
        (h.http.post(V2, ship("v2", "refused")).await, "v2"),
    ] {
        // v1.36's body, whole: no reason, no details.
        let message =
            format!("conversion webhook for fleet.example.com/{from}, Kind=Ship failed: {dial}");
        assert_eq!(
            (reply.code, reply.body),
            (
                500,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "code": 500})
            )
        );
    }
    // The storage version needs no conversion.
    assert_eq!(h.http.get(&format!("{V1}/stored")).await.code, 200);
}
