//! Authentication, the first step of the request path: which user a request runs as. Mirrors apiserver's bearer-token authenticators:
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
//! - `boundObjectRef` is ignored (answered `null`).

use http::{HeaderMap, header};
use jiff::Timestamp;

use crate::apiserver::ApiServer;
use crate::authz::UserInfo;
use crate::status::ApiError;

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
        let state = self.inner.storage.lock();
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

#[cfg(test)]
#[path = "authn_tests.rs"]
mod tests;
