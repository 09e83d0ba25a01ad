//! The validation and defaulting markers of `apis/cloudnative/v1alpha1` (the VirtualMachine uses
//! every one) on the real API server `KUBEGEN_E2E_KUBECONFIG` names: the generated CRD is
//! installed, a valid object is accepted and each invalid one gets the server's 422.
//!
//! The expected answers were recorded from a real v1.36.2 (apiextensions.k8s.io/v1, the
//! `deploy/crd.yaml` CRD) and a real v1.15 (the `deploy/crd-v1beta1.yaml` CRD, which has no CEL
//! rules, sets or defaults: those objects are accepted there). The same cases run on the
//! in-process test server (the tests without `_on_cluster`), which must answer as v1.36 does.
//!
//! Invalid objects are sent with `dryRun=All` to the `default` namespace, so nothing is stored.

use kubegen_runtime::crds::CrdVersion;
use std::time::{Duration, Instant};

use bytes::Bytes;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachineSpec};
use kubegen_client::{Client, Error};
use serde_json::{Value, json};

/// One invalid object and the server's answer to it.
struct Case {
    /// The marker the object breaks.
    marker: &'static str,
    /// Merged into [`valid_spec`] to make the invalid object.
    spec: &'static str,
    /// HTTP status code (the same on both servers).
    code: u16,
    /// v1.36's `Status.message` for an object named `bad`.
    message: &'static str,
    /// v1.15's last lines of `Status.message` (after `validation failure list:`), or `None` when the
    /// v1beta1 CRD cannot carry the check and 1.15 accepts the object.
    message_1_15: Option<&'static str>,
}

const PREFIX: &str = "VirtualMachine.cloudnative.example.com \"bad\" is invalid: ";
/// What v1.36 appends when a schema error stops it before the CEL rules.
const NOT_CHECKED: &str = "<nil>: Invalid value: null: some validation rules were not checked \
because the object was invalid; correct the existing errors to complete validation";

const CASES: &[Case] = &[
    Case {
        marker: "Minimum",
        spec: r#"{"cpu": 0}"#,
        code: 422,
        message: "spec.cpu: Invalid value: 0: spec.cpu in body should be greater than or equal to 1",
        message_1_15: Some("spec.cpu in body should be greater than or equal to 1"),
    },
    Case {
        marker: "Maximum",
        spec: r#"{"cpu": 129}"#,
        code: 422,
        message: "spec.cpu: Invalid value: 129: spec.cpu in body should be less than or equal to 128",
        message_1_15: Some("spec.cpu in body should be less than or equal to 128"),
    },
    Case {
        marker: "ExclusiveMinimum",
        spec: r#"{"cpuShare": 0}"#,
        code: 422,
        message: "spec.cpuShare: Invalid value: 0: spec.cpuShare in body should be greater than 0",
        message_1_15: Some("spec.cpuShare in body should be greater than 0"),
    },
    Case {
        marker: "ExclusiveMaximum",
        spec: r#"{"cpuShare": 4}"#,
        code: 422,
        message: "spec.cpuShare: Invalid value: 4: spec.cpuShare in body should be less than 4",
        message_1_15: Some("spec.cpuShare in body should be less than 4"),
    },
    Case {
        marker: "MinLength",
        spec: r#"{"hostname": ""}"#,
        code: 422,
        message: "spec.hostname: Invalid value: \"\": spec.hostname in body should be at least 1 chars long",
        // 1.15 reads an empty string as null (fixed in 1.16) and says so first.
        message_1_15: Some(
            "spec.hostname in body must be of type string: \"null\"\n\
             spec.hostname in body should be at least 1 chars long",
        ),
    },
    Case {
        marker: "MaxLength",
        spec: r#"{"hostname": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#,
        code: 422,
        message: "[spec.hostname: Too long: may not be more than 63 bytes, NOT_CHECKED]",
        message_1_15: Some("spec.hostname in body should be at most 63 chars long"),
    },
    Case {
        marker: "Pattern",
        spec: r#"{"hostname": "VM_1"}"#,
        code: 422,
        message: "spec.hostname: Invalid value: \"VM_1\": spec.hostname in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
        message_1_15: Some("spec.hostname in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"),
    },
    Case {
        marker: "Format",
        spec: r#"{"owner": "nobody"}"#,
        code: 422,
        message: "[spec.owner: Invalid value: \"nobody\": spec.owner in body must be of type email: \"nobody\", NOT_CHECKED]",
        message_1_15: Some("spec.owner in body must be of type email: \"nobody\""),
    },
    Case {
        marker: "Enum",
        spec: r#"{"diskBus": "ide"}"#,
        code: 422,
        message: "[spec.diskBus: Unsupported value: \"ide\": supported values: \"virtio\", \"scsi\", \"sata\", NOT_CHECKED]",
        message_1_15: Some("spec.diskBus in body should be one of [virtio scsi sata]"),
    },
    Case {
        marker: "MinItems",
        spec: r#"{"sshKeys": []}"#,
        code: 422,
        message: "spec.sshKeys: Invalid value: 0: spec.sshKeys in body should have at least 1 items",
        message_1_15: Some("spec.sshKeys in body should have at least 1 items"),
    },
    Case {
        marker: "MaxItems",
        spec: r#"{"sshKeys": ["a", "b", "c", "d", "e", "f", "g", "h", "i"]}"#,
        code: 422,
        message: "[spec.sshKeys: Too many: 9: must have at most 8 items, NOT_CHECKED]",
        message_1_15: Some("spec.sshKeys in body should have at most 8 items"),
    },
    Case {
        marker: "UniqueItems",
        spec: r#"{"sshKeys": ["a", "a"]}"#,
        code: 422,
        message: "spec.sshKeys[1]: Duplicate value: \"a\"",
        message_1_15: None,
    },
    Case {
        marker: "XValidation",
        spec: r#"{"cpu": 65, "diskBus": "sata"}"#,
        code: 422,
        message: "spec.diskBus: Forbidden: disk bus sata supports at most 64 CPUs",
        message_1_15: None,
    },
];

