//! Patches and server-side applies of the VirtualMachine in v1 (`authorizedKeys`) and v1alpha1
//! (`sshKeys`, the storage version), part of [`crate::conversion`]'s scenario on the test server
//! and on the real ones: a patch applies to the object in the version it names, and each
//! `managedFields` entry stays in the version its manager wrote through, with that version's
//! field names; appliers of different versions conflict on what both spell alike (`diskBus`).
//!
//! v1.15 has no server-side apply (alpha, off) and no `managedFields`: there only the merge and
//! JSON patches run.

use bytes::Bytes;
use kubegen_client::{Client, Error};
use kubegen_runtime::crds::CrdVersion;
use serde_json::{Value, json};

use crate::conversion::{Server, call, vm};

const ALICE: &str = "ssh-ed25519 AAAA alice";
const BOB: &str = "ssh-ed25519 BBBB bob";
const CAROL: &str = "ssh-ed25519 CCCC carol";
const EVE: &str = "ssh-ed25519 EEEE eve";

async fn patch(
    client: &Client,
    path: &str,
    content_type: &str,
    body: &Value,
) -> Result<Value, Error> {
    let request = http::Request::builder()
        .method("PATCH")
        .uri(path)
        .header("accept", "application/json")
        .header("content-type", content_type)
        .body(Bytes::from(body.to_string()))
        .unwrap();
    client.request_json(request).await
}

/// `(manager, operation, apiVersion, fieldsV1)` of each entry, sorted by manager and version
/// (entries written within one second sort by name on both servers, later ones by time).
fn managers(object: &Value) -> Vec<(String, String, String, Value)> {
    let mut entries: Vec<_> = object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let text = |key: &str| entry[key].as_str().unwrap().to_owned();
            let fields = entry["fieldsV1"].clone();
            (
                text("manager"),
                text("operation"),
                text("apiVersion"),
                fields,
            )
        })
        .collect();
    entries.sort_by(|a, b| (&a.0, &a.2).cmp(&(&b.0, &b.2)));
    entries
}

fn entry(
    manager: &str,
    operation: &str,
    api_version: &str,
    spec: Value,
) -> (String, String, String, Value) {
    let fields = json!({"f:spec": spec});
    (manager.into(), operation.into(), api_version.into(), fields)
}

fn assert_status(error: &Error, code: u16, message: &str) {
    let Error::Api { status, .. } = error else {
        panic!("not a Status: {error:?}");
    };
    let reason = if code == 409 { "Conflict" } else { "" };
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (code, reason, message)
    );
}

/// Merge and JSON patches in v1 of an object stored as v1alpha1, then (where the server has
/// server-side apply) appliers in both versions.
pub(crate) async fn patches(client: &Client, group: &str, namespace: &str, server: Server) {
    let collection =
        |version: &str| format!("/apis/{group}/{version}/namespaces/{namespace}/virtualmachines");
    let (alpha, ga) = (collection("v1alpha1"), collection("v1"));
    let (v1alpha1, v1) = (format!("{group}/v1alpha1"), format!("{group}/v1"));
    let spec = json!({"cpu": 2, "memory": "4Gi", "image": "debian:13", "diskGi": 10,
                      "diskBus": "scsi", "sshKeys": [ALICE]});
    let written = vm(&v1alpha1, "patched", namespace, spec);
    let path = format!("{alpha}?fieldManager=creator");
    call(client, "POST", &path, Some(&written)).await.unwrap();
    let merge = json!({"spec": {"authorizedKeys": [CAROL], "cpu": 3}});
    let path = format!("{ga}/patched?fieldManager=patcher");
    let patched = patch(client, &path, "application/merge-patch+json", &merge)
        .await
        .unwrap();
    assert_eq!(patched["apiVersion"], json!(v1));
    assert_eq!(
        (&patched["spec"]["authorizedKeys"], &patched["spec"]["cpu"]),
        (&json!([CAROL]), &json!(3))
    );
    let add = json!([{"op": "add", "path": "/spec/authorizedKeys/-", "value": EVE}]);
    let path = format!("{ga}/patched?fieldManager=jsonpatcher");
    patch(client, &path, "application/json-patch+json", &add)
        .await
        .unwrap();
    let cpu = json!({"spec": {"cpu": 4}});
    let path = format!("{alpha}/patched?fieldManager=patcher");
    let read = patch(client, &path, "application/merge-patch+json", &cpu)
        .await
        .unwrap();
    assert_eq!(read["spec"]["sshKeys"], json!([CAROL, EVE]));
    assert_eq!(read["spec"].get("authorizedKeys"), None);
    if let Server::Real(CrdVersion::V1beta1) = server {
        return;
    }
    // Update managers are one per version: `patcher` has an entry in each, and each entry lost
    // what later writes changed in its own version's spelling.
    let creator = json!({".": {}, "f:diskBus": {}, "f:diskGi": {}, "f:image": {},
                         "f:memory": {}, "f:sshKeys": {}});
    assert_eq!(
        managers(&read),
        [
            entry("creator", "Update", &v1alpha1, creator),
            entry(
                "jsonpatcher",
                "Update",
                &v1,
                json!({"f:authorizedKeys": {format!("v:{EVE:?}"): {}}})
            ),
            entry(
                "patcher",
                "Update",
                &v1,
                json!({"f:authorizedKeys": {format!("v:{CAROL:?}"): {}}})
            ),
            entry("patcher", "Update", &v1alpha1, json!({"f:cpu": {}})),
        ]
    );
    applies(client, (&alpha, &ga), (&v1alpha1, &v1)).await;
}

