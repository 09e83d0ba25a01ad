//! Custom resources in a version other than the storage version (`kinds/custom_resource/edge.rs`):
//! one storage for every version, strategy `None` rewriting `apiVersion` on reads, lists,
//! watches and writes, a `Webhook` that cannot be reached failing as v1.36 fails, and, through a
//! webhook renaming a field (`crate::admission_webhooks::Hook`'s `/convert`), patches, applies
//! and admission webhooks in each version as v1.36 makes them (`docs/crd-conversion-reference.md`).
//! (The VirtualMachine's generated conversion, against kubegen-runtime's server, is
//! `codegen/generated-tests/tests/generated/conversion.rs`, which runs on this server and on real
//! ones.)

use crate::admission_webhooks::{Hook, hook};
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

/// `ships.fleet.example.com` converting through `hook`'s `/convert`: `spec.crew` (v1, stored) is
/// `spec.sailors` in v2.
fn renaming_crd(hook: &Hook) -> Value {
    let version = |name: &str, storage: bool, field: &str| {
        let spec = json!({"type": "object", "properties": {field: {"type": "integer"}}});
        json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema":
            {"type": "object", "properties": {"spec": spec}}}})
    };
    let mut crd = crd(json!({
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig":
            {"url": format!("{}/convert", hook.base), "caBundle": hook.ca_bundle}},
    }));
    crd["spec"]["versions"] = json!([version("v1", true, "crew"), version("v2", false, "sailors")]);
    crd
}

/// A server with the renaming CRD and the webhook it converts through.
async fn renaming() -> (Harness, Hook) {
    let h = start().await;
    let hook = hook().await;
    assert_eq!(h.http.post(CRDS, renaming_crd(&hook)).await.code, 201);
    (h, hook)
}

fn crewed(version: &str, name: &str, field: &str, count: u32) -> Value {
    json!({"apiVersion": format!("fleet.example.com/{version}"), "kind": "Ship",
           "metadata": {"name": name}, "spec": {field: count}})
}

/// `(manager, apiVersion, fieldsV1)` of each managedFields entry, sorted.
fn managers(object: &Value) -> Vec<(String, String, Value)> {
    let entries = object["metadata"]["managedFields"].as_array().unwrap();
    let mut out: Vec<_> = entries
        .iter()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap().to_owned();
            (text("manager"), text("apiVersion"), e["fieldsV1"].clone())
        })
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

#[tokio::test]
async fn a_patch_in_another_version_applies_there_and_each_manager_keeps_its_version() {
    let (h, _hook) = renaming().await;
    let created = h
        .http
        .post(
            &format!("{V1}?fieldManager=creator"),
            crewed("v1", "s", "crew", 3),
        )
        .await;
    assert_eq!(created.code, 201);
    let merge = "application/merge-patch+json";
    let path = format!("{V2}/s?fieldManager=patcher");
    let patched = h
        .http
        .patch(&path, merge, json!({"spec": {"sailors": 5}}))
        .await;
    assert_eq!(
        (patched.code, patched.body["spec"].clone()),
        (200, json!({"sailors": 5}))
    );
    let read = h.http.get(&format!("{V1}/s")).await.body;
    assert_eq!(read["spec"], json!({"crew": 5}));
    // The creator lost `crew` in v1, which is what the patch changed in its spelling.
    assert_eq!(
        managers(&read),
        [
            (
                "creator".into(),
                "fleet.example.com/v1".into(),
                json!({"f:spec": {}})
            ),
            (
                "patcher".into(),
                "fleet.example.com/v2".into(),
                json!({"f:spec": {"f:sailors": {}}})
            ),
        ]
    );
}

