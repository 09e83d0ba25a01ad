//! Authentication: which user a request runs as. Mirrors apiserver's bearer-token authenticators:
//! a static token list (`--token-auth-file`, here [`crate::ServerOptions::tokens`] and the
//! admin [`crate::ServerOptions::bearer_token`]) and ServiceAccount tokens the server issued
//! through the TokenRequest API (`POST .../serviceaccounts/<name>/token`,
//! `pkg/registry/core/serviceaccount/storage/token.go`). Every authenticated user is in
//! `system:authenticated`; a ServiceAccount's user `system:serviceaccount:<ns>:<name>` is also in
//! `system:serviceaccounts` and `system:serviceaccounts:<ns>`, with the ServiceAccount's uid.
//!
//! # Differences from the real server
//! - Issued tokens are opaque random strings remembered by the server, not signed JWTs: clients
//!   never look inside them, and a table lookup needs no key management. They stop working when
//!   they expire or when their ServiceAccount is deleted (or recreated with a new uid), as on a
//!   real server.
//! - A request without a token gets 401 where the real servers kubegen is checked against (which
//!   allow anonymous requests) run it as `system:anonymous`: a test server that authenticates
//!   wants every client to present a token, and there is no `--anonymous-auth` switch here.
//! - `boundObjectRef` is ignored (answered `null`), and no `authentication.k8s.io/v1`
//!   `SelfSubjectReview` is served.

use std::collections::HashMap;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, StatusCode, header};
use jiff::{SignedDuration, Timestamp};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::authz::UserInfo;
use crate::body::BoxBody;
use crate::handlers::{existing, now, parse_object};
use crate::route::Target;
use crate::shared::{ApiServer, json_response};
use crate::status::{ApiError, cause};

const AUDIENCE: &str = "https://kubernetes.default.svc";
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;

/// A token the server issued for a ServiceAccount.
#[derive(Clone, Debug)]
struct Issued {
    namespace: String,
    name: String,
    uid: String,
    expires: Timestamp,
}

/// Tokens issued by the TokenRequest API, by token.
#[derive(Debug, Default)]
pub(crate) struct IssuedTokens {
    tokens: Mutex<HashMap<String, Issued>>,
}

impl ApiServer {
    /// The user `headers` authenticate as: [`UserInfo::admin`] when authentication is off.
    ///
    /// # Errors
    /// 401 Unauthorized for a missing, unknown or expired token.
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
        let options = &self.inner.options;
        if options.bearer_token.is_none() && options.tokens.is_empty() {
            return Ok(UserInfo::admin());
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(ApiError::unauthorized)?;
        if options.bearer_token.as_deref() == Some(token) {
            return Ok(UserInfo::admin());
        }
        if let Some((_, user)) = options.tokens.iter().find(|(t, _)| t == token) {
            return Ok(authenticated(user.clone()));
        }
        self.service_account_user(token)
            .ok_or_else(ApiError::unauthorized)
    }

    /// The ServiceAccount user of an issued token that has not expired and whose ServiceAccount
    /// still exists with the same uid.
    fn service_account_user(&self, token: &str) -> Option<UserInfo> {
        let issued = self.inner.tokens.tokens.lock().get(token).cloned()?;
        if issued.expires <= Timestamp::now() {
            return None;
        }
        let state = self.inner.state.lock();
        let def = state.registry.get("", "v1", "serviceaccounts")?;
        let key = (issued.namespace.clone(), issued.name.clone());
        let account = state.store.get(&def.key(), &key)?;
        if account.value["metadata"]["uid"].as_str() != Some(issued.uid.as_str()) {
            return None;
        }
        let ns = &issued.namespace;
        Some(authenticated(UserInfo {
            name: format!("system:serviceaccount:{ns}:{}", issued.name),
            uid: issued.uid.clone(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
            ],
        }))
    }
}

/// `user` with `system:authenticated` added (once).
fn authenticated(mut user: UserInfo) -> UserInfo {
    let group = "system:authenticated";
    if !user.groups.iter().any(|g| g == group) {
        user.groups.push(group.into());
    }
    user
}

/// Whether `target` is a ServiceAccount's `token` subresource.
pub(crate) fn is_token_request(target: &Target) -> bool {
    target.def.group.is_empty()
        && target.def.plural == "serviceaccounts"
        && target.subresource.as_deref() == Some("token")
}

/// `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`: issues a token for the
/// ServiceAccount and answers the TokenRequest with `status.token` and
/// `status.expirationTimestamp`, the metadata naming the ServiceAccount.
///
/// # Errors
/// 405 for other verbs, 404 for a missing namespace or ServiceAccount, 422 for an
/// `expirationSeconds` under ten minutes, 400 for a body that is not an object.
pub(crate) fn token_request(
    api: &ApiServer,
    target: &Target,
    method: &Method,
    body: &Bytes,
) -> Result<Response<BoxBody>, ApiError> {
    if *method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let mut request = parse_object(body)?;
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION);
    if seconds < MIN_EXPIRATION {
        let message =
            format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes");
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            vec![cause(
                "FieldValueInvalid",
                "spec.expirationSeconds",
                message,
            )],
        ));
    }
    let (name, namespace, uid) = service_account(api, target)?;
    let expires = Timestamp::now() + SignedDuration::from_secs(seconds);
    let token = format!("kubegen-sa.{}", uuid::Uuid::new_v4().simple());
    api.inner.tokens.tokens.lock().insert(
        token.clone(),
        Issued {
            namespace: namespace.clone(),
            name: name.clone(),
            uid: uid.clone(),
            expires,
        },
    );
    let audiences = match &spec["audiences"] {
        Value::Array(list) if !list.is_empty() => Value::Array(list.clone()),
        _ => json!([AUDIENCE]),
    };
    request.insert("kind".into(), "TokenRequest".into());
    request.insert("apiVersion".into(), "authentication.k8s.io/v1".into());
    request.insert(
        "metadata".into(),
        json!({"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": now()}),
    );
    request.insert(
        "spec".into(),
        json!({"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null}),
    );
    let expiration = expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    request.insert(
        "status".into(),
        json!({"token": token, "expirationTimestamp": expiration}),
    );
    Ok(json_response(
        StatusCode::CREATED,
        Bytes::from(Value::Object(request).to_string()),
    ))
}

/// Name, namespace and uid of the ServiceAccount `target` names; its namespace is checked first,
/// as the real server does.
fn service_account(api: &ApiServer, target: &Target) -> Result<(String, String, String), ApiError> {
    let namespace = target.namespace.clone().unwrap_or_default();
    let state = api.inner.state.lock();
    let namespaces = state.registry.get("", "v1", "namespaces");
    let namespace_exists = namespaces.is_some_and(|def| {
        state
            .store
            .get(&def.key(), &(String::new(), namespace.clone()))
            .is_some()
    });
    if !namespace_exists {
        let what = crate::status::Qualified {
            group: "",
            resource: "namespaces",
        };
        return Err(ApiError::not_found(what, &namespace));
    }
    let (stored, (_, name)) = existing(&state, target)?;
    let uid = stored.value["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok((name, namespace, uid))
}

#[cfg(test)]
#[path = "authn_tests.rs"]
mod tests;
