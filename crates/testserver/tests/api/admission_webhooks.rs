//! Admission webhooks called by the test server as v1.36 calls them: the answers of
//! `docs/webhook-reference.md` (denials, timeouts, unreachable webhooks, patches) and the
//! matching rules of a configuration. The webhook is a small HTTPS server in the test, its
//! certificate issued for 127.0.0.1 by rcgen.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use kubegen_testserver::ServerOptions;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::common::{self, Harness};

/// A webhook server: answers by path, counts calls and keeps every review with its path.
pub(crate) struct Hook {
    pub(crate) base: String,
    pub(crate) ca_bundle: String,
    calls: Arc<AtomicUsize>,
    pub(crate) seen: Arc<parking_lot::Mutex<Vec<(String, Value)>>>,
}

pub(crate) async fn hook() -> Hook {
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::NoCa;
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(cert.pem());
    let chain = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let (calls2, seen2) = (calls.clone(), seen.clone());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, calls, seen) = (acceptor.clone(), calls2.clone(), seen2.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let (calls, seen) = (calls.clone(), seen.clone());
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        let path = request.uri().path().to_string();
                        let query = request.uri().query().unwrap_or("").to_string();
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let review: Value = serde_json::from_slice(&body).unwrap();
                        seen.lock()
                            .push((format!("{path}?{query}"), review.clone()));
                        Ok::<_, std::convert::Infallible>(answer(&path, &review).await)
                    }
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Hook {
        base,
        ca_bundle,
        calls,
        seen,
    }
}

/// The webhook's answer for `path`: `/allow`, `/deny`, `/denyplain`, `/mutate` (adds the label
/// `mutated: yes`), `/mutate-crew` (sets `spec.crew: 9`), `/needs-mutated` (denies objects
/// without it), `/sleep`, `/e500`, `/warn`, `/garbage`, and `/convert`, a ConversionReview
/// answered by [`convert`]. Any other path allows.
async fn answer(path: &str, review: &Value) -> http::Response<Full<Bytes>> {
    if path == "/convert" {
        return http::Response::new(Full::new(Bytes::from(convert(review).to_string())));
    }
    let uid = review["request"]["uid"].clone();
    let mut response = json!({"uid": uid, "allowed": true});
    match path {
        "/deny" => {
            response = json!({"uid": uid, "allowed": false, "status": {"code": 422,
                "reason": "Invalid", "message": "custom message from the webhook"}});
        }
        "/denyplain" => response = json!({"uid": uid, "allowed": false}),
        "/mutate" => {
            let patch = json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]);
            response["patchType"] = "JSONPatch".into();
            response["patch"] = base64::engine::general_purpose::STANDARD
                .encode(patch.to_string())
                .into();
        }
        "/mutate-crew" => {
            let patch = json!([{"op": "add", "path": "/spec/crew", "value": 9}]);
            response["patchType"] = "JSONPatch".into();
            response["patch"] = base64::engine::general_purpose::STANDARD
                .encode(patch.to_string())
                .into();
        }
        "/needs-mutated"
            if review["request"]["object"]["metadata"]["labels"]["mutated"] != "yes" =>
        {
            response = json!({"uid": uid, "allowed": false,
                "status": {"code": 403, "message": "not mutated"}});
        }
        "/sleep" => tokio::time::sleep(Duration::from_secs(30)).await,
        "/e500" => {
            return http::Response::builder()
                .status(500)
                .body(Full::new(Bytes::from("boom")))
                .unwrap();
        }
        "/garbage" => return http::Response::new(Full::new(Bytes::from("{not json"))),
        "/warn" => response["warnings"] = json!(["first warning", "second warning"]),
        "/mutate-audit" => {
            let patch = json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]);
            response["patchType"] = "JSONPatch".into();
            response["patch"] = base64::engine::general_purpose::STANDARD
                .encode(patch.to_string())
                .into();
            response["auditAnnotations"] = json!({"seen": "yes"});
        }
        "/allow-audit" => response["auditAnnotations"] = json!({"checked": "ok"}),
        _ => {}
    }
    let review = json!({"apiVersion": review["apiVersion"], "kind": "AdmissionReview",
        "response": response});
    http::Response::new(Full::new(Bytes::from(review.to_string())))
}