/// The transition rule `self >= oldSelf` on `diskGi`: v1.36's answer to shrinking it from 20 to 5.
const SHRINK_MESSAGE: &str = "VirtualMachine.cloudnative.example.com \"vm\" is invalid: \
spec.diskGi: Invalid value: 5: diskGi may grow but not shrink";

/// A spec every marker accepts.
fn valid_spec() -> Value {
    json!({
        "cpu": 2, "memory": "4Gi", "image": "debian-13", "hostname": "vm-1",
        "sshKeys": ["ssh-ed25519 AAAA"], "diskBus": "virtio", "diskGi": 20, "cpuShare": 0.5,
        "owner": "ops@example.com",
    })
}

fn object(name: &str, namespace: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "cloudnative.example.com/v1alpha1",
        "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    })
}

/// `valid_spec()` with the case's fields over it.
fn invalid_object(case: &Case) -> Value {
    let mut spec = valid_spec();
    let changes: Value = serde_json::from_str(case.spec).unwrap();
    for (key, value) in changes.as_object().unwrap() {
        spec[key] = value.clone();
    }
    object("bad", "default", spec)
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

async fn call(
    client: &Client,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, Error> {
    client.request_json(request(method, path, body)).await
}

/// The VirtualMachine CRD of the generated manifest for `api`, as JSON.
fn generated_crd(api: CrdVersion) -> Value {
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
    serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(document).unwrap()).unwrap()
}

/// A client of the real cluster with the generated VirtualMachine CRD installed (replacing an
/// older one).
async fn cluster() -> (Client, CrdVersion) {
    let client = kubegen_e2e_support::cluster_client().await;
    // v1 CRDs (1.16+), or only v1beta1 (1.15), as discovery says.
    let api = kubegen_runtime::crds::served_version(&client)
        .await
        .unwrap();
    install(&client, api).await;
    (client, api)
}

async fn install(client: &Client, api: CrdVersion) {
    let mut crd = generated_crd(api);
    // The manifest converts through the vm-controller's webhook Service, which no test runs on
    // the cluster. This CRD outlives the test, and a conversion nobody answers would stop the
    // namespace controller (it lists every resource of a namespace it deletes) cluster-wide:
    // `None` instead; the conversion tests install their own CRD with a webhook they serve.
    crd["spec"]["conversion"] = json!({"strategy": "None"});
    let version = crd["apiVersion"].as_str().unwrap().to_owned();
    let collection = format!("/apis/{version}/customresourcedefinitions");
    let path = format!("{collection}/virtualmachines.cloudnative.example.com");
    match call(client, "GET", &path, None).await {
        Ok(existing) if existing["spec"] == crd["spec"] => {}
        Ok(existing) => {
            crd["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"].clone();
            call(client, "PUT", &path, Some(&crd)).await.unwrap();
        }
        Err(error) if error.is_not_found() => {
            call(client, "POST", &collection, Some(&crd)).await.unwrap();
        }
        Err(error) => panic!("get CRD: {error}"),
    }
    // The server serves a new schema a moment after it stored it: wait for the first check.
    let deadline = Instant::now() + Duration::from_secs(30);
    while create(client, &invalid_object(&CASES[0]), true)
        .await
        .is_ok()
    {
        assert!(
            Instant::now() < deadline,
            "the new CRD schema is not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn create(client: &Client, object: &Value, dry_run: bool) -> Result<Value, Error> {
    let namespace = object["metadata"]["namespace"].as_str().unwrap();
    let query = if dry_run { "?dryRun=All" } else { "" };
    let path = format!(
        "/apis/cloudnative.example.com/v1alpha1/namespaces/{namespace}/virtualmachines{query}"
    );
    call(client, "POST", &path, Some(object)).await
}

/// Checks the valid object and the case of `marker` on the real cluster.
async fn check_marker(marker: &str) {
    let (client, api) = cluster().await;
    check_marker_on(&client, api, marker).await;
}

/// A test server with the generated v1 VirtualMachine CRD installed.
async fn test_server() -> (kubegen_testserver::TestServer, Client) {
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    install(&client, CrdVersion::V1).await;
    (server, client)
}

/// Every case on the test server gets v1.36's answer.
#[tokio::test]
async fn every_marker_case_on_the_test_server() {
    let (_server, client) = test_server().await;
    for case in CASES {
        check_marker_on(&client, CrdVersion::V1, case.marker).await;
    }
}

/// Checks the valid object and the case of `marker` with a client of a server serving `api`.
async fn check_marker_on(client: &Client, api: CrdVersion, marker: &str) {
    let valid = object("bad", "default", valid_spec());
    create(client, &valid, true)
        .await
        .expect("the valid object is accepted");
    let case = CASES.iter().find(|case| case.marker == marker).unwrap();
    let answer = create(client, &invalid_object(case), true).await;
    match (api, case.message_1_15) {
        (CrdVersion::V1beta1, None) => {
            answer.expect("1.15 has no such check: the object is accepted");
        }
        (CrdVersion::V1beta1, Some(line)) => {
            let error = answer.expect_err("rejected");
            assert_eq!(error.code(), Some(case.code), "{error}");
            let message = &error.status().unwrap().message;
            let tail = format!("validation failure list:\n{line}");
            assert!(message.ends_with(&tail), "{message}");
        }
        (CrdVersion::V1, _) => {
            let error = answer.expect_err("rejected");
            assert_eq!(error.code(), Some(case.code), "{error}");
            let status = error.status().unwrap();
            assert_eq!(status.reason, "Invalid");
            let expected = format!(
                "{PREFIX}{}",
                case.message.replace("NOT_CHECKED", NOT_CHECKED)
            );
            assert_eq!(status.message, expected, "{marker}");
        }
    }
}

macro_rules! marker_tests {
    ($($name:ident => $marker:literal,)*) => {$(
        #[tokio::test]
        #[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
        async fn $name() {
            check_marker($marker).await;
        }
    )*};
}

marker_tests! {
    minimum_on_cluster => "Minimum",
    maximum_on_cluster => "Maximum",
    exclusive_minimum_on_cluster => "ExclusiveMinimum",
    exclusive_maximum_on_cluster => "ExclusiveMaximum",
    min_length_on_cluster => "MinLength",
    max_length_on_cluster => "MaxLength",
    pattern_on_cluster => "Pattern",
    format_on_cluster => "Format",
    enum_on_cluster => "Enum",
    min_items_on_cluster => "MinItems",
    max_items_on_cluster => "MaxItems",
    unique_items_on_cluster => "UniqueItems",
    x_validation_message_expression_on_cluster => "XValidation",
}

#[test]
fn every_case_names_a_marker_once_and_starts_from_a_valid_spec() {
    let mut markers: Vec<&str> = CASES.iter().map(|case| case.marker).collect();
    markers.sort_unstable();
    markers.dedup();
    assert_eq!(markers.len(), CASES.len());
    for case in CASES {
        assert_ne!(
            invalid_object(case)["spec"],
            valid_spec(),
            "{}",
            case.marker
        );
    }
}

/// `Default::default()` of the generated spec gives the `+kubegen:default=` values.
#[test]
fn generated_default_gives_the_declared_defaults() {
    let spec = VirtualMachineSpec::default();
    assert_eq!(
        (spec.cpu, spec.disk_bus.as_str(), spec.disk_gi),
        (1, "virtio", 10)
    );
    assert_eq!((spec.hostname, spec.cpu_share), (None, None));
}

/// A namespace of its own for the tests that store objects.
async fn namespace(client: &Client, name: &str) -> String {
    let name = format!("{name}-{}", std::process::id());
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    call(client, "POST", "/api/v1/namespaces", Some(&body))
        .await
        .unwrap();
    name
}

async fn delete_namespace(client: &Client, name: &str) {
    call(
        client,
        "DELETE",
        &format!("/api/v1/namespaces/{name}"),
        None,
    )
    .await
    .unwrap();
}

/// v1.36 fills in what the object leaves out exactly as `Default` does in Rust; 1.15 (no
/// defaults in v1beta1) stores what the typed client sends, which `Default` filled in.
#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn default_on_cluster() {
    let (client, api) = cluster().await;
    let ns = namespace(&client, "kubegen-markers-default").await;
    let expected = VirtualMachineSpec {
        memory: Quantity("1Gi".into()),
        image: "debian-13".into(),
        ..VirtualMachineSpec::default()
    };
    let sent = match api {
        CrdVersion::V1 => object("vm", &ns, json!({"memory": "1Gi", "image": "debian-13"})),
        CrdVersion::V1beta1 => {
            let mut vm = object("vm", &ns, Value::Null);
            vm["spec"] = serde_json::to_value(&expected).unwrap();
            vm
        }
    };
    let stored = create(&client, &sent, false).await;
    delete_namespace(&client, &ns).await;
    let stored: VirtualMachine = serde_json::from_value(stored.unwrap()).unwrap();
    assert_eq!(stored.spec, expected);
}

/// The transition rule `self >= oldSelf`: growing the disk is accepted, shrinking it is a 422 on
/// v1.36; 1.15 has no CEL and accepts both.
#[tokio::test]
#[ignore = "needs a real cluster: set KUBEGEN_E2E_KUBECONFIG"]
async fn x_validation_transition_rule_on_cluster() {
    let (client, api) = cluster().await;
    let ns = namespace(&client, "kubegen-markers-transition").await;
    let result = shrink_after_grow(&client, &ns).await;
    delete_namespace(&client, &ns).await;
    let (grown, shrunk) = result.unwrap();
    assert_eq!(grown["spec"]["diskGi"], 30);
    match api {
        CrdVersion::V1 => {
            let error = shrunk.expect_err("shrinking is rejected");
            assert_eq!(error.code(), Some(422), "{error}");
            assert_eq!(error.status().unwrap().message, SHRINK_MESSAGE);
        }
        CrdVersion::V1beta1 => assert_eq!(shrunk.unwrap()["spec"]["diskGi"], 5),
    }
}

/// Creates `vm` with a 20 GiB disk, grows it to 30 (returned), then tries to shrink it to 5.
async fn shrink_after_grow(
    client: &Client,
    ns: &str,
) -> Result<(Value, Result<Value, Error>), Error> {
    let mut vm = create(client, &object("vm", ns, valid_spec()), false).await?;
    let path = format!("/apis/cloudnative.example.com/v1alpha1/namespaces/{ns}/virtualmachines/vm");
    vm["spec"]["diskGi"] = json!(30);
    let mut grown = call(client, "PUT", &path, Some(&vm)).await?;
    let reply = grown.clone();
    grown["spec"]["diskGi"] = json!(5);
    Ok((reply, call(client, "PUT", &path, Some(&grown)).await))
}

/// The test server fills in the CRD's defaults on create, and on read for an object stored
/// before the default existed.
#[tokio::test]
async fn default_on_the_test_server() {
    let (_server, client) = test_server().await;
    let ns = namespace(&client, "markers-default").await;
    let expected = VirtualMachineSpec {
        memory: Quantity("1Gi".into()),
        image: "debian-13".into(),
        ..VirtualMachineSpec::default()
    };
    let sent = object("vm", &ns, json!({"memory": "1Gi", "image": "debian-13"}));
    let stored: VirtualMachine =
        serde_json::from_value(create(&client, &sent, false).await.unwrap()).unwrap();
    assert_eq!(stored.spec, expected);

    // A default added to the schema shows on the objects stored before.
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/virtualmachines.cloudnative.example.com";
    let mut crd = call(&client, "GET", path, None).await.unwrap();
    // The CRD serves v1alpha1 and v1: the default goes into the version read below.
    let index = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|version| version["name"] == "v1alpha1")
        .unwrap();
    let properties =
        format!("/spec/versions/{index}/schema/openAPIV3Schema/properties/spec/properties");
    crd.pointer_mut(&format!("{properties}/image")).unwrap()["default"] = json!("debian-13");
    crd.pointer_mut(&format!("{properties}/hostname")).unwrap()["default"] = json!("vm-0");
    call(&client, "PUT", path, Some(&crd)).await.unwrap();
    let vm_path =
        format!("/apis/cloudnative.example.com/v1alpha1/namespaces/{ns}/virtualmachines/vm");
    let read = call(&client, "GET", &vm_path, None).await.unwrap();
    assert_eq!(read["spec"]["hostname"], "vm-0");
    let list_path =
        format!("/apis/cloudnative.example.com/v1alpha1/namespaces/{ns}/virtualmachines");
    let list = call(&client, "GET", &list_path, None).await.unwrap();
    assert_eq!(list["items"][0]["spec"]["hostname"], "vm-0");
}

/// The transition rule on the test server: growing is accepted, shrinking gets v1.36's 422.
#[tokio::test]
async fn x_validation_transition_rule_on_the_test_server() {
    let (_server, client) = test_server().await;
    let ns = namespace(&client, "markers-transition").await;
    let (grown, shrunk) = shrink_after_grow(&client, &ns).await.unwrap();
    assert_eq!(grown["spec"]["diskGi"], 30);
    let error = shrunk.expect_err("shrinking is rejected");
    assert_eq!(error.code(), Some(422), "{error}");
    assert_eq!(error.status().unwrap().message, SHRINK_MESSAGE);
}

/// Unknown fields are pruned from what the test server stores, as by a real v1.36.
#[tokio::test]
async fn unknown_fields_are_pruned_on_the_test_server() {
    let (_server, client) = test_server().await;
    let ns = namespace(&client, "markers-prune").await;
    let mut vm = object("vm", &ns, valid_spec());
    vm["spec"]["color"] = json!("blue");
    vm["extra"] = json!(1);
    let stored = create(&client, &vm, false).await.unwrap();
    assert_eq!(stored["spec"].get("color"), None);
    assert_eq!(stored.get("extra"), None);
}
