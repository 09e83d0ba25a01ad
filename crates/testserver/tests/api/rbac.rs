//! Authentication (static and issued ServiceAccount tokens) and RBAC authorization over HTTP,
//! compared with what v1.36 (and v1.15, which words denials the same) answers.

use kubegen_testserver::{ServerOptions, UserInfo};
use serde_json::{Value, json};

use crate::common::*;

const ADMIN: &str = "admin-token";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const SA: &str = "/api/v1/namespaces/team/serviceaccounts";

/// A server with authentication and RBAC on, a `nobody` user and the `team` namespace with the
/// `bot` ServiceAccount; its client is the admin.
async fn secured() -> Harness {
    let mut options = ServerOptions::default();
    options.bearer_token = Some(ADMIN.into());
    options.tokens = vec![("nobody-token".into(), UserInfo::new("nobody", "", &[]))];
    options.rbac = true;
    let mut h = start_with(options).await;
    h.http.token = Some(ADMIN.into());
    assert_eq!(
        h.http
            .post("/api/v1/namespaces", json!({"metadata": {"name": "team"}}))
            .await
            .code,
        201
    );
    assert_eq!(
        h.http
            .post(SA, json!({"metadata": {"name": "bot"}}))
            .await
            .code,
        201
    );
    h
}

fn client_with(h: &Harness, token: &str) -> Http {
    let mut http = Http::new(&h.server.url());
    http.token = Some(token.into());
    http
}

async fn issue(h: &Harness) -> String {
    let reply = h
        .http
        .post(&format!("{SA}/bot/token"), json!({"spec": {}}))
        .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    reply.body["status"]["token"].as_str().unwrap().to_string()
}

fn assert_forbidden(reply: &Reply, message: &str, details: Value) {
    assert_status(reply, 403, "Forbidden");
    assert_eq!(reply.body["message"], message);
    assert_eq!(reply.body["details"], details);
}

#[tokio::test]
async fn missing_and_unknown_tokens_get_the_real_401_body() {
    let h = secured().await;
    let mut anonymous = Http::new(&h.server.url());
    for token in [None, Some("bogus".to_string())] {
        anonymous.token = token;
        let reply = anonymous.get("/api").await;
        assert_eq!(reply.code, 401);
        assert_eq!(
            reply.body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        );
    }
}

