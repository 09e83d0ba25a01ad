//! ServiceAccount tokens end to end: TokenRequest issues a signed JWT with v1.36's claims, the
//! issuer's OpenID discovery publishes its key, TokenReview and request authentication check it.
//! Each expectation is what a v1.36.2 answered for the same requests (its tokens are RS256; ours
//! ES256, see the README's differences).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kubegen_testserver::{ServerOptions, TestServer, UserInfo};
use serde_json::{Value, json};

use crate::common::*;

const ADMIN: &str = "admin-token";
const ISSUER: &str = "https://kubernetes.default.svc";
const SA: &str = "/api/v1/namespaces/team/serviceaccounts";
const REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

fn options() -> ServerOptions {
    let mut options = ServerOptions::default();
    options.bearer_token = Some(ADMIN.into());
    options.tokens = vec![("nobody-token".into(), UserInfo::new("nobody", "", &[]))];
    options.rbac = true;
    options.controller_manager = false;
    options
}

/// An authenticating, RBAC server with namespace `team`, ServiceAccount `bot`, Pod `p` running
/// as `bot` on Node `n`, and Secret `s`.
async fn cluster_with(options: ServerOptions) -> Harness {
    let mut h = start_with(options).await;
    h.http.token = Some(ADMIN.into());
    for (path, body) in [
        ("/api/v1/namespaces", json!({"metadata": {"name": "team"}})),
        (SA, json!({"metadata": {"name": "bot"}})),
        ("/api/v1/nodes", json!({"metadata": {"name": "n"}})),
        (
            "/api/v1/namespaces/team/secrets",
            json!({"metadata": {"name": "s"}}),
        ),
        (
            "/api/v1/namespaces/team/pods",
            json!({"metadata": {"name": "p"}, "spec": {"serviceAccountName": "bot",
                   "nodeName": "n", "containers": [{"name": "c", "image": "nginx"}]}}),
        ),
    ] {
        let reply = h.http.post(path, body).await;
        assert_eq!(reply.code, 201, "{path}: {}", reply.body);
    }
    h
}

async fn request_token(h: &Harness, spec: Value) -> Reply {
    h.http
        .post(&format!("{SA}/bot/token"), json!({"spec": spec}))
        .await
}

async fn token(h: &Harness, spec: Value) -> String {
    let reply = request_token(h, spec).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    reply.body["status"]["token"].as_str().unwrap().to_string()
}

fn decode(token: &str, part: usize) -> Value {
    let text = token.split('.').nth(part).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text).unwrap()).unwrap()
}

async fn review(h: &Harness, token: &str, audiences: Option<Value>) -> Value {
    let mut spec = json!({"token": token});
    if let Some(audiences) = audiences {
        spec["audiences"] = audiences;
    }
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec});
    let reply = h.http.post(REVIEWS, body).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["kind"], "TokenReview");
    assert_eq!(reply.body["metadata"], json!({}));
    assert_eq!(reply.body["spec"], spec);
    reply.body["status"].clone()
}

fn uid(object: &Value) -> String {
    object["metadata"]["uid"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_token_request_returns_a_jwt_with_the_claims_v1_36_writes() {
    let h = cluster_with(options()).await;
    let account = uid(&h.http.get(&format!("{SA}/bot")).await.body);
    let jwt = token(&h, json!({})).await;
    let header = decode(&jwt, 0);
    assert_eq!(header["alg"], "ES256");
    let claims = decode(&jwt, 1);
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["exp"].as_i64().unwrap() - iat, 3600);
    assert_eq!(claims["nbf"].as_i64(), Some(iat));
    assert_eq!(claims["jti"].as_str().unwrap().len(), 36);
    assert_eq!(claims["aud"], json!([ISSUER]));
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], "system:serviceaccount:team:bot");
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "team", "serviceaccount": {"name": "bot", "uid": account}})
    );

    // Bound to a Pod on a Node: both named; asked for 3607 s (the kubelet), extended to a year
    // with `warnafter`, while the answer's expirationTimestamp stays at 3607 s.
    let pod = h.http.get("/api/v1/namespaces/team/pods/p").await.body;
    let node = h.http.get("/api/v1/nodes/n").await.body;
    let reply = request_token(
        &h,
        json!({"expirationSeconds": 3607, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}),
    )
    .await;
    assert_eq!(
        reply.body["spec"]["boundObjectRef"],
        json!({"kind": "Pod", "apiVersion": "v1", "name": "p"})
    );
    let claims = decode(reply.body["status"]["token"].as_str().unwrap(), 1);
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["exp"].as_i64().unwrap() - iat, 31_536_000);
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "team", "node": {"name": "n", "uid": uid(&node)},
               "pod": {"name": "p", "uid": uid(&pod)},
               "serviceaccount": {"name": "bot", "uid": account}, "warnafter": iat + 3607})
    );
}

