use http::HeaderValue;

use super::*;
use crate::options::ServerOptions;
use crate::registry::ResourceKey;
use serde_json::json;

fn headers(token: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        headers.insert(header::AUTHORIZATION, value);
    }
    headers
}

fn server_with_tokens() -> ApiServer {
    ApiServer::new(ServerOptions {
        tokens: vec![("t-alice".into(), UserInfo::new("alice", "42", &["dev"]))],
        ..ServerOptions::default()
    })
}

#[test]
fn without_tokens_everybody_is_the_admin() {
    let api = ApiServer::new(ServerOptions::default());
    assert_eq!(api.authenticate(&headers(None)).unwrap(), UserInfo::admin());
    assert_eq!(
        api.authenticate(&headers(Some("x"))).unwrap(),
        UserInfo::admin()
    );
}

#[test]
fn a_static_token_is_its_user_plus_system_authenticated() {
    let api = server_with_tokens();
    assert_eq!(
        api.authenticate(&headers(Some("t-alice"))).unwrap(),
        UserInfo::new("alice", "42", &["dev", "system:authenticated"])
    );
}

#[test]
fn missing_or_unknown_tokens_are_unauthorized() {
    let api = server_with_tokens();
    for token in [None, Some("nope")] {
        let e = api.authenticate(&headers(token)).unwrap_err();
        assert_eq!(
            (e.code, &*e.reason, e.message.as_str()),
            (401, "Unauthorized", "Unauthorized")
        );
    }
}

#[test]
fn the_admin_bearer_token_authenticates_as_admin() {
    let api = ApiServer::new(ServerOptions {
        bearer_token: Some("root".into()),
        ..ServerOptions::default()
    });
    assert_eq!(
        api.authenticate(&headers(Some("root"))).unwrap(),
        UserInfo::admin()
    );
    assert_eq!(
        api.authenticate(&headers(Some("other"))).unwrap_err().code,
        401
    );
}

/// A ServiceAccount `default/bot` with uid `u-bot`, and a token the server signed for it
/// expiring `lifetime` seconds from now.
fn account_and_token(api: &ApiServer, uid: &str, lifetime: i64) -> String {
    let accounts = ResourceKey::new("", "v1", "serviceaccounts");
    api.inner.storage.lock().store.insert(
        &accounts,
        ("default".into(), "bot".into()),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "bot", "namespace": "default", "uid": "u-bot"}}),
    );
    let now = Timestamp::now().as_second();
    let claims = json!({"aud": ["https://kubernetes.default.svc"], "exp": now + lifetime,
        "iat": now - 3600, "iss": "https://kubernetes.default.svc", "nbf": now - 3600,
        "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "bot", "uid": uid}},
        "sub": "system:serviceaccount:default:bot"});
    api.inner.tokens.key().sign(&claims).unwrap()
}

#[test]
fn a_signed_token_is_its_service_account_until_it_expires() {
    let api = server_with_tokens();
    let valid = account_and_token(&api, "u-bot", 600);
    assert_eq!(
        api.authenticate(&headers(Some(&valid))).unwrap(),
        UserInfo::new(
            "system:serviceaccount:default:bot",
            "u-bot",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:default",
                "system:authenticated"
            ]
        )
    );
    // Past its expiry by more than the minute of leeway.
    let expired = account_and_token(&api, "u-bot", -61);
    assert_eq!(
        api.authenticate(&headers(Some(&expired))).unwrap_err().code,
        401
    );
    let recreated = account_and_token(&api, "u-old", 600);
    assert_eq!(
        api.authenticate(&headers(Some(&recreated)))
            .unwrap_err()
            .code,
        401
    );
}

#[test]
fn a_token_signed_by_another_server_is_unauthorized() {
    let api = server_with_tokens();
    let other = server_with_tokens();
    let token = account_and_token(&other, "u-bot", 600);
    account_and_token(&api, "u-bot", 600);
    assert_eq!(
        api.authenticate(&headers(Some(&token))).unwrap_err().code,
        401
    );
}