#[tokio::test]
async fn appliers_of_two_versions_conflict_on_a_renamed_field_in_the_owners_spelling() {
    let (h, _hook) = renaming().await;
    let apply = "application/apply-patch+yaml";
    let path = format!("{V2}/s?fieldManager=two");
    let reply = h
        .http
        .patch(&path, apply, crewed("v2", "s", "sailors", 3))
        .await;
    assert_eq!(reply.code, 201);
    let path = format!("{V1}/s?fieldManager=one");
    let reply = h
        .http
        .patch(&path, apply, crewed("v1", "s", "crew", 4))
        .await;
    assert_eq!(
        (reply.code, reply.body["message"].clone()),
        (
            409,
            json!("Apply failed with 1 conflict: conflict with \"two\": .spec.sailors")
        )
    );
    let reply = h
        .http
        .patch(
            &format!("{path}&force=true"),
            apply,
            crewed("v1", "s", "crew", 4),
        )
        .await;
    assert_eq!(reply.code, 200);
    assert_eq!(
        managers(&reply.body),
        [(
            "one".into(),
            "fleet.example.com/v1".into(),
            json!({"f:spec": {"f:crew": {}}})
        )]
    );
}

/// `(path, kind, resource, requestKind, requestResource versions, object, oldObject)` of each
/// admission review the hook saw, sorted by path.
fn reviews(hook: &Hook) -> Vec<(String, [Value; 4], Value, Value)> {
    let version = |gv: &Value| gv["version"].clone();
    let mut out: Vec<_> = hook
        .seen
        .lock()
        .drain(..)
        .filter(|(path, _)| !path.starts_with("/convert"))
        .map(|(path, review)| {
            let r = &review["request"];
            let versions =
                ["kind", "resource", "requestKind", "requestResource"].map(|key| version(&r[key]));
            let objects = |key: &str| match r[key].is_object() {
                true => json!([r[key]["apiVersion"], r[key]["spec"]]),
                false => Value::Null,
            };
            let path = path.split('?').next().unwrap().to_owned();
            (path, versions, objects("object"), objects("oldObject"))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Installs one configuration of `kind` for Ships, a webhook per `(path, apiVersions,
/// extra fields)`.
async fn ship_hooks(h: &Harness, hook: &Hook, kind: &str, hooks: &[(&str, Value, Value)]) {
    let webhooks: Vec<Value> = hooks
        .iter()
        .map(|(path, versions, extra)| {
            let mut webhook = json!({
                "name": format!("{}.example.com", &path[1..]),
                "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "rules": [{"apiGroups": ["fleet.example.com"], "apiVersions": versions,
                           "resources": ["ships"], "operations": ["*"]}],
                "clientConfig": {"url": format!("{}{path}", hook.base), "caBundle": hook.ca_bundle},
            });
            for (key, value) in extra.as_object().unwrap() {
                webhook[key] = value.clone();
            }
            webhook
        })
        .collect();
    let plural = format!("{}webhookconfigurations", kind.to_lowercase());
    let path = format!("/apis/admissionregistration.k8s.io/v1/{plural}");
    let body = json!({"metadata": {"name": "ships"}, "webhooks": webhooks});
    assert_eq!(h.http.post(&path, body).await.code, 201);
}

#[tokio::test]
async fn webhooks_get_the_object_in_the_version_their_rules_matched_as_v1_36() {
    let (h, hook) = renaming().await;
    let hooks = [
        ("/both", json!(["v1", "v2"]), json!({})),
        ("/v1-equivalent", json!(["v1"]), json!({})),
        ("/v1-exact", json!(["v1"]), json!({"matchPolicy": "Exact"})),
        ("/v2", json!(["v2"]), json!({})),
    ];
    ship_hooks(&h, &hook, "Validating", &hooks).await;
    let (v1, v2) = (json!("v1"), json!("v2"));
    let in_v1 = |crew: u32| json!(["fleet.example.com/v1", {"crew": crew}]);
    let in_v2 = |sailors: u32| json!(["fleet.example.com/v2", {"sailors": sailors}]);
    // A create in v2: a webhook whose rules name v1 only gets v1 under Equivalent, none under
    // Exact; kind and resource are the version sent, requestKind the request's.
    let reply = h.http.post(V2, crewed("v2", "s", "sailors", 3)).await;
    assert_eq!(reply.code, 201);
    let each = |v: &Value| [v.clone(), v.clone(), v2.clone(), v2.clone()];
    assert_eq!(
        reviews(&hook),
        [
            ("/both".into(), each(&v2), in_v2(3), Value::Null),
            ("/v1-equivalent".into(), each(&v1), in_v1(3), Value::Null),
            ("/v2".into(), each(&v2), in_v2(3), Value::Null),
        ]
    );
    // An update in v1 (the storage version): the v2 webhook gets both objects in v2.
    let merge = "application/merge-patch+json";
    let reply = h
        .http
        .patch(&format!("{V1}/s"), merge, json!({"spec": {"crew": 4}}))
        .await;
    assert_eq!(reply.code, 200);
    let each = |v: &Value| [v.clone(), v.clone(), v1.clone(), v1.clone()];
    assert_eq!(
        reviews(&hook),
        [
            ("/both".into(), each(&v1), in_v1(4), in_v1(3)),
            ("/v1-equivalent".into(), each(&v1), in_v1(4), in_v1(3)),
            ("/v1-exact".into(), each(&v1), in_v1(4), in_v1(3)),
            ("/v2".into(), each(&v2), in_v2(4), in_v2(3)),
        ]
    );
    // A delete in v2: the old object, in each webhook's version.
    assert_eq!(h.http.delete(&format!("{V2}/s")).await.code, 200);
    let each = |v: &Value| [v.clone(), v.clone(), v2.clone(), v2.clone()];
    assert_eq!(
        reviews(&hook),
        [
            ("/both".into(), each(&v2), Value::Null, in_v2(4)),
            ("/v1-equivalent".into(), each(&v1), Value::Null, in_v1(4)),
            ("/v2".into(), each(&v2), Value::Null, in_v2(4)),
        ]
    );
}

#[tokio::test]
async fn a_mutating_patch_applies_in_the_version_the_webhook_was_sent() {
    let (h, hook) = renaming().await;
    let hooks = [
        (
            "/mutate-crew",
            json!(["v1"]),
            json!({"objectSelector": {"matchLabels": {"policy": "equivalent"}}}),
        ),
        ("/allow", json!(["v1"]), json!({"matchPolicy": "Exact"})),
    ];
    ship_hooks(&h, &hook, "Mutating", &hooks).await;
    let mut ship = crewed("v2", "s", "sailors", 3);
    ship["metadata"]["labels"] = json!({"policy": "equivalent"});
    let reply = h.http.post(V2, ship).await;
    assert_eq!(
        (reply.code, reply.body["spec"].clone()),
        (201, json!({"sailors": 9}))
    );
    assert_eq!(
        h.http.get(&format!("{V1}/s")).await.body["spec"],
        json!({"crew": 9})
    );
    // The Exact webhook was not called for a v2 write.
    let paths: Vec<String> = reviews(&hook).into_iter().map(|r| r.0).collect();
    assert_eq!(paths, ["/mutate-crew"]);
}

#[tokio::test]
async fn a_failed_conversion_for_a_webhook_is_an_internal_error_as_v1_36() {
    let (h, hook) = renaming().await;
    ship_hooks(
        &h,
        &hook,
        "Validating",
        &[("/v2", json!(["v2"]), json!({}))],
    )
    .await;
    let mut ship = crewed("v1", "refused", "crew", 3);
    ship["metadata"]["labels"] = json!({"refuse": "conversion"});
    let reply = h.http.post(V1, ship).await;
    let why = "conversion webhook for fleet.example.com/v1, Kind=Ship failed: the test refuses \
               to convert this object";
    assert_eq!(
        (
            reply.code,
            reply.body["reason"].clone(),
            reply.body["message"].clone()
        ),
        (
            500,
            json!("InternalError"),
            json!(format!("Internal error occurred: {why}"))
        )
    );
    assert_eq!(reply.body["details"]["causes"], json!([{"message": why}]));
    assert!(reviews(&hook).is_empty());
}
