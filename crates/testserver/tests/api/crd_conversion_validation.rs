//! Writes of a custom resource in a version other than the storage version are validated with
//! the schema of the version they name (`kinds/stages.rs`), as v1.36 answered the
//! Boat CRD of `docs/crd-conversion-reference.md` (here a Ship): v1 stored with `spec.crew`
//! (minimum 1), v2 with `spec.sailors` (maximum 10, a transition rule, a CEL rule with a
//! `fieldPath`, a status `replicas` of at most 5), converted by the test's renaming webhook.

use crate::admission_webhooks::{Hook, hook};
use crate::common::*;
use serde_json::{Value, json};

pub(crate) const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
pub(crate) const V1: &str = "/apis/fleet.example.com/v1/namespaces/default/ships";
pub(crate) const V2: &str = "/apis/fleet.example.com/v2/namespaces/default/ships";
pub(crate) const MERGE: &str = "application/merge-patch+json";

/// One version of the Ship: its replicas field, that field's schema, the spec's rules and the
/// status replicas' schema.
fn version(name: &str, field: &str, schema: Value, rules: Value, status: Value) -> Value {
    let mut spec =
        json!({"type": "object", "properties": {field: schema, "note": {"type": "string"}}});
    if rules.is_array() {
        spec["x-kubernetes-validations"] = rules;
    }
    json!({"name": name, "served": true, "storage": name == "v1",
        "subresources": {"status": {}, "scale": {"specReplicasPath": format!(".spec.{field}"),
            "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec,
            "status": {"type": "object", "properties": {"replicas": status,
                "selector": {"type": "string"}}}}}}})
}

/// `ships.fleet.example.com` with a rule only each version has, converting through `hook`.
pub(crate) fn ship_crd(hook: &Hook) -> Value {
    let v2_rules = json!([
        {"rule": "!has(oldSelf.sailors) || !has(self.sailors) || self.sailors >= oldSelf.sailors",
         "message": "sailors may not decrease"},
        {"rule": "!has(self.note) || self.note != 'forbidden'", "message": "the note is forbidden",
         "fieldPath": ".note"},
    ]);
    let versions = [
        version(
            "v1",
            "crew",
            json!({"type": "integer", "minimum": 1}),
            Value::Null,
            json!({"type": "integer"}),
        ),
        version(
            "v2",
            "sailors",
            json!({"type": "integer", "maximum": 10}),
            v2_rules,
            json!({"type": "integer", "maximum": 5}),
        ),
    ];
    json!({
        "metadata": {"name": "ships.fleet.example.com"},
        "spec": {
            "group": "fleet.example.com", "scope": "Namespaced",
            "names": {"plural": "ships", "singular": "ship", "kind": "Ship", "listKind": "ShipList"},
            "versions": versions,
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": format!("{}/convert", hook.base),
                                 "caBundle": hook.ca_bundle}}},
        },
    })
}

/// A server with the Ship CRD and the webhook it converts through.
pub(crate) async fn ships() -> (Harness, Hook) {
    let h = start_without_controllers().await;
    let hook = hook().await;
    assert_eq!(h.http.post(CRDS, ship_crd(&hook)).await.code, 201);
    (h, hook)
}

pub(crate) fn ship(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("fleet.example.com/{version}"), "kind": "Ship",
           "metadata": {"name": name}, "spec": spec})
}

/// v1.36's 422 for the Ship `name`: `(reason, field, message)` per cause.
pub(crate) fn invalid(name: &str, causes: &[(&str, &str, &str)]) -> Value {
    let joined: Vec<String> = causes
        .iter()
        .map(|(_, field, message)| format!("{field}: {message}"))
        .collect();
    let joined = match joined.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let causes: Vec<Value> = causes
        .iter()
        .map(|(reason, field, message)| json!({"reason": reason, "message": message, "field": field}))
        .collect();
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("Ship.fleet.example.com {name:?} is invalid: {joined}"),
        "reason": "Invalid",
        "details": {"name": name, "group": "fleet.example.com", "kind": "Ship", "causes": causes},
        "code": 422})
}

const INVALID: &str = "FieldValueInvalid";
const DECREASE: (&str, &str, &str) = (INVALID, "spec", "Invalid value: sailors may not decrease");

