//! Authentication, the first step of the request path: which user a request runs as. Mirrors apiserver's bearer-token authenticators:
//! a static token list (`--token-auth-file`, here [`crate::ServerOptions::tokens`] and the
//! admin [`crate::ServerOptions::bearer_token`]) and ServiceAccount tokens the server issued
//! through the TokenRequest API (`POST .../serviceaccounts/<name>/token`,
//! `pkg/registry/core/serviceaccount/storage/token.go`). Every authenticated user is in
//! `system:authenticated`; a ServiceAccount's user `system:serviceaccount:<ns>:<name>` is also in
//! `system:serviceaccounts` and `system:serviceaccounts:<ns>`, with the ServiceAccount's uid.
//!
//! ServiceAccount tokens are signed JWTs (`crate::jwt`), checked as v1.36 checks them
//! (`crate::storage::tokens`): signature, the API audience, expiry with a minute of leeway, and
//! the ServiceAccount (and any bound Secret, Pod or Node) still there with the same uid.
//!
//! # Differences from the real server
//! - A request without a token gets 401 where the real servers kubegen is checked against (which
//!   allow anonymous requests) run it as `system:anonymous`: a test server that authenticates
//!   wants every client to present a token, and there is no `--anonymous-auth` switch here.
//! - A ServiceAccount user carries no `extra` (the credential id, the bound pod's name): users
//!   here have none. A TokenReview shows them.

use http::{HeaderMap, header};
use jiff::Timestamp;

use crate::apiserver::ApiServer;
use crate::authz::UserInfo;
use crate::status::ApiError;
use crate::storage::tokens;

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

    /// The ServiceAccount user of a token this server signed, for the API audience, if it
    /// passes every check.
    fn service_account_user(&self, token: &str) -> Option<UserInfo> {
        let key = self.inner.tokens.key();
        let state = self.inner.storage.lock();
        match tokens::authenticate(&key, &state, token, &[], Timestamp::now()) {
            Ok(found) => Some(authenticated(found.user)),
            Err(error) => {
                tracing::debug!(%error, "bearer token refused");
                None
            }
        }
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
