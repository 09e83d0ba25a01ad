//! CRD conversion through the generated conversions, served by kubegen-runtime's webhook server
//! on 127.0.0.1, on the in-process test server and on the real API server
//! `KUBEGEN_E2E_KUBECONFIG` names (v1.36 with the `deploy/crd.yaml` CRD, v1.15 with
//! `deploy/crd-v1beta1.yaml`): the same scenario and answers on all three.
//!
//! The VirtualMachine CRD is installed under a group of its own (`conv<pid>.example.com`), so
//! parallel runs and the markers test (which owns `virtualmachines.cloudnative.example.com`) do
//! not collide; its `clientConfig` is rewritten from the Service to
//! `url: https://127.0.0.1:<port>/convert` with the self-signed CA, as the servers run locally.
//! The webhook converts with the vm-controller's `HubConversion` (the generated
//! `v1::VirtualMachine::into_hub` / `from_hub` and its hand-written `VmConversion`); [`Regrouped`]
//! maps the test group onto the generated types' group around it.
//!
//! Checked: an object written as v1alpha1 (the storage version) and read as v1, one written as
//! v1 and read as v1alpha1, lists and watches in v1, patches and server-side applies in either
//! version ([`crate::conversion_patches`]), validation in v1 ([`crate::conversion_validation`]),
//! `status.storedVersions`, and each server's answers
//! when the webhook refuses an object and when it cannot be reached.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use kubegen_api::cloudnative::v1alpha1;
use kubegen_client::{Client, Error};
use kubegen_runtime::crds::CrdVersion;
use kubegen_runtime::webhook::{Convert, HubConversion, SelfSigned, WebhookOptions, WebhookServer};
use serde_json::{Value, json};

/// The generated conversions of `cloudnative.example.com`, answering for the test's group.
struct Regrouped {
    group: String,
    inner: HubConversion<v1alpha1::VirtualMachine>,
}

fn swap_group(api_version: &str, from: &str, to: &str) -> String {
    match api_version.split_once('/') {
        Some((group, version)) if group == from => format!("{to}/{version}"),
        _ => api_version.to_owned(),
    }
}

impl Convert for Regrouped {
    fn convert(&self, mut object: Value, desired: &str) -> Result<Value, String> {
        const GENERATED: &str = "cloudnative.example.com";
        if object.pointer("/metadata/labels/refuse") == Some(&json!("conversion")) {
            return Err("the test refuses to convert this object".to_owned());
        }
        let api_version = object["apiVersion"].as_str().unwrap_or("").to_owned();
        object["apiVersion"] = json!(swap_group(&api_version, &self.group, GENERATED));
        let desired = swap_group(desired, &self.group, GENERATED);
        let mut converted = self.inner.convert(object, &desired)?;
        converted["apiVersion"] = json!(swap_group(&desired, GENERATED, &self.group));
        Ok(converted)
    }
}

fn request(method: &str, path: &str, body: Option<&Value>) -> http::Request<Bytes> {
    let bytes = body.map_or_else(Bytes::new, |body| Bytes::from(body.to_string()));
    http::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", "application/json")
        .header("content-type", "application/json")
        .body(bytes)
        .unwrap()
}

