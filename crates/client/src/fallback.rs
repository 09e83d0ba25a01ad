//! When exec and attach retry over SPDY: the decision between a WebSocket refusal worth a
//! second try and a failure that SPDY would meet again.
//!
//! Mirrors client-go `tools/remotecommand/fallback.go` (`FallbackExecutor`: the primary
//! executor first, the secondary when `shouldFallback` accepts the primary's error) with
//! kubectl's `shouldFallback` (`httpstream.IsUpgradeFailure(err) ||
//! httpstream.IsHTTPSProxyError(err)`), and `transport/websocket/roundtripper.go`, which decides
//! what counts as an upgrade failure: any answer that is not a valid WebSocket `101`.
//!
//! # The rule
//! | what the WebSocket attempt got                              | retried over SPDY |
//! |-------------------------------------------------------------|-------------------|
//! | an error status (400, 403, 404, 500, ...) instead of `101`  | yes               |
//! | a `2xx` other than `101`                                    | yes               |
//! | a `101` with a bad accept key or an unoffered subprotocol  | yes               |
//! | a transport that cannot upgrade                             | yes (and fails the same way) |
//! | no connection (refused, TLS, DNS), a request timeout        | no                |
//! | a request that could not be built                           | no                |
//!
//! client-go's error statuses are also upgrade failures (gorilla's `ErrBadHandshake` covers any
//! status but `101`), so a missing pod is asked about twice and the SPDY attempt's answer is the
//! one returned; here too, so both paths report the same typed error.
//!
//! # Differences from client-go
//! `IsHTTPSProxyError` (gorilla/websocket could not dial through an `https://` proxy,
//! kubernetes#126134) has no counterpart: the WebSocket goes through the client's own transport,
//! so whatever reaches the server for other requests reaches it for this one.

use crate::error::Error;

/// Whether an error of the WebSocket upgrade sends exec or attach to SPDY.
pub(crate) fn should_fall_back(error: &Error) -> bool {
    matches!(
        error,
        Error::Api { .. } | Error::HttpStatus { .. } | Error::UpgradeFailed { .. }
    )
}

#[cfg(test)]
#[path = "fallback_tests.rs"]
mod tests;