#[tokio::test]
async fn token_request_answers_like_the_real_server() {
    let h = secured().await;
    let reply = h
        .http
        .post(&format!("{SA}/bot/token"), json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 4000}}))
        .await;
    assert_eq!(reply.code, 201);
    let body = &reply.body;
    let account = h.http.get(&format!("{SA}/bot")).await.body;
    assert_eq!(
        (body["kind"].as_str(), body["apiVersion"].as_str()),
        (Some("TokenRequest"), Some("authentication.k8s.io/v1"))
    );
    assert_eq!(body["metadata"]["name"], "bot");
    assert_eq!(body["metadata"]["namespace"], "team");
    assert_eq!(body["metadata"]["uid"], account["metadata"]["uid"]);
    assert_eq!(
        body["spec"],
        json!({"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 4000, "boundObjectRef": null})
    );
    assert!(
        body["status"]["token"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );
    assert!(
        body["status"]["expirationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    let short = h
        .http
        .post(
            &format!("{SA}/bot/token"),
            json!({"spec": {"expirationSeconds": 10}}),
        )
        .await;
    assert_status(&short, 422, "Invalid");
    assert_eq!(
        short.body["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 10: may not specify a duration less than 10 minutes"
    );
    let missing = h
        .http
        .post(&format!("{SA}/nope/token"), json!({"spec": {}}))
        .await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(
        missing.body["message"],
        "serviceaccounts \"nope\" not found"
    );
    let no_ns = h
        .http
        .post(
            "/api/v1/namespaces/gone/serviceaccounts/bot/token",
            json!({"spec": {}}),
        )
        .await;
    assert_eq!(no_ns.body["message"], "namespaces \"gone\" not found");
    let get = h.http.get(&format!("{SA}/bot/token")).await;
    assert_status(&get, 405, "MethodNotAllowed");
}

/// kubectl (`create token`) sends the TokenRequest in protobuf.
#[tokio::test]
async fn token_request_reads_a_protobuf_body() {
    let h = secured().await;
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {}, "spec": {"expirationSeconds": 4000}});
    let body = kubegen_codec::encode_object(&request).unwrap();
    let reply = h
        .http
        .send(
            "POST",
            &format!("{SA}/bot/token"),
            "application/vnd.kubernetes.protobuf",
            body.into(),
        )
        .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["spec"]["expirationSeconds"], 4000);
    assert!(reply.body["status"]["token"].is_string());
}

#[tokio::test]
async fn an_issued_token_is_the_service_account_until_the_account_is_deleted() {
    let h = secured().await;
    let bot = client_with(&h, &issue(&h).await);
    let reply = bot
        .post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json!({"spec": {"resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "team"}}}))
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(reply.body["status"], json!({"allowed": false}));
    let denied = bot.get("/api/v1/namespaces/team/configmaps").await;
    assert_forbidden(
        &denied,
        r#"configmaps is forbidden: User "system:serviceaccount:team:bot" cannot list resource "configmaps" in API group "" in the namespace "team""#,
        json!({"kind": "configmaps"}),
    );
    assert_eq!(h.http.delete(&format!("{SA}/bot")).await.code, 200);
    assert_eq!(bot.get("/api").await.code, 401);
}

#[tokio::test]
async fn bindings_grant_access_and_the_reviews_answer_from_them() {
    let h = secured().await;
    let bot = client_with(&h, &issue(&h).await);
    let role = json!({"metadata": {"name": "cm"}, "rules": [{"verbs": ["list", "watch"], "apiGroups": [""], "resources": ["configmaps"]}]});
    assert_eq!(
        h.http
            .post(&format!("{RBAC}/namespaces/team/roles"), role)
            .await
            .code,
        201
    );
    let binding = json!({"metadata": {"name": "cm"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
                         "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "team"}]});
    assert_eq!(
        h.http
            .post(&format!("{RBAC}/namespaces/team/rolebindings"), binding)
            .await
            .code,
        201
    );
    assert_eq!(
        bot.get("/api/v1/namespaces/team/configmaps").await.code,
        200
    );
    let review = bot
        .post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json!({"spec": {"resourceAttributes": {"verb": "watch", "resource": "configmaps", "namespace": "team"}}}))
        .await;
    assert_eq!(
        review.body["status"],
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"cm/team\" of Role \"cm\" to ServiceAccount \"bot/team\""})
    );
    let rules = bot
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            json!({"spec": {"namespace": "team"}}),
        )
        .await;
    assert_eq!(
        rules.body["status"]["resourceRules"][2],
        json!({"verbs": ["list", "watch"], "apiGroups": [""], "resources": ["configmaps"]})
    );
    assert_eq!(
        bot.get("/api/v1/namespaces/default/configmaps").await.code,
        403
    );
}

#[tokio::test]
async fn every_kind_of_request_is_authorized_and_denials_are_worded_like_v1_36() {
    let h = secured().await;
    let nobody = client_with(&h, "nobody-token");
    assert_forbidden(
        &nobody.get("/api/v1/namespaces/default/configmaps/x").await,
        r#"configmaps "x" is forbidden: User "nobody" cannot get resource "configmaps" in API group "" in the namespace "default""#,
        json!({"name": "x", "kind": "configmaps"}),
    );
    assert_forbidden(
        &nobody
            .get("/apis/apps/v1/namespaces/default/deployments/web/status")
            .await,
        r#"deployments.apps "web" is forbidden: User "nobody" cannot get resource "deployments/status" in API group "apps" in the namespace "default""#,
        json!({"name": "web", "group": "apps", "kind": "deployments"}),
    );
    assert_forbidden(
        &nobody.get("/api/v1/nodes").await,
        r#"nodes is forbidden: User "nobody" cannot list resource "nodes" in API group "" at the cluster scope"#,
        json!({"kind": "nodes"}),
    );
    assert_forbidden(
        &nobody.get("/api/v1/configmaps?watch=true").await,
        r#"configmaps is forbidden: User "nobody" cannot watch resource "configmaps" in API group "" at the cluster scope"#,
        json!({"kind": "configmaps"}),
    );
    assert_forbidden(
        &nobody
            .get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
            .await,
        r#"selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "nobody" cannot list resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope"#,
        json!({"group": "authorization.k8s.io", "kind": "selfsubjectaccessreviews"}),
    );
    assert_forbidden(
        &nobody.get("/foo").await,
        r#"forbidden: User "nobody" cannot get path "/foo""#,
        json!({}),
    );
    // Allowed to every authenticated user by the bootstrap roles, as on a real server.
    for path in [
        "/healthz",
        "/version",
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps/v1",
        "/openapi/v2",
    ] {
        assert_eq!(nobody.get(path).await.code, 200, "{path}");
    }
    // A resource nobody serves is denied before it is looked up.
    assert_eq!(nobody.get("/apis/nope.io/v1/things").await.code, 403);
}

#[tokio::test]
async fn rbac_kinds_are_served_with_the_bootstrap_defaults() {
    let h = secured().await;
    let roles = h.http.get(&format!("{RBAC}/clusterroles")).await;
    assert_eq!(
        names(&roles.body),
        vec![
            "cluster-admin",
            "system:basic-user",
            "system:discovery",
            "system:public-info-viewer",
            "system:service-account-issuer-discovery"
        ]
    );
    let binding = h
        .http
        .get(&format!(
            "{RBAC}/clusterrolebindings/system:public-info-viewer"
        ))
        .await
        .body;
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"},
               {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:unauthenticated"}])
    );
    assert_eq!(
        binding["metadata"]["labels"],
        json!({"kubernetes.io/bootstrapping": "rbac-defaults"})
    );
}

#[tokio::test]
async fn the_default_server_serves_rbac_kinds_but_allows_everything() {
    let h = start().await;
    assert_eq!(h.http.get(&format!("{RBAC}/clusterroles")).await.code, 200);
    assert!(names(&h.http.get(&format!("{RBAC}/clusterroles")).await.body).is_empty());
    assert_eq!(h.http.get("/api/v1/nodes").await.code, 200);
}

#[tokio::test]
async fn self_subject_review_answers_for_an_issued_token() {
    let h = secured().await;
    let account = h.http.get(&format!("{SA}/bot")).await.body;
    let bot = client_with(&h, &issue(&h).await);
    let reply = bot
        .post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json!({}),
        )
        .await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.body["status"]["userInfo"],
        json!({"username": "system:serviceaccount:team:bot", "uid": account["metadata"]["uid"],
               "groups": ["system:serviceaccounts", "system:serviceaccounts:team",
                          "system:authenticated"]})
    );
}
