//! Requests of the tests that also run on a real cluster (`_on_cluster` twins): they go through
//! kubegen's client, which talks to the test server and to `KUBEGEN_E2E_KUBECONFIG`'s cluster
//! alike, where `common` speaks raw HTTP to the test server only.
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use kubegen_client::Client;
use serde_json::Value;

/// `(status code, body)` of one JSON request (an error's `Status` as the body).
pub(crate) async fn call(client: &Client, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap();
    match client.send(request).await {
        Ok(response) => {
            let code = response.status().as_u16();
            let bytes = response
                .into_body()
                .collect_limited(1 << 22)
                .await
                .unwrap_or_default();
            (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
        }
        // An error answer's `Status` comes back in the error.
        Err(error) => (
            error.code().unwrap_or(0),
            serde_json::to_value(error.status()).unwrap_or(Value::Null),
        ),
    }
}
