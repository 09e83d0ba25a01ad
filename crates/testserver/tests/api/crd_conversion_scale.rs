//! `/scale` of a custom resource whose CRD serves several versions, in each version with that
//! version's `specReplicasPath` and rules (`handlers/versioned.rs`), as v1.36 answered the Boat
//! CRD of `docs/crd-conversion-reference.md` (here the Ship of
//! [`crate::crd_conversion_validation`]: `.spec.crew` in v1, `.spec.sailors` in v2).

use crate::crd_conversion_validation::{MERGE, V1, V2, invalid, ship, ships};
use serde_json::{Value, json};

/// `(manager, apiVersion, subresource, has a time, fieldsV1)` of each entry, in order.
fn managers(object: &Value) -> Vec<(String, String, String, bool, Value)> {
    let entries = object["metadata"]["managedFields"].as_array().unwrap();
    entries
        .iter()
        .map(|e| {
            let text = |key: &str| e[key].as_str().unwrap_or("").to_owned();
            let timed = e.get("time").is_some();
            (
                text("manager"),
                text("apiVersion"),
                text("subresource"),
                timed,
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn entry(
    manager: &str,
    version: &str,
    scale: bool,
    spec: Value,
) -> (String, String, String, bool, Value) {
    let subresource = if scale { "scale" } else { "" };
    let api_version = format!("fleet.example.com/{version}");
    (
        manager.into(),
        api_version,
        subresource.into(),
        !scale,
        json!({"f:spec": spec}),
    )
}

#[tokio::test]
async fn scale_reads_and_writes_the_replicas_of_the_version_named_as_v1_36() {
    let (h, _hook) = ships().await;
    let created = h
        .http
        .post(
            &format!("{V1}?fieldManager=creator"),
            ship("v1", "m", json!({"crew": 2})),
        )
        .await
        .body;
    let scale = h.http.get(&format!("{V2}/m/scale")).await;
    let meta = &created["metadata"];
    let want = json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "m", "namespace": "default", "uid": meta["uid"],
                     "resourceVersion": meta["resourceVersion"],
                     "creationTimestamp": meta["creationTimestamp"]},
        "spec": {"replicas": 2}, "status": {"replicas": 0}});
    assert_eq!((scale.code, scale.body), (200, want));
    // A scale in v1 then in v2: the writer's entry is in the version it wrote through, with its
    // field name and no time; the creator lost the field.
    let replicas = |n: u32| json!({"spec": {"replicas": n}});
    let reply = h
        .http
        .patch(
            &format!("{V1}/m/scale?fieldManager=scaler"),
            MERGE,
            replicas(3),
        )
        .await;
    assert_eq!(
        (reply.code, &reply.body["spec"]),
        (200, &json!({"replicas": 3}))
    );
    let read = h.http.get(&format!("{V1}/m")).await.body;
    assert_eq!(
        managers(&read),
        [
            entry("scaler", "v1", true, json!({"f:crew": {}})),
            entry("creator", "v1", false, json!({})),
        ]
    );
    let reply = h
        .http
        .patch(
            &format!("{V2}/m/scale?fieldManager=scaler"),
            MERGE,
            replicas(4),
        )
        .await;
    assert_eq!(
        (reply.code, &reply.body["spec"]),
        (200, &json!({"replicas": 4}))
    );
    let read = h.http.get(&format!("{V1}/m")).await.body;
    assert_eq!(read["spec"], json!({"crew": 4}));
    assert_eq!(
        managers(&read),
        [
            entry("scaler", "v2", true, json!({"f:sailors": {}})),
            entry("creator", "v1", false, json!({})),
        ]
    );
    // The same count again writes nothing.
    let same = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "m", "namespace": "default"}, "spec": {"replicas": 4}});
    let reply = h
        .http
        .put(&format!("{V2}/m/scale?fieldManager=again"), same)
        .await;
    assert_eq!(
        reply.body["metadata"]["resourceVersion"],
        read["metadata"]["resourceVersion"]
    );
    // A stale resourceVersion in the Scale is a precondition.
    let stale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "m", "namespace": "default", "resourceVersion": "1"},
        "spec": {"replicas": 7}});
    let reply = h.http.put(&format!("{V2}/m/scale"), stale).await;
    let modified = "Operation cannot be fulfilled on ships.fleet.example.com \"m\": the object \
                    has been modified; please apply your changes to the latest version and try again";
    assert_eq!(
        (
            reply.code,
            reply.body["reason"].clone(),
            reply.body["message"].clone()
        ),
        (409, json!("Conflict"), json!(modified))
    );
    let reply = h.http.get(&format!("{V2}/missing/scale")).await;
    assert_eq!(
        (reply.code, reply.body["message"].clone()),
        (404, json!("ships.fleet.example.com \"missing\" not found"))
    );
}