#[tokio::test]
async fn token_request_refuses_what_v1_36_refuses() {
    let h = cluster_with(options()).await;
    let long = request_token(&h, json!({"expirationSeconds": 4_294_967_297_i64})).await;
    assert_status(&long, 422, "Invalid");
    assert_eq!(
        long.body["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
    );
    let bind = |kind: &str, api_version: &str, name: &str| json!({"boundObjectRef": {"kind": kind, "apiVersion": api_version, "name": name}});
    let cases = [
        (
            bind("ConfigMap", "v1", "x"),
            400,
            "cannot bind token to object of type /v1, Kind=ConfigMap",
        ),
        (
            bind("Pod", "apps/v1", "p"),
            400,
            "cannot bind token to object of type apps/v1, Kind=Pod",
        ),
        (bind("Pod", "v1", "nope"), 404, "pods \"nope\" not found"),
        (bind("Pod", "v1", ""), 400, "Name parameter required."),
    ];
    for (spec, code, message) in cases {
        let reply = request_token(&h, spec).await;
        assert_eq!(
            (reply.code, reply.body["message"].as_str()),
            (code, Some(message))
        );
    }
    let stale = request_token(
        &h,
        json!({"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "123"}}),
    )
    .await;
    assert_status(&stale, 409, "Conflict");
    assert_eq!(
        stale.body["message"],
        "Operation cannot be fulfilled on Pod \"p\": the UID in the bound object reference (123) does not match the UID in record. The object might have been deleted and then recreated"
    );
    assert_eq!(
        h.http
            .post(SA, json!({"metadata": {"name": "erin"}}))
            .await
            .code,
        201
    );
    let other = h
        .http
        .post(
            &format!("{SA}/erin/token"),
            json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}}),
        )
        .await;
    assert_status(&other, 400, "BadRequest");
    assert_eq!(
        other.body["message"],
        "cannot bind token for serviceaccount \"erin\" to pod running with different serviceaccount name."
    );
}

#[tokio::test]
async fn openid_discovery_publishes_the_key_that_verifies_tokens() {
    let h = cluster_with(options()).await;
    let jwt = token(&h, json!({})).await;
    let mut workload = Http::new(&h.server.url());
    workload.token = Some(jwt.clone());

    let config = workload.get("/.well-known/openid-configuration").await;
    assert_eq!(config.code, 200, "{}", config.text);
    assert_eq!(config.headers["content-type"], "application/json");
    assert_eq!(config.headers["cache-control"], "public, max-age=3600");
    assert_eq!(
        config.text,
        format!(
            r#"{{"issuer":"{ISSUER}","jwks_uri":"{}/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}}"#,
            h.server.url().trim_end_matches('/')
        )
    );

    let jwks = workload.get("/openid/v1/jwks/").await;
    assert_eq!(jwks.code, 200);
    assert_eq!(jwks.headers["content-type"], "application/jwk-set+json");
    let key = &jwks.body["keys"][0];
    assert_eq!(
        (&key["use"], &key["kty"], &key["crv"], &key["alg"]),
        (
            &json!("sig"),
            &json!("EC"),
            &json!("P-256"),
            &json!("ES256")
        )
    );
    assert_eq!(key["kid"], decode(&jwt, 0)["kid"]);

    // A relying party verifies the token with nothing but the JWKS.
    let coordinate = |c: &str| URL_SAFE_NO_PAD.decode(key[c].as_str().unwrap()).unwrap();
    let mut point = vec![4u8];
    point.extend(coordinate("x"));
    point.extend(coordinate("y"));
    let (signed, signature) = jwt.rsplit_once('.').unwrap();
    let public =
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point);
    let signature = URL_SAFE_NO_PAD.decode(signature).unwrap();
    assert!(public.verify(signed.as_bytes(), &signature).is_ok());

    let mut nobody = Http::new(&h.server.url());
    nobody.token = Some("nobody-token".into());
    let denied = nobody.get("/openid/v1/jwks").await;
    assert_status(&denied, 403, "Forbidden");
    assert_eq!(
        denied.body["message"],
        "forbidden: User \"nobody\" cannot get path \"/openid/v1/jwks\""
    );
    let post = h.http.post("/openid/v1/jwks", json!({})).await;
    assert_status(&post, 405, "MethodNotAllowed");
}

