//! The namespace `finalize` subresource and termination with finalizers, in v1.36's shapes (asked
//! with curl: `PUT /api/v1/namespaces/<n>/finalize` updates everything but `status`, validates
//! finalizer names, checks `resourceVersion`, and removes a terminating namespace once
//! `spec.finalizers` and `metadata.finalizers` are both empty).

use serde_json::{Value, json};

use crate::common::*;
use kubegen_testserver::ServerOptions;

const NS: &str = "/api/v1/namespaces";

async fn namespace(h: &Harness, name: &str) -> Value {
    let reply = h.http.post(NS, json!({"metadata": {"name": name}})).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    reply.body
}

fn finalize(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
           "spec": {"finalizers": finalizers}})
}

#[tokio::test]
async fn finalize_updates_all_but_status() {
    let h = start().await;
    namespace(&h, "team").await;
    let mut body = finalize("team", &["kubernetes", "example.com/x"]);
    body["metadata"]["labels"] = json!({"a": "b"});
    body["status"] = json!({"phase": "Terminating"});
    let reply = h.http.put(&format!("{NS}/team/finalize"), body).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(
        reply.body["spec"],
        json!({"finalizers": ["kubernetes", "example.com/x"]})
    );
    assert_eq!(reply.body["status"], json!({"phase": "Active"}));
    assert_eq!(reply.body["metadata"]["labels"]["a"], "b");
    let entries = reply.body["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["subresource"] == "finalize"),
        "{entries:?}"
    );
    assert_eq!(h.http.get(&format!("{NS}/team")).await.body, reply.body);
}

#[tokio::test]
async fn finalize_rejects_what_v1_36_rejects() {
    let h = start().await;
    let created = namespace(&h, "team").await;
    let path = format!("{NS}/team/finalize");
    let bad = h
        .http
        .put(&path, finalize("team", &["kubernetes", "bad"]))
        .await;
    assert_status(&bad, 422, "Invalid");
    assert_eq!(
        bad.body["message"],
        "Namespace \"team\" is invalid: spec.finalizers[1]: Invalid value: \"bad\": name is neither a standard finalizer name nor is it fully qualified"
    );
    let other = h.http.put(&path, finalize("other", &[])).await;
    assert_status(&other, 400, "BadRequest");
    assert_eq!(
        other.body["message"],
        "the name of the object (other) does not match the name on the URL (team)"
    );
    let mut stale = finalize("team", &[]);
    stale["metadata"]["resourceVersion"] = json!("1");
    assert_status(&h.http.put(&path, stale).await, 409, "Conflict");
    let missing = h
        .http
        .put(&format!("{NS}/nope/finalize"), finalize("nope", &[]))
        .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(missing.body["message"], "namespaces \"nope\" not found");
    for reply in [
        h.http.get(&path).await,
        h.http
            .patch(&path, "application/merge-patch+json", json!({}))
            .await,
    ] {
        assert_status(&reply, 405, "MethodNotAllowed");
    }
    assert_eq!(h.http.get(&format!("{NS}/team")).await.body, created);
}

#[tokio::test]
async fn a_terminating_namespace_goes_once_finalize_empties_its_finalizers() {
    // No controller-manager: this test plays the namespace controller's part itself.
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    namespace(&h, "team").await;
    let path = format!("{NS}/team/finalize");
    let held = h
        .http
        .put(&path, finalize("team", &["kubernetes", "example.com/x"]))
        .await;
    assert_eq!(held.code, 200, "{}", held.body);
    let deleted = h.http.delete(&format!("{NS}/team")).await;
    assert_eq!(deleted.code, 200, "{}", deleted.body);
    assert_eq!(deleted.body["status"]["phase"], "Terminating");
    // What the namespace controller does once the namespace is empty: drop `kubernetes`.
    let dropped = h
        .http
        .put(&path, finalize("team", &["example.com/x"]))
        .await;
    assert_eq!(dropped.code, 200, "{}", dropped.body);
    let terminating = h.http.get(&format!("{NS}/team")).await.body;
    assert_eq!(terminating["status"]["phase"], "Terminating");
    assert_eq!(
        terminating["spec"],
        json!({"finalizers": ["example.com/x"]})
    );
    let blocked = h
        .http
        .post(
            &format!("{NS}/team/configmaps"),
            json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_status(&blocked, 403, "Forbidden");
    let done = h.http.put(&path, finalize("team", &[])).await;
    assert_eq!(done.code, 200, "{}", done.body);
    assert_eq!(done.body["spec"], json!({}));
    assert_eq!(done.body["status"]["phase"], "Terminating");
    assert_status(&h.http.get(&format!("{NS}/team")).await, 404, "NotFound");
}
