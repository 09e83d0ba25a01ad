//! Writes of the VirtualMachine in v1 (`authorizedKeys`), not the storage version, are
//! validated with v1's schema: the errors name v1's fields, on the test server as on the real
//! ones (part of [`crate::conversion`]'s scenario; `docs/crd-conversion-reference.md`).
//!
//! v1.15 words a schema error as one cause on the field `[]` listing kube-openapi's messages,
//! and cannot write `/status` in a version that is not the storage version (it answers 422
//! `apiVersion: Invalid value: ...: must be <group>/v1`): there only the field's name is checked.

use kubegen_client::{Client, Error};
use kubegen_runtime::crds::CrdVersion;
use serde_json::json;

use crate::conversion::{Server, call, vm};

/// The VirtualMachine has CEL rules: a blocking error (too many items, a wrong format) skips them.
const NOT_CHECKED: &str = "<nil>: Invalid value: null: some validation rules were not checked \
                           because the object was invalid; correct the existing errors to \
                           complete validation";

/// `(code, reason, message)` of a Status error.
fn status(error: &Error) -> (u16, String, String) {
    let Error::Api { status, .. } = error else {
        panic!("not a Status: {error:?}");
    };
    (status.code, status.reason.clone(), status.message.clone())
}

/// A create in v1 beyond `authorizedKeys`' `maxItems`, and a `/status` write in v1 with a
/// `startedAt` that is no date-time.
pub(crate) async fn validation(client: &Client, group: &str, namespace: &str, server: Server) {
    let ga = format!("/apis/{group}/v1/namespaces/{namespace}/virtualmachines");
    let keys: Vec<String> = (0..9).map(|i| format!("ssh-ed25519 KEY{i}")).collect();
    let spec = json!({"cpu": 1, "memory": "1Gi", "image": "x", "diskGi": 10,
                      "diskBus": "virtio", "authorizedKeys": keys});
    let object = vm(&format!("{group}/v1"), "too-many-keys", namespace, spec);
    let error = call(client, "POST", &ga, Some(&object)).await.unwrap_err();
    let (code, reason, message) = status(&error);
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    if let Server::Real(CrdVersion::V1beta1) = server {
        assert!(
            message.contains("spec.authorizedKeys in body should have at most 8 items"),
            "{message}"
        );
        return;
    }
    assert_eq!(
        message,
        format!(
            "VirtualMachine.{group} \"too-many-keys\" is invalid: [spec.authorizedKeys: Too \
             many: 9: must have at most 8 items, {NOT_CHECKED}]"
        )
    );
    // The status is validated against its own schema, in v1: `startedAt in body`.
    let patch = json!({"status": {"startedAt": "yesterday"}});
    let request = http::Request::builder()
        .method("PATCH")
        .uri(format!("{ga}/written-ga/status"))
        .header("accept", "application/json")
        .header("content-type", "application/merge-patch+json")
        .body(bytes::Bytes::from(patch.to_string()))
        .unwrap();
    let error = client
        .request_json::<serde_json::Value>(request)
        .await
        .unwrap_err();
    let (code, _, message) = status(&error);
    assert_eq!(
        (code, message.as_str()),
        (
            422,
            format!(
                "VirtualMachine.{group} \"written-ga\" is invalid: [status.startedAt: Invalid \
                 value: \"yesterday\": startedAt in body must be of type date-time: \
                 \"yesterday\", {NOT_CHECKED}]"
            )
            .as_str()
        )
    );
}