#[tokio::test]
async fn token_review_answers_as_v1_36_for_valid_foreign_and_revoked_tokens() {
    let h = cluster_with(options()).await;
    let account = uid(&h.http.get(&format!("{SA}/bot")).await.body);
    let jwt = token(&h, json!({})).await;
    let jti = decode(&jwt, 1)["jti"].as_str().unwrap().to_string();
    assert_eq!(
        review(&h, &jwt, Some(json!([ISSUER, "x"]))).await,
        json!({"authenticated": true, "audiences": [ISSUER],
               "user": {"username": "system:serviceaccount:team:bot", "uid": account,
                        "groups": ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
                        "extra": {"authentication.kubernetes.io/credential-id": [format!("JTI={jti}")]}}})
    );
    assert_eq!(
        review(&h, &jwt, Some(json!(["x"]))).await,
        json!({"user": {}, "error": "[invalid bearer token, token audiences [\"https://kubernetes.default.svc\"] is invalid for the target audiences [\"x\"]]"})
    );
    let a1 = token(&h, json!({"audiences": ["a1"]})).await;
    assert_eq!(
        review(&h, &a1, None).await["error"],
        "[invalid bearer token, token audiences [\"a1\"] is invalid for the target audiences [\"https://kubernetes.default.svc\"]]"
    );
    assert_eq!(
        review(&h, "abc.def.ghi", None).await,
        json!({"user": {}, "error": "invalid bearer token"})
    );
    // A static token is good for the API audience only (v1.36, its tokens.csv admin).
    assert_eq!(
        review(&h, "nobody-token", Some(json!([ISSUER, "x"]))).await,
        json!({"authenticated": true, "audiences": [ISSUER],
               "user": {"username": "nobody", "groups": ["system:authenticated"]}})
    );
    assert_eq!(
        review(&h, "nobody-token", Some(json!(["x"]))).await,
        json!({"user": {}, "error": "invalid bearer token"})
    );

    // Bound to the Secret: deleting it revokes the token.
    let bound = token(
        &h,
        json!({"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}}),
    )
    .await;
    assert_eq!(review(&h, &bound, None).await["authenticated"], true);
    h.http.delete("/api/v1/namespaces/team/secrets/s").await;
    assert_eq!(
        review(&h, &bound, None).await["error"],
        "[invalid bearer token, service account token has been invalidated]"
    );

    // The token authenticates requests until its ServiceAccount is deleted.
    let mut workload = Http::new(&h.server.url());
    workload.token = Some(jwt.clone());
    assert_eq!(workload.get("/openid/v1/jwks").await.code, 200);
    h.http.delete(&format!("{SA}/bot")).await;
    assert_eq!(workload.get("/openid/v1/jwks").await.code, 401);
    assert_eq!(
        review(&h, &jwt, None).await["error"],
        "[invalid bearer token, serviceaccounts \"bot\" not found]"
    );
    let empty = h
        .http
        .post(
            REVIEWS,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}),
        )
        .await;
    assert_status(&empty, 400, "BadRequest");
    assert_eq!(
        empty.body["message"],
        "token is required for TokenReview in authentication"
    );
}

/// With a data directory the signing key is kept: a token from before a restart still works.
#[tokio::test]
async fn tokens_survive_a_restart_with_a_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let with_dir = || {
        let mut options = options();
        options.data_dir = Some(dir.path().to_path_buf());
        options
    };
    let h = cluster_with(with_dir()).await;
    let jwt = token(&h, json!({})).await;
    let Harness { server, .. } = h;
    server.stop().await;

    let second = TestServer::start_with(with_dir()).await;
    let mut workload = Http::new(&second.url());
    workload.token = Some(jwt);
    assert_eq!(workload.get("/openid/v1/jwks").await.code, 200);
}
