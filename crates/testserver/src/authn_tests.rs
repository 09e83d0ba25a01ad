use http::HeaderValue;

use jiff::SignedDuration;

use super::*;
use crate::options::ServerOptions;
use crate::storage::tokens::Issued;

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

#[test]
fn an_issued_token_stops_working_after_it_expires() {
    let api = server_with_tokens();
    api.inner.tokens.tokens.lock().insert(
        "old".into(),
        Issued {
            namespace: "default".into(),
            name: "bot".into(),
            uid: "u".into(),
            expires: Timestamp::now() - SignedDuration::from_secs(1),
        },
    );
    assert_eq!(
        api.authenticate(&headers(Some("old"))).unwrap_err().code,
        401
    );
}