fn assert_reply(reply: &Reply, code: u16, spec: Value) {
    assert_eq!(
        (reply.code, &reply.body["spec"]),
        (code, &spec),
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn a_write_in_another_version_is_validated_with_the_schema_of_that_version_as_v1_36() {
    let (h, _hook) = ships().await;
    let too_many = "Invalid value: 11: spec.sailors in body should be less than or equal to 10";
    let reply = h
        .http
        .post(V2, ship("v2", "a", json!({"sailors": 11})))
        .await;
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("a", &[(INVALID, "spec.sailors", too_many)]))
    );
    let dry_run = format!("{V2}?dryRun=All");
    let reply = h
        .http
        .post(&dry_run, ship("v2", "a", json!({"sailors": 11})))
        .await;
    assert_eq!(reply.code, 422);
    // v1's minimum holds for v1 writes only.
    let reply = h
        .http
        .post(V2, ship("v2", "b", json!({"sailors": 0})))
        .await;
    assert_reply(&reply, 201, json!({"sailors": 0}));
    let reply = h.http.post(V1, ship("v1", "b1", json!({"crew": 0}))).await;
    let too_few = "Invalid value: 0: spec.crew in body should be greater than or equal to 1";
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("b1", &[(INVALID, "spec.crew", too_few)]))
    );
    // Stored through v1 beyond v2's maximum: v2 writes that keep it pass (ratcheting in v2).
    h.http.post(V1, ship("v1", "c", json!({"crew": 50}))).await;
    let reply = h
        .http
        .patch(&format!("{V2}/c"), MERGE, json!({"spec": {"note": "x"}}))
        .await;
    assert_reply(&reply, 200, json!({"note": "x", "sailors": 50}));
    // The OpenAPI check and the transition rule, against the old object in v2.
    let reply = h
        .http
        .patch(&format!("{V2}/c"), MERGE, json!({"spec": {"sailors": 40}}))
        .await;
    let over = "Invalid value: 40: spec.sailors in body should be less than or equal to 10";
    assert_eq!(
        (reply.code, reply.body),
        (
            422,
            invalid("c", &[(INVALID, "spec.sailors", over), DECREASE])
        )
    );
    let reply = h
        .http
        .patch(&format!("{V1}/c"), MERGE, json!({"spec": {"crew": 40}}))
        .await;
    assert_reply(&reply, 200, json!({"crew": 40, "note": "x"}));
    // A CEL rule with a fieldPath, spelled in v2; v1 has no such rule.
    let forbidden = json!({"spec": {"note": "forbidden"}});
    let reply = h
        .http
        .patch(&format!("{V2}/c"), MERGE, forbidden.clone())
        .await;
    let why = "Invalid value: the note is forbidden";
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("c", &[(INVALID, "spec.note", why)]))
    );
    let reply = h.http.patch(&format!("{V1}/c"), MERGE, forbidden).await;
    assert_eq!(reply.code, 200);
    let label = json!({"metadata": {"labels": {"x": "y"}}});
    let reply = h.http.patch(&format!("{V2}/c"), MERGE, label).await;
    assert_reply(&reply, 200, json!({"note": "forbidden", "sailors": 40}));
    let decrease = json!([{"op": "replace", "path": "/spec/sailors", "value": 1}]);
    let reply = h
        .http
        .patch(&format!("{V2}/c"), "application/json-patch+json", decrease)
        .await;
    let forbidden = (INVALID, "spec.note", why);
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("c", &[DECREASE, forbidden]))
    );
}

#[tokio::test]
async fn a_status_write_in_another_version_is_validated_with_its_status_rules_as_v1_36() {
    let (h, _hook) = ships().await;
    h.http.post(V1, ship("v1", "c", json!({"crew": 50}))).await;
    let status = |replicas: Value| json!({"status": {"replicas": replicas}});
    let reply = h
        .http
        .patch(&format!("{V2}/c/status"), MERGE, status(json!(7)))
        .await;
    // The status is checked against its own schema: `replicas in body`.
    let over = "Invalid value: 7: replicas in body should be less than or equal to 5";
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("c", &[(INVALID, "status.replicas", over)]))
    );
    let reply = h
        .http
        .patch(&format!("{V1}/c/status"), MERGE, status(json!(7)))
        .await;
    assert_eq!(
        (reply.code, &reply.body["status"]),
        (200, &json!({"replicas": 7}))
    );
    // Kept from the stored object: ratcheted in v2, and the spec (sailors 50) is not checked.
    let selector = json!({"status": {"selector": "app=c"}});
    let reply = h
        .http
        .patch(&format!("{V2}/c/status"), MERGE, selector)
        .await;
    assert_eq!(
        (reply.code, &reply.body["status"]),
        (200, &json!({"replicas": 7, "selector": "app=c"}))
    );
    let mut object = h.http.get(&format!("{V2}/c")).await.body;
    object["status"]["replicas"] = json!(8);
    let reply = h.http.put(&format!("{V2}/c/status"), object).await;
    let over = "Invalid value: 8: replicas in body should be less than or equal to 5";
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("c", &[(INVALID, "status.replicas", over)]))
    );
    // v1 has no CEL rule: no "some validation rules were not checked".
    let reply = h
        .http
        .patch(&format!("{V1}/c/status"), MERGE, status(json!("x")))
        .await;
    let causes = [
        (
            "FieldValueTypeInvalid",
            "status.replicas",
            "Invalid value: \"string\": replicas in body must be of type integer: \"string\"",
        ),
        (
            INVALID,
            ".status.replicas",
            "Invalid value: 0: .status.replicas accessor error: x is of the type string, \
             expected int64",
        ),
    ];
    assert_eq!((reply.code, reply.body), (422, invalid("c", &causes)));
}

#[tokio::test]
async fn a_write_is_validated_before_it_is_converted_to_be_stored_as_v1_36() {
    let (h, _hook) = ships().await;
    let refused = |spec: Value| {
        let mut ship = ship("v2", "k", spec);
        ship["metadata"]["labels"] = json!({"refuse": "conversion"});
        ship
    };
    // Invalid and unconvertible: the 422, as the conversion comes after the validation.
    let reply = h.http.post(V2, refused(json!({"sailors": 11}))).await;
    let too_many = "Invalid value: 11: spec.sailors in body should be less than or equal to 10";
    assert_eq!(
        (reply.code, reply.body),
        (422, invalid("k", &[(INVALID, "spec.sailors", too_many)]))
    );
    // Valid: the conversion to store it fails.
    let reply = h.http.post(V2, refused(json!({"sailors": 1}))).await;
    let why = "conversion webhook for fleet.example.com/v2, Kind=Ship failed: the test refuses to \
               convert this object";
    assert_eq!(
        (reply.code, reply.body),
        (
            500,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": why, "code": 500})
        )
    );
}