pub(crate) async fn call(
    client: &Client,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, Error> {
    client.request_json(request(method, path, body)).await
}

async fn cluster() -> (Client, CrdVersion) {
    let client = kubegen_e2e_support::cluster_client().await;
    let api = kubegen_runtime::crds::served_version(&client)
        .await
        .unwrap();
    (client, api)
}

/// The generated VirtualMachine CRD for `api`, moved to `group` and converting at `url`.
fn crd(api: CrdVersion, group: &str, url: &str, ca: &str) -> Value {
    let file = match api {
        CrdVersion::V1 => "crd.yaml",
        CrdVersion::V1beta1 => "crd-v1beta1.yaml",
    };
    let path = format!("{}/../../deploy/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let document = text
        .split("\n---\n")
        .find(|doc| doc.contains("name: virtualmachines.cloudnative.example.com"))
        .unwrap();
    let mut crd: Value =
        serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(document).unwrap()).unwrap();
    crd["metadata"]["name"] = json!(format!("virtualmachines.{group}"));
    crd["spec"]["group"] = json!(group);
    let client_config = json!({
        "url": url,
        "caBundle": base64::engine::general_purpose::STANDARD.encode(ca),
    });
    match api {
        CrdVersion::V1 => crd["spec"]["conversion"]["webhook"]["clientConfig"] = client_config,
        CrdVersion::V1beta1 => crd["spec"]["conversion"]["webhookClientConfig"] = client_config,
    }
    crd
}

/// Serves the conversions on 127.0.0.1 with a fresh self-signed certificate; returns the task,
/// the address and the CA.
async fn serve(
    client: &Client,
    group: &str,
    dir: &std::path::Path,
) -> (tokio::task::JoinHandle<()>, SocketAddr, String) {
    let bootstrap = SelfSigned {
        ip_addresses: vec![[127, 0, 0, 1].into()],
        ..SelfSigned::default()
    };
    let ca = bootstrap.files(dir).unwrap();
    let metrics = kubegen_runtime::ProcessMetrics::default();
    let mut server = WebhookServer::new(&metrics);
    let inner = kubegen_examples::vm::conversion::hub_conversion();
    server.add_converter(
        group,
        "VirtualMachine",
        Regrouped {
            group: group.to_owned(),
            inner,
        },
    );
    let options = WebhookOptions::default()
        .bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .cert_dir(dir);
    let (task, addr) = server.start(client, &options).await.unwrap();
    (task, addr, ca)
}

pub(crate) fn vm(api_version: &str, name: &str, namespace: &str, spec: Value) -> Value {
    json!({
        "apiVersion": api_version, "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    })
}

/// The spec fields the conversion touches, in one version's spelling.
fn keys_and_bus(object: &Value, keys: &str) -> (Value, Value) {
    (
        object["spec"][keys].clone(),
        object["spec"]["diskBus"].clone(),
    )
}

/// Waits until `path` answers (the server serves a new CRD a moment after storing it).
async fn wait_served(client: &Client, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Err(error) = call(client, "GET", path, None).await {
        assert!(Instant::now() < deadline, "{path} is not served: {error}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every event of a watch from resourceVersion 0 that ends after `seconds`.
async fn watch_events(client: &Client, collection: &str, seconds: u32) -> Vec<Value> {
    let path = format!("{collection}?watch=true&resourceVersion=0&timeoutSeconds={seconds}");
    let response = client.send(request("GET", &path, None)).await.unwrap();
    let bytes = response.into_body().collect_limited(1 << 20).await.unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The same scenario on the in-process test server, which calls the webhook as v1.36 does.
#[tokio::test]
async fn versions_convert_through_the_generated_webhook() {
    let server = kubegen_testserver::TestServer::start().await;
    run(server.client(), Server::InProcess).await;
}

#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn versions_convert_through_the_generated_webhook_on_cluster() {
    let (client, api) = cluster().await;
    run(client, Server::Real(api)).await;
}

/// Where the scenario runs: the answers differ in wording between v1.36 and 1.15, and v1.36's
/// watch cache answers one list differently (see [`unreachable`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Server {
    InProcess,
    Real(CrdVersion),
}

impl Server {
    fn api(self) -> CrdVersion {
        match self {
            Server::InProcess => CrdVersion::V1,
            Server::Real(api) => api,
        }
    }
}

async fn run(client: Client, server: Server) {
    let api = server.api();
    let group = format!("conv{}.example.com", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let (task, addr, ca) = serve(&client, &group, dir.path()).await;
    let crd = crd(api, &group, &format!("https://{addr}/convert"), &ca);
    let crds = format!(
        "/apis/{}/customresourcedefinitions",
        crd["apiVersion"].as_str().unwrap()
    );
    call(&client, "POST", &crds, Some(&crd)).await.unwrap();
    let namespace = format!("conversion-{}", std::process::id());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    call(&client, "POST", "/api/v1/namespaces", Some(&ns))
        .await
        .unwrap();
    let outcome = tokio::spawn(scenario(
        client.clone(),
        group.clone(),
        namespace.clone(),
        task,
        server,
    ))
    .await;
    let crd_path = format!("{crds}/virtualmachines.{group}");
    call(&client, "DELETE", &crd_path, None).await.unwrap();
    call(
        &client,
        "DELETE",
        &format!("/api/v1/namespaces/{namespace}"),
        None,
    )
    .await
    .unwrap();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic.into_panic());
    }
}

async fn scenario(
    client: Client,
    group: String,
    namespace: String,
    webhook: tokio::task::JoinHandle<()>,
    server: Server,
) {
    let collection =
        |version: &str| format!("/apis/{group}/{version}/namespaces/{namespace}/virtualmachines");
    let (alpha, ga) = (collection("v1alpha1"), collection("v1"));
    wait_served(&client, &ga).await;
    let spec = json!({"cpu": 2, "memory": "4Gi", "image": "debian:13", "diskGi": 10});
    // Written in the storage version, read in v1.
    let mut alpha_spec = spec.clone();
    alpha_spec["sshKeys"] = json!(["ssh-ed25519 AAAA alice"]);
    alpha_spec["diskBus"] = json!("scsi");
    let written = vm(
        &format!("{group}/v1alpha1"),
        "written-alpha",
        &namespace,
        alpha_spec,
    );
    call(&client, "POST", &alpha, Some(&written)).await.unwrap();
    let read = call(&client, "GET", &format!("{ga}/written-alpha"), None)
        .await
        .unwrap();
    assert_eq!(read["apiVersion"], format!("{group}/v1"));
    assert_eq!(
        keys_and_bus(&read, "authorizedKeys"),
        (json!(["ssh-ed25519 AAAA alice"]), json!("scsi"))
    );
    assert_eq!(read["spec"].get("sshKeys"), None);
    // Written in v1, read in the storage version.
    let mut ga_spec = spec;
    ga_spec["authorizedKeys"] = json!(["ssh-ed25519 BBBB bob"]);
    ga_spec["diskBus"] = json!("sata");
    let written = vm(&format!("{group}/v1"), "written-ga", &namespace, ga_spec);
    let created = call(&client, "POST", &ga, Some(&written)).await.unwrap();
    assert_eq!(created["apiVersion"], format!("{group}/v1"));
    assert_eq!(
        keys_and_bus(&created, "authorizedKeys"),
        (json!(["ssh-ed25519 BBBB bob"]), json!("sata"))
    );
    let read = call(&client, "GET", &format!("{alpha}/written-ga"), None)
        .await
        .unwrap();
    assert_eq!(read["apiVersion"], format!("{group}/v1alpha1"));
    assert_eq!(
        keys_and_bus(&read, "sshKeys"),
        (json!(["ssh-ed25519 BBBB bob"]), json!("sata"))
    );
    // Lists and watches in v1 convert every item.
    let list = call(&client, "GET", &ga, None).await.unwrap();
    let items: Vec<(String, Value)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["apiVersion"].as_str().unwrap().to_owned(),
                item["spec"]["authorizedKeys"].clone(),
            )
        })
        .collect();
    let v1 = format!("{group}/v1");
    assert_eq!(
        items,
        [
            (v1.clone(), json!(["ssh-ed25519 AAAA alice"])),
            (v1.clone(), json!(["ssh-ed25519 BBBB bob"])),
        ]
    );
    let events = watch_events(&client, &ga, 2).await;
    let mut seen: Vec<(Value, Value, Value)> = events
        .iter()
        .map(|event| {
            (
                event["type"].clone(),
                event["object"]["apiVersion"].clone(),
                event["object"]["spec"]["authorizedKeys"].clone(),
            )
        })
        .collect();
    // The initial ADDED events come in no promised order (1.15's watch cache sends them unsorted).
    seen.sort_by_key(|(_, _, keys)| keys.to_string());
    assert_eq!(
        seen,
        [
            (json!("ADDED"), json!(v1), json!(["ssh-ed25519 AAAA alice"])),
            (json!("ADDED"), json!(v1), json!(["ssh-ed25519 BBBB bob"])),
        ]
    );
    crate::conversion_patches::patches(&client, &group, &namespace, server).await;
    crate::conversion_validation::validation(&client, &group, &namespace, server).await;
    failures(&client, &group, &namespace, server.api()).await;
    unreachable(&client, &group, &namespace, server).await;
    webhook.abort();
}

/// The CRD pointed at a port nothing listens on: what reads and writes in v1 answer.
async fn unreachable(client: &Client, group: &str, namespace: &str, server: Server) {
    let api = server.api();
    let crds = match api {
        CrdVersion::V1 => "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        CrdVersion::V1beta1 => "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions",
    };
    let path = format!("{crds}/virtualmachines.{group}");
    let mut crd = call(client, "GET", &path, None).await.unwrap();
    // Objects written as v1 were stored as v1alpha1: the only stored version.
    assert_eq!(crd["status"]["storedVersions"], json!(["v1alpha1"]));
    let url = json!("https://127.0.0.1:1/convert");
    match api {
        CrdVersion::V1 => crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"] = url,
        CrdVersion::V1beta1 => crd["spec"]["conversion"]["webhookClientConfig"]["url"] = url,
    }
    call(client, "PUT", &path, Some(&crd)).await.unwrap();
    let ga = format!("/apis/{group}/v1/namespaces/{namespace}/virtualmachines");
    let deadline = Instant::now() + Duration::from_secs(30);
    let get = loop {
        match call(client, "GET", &format!("{ga}/written-alpha"), None).await {
            Ok(_) => assert!(
                Instant::now() < deadline,
                "the new clientConfig is not used"
            ),
            Err(error) => break error,
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let list = call(client, "GET", &ga, None).await.unwrap_err();
    let spec = json!({"cpu": 1, "memory": "1Gi", "image": "x", "diskGi": 10, "diskBus": "virtio"});
    let object = vm(&format!("{group}/v1"), "unreachable", namespace, spec);
    let create = call(client, "POST", &ga, Some(&object)).await.unwrap_err();
    let dial = "Post \"https://127.0.0.1:1/convert?timeout=30s\": dial tcp 127.0.0.1:1: connect: \
                connection refused";
    match api {
        CrdVersion::V1 => {
            let failed = |from: &str| {
                format!("conversion webhook for {group}/{from}, Kind=VirtualMachine failed: {dial}")
            };
            assert_status(&get, 500, "", &failed("v1alpha1"));
            if let Server::Real(_) = server {
                // v1.36's watch cache of the changed CRD cannot fill itself: lists are told to
                // retry. (A CRD created with the unreachable URL answers lists like gets.)
                let message = format!(
                    "storage is (re)initializing: failed to list {group}/v1, Kind=VirtualMachine: {}",
                    failed("v1alpha1")
                );
                assert_status(&list, 429, "TooManyRequests", &message);
            } else {
                assert_status(&list, 500, "", &failed("v1alpha1"));
            }
            assert_status(&create, 500, "", &failed("v1"));
        }
        CrdVersion::V1beta1 => {
            let message =
                format!("calling to conversion webhook failed for virtualmachines.{group}: {dial}");
            for error in [&get, &list, &create] {
                assert_status(error, 500, "", &message);
            }
        }
    }
}

fn assert_status(error: &Error, code: u16, reason: &str, message: &str) {
    let Error::Api { status, .. } = error else {
        panic!("not a Status: {error:?}");
    };
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (code, reason, message)
    );
}

/// What a failing webhook (an error answer, then an unreachable URL) does to reads and writes in
/// the other version; the storage version keeps working.
async fn failures(client: &Client, group: &str, namespace: &str, api: CrdVersion) {
    let (alpha, ga) = (
        format!("/apis/{group}/v1alpha1/namespaces/{namespace}/virtualmachines"),
        format!("/apis/{group}/v1/namespaces/{namespace}/virtualmachines"),
    );
    let spec = json!({"cpu": 1, "memory": "1Gi", "image": "x", "diskGi": 10, "diskBus": "virtio"});
    let mut refused = vm(
        &format!("{group}/v1alpha1"),
        "refused",
        namespace,
        spec.clone(),
    );
    refused["metadata"]["labels"] = json!({"refuse": "conversion"});
    call(client, "POST", &alpha, Some(&refused)).await.unwrap();
    for path in [format!("{ga}/refused"), ga.clone()] {
        let error = call(client, "GET", &path, None).await.unwrap_err();
        assert_refused(&error, &format!("{group}/v1alpha1"), api);
    }
    let mut ga_refused = vm(&format!("{group}/v1"), "refused-ga", namespace, spec);
    ga_refused["metadata"]["labels"] = json!({"refuse": "conversion"});
    let error = call(client, "POST", &ga, Some(&ga_refused))
        .await
        .unwrap_err();
    eprintln!("refusing webhook, create: {error:?}");
    let stored = call(client, "GET", &format!("{alpha}/refused"), None).await;
    assert!(stored.is_ok(), "{stored:?}");
}

/// A 500 without a reason; v1.36 names the version converted from and quotes the webhook's
/// message, v1.15 prints the request's objects and the whole review answer (Go's `%v`).
fn assert_refused(error: &Error, from: &str, api: CrdVersion) {
    let Error::Api { status, .. } = error else {
        panic!("not a Status: {error:?}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (500, ""),
        "{status:?}"
    );
    match api {
        CrdVersion::V1 => assert_eq!(
            status.message,
            format!(
                "conversion webhook for {from}, Kind=VirtualMachine failed: the test refuses \
                 to convert this object"
            )
        ),
        CrdVersion::V1beta1 => {
            assert!(
                status
                    .message
                    .starts_with("conversion request failed for &{map[apiVersion:"),
                "{}",
                status.message
            );
            assert!(
                status.message.contains(
                    "Status:Failure,Message:the test refuses to convert this object,\
                     Reason:ConversionFailed,"
                ),
                "{}",
                status.message
            );
        }
    }
}