#[tokio::test]
async fn a_scale_in_another_version_is_validated_with_its_rules_as_v1_36() {
    let (h, _hook) = ships().await;
    h.http
        .post(V1, ship("v1", "c", json!({"crew": 5, "note": "forbidden"})))
        .await;
    let scale = |n: i64| json!({"spec": {"replicas": n}});
    let path = format!("{V2}/c/scale");
    // The whole object's rules in v2: its maximum, the transition rule, and the CEL rule the
    // spec's change makes it evaluate again.
    let reply = h.http.patch(&path, MERGE, scale(11)).await;
    let over = "Invalid value: 11: spec.sailors in body should be less than or equal to 10";
    let forbidden = (
        "FieldValueInvalid",
        "spec.note",
        "Invalid value: the note is forbidden",
    );
    assert_eq!(
        (reply.code, reply.body),
        (
            422,
            invalid(
                "c",
                &[("FieldValueInvalid", "spec.sailors", over), forbidden]
            )
        )
    );
    let reply = h.http.patch(&path, MERGE, scale(3)).await;
    let decrease = (
        "FieldValueInvalid",
        "spec",
        "Invalid value: sailors may not decrease",
    );
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("c", &[decrease, forbidden]))
    );
    // v1 has none of these rules.
    let reply = h
        .http
        .patch(&format!("{V1}/c/scale"), MERGE, scale(3))
        .await;
    assert_eq!(
        (reply.code, &reply.body["spec"]),
        (200, &json!({"replicas": 3}))
    );
    // Negative replicas are the custom resource's own 422, not the Scale's.
    let reply = h.http.patch(&path, MERGE, scale(-1)).await;
    let negative = (
        "FieldValueInvalid",
        ".spec.sailors",
        "Invalid value: -1: should be a non-negative integer",
    );
    assert_eq!(
        (reply.code, reply.body["message"].clone()),
        (
            422,
            invalid("c", &[negative, decrease, forbidden])["message"].clone()
        )
    );
}

#[tokio::test]
async fn a_scale_of_an_object_without_replicas_as_v1_36() {
    let (h, _hook) = ships().await;
    h.http.post(V2, ship("v2", "n", json!({"note": "n"}))).await;
    let path = format!("{V2}/n/scale");
    let reply = h.http.get(&path).await;
    let missing = "the spec replicas field \".spec.sailors\" does not exist";
    assert_eq!(
        (reply.code, reply.body["message"].clone()),
        (500, json!(format!("Internal error occurred: {missing}")))
    );
    // A patch that leaves the replicas unset.
    let labels = json!({"metadata": {"labels": {"a": "b"}}});
    let reply = h.http.patch(&path, MERGE, labels).await;
    assert_eq!(
        (reply.code, reply.body),
        (
            400,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the spec replicas field \".spec.sailors\" cannot be empty",
                "reason": "BadRequest", "code": 400})
        )
    );
    // The replicas the patch starts from exist: a JSON patch may replace them.
    let replace = json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]);
    let reply = h
        .http
        .patch(&path, "application/json-patch+json", replace)
        .await;
    assert_eq!(
        (reply.code, &reply.body["spec"]),
        (200, &json!({"replicas": 3}))
    );
    let read = h.http.get(&format!("{V1}/n")).await.body;
    assert_eq!(read["spec"], json!({"crew": 3, "note": "n"}));
}