/// The answer to a ConversionReview of Ships (`crate::crd_conversion`): `spec.crew` of v1 is
/// `spec.sailors` of v2, and partial objects convert too; objects labelled
/// `refuse: conversion` fail the review.
fn convert(review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap();
    let objects = request["objects"].as_array().unwrap();
    let refused = objects
        .iter()
        .any(|o| o["metadata"]["labels"]["refuse"] == "conversion");
    let (from, to) = match desired.ends_with("/v2") {
        true => ("crew", "sailors"),
        false => ("sailors", "crew"),
    };
    let converted: Vec<Value> = objects
        .iter()
        .map(|object| {
            let mut object = object.clone();
            object["apiVersion"] = desired.into();
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
                && let Some(value) = spec.remove(from)
            {
                spec.insert(to.into(), value);
            }
            object
        })
        .collect();
    let response = match refused {
        true => json!({"uid": request["uid"], "result": {"status": "Failure",
            "message": "the test refuses to convert this object"}}),
        false => json!({"uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": converted}),
    };
    json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": response})
}

/// A server without a controller-manager, a namespace `wh` labelled `hooks: on`.
async fn server() -> Harness {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = common::start_with(options).await;
    let ns = json!({"metadata": {"name": "wh", "labels": {"hooks": "on"}}});
    assert_eq!(h.http.post("/api/v1/namespaces", ns).await.code, 201);
    let other = json!({"metadata": {"name": "plain"}});
    assert_eq!(h.http.post("/api/v1/namespaces", other).await.code, 201);
    h
}

/// Installs a one-webhook configuration for ConfigMap creates in namespaces labelled
/// `hooks: on`; `extra` is merged into the webhook.
async fn install(h: &Harness, kind: &str, name: &str, url: &str, ca: &str, extra: Value) {
    let mut webhook = json!({
        "name": format!("{name}.example.com"),
        "admissionReviewVersions": ["v1"], "sideEffects": "None", "timeoutSeconds": 5,
        "namespaceSelector": {"matchLabels": {"hooks": "on"}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                   "operations": ["CREATE"]}],
        "clientConfig": {"url": url, "caBundle": ca},
    });
    for (k, v) in extra.as_object().unwrap() {
        webhook[k] = v.clone();
    }
    let plural = format!("{}webhookconfigurations", kind.to_lowercase());
    let path = format!("/apis/admissionregistration.k8s.io/v1/{plural}");
    let body = json!({"metadata": {"name": name}, "webhooks": [webhook]});
    let reply = h.http.post(&path, body).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
}

async fn create_cm(h: &Harness, ns: &str, name: &str) -> common::Reply {
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    h.http
        .post(&path, common::configmap(name, json!({"app": "x"})))
        .await
}

fn status(reply: &common::Reply) -> (u16, &str, &str) {
    (
        reply.code,
        reply.body["reason"].as_str().unwrap_or(""),
        reply.body["message"].as_str().unwrap_or(""),
    )
}

#[tokio::test]
async fn configurations_get_v1_defaults_and_need_side_effects_and_review_versions() {
    let h = server().await;
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let bad = json!({"metadata": {"name": "whk-inv"},
        "webhooks": [{"name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:1/x"}}]});
    let reply = h.http.post(path, bad).await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"whk-inv\" is invalid: [webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]"
        )
    );
    let good = json!({"metadata": {"name": "whk-def"}, "webhooks": [{"name": "a.example.com",
        "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://127.0.0.1:1/x"}}]});
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
    let reply = h.http.post(path, good).await;
    assert_eq!(reply.code, 201);
    assert_eq!(
        reply.body["webhooks"][0],
        json!({"name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {},
            "objectSelector": {}, "sideEffects": "None", "timeoutSeconds": 10,
            "admissionReviewVersions": ["v1"], "reinvocationPolicy": "Never"})
    );
}