/// Two appliers, `ga` in v1 and `alpha` in v1alpha1, of one object.
async fn applies(client: &Client, (alpha, ga): (&str, &str), (v1alpha1, v1): (&str, &str)) {
    let config = |api_version: &str, spec: Value| {
        json!({"apiVersion": api_version, "kind": "VirtualMachine",
               "metadata": {"name": "applied"}, "spec": spec})
    };
    let apply = |path: String, config: Value| async move {
        patch(client, &path, "application/apply-patch+yaml", &config).await
    };
    let ga_path = format!("{ga}/applied?fieldManager=ga");
    let alpha_path = format!("{alpha}/applied?fieldManager=alpha");
    let base = json!({"cpu": 2, "memory": "4Gi", "image": "debian:13", "diskGi": 10});
    let with = |bus: &str, keys: &[&str]| {
        let mut spec = base.clone();
        spec["diskBus"] = json!(bus);
        if !keys.is_empty() {
            spec["authorizedKeys"] = json!(keys);
        }
        spec
    };
    let created = apply(ga_path.clone(), config(v1, with("scsi", &[ALICE])))
        .await
        .unwrap();
    let alice = json!({format!("v:{ALICE:?}"): {}});
    let owned =
        json!({"f:cpu": {}, "f:diskBus": {}, "f:diskGi": {}, "f:image": {}, "f:memory": {}});
    let mut ga_fields = owned.clone();
    ga_fields["f:authorizedKeys"] = alice;
    assert_eq!(
        managers(&created),
        [entry("ga", "Apply", v1, ga_fields.clone())]
    );
    // Another manager applies the renamed field in the storage version: each owns its key.
    let second = config(v1alpha1, json!({"diskBus": "scsi", "sshKeys": [BOB]}));
    let shared = apply(alpha_path.clone(), second.clone()).await.unwrap();
    assert_eq!(shared["spec"]["sshKeys"], json!([ALICE, BOB]));
    let bob = json!({format!("v:{BOB:?}"): {}});
    let alpha_fields = json!({"f:diskBus": {}, "f:sshKeys": bob.clone()});
    assert_eq!(
        managers(&shared),
        [
            entry("alpha", "Apply", v1alpha1, alpha_fields),
            entry("ga", "Apply", v1, ga_fields),
        ]
    );
    // Changing the field both own conflicts, from either version.
    let error = apply(ga_path.clone(), config(v1, with("sata", &[ALICE])))
        .await
        .unwrap_err();
    assert_status(
        &error,
        409,
        "Apply failed with 1 conflict: conflict with \"alpha\": .spec.diskBus",
    );
    let bus = format!("{alpha}/applied?fieldManager=bus");
    let error = apply(bus, config(v1alpha1, json!({"diskBus": "sata"})))
        .await
        .unwrap_err();
    let both = "Apply failed with 2 conflicts: conflicts with \"alpha\":\n- .spec.diskBus\n\
                conflicts with \"ga\":\n- .spec.diskBus";
    assert_status(&error, 409, both);
    // A second apply of `alpha` prunes what it applied before: the server converts the object
    // with only v1alpha1's owned fields to v1 to add back `ga`'s, a *partial* object the
    // generated conversion must take (a missing required field is its zero value, as in Go).
    let again = apply(alpha_path, second).await.unwrap();
    assert_eq!(again["spec"], shared["spec"]);
    assert_eq!(managers(&again), managers(&shared));
    // `ga` (whose fields convert alone) forces the bus over, then stops applying its key.
    let forced = format!("{ga_path}&force=true");
    apply(forced, config(v1, with("sata", &[ALICE])))
        .await
        .unwrap();
    let last = apply(ga_path, config(v1, with("sata", &[]))).await.unwrap();
    assert_eq!(
        (&last["spec"]["authorizedKeys"], &last["spec"]["diskBus"]),
        (&json!([BOB]), &json!("sata"))
    );
    assert_eq!(
        managers(&last),
        [
            entry("alpha", "Apply", v1alpha1, json!({"f:sshKeys": bob})),
            entry("ga", "Apply", v1, owned),
        ]
    );
}
