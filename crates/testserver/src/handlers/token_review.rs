//! `TokenReview` (`authentication.k8s.io/v1`): "who is this bearer token, for these audiences?",
//! answered by the same checks that authenticate requests. Mirrors apiserver
//! `pkg/registry/authentication/tokenreview/storage.go`: the token is run through the
//! authenticators (the static tokens, then ServiceAccount JWTs, `crate::storage::tokens`) and the
//! answer is the request with a `status`: `authenticated`, the user (with `extra` for
//! ServiceAccount tokens) and the audiences the token is good for, or `error` with the
//! authenticators' reasons.
//!
//! # Differences from the real server
//! - A static token is good for the API audience only, and its user has no `extra`.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::apiserver::ApiServer;
use crate::authz::UserInfo;
use crate::status::ApiError;
use crate::storage::tokens::{self, ISSUER, TokenUser};

/// The `status` of a TokenReview whose spec is `spec`.
///
/// # Errors
/// 400 for a review without a token, as v1.36 (`token is required for TokenReview in
/// authentication`).
pub(crate) fn status(api: &ApiServer, spec: &Value) -> Result<Value, ApiError> {
    let token = spec["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let requested: Vec<String> = spec["audiences"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|a| a.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if let Some(user) = static_user(api, token, &requested) {
        return Ok(authenticated(&user, &Map::new(), &[ISSUER.to_string()]));
    }
    let key = api.inner.tokens.key();
    let state = api.inner.storage.lock();
    Ok(
        match tokens::authenticate(&key, &state, token, &requested, Timestamp::now()) {
            Ok(TokenUser {
                user,
                extra,
                audiences,
            }) => {
                let extra: Map<String, Value> =
                    extra.into_iter().map(|(k, v)| (k, json!(v))).collect();
                authenticated(&user, &extra, &audiences)
            }
            Err(error) => json!({"user": {}, "error": error.to_string()}),
        },
    )
}

/// The user of a static token (the admin token or `ServerOptions::tokens`), when the requested
/// audiences allow the API audience.
fn static_user(api: &ApiServer, token: &str, requested: &[String]) -> Option<UserInfo> {
    if !requested.is_empty() && !requested.iter().any(|a| a == ISSUER) {
        return None;
    }
    let options = &api.inner.options;
    let mut user = if options.bearer_token.as_deref() == Some(token) {
        UserInfo::admin()
    } else {
        let (_, user) = options.tokens.iter().find(|(t, _)| t == token)?;
        user.clone()
    };
    if !user.groups.iter().any(|g| g == "system:authenticated") {
        user.groups.push("system:authenticated".into());
    }
    Some(user)
}

/// A successful review's status: empty `uid`, `groups` and `extra` are left out.
fn authenticated(user: &UserInfo, extra: &Map<String, Value>, audiences: &[String]) -> Value {
    let mut info = Map::new();
    info.insert("username".into(), user.name.clone().into());
    if !user.uid.is_empty() {
        info.insert("uid".into(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        info.insert("groups".into(), user.groups.clone().into());
    }
    if !extra.is_empty() {
        info.insert("extra".into(), Value::Object(extra.clone()));
    }
    json!({"authenticated": true, "user": info, "audiences": audiences})
}