#[tokio::test]
async fn a_denial_carries_the_webhooks_code_reason_and_message() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/deny", hook.base);
    install(
        &h,
        "Validating",
        "wh-deny",
        &url,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    let reply = create_cm(&h, "wh", "e-deny").await;
    assert_eq!(
        status(&reply),
        (
            422,
            "Invalid",
            "admission webhook \"wh-deny.example.com\" denied the request: custom message from the webhook"
        )
    );
    // Outside the selected namespaces the webhook is not called.
    assert_eq!(create_cm(&h, "plain", "ok").await.code, 201);
    assert_eq!(hook.calls.load(Ordering::SeqCst), 1);
    let (url, review) = hook.seen.lock()[0].clone();
    assert_eq!(url, "/deny?timeout=5s");
    let request = &review["request"];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(
        (
            &request["operation"],
            &request["name"],
            &request["namespace"]
        ),
        (&json!("CREATE"), &json!("e-deny"), &json!("wh"))
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(
        request["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})
    );
    assert_eq!(
        (&request["oldObject"], &request["dryRun"]),
        (&Value::Null, &json!(false))
    );
}

#[tokio::test]
async fn a_denial_without_status_is_400_without_explanation() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/denyplain", hook.base);
    install(
        &h,
        "Validating",
        "wh-plain",
        &url,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    let reply = create_cm(&h, "wh", "c").await;
    assert_eq!(
        status(&reply),
        (
            400,
            "",
            "admission webhook \"wh-plain.example.com\" denied the request without explanation"
        )
    );
}

#[tokio::test]
async fn a_mutating_patch_is_stored_and_seen_by_validating_webhooks() {
    let h = server().await;
    let hook = hook().await;
    let mutate = format!("{}/mutate", hook.base);
    let check = format!("{}/needs-mutated", hook.base);
    install(
        &h,
        "Mutating",
        "wh-mutate",
        &mutate,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    install(
        &h,
        "Validating",
        "wh-check",
        &check,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    let reply = create_cm(&h, "wh", "e-mutate").await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.body["metadata"]["labels"],
        json!({"app": "x", "mutated": "yes"})
    );
    // The validating webhook saw the object as stored: uid and managedFields included.
    let seen = hook.seen.lock();
    let validated = &seen[1].1["request"]["object"];
    assert_eq!(validated["metadata"]["uid"], reply.body["metadata"]["uid"]);
    assert!(validated["metadata"]["managedFields"].is_array());
}

#[tokio::test]
async fn timeouts_fail_or_are_ignored_by_failure_policy() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/sleep", hook.base);
    let extra = json!({"timeoutSeconds": 1});
    install(
        &h,
        "Validating",
        "wh-sleepfail",
        &url,
        &hook.ca_bundle,
        extra,
    )
    .await;
    let reply = create_cm(&h, "wh", "e-sleepfail").await;
    let message = format!(
        "failed calling webhook \"wh-sleepfail.example.com\": failed to call webhook: Post \"{url}?timeout=1s\": context deadline exceeded"
    );
    assert_eq!(
        status(&reply),
        (
            500,
            "InternalError",
            format!("Internal error occurred: {message}").as_str()
        )
    );
    assert_eq!(
        reply.body["details"]["causes"][0]["message"],
        json!(message)
    );
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wh-sleepfail";
    let patch = json!([{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]);
    assert_eq!(
        h.http
            .patch(path, "application/json-patch+json", patch)
            .await
            .code,
        200
    );
    assert_eq!(create_cm(&h, "wh", "e-sleepignore").await.code, 201);
}

#[tokio::test]
async fn unreachable_webhooks_fail_or_are_ignored_by_failure_policy() {
    let h = server().await;
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("https://127.0.0.1:{port}/x");
    install(&h, "Validating", "wh-downfail", &url, "", json!({})).await;
    let reply = create_cm(&h, "wh", "d").await;
    assert_eq!(
        status(&reply),
        (500, "InternalError", format!("Internal error occurred: failed calling webhook \"wh-downfail.example.com\": failed to call webhook: Post \"{url}?timeout=5s\": dial tcp 127.0.0.1:{port}: connect: connection refused").as_str())
    );
    install(
        &h,
        "Validating",
        "wh-downignore",
        &url,
        "",
        json!({"failurePolicy": "Ignore"}),
    )
    .await;
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wh-downfail";
    assert_eq!(h.http.delete(path).await.code, 200);
    assert_eq!(create_cm(&h, "wh", "d").await.code, 201);
}

#[tokio::test]
async fn bad_answers_are_internal_errors_worded_as_v1_36() {
    let h = server().await;
    let hook = hook().await;
    for (path, why) in [
        (
            "e500",
            "failed to call webhook: an error on the server (\"unknown\") has prevented the request from succeeding",
        ),
        (
            "garbage",
            "failed to call webhook: couldn't get version/kind; json parse error: key must be a string at line 1 column 2",
        ),
    ] {
        let name = format!("wh-{path}");
        let url = format!("{}/{path}", hook.base);
        install(&h, "Validating", &name, &url, &hook.ca_bundle, json!({})).await;
        let reply = create_cm(&h, "wh", "c").await;
        let want = format!(
            "Internal error occurred: failed calling webhook \"{name}.example.com\": {why}"
        );
        assert_eq!(status(&reply), (500, "InternalError", want.as_str()));
        let path =
            format!("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}");
        assert_eq!(h.http.delete(&path).await.code, 200);
    }
}

#[tokio::test]
async fn warnings_become_warning_headers() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/warn", hook.base);
    install(
        &h,
        "Validating",
        "wh-warn",
        &url,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    let reply = create_cm(&h, "wh", "c").await;
    assert_eq!(reply.code, 201);
    let warnings: Vec<&str> = reply
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        ["299 - \"first warning\"", "299 - \"second warning\""]
    );
}

#[tokio::test]
async fn rules_and_object_selectors_choose_the_writes_a_webhook_sees() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/deny", hook.base);
    let extra = json!({"objectSelector": {"matchLabels": {"police": "yes"}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                   "operations": ["UPDATE", "DELETE"]}]});
    install(&h, "Validating", "wh-sel", &url, &hook.ca_bundle, extra).await;
    // Creates are not in the rules; an unlabelled object is not selected.
    assert_eq!(create_cm(&h, "wh", "c").await.code, 201);
    let path = "/api/v1/namespaces/wh/configmaps/c";
    let merge = "application/merge-patch+json";
    let reply = h.http.patch(path, merge, json!({"data": {"k": "v"}})).await;
    assert_eq!(reply.code, 200);
    assert_eq!(hook.calls.load(Ordering::SeqCst), 0);
    // Labelling it selects it (the new object matches), and so does deleting it (the old one).
    let reply = h
        .http
        .patch(
            path,
            merge,
            json!({"metadata": {"labels": {"police": "yes"}}}),
        )
        .await;
    assert_eq!(reply.code, 422);
    assert_eq!(hook.seen.lock()[0].1["request"]["operation"], "UPDATE");
    assert!(hook.seen.lock()[0].1["request"]["oldObject"].is_object());
    assert_eq!(hook.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn dry_runs_reach_webhooks_with_dry_run_set() {
    let h = server().await;
    let hook = hook().await;
    let url = format!("{}/allow", hook.base);
    install(
        &h,
        "Validating",
        "wh-dry",
        &url,
        &hook.ca_bundle,
        json!({"sideEffects": "NoneOnDryRun"}),
    )
    .await;
    let path = "/api/v1/namespaces/wh/configmaps?dryRun=All";
    let reply = h.http.post(path, common::configmap("dr", json!({}))).await;
    assert_eq!(reply.code, 201);
    let review = hook.seen.lock()[0].1.clone();
    assert_eq!(review["request"]["dryRun"], true);
    assert_eq!(review["request"]["options"]["dryRun"], json!(["All"]));
}

#[tokio::test]
async fn if_needed_webhooks_run_again_after_a_later_mutation() {
    let h = server().await;
    let hook = hook().await;
    let allow = format!("{}/allow", hook.base);
    let mutate = format!("{}/mutate", hook.base);
    let again = json!({"reinvocationPolicy": "IfNeeded"});
    install(&h, "Mutating", "a-first", &allow, &hook.ca_bundle, again).await;
    install(
        &h,
        "Mutating",
        "b-mutates",
        &mutate,
        &hook.ca_bundle,
        json!({}),
    )
    .await;
    assert_eq!(create_cm(&h, "wh", "c").await.code, 201);
    let paths: Vec<String> = hook.seen.lock().iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(
        paths,
        [
            "/allow?timeout=5s",
            "/mutate?timeout=5s",
            "/allow?timeout=5s"
        ]
    );
}

/// A closed port: a webhook there fails whenever it is called.
pub(crate) async fn unreachable_url() -> (String, u16) {
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    (format!("https://127.0.0.1:{port}/x"), port)
}

#[tokio::test]
async fn match_conditions_decide_whether_a_webhook_is_called_as_v1_36() {
    let h = server().await;
    let (url, port) = unreachable_url().await;
    let conditions = json!({"matchConditions": [
        {"name": "app-y", "expression": "object.metadata.labels['app'] == 'y'"},
        {"name": "not-dry", "expression": "request.dryRun != true"}]});
    install(&h, "Validating", "wh-cond", &url, "", conditions).await;
    // app: x — a false condition, the webhook is not called.
    assert_eq!(create_cm(&h, "wh", "a").await.code, 201);
    let path = "/api/v1/namespaces/wh/configmaps";
    let called = h
        .http
        .post(path, common::configmap("b", json!({"app": "y"})))
        .await;
    assert_eq!(
        status(&called),
        (500, "InternalError", format!("Internal error occurred: failed calling webhook \"wh-cond.example.com\": failed to call webhook: Post \"{url}?timeout=5s\": dial tcp 127.0.0.1:{port}: connect: connection refused").as_str())
    );
    let dry = format!("{path}?dryRun=All");
    let skipped = h
        .http
        .post(&dry, common::configmap("c", json!({"app": "y"})))
        .await;
    assert_eq!(skipped.code, 201, "{}", skipped.body);
    // No labels: the first condition fails to evaluate; Fail answers 403 without a call.
    let bare = json!({"metadata": {"name": "e"}});
    let failed = h.http.post(path, bare.clone()).await;
    assert_eq!(
        status(&failed),
        (
            403,
            "Forbidden",
            "configmaps \"e\" is forbidden: expression 'object.metadata.labels['app'] == 'y'' resulted in error: no such key: labels"
        )
    );
    assert_eq!(
        failed.body["details"],
        json!({"name": "e", "kind": "configmaps"})
    );
    let config = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wh-cond";
    let mut stored = h.http.get(config).await.body;
    stored["webhooks"][0]["failurePolicy"] = json!("Ignore");
    assert_eq!(h.http.put(config, stored).await.code, 200);
    assert_eq!(h.http.post(path, bare).await.code, 201);
}

#[tokio::test]
async fn match_conditions_are_checked_when_a_configuration_is_written() {
    let h = server().await;
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let webhook = |conditions: Value| {
        json!({"metadata": {"name": "mc"}, "webhooks": [{
            "name": "mc.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "clientConfig": {"url": "https://127.0.0.1:1/x"}, "matchConditions": conditions}]})
    };
    let bad = json!([{"name": "a", "expression": "true"}, {"name": "a", "expression": "true"},
                     {"name": "", "expression": "true"}, {"name": "Bad Name!", "expression": "true"}]);
    let reply = h.http.post(path, webhook(bad)).await;
    assert_eq!(
        reply.body["message"],
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"mc\" is invalid: [webhooks[0].matchConditions[1].name: Duplicate value: \"a\", webhooks[0].matchConditions[2].name: Required value, webhooks[0].matchConditions[3].name: Invalid value: \"Bad Name!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]"
    );
    let unparsable = h
        .http
        .post(path, webhook(json!([{"name": "a", "expression": "1 +"}])))
        .await;
    assert_eq!(unparsable.code, 422);
    assert_eq!(
        unparsable.body["details"]["causes"][0]["field"],
        "webhooks[0].matchConditions[0].expression"
    );
    let many: Vec<Value> = (0..65)
        .map(|i| json!({"name": format!("c{i}"), "expression": "true"}))
        .collect();
    let reply = h.http.post(path, webhook(Value::Array(many))).await;
    assert_eq!(
        reply.body["message"],
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"mc\" is invalid: webhooks[0].matchConditions: Too many: 65: must have at most 64 items"
    );
}
