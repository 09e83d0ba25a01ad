//! Bad input gets the real server's codes and Status bodies, never a panic or a dropped connection.

use crate::common::*;
use bytes::Bytes;
use serde_json::json;

#[tokio::test]
async fn malformed_json_is_a_bad_request() {
    let h = start().await;
    let reply = h
        .http
        .send("POST", CM, "application/json", "{not json".into())
        .await;
    assert_status(&reply, 400, "BadRequest");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .starts_with("couldn't get version/kind; json parse error")
    );
    let reply = h
        .http
        .send("POST", CM, "application/json", "[1,2]".into())
        .await;
    assert_status(&reply, 400, "BadRequest");
}

#[tokio::test]
async fn wrong_kind_or_api_version_for_the_url_is_a_bad_request() {
    let h = start().await;
    let mut wrong_kind = configmap("a", json!({}));
    wrong_kind["kind"] = json!("Secret");
    let reply = h.http.post(CM, wrong_kind).await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        reply.body["message"],
        "the kind in the data (Secret) does not match the expected kind (ConfigMap)"
    );
    let mut wrong_version = configmap("a", json!({}));
    wrong_version["apiVersion"] = json!("apps/v1");
    let reply = h.http.post(CM, wrong_version).await;
    assert_status(&reply, 400, "BadRequest");
}

#[tokio::test]
async fn missing_name_is_invalid_with_a_required_cause() {
    let h = start().await;
    let reply = h
        .http
        .post(
            CM,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
        )
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["details"],
        json!({"kind": "ConfigMap", "causes": [{"reason": "FieldValueRequired", "message": "Required value: name or generateName is required", "field": "metadata.name"}]})
    );
}

#[tokio::test]
async fn invalid_names_are_422_naming_the_field() {
    let h = start().await;
    let reply = h.http.post(CM, configmap("Bad_Name", json!({}))).await;
    assert_status(&reply, 422, "Invalid");
    assert!(reply.body["message"].as_str().unwrap().starts_with(
        "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
    ));
    assert_eq!(reply.body["details"]["name"], "Bad_Name");
    assert_eq!(reply.body["details"]["causes"][0]["field"], "metadata.name");
    let reply = h
        .http
        .post("/api/v1/namespaces", json!({"metadata": {"name": "a.b"}}))
        .await;
    assert_status(&reply, 422, "Invalid");
}

#[tokio::test]
async fn unknown_resources_get_the_generic_not_found_status() {
    let h = start().await;
    let reply = h.http.get("/api/v1/widgets").await;
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "the server could not find the requested resource", "reason": "NotFound",
               "details": {}, "code": 404})
    );
    let reply = h.http.get("/no/such/path").await;
    assert_eq!(reply.code, 404);
}

#[tokio::test]
async fn mismatched_namespace_or_name_is_a_bad_request() {
    let h = start().await;
    let mut other_ns = configmap("a", json!({}));
    other_ns["metadata"]["namespace"] = json!("kube-system");
    let reply = h.http.post(CM, other_ns).await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        reply.body["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    h.http.post(CM, configmap("a", json!({}))).await;
    let reply = h
        .http
        .put(&format!("{CM}/a"), configmap("b", json!({})))
        .await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        reply.body["message"],
        "the name of the object (b) does not match the name on the URL (a)"
    );
}

#[tokio::test]
async fn unsupported_methods_are_405() {
    let h = start().await;
    let reply = h
        .http
        .post(&format!("{CM}/a"), configmap("a", json!({})))
        .await;
    assert_status(&reply, 405, "MethodNotAllowed");
    let reply = h
        .http
        .delete("/apis/apps/v1/namespaces/default/deployments/x/status")
        .await;
    assert_status(&reply, 405, "MethodNotAllowed");
}

#[tokio::test]
async fn malformed_patches_are_bad_requests() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let reply = h
        .http
        .send(
            "PATCH",
            &format!("{CM}/a"),
            "application/json-patch+json",
            "{\"op\":1}".into(),
        )
        .await;
    assert_status(&reply, 400, "BadRequest");
    let reply = h
        .http
        .send(
            "PATCH",
            &format!("{CM}/a"),
            "application/merge-patch+json",
            "nope".into(),
        )
        .await;
    assert_status(&reply, 400, "BadRequest");
    let reply = h
        .http
        .send(
            "PATCH",
            &format!("{CM}/missing"),
            "application/merge-patch+json",
            "{}".into(),
        )
        .await;
    assert_status(&reply, 404, "NotFound");
}

