//! [`SecretToken`]: a bearer token that never shows up in `Debug` output or logs.
//!
//! client-go redacts `BearerToken` when a `rest.Config` is printed (`rest/config.go`); here the
//! token is a type, not a `String`, so no printout can forget. Its own module because both token
//! sources hold one: the kubeconfig and token files (`auth.rs`) and exec plugins
//! (`config/exec.rs`).

use http::HeaderValue;

use crate::error::{Error, Result};

/// A bearer token. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SecretToken(String);

impl SecretToken {
    pub(crate) fn new(token: impl Into<String>) -> SecretToken {
        SecretToken(token.into())
    }

    /// The `Authorization: Bearer ...` header value, marked sensitive.
    pub(crate) fn header(&self) -> Result<HeaderValue> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0)).map_err(|_| {
            Error::BuildRequest("bearer token contains invalid header characters".into())
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    #[cfg(test)]
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}