#[tokio::test]
async fn invalid_query_numbers_are_bad_requests() {
    let h = start().await;
    assert_status(
        &h.http.get(&format!("{CM}?limit=abc")).await,
        400,
        "BadRequest",
    );
    assert_status(
        &h.http.get(&format!("{CM}?resourceVersion=abc")).await,
        400,
        "BadRequest",
    );
}

#[tokio::test]
async fn generate_name_with_a_multibyte_character_across_the_cut_is_invalid() {
    let h = start().await;
    // 57 ASCII bytes, then 'é' (2 bytes): the real server cuts the prefix at byte 58, inside 'é'.
    let prefix = format!("{}é", "a".repeat(57));
    let reply = h
        .http
        .post(CM, json!({"metadata": {"generateName": prefix}}))
        .await;
    assert_status(&reply, 422, "Invalid");
    let causes = reply.body["details"]["causes"].as_array().unwrap();
    let fields: Vec<&str> = causes
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["metadata.generateName", "metadata.name"]);
    assert!(causes[0]["message"].as_str().unwrap().starts_with(&format!(
        "Invalid value: \"{prefix}\": a lowercase RFC 1123 subdomain"
    )));
    // The cut byte reads as U+FFFD, as the real server's JSON encoder writes it.
    let name = reply.body["details"]["name"].as_str().unwrap();
    let generated = format!("{}\u{fffd}", "a".repeat(57));
    assert!(name.starts_with(&generated), "{name}");
    assert_eq!(name.chars().count(), 63);
    // The connection and the server are fine.
    assert_eq!(h.http.get(CM).await.code, 200);
}

#[tokio::test]
async fn invalid_generate_name_is_reported_besides_the_generated_name() {
    let h = start().await;
    let reply = h
        .http
        .post(CM, json!({"metadata": {"generateName": "Bad-"}}))
        .await;
    assert_status(&reply, 422, "Invalid");
    let causes = &reply.body["details"]["causes"];
    assert_eq!(causes[0]["field"], "metadata.generateName");
    assert!(
        causes[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid value: \"Bad-\": ")
    );
    assert_eq!(causes[1]["field"], "metadata.name");
    let name = reply.body["details"]["name"].as_str().unwrap();
    assert!(name.starts_with("Bad-") && name.len() == 9, "{name}");
    let reply = h
        .http
        .post(
            CM,
            json!({"metadata": {"generateName": "ok-", "name": "Bad_"}}),
        )
        .await;
    assert_eq!(reply.body["details"]["causes"].as_array().unwrap().len(), 1);
    let reply = h
        .http
        .post(CM, json!({"metadata": {"generateName": "web-"}}))
        .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
}

#[tokio::test]
async fn bodies_over_3_mib_are_too_large_for_writes_and_ignored_by_reads() {
    let h = start().await;
    let padding = "x".repeat(3 * 1024 * 1024);
    let huge = json!({"metadata": {"name": "huge"}, "data": {"x": padding}});
    let huge = Bytes::from(huge.to_string());
    for method in ["POST", "DELETE"] {
        let path = if method == "POST" {
            CM.to_string()
        } else {
            format!("{CM}/huge")
        };
        let reply = h
            .http
            .send(method, &path, "application/json", huge.clone())
            .await;
        assert_eq!(
            reply.body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Request entity too large: limit is 3145728",
                   "reason": "RequestEntityTooLarge", "code": 413}),
            "{method}"
        );
    }
    let reply = h.http.send("GET", CM, "application/json", huge).await;
    assert_eq!(reply.code, 200);
}

#[tokio::test]
async fn paths_under_an_unserved_group_get_the_plain_text_404() {
    let h = start().await;
    for path in ["/apis/nope", "/apis/nope/v1/things"] {
        let reply = h.http.send("GET", path, "", Bytes::new()).await;
        assert_eq!(reply.code, 404);
        assert_eq!(
            reply.headers["content-type"], "text/plain; charset=utf-8",
            "{path}"
        );
    }
}

#[tokio::test]
async fn query_numbers_follow_go_int64_parsing() {
    let h = start().await;
    assert_eq!(h.http.get(&format!("{CM}?limit=-1")).await.code, 200);
    let reply = h.http.get(&format!("{CM}?limit=9223372036854775808")).await;
    assert_status(&reply, 400, "BadRequest");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .ends_with("value out of range"),
        "{}",
        reply.body
    );
}
