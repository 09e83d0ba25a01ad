//! Opening a WebSocket to the API server: the handshake of exec, attach and port-forward over
//! the client's own transport (same URL prefix, TLS, certificates and bearer token as every other
//! request).
//!
//! Mirrors client-go `transport/websocket/roundtripper.go` (`Negotiate`: send the upgrade,
//! check the answer, report the chosen subprotocol).
//!
//! # Why tokio-tungstenite, and only for framing
//! A WebSocket's framing, masking, ping/pong and close handshake are easy to get subtly wrong, and
//! tokio-tungstenite is the widely used, maintained implementation for tokio. Its own connector is
//! not used: the HTTP upgrade goes through [`Transport::upgrade`](crate::Transport::upgrade), so
//! the connection is made by the same hyper + rustls (ring) stack and kubeconfig settings as all
//! other requests, and a test or an in-process server can stand in for the network there.

use bytes::Bytes;
use http::header::{
    CONNECTION, HeaderMap, HeaderValue, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY,
    SEC_WEBSOCKET_PROTOCOL, SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::client::Client;
use crate::error::{Error, Result};

/// An open WebSocket to the API server.
pub(crate) type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// Upgrades `request` (a `GET` of a streaming subresource) to a WebSocket offering `protocols`,
/// best first, and returns the socket with the subprotocol the server chose.
///
/// # Errors
/// The server's refusal before the upgrade as [`Error::Api`] (403, 404, 400, ...);
/// [`Error::UpgradeFailed`] for a `101` that breaks the handshake rules; transport errors.
pub(crate) async fn connect(
    client: &Client,
    mut request: http::Request<Bytes>,
    protocols: &[&str],
) -> Result<(Socket, String)> {
    let url = request.uri().to_string();
    let key = generate_key();
    let headers = request.headers_mut();
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
    headers.insert(SEC_WEBSOCKET_KEY, header_value(&url, &key)?);
    headers.insert(
        SEC_WEBSOCKET_PROTOCOL,
        header_value(&url, &protocols.join(", "))?,
    );
    let mut response = client.upgrade(request).await?;
    let protocol = check_handshake(response.headers(), &key, protocols).map_err(|message| {
        Error::UpgradeFailed {
            url: url.clone(),
            message,
        }
    })?;
    let upgraded = hyper::upgrade::on(&mut response)
        .await
        .map_err(|e| Error::UpgradeFailed {
            url: url.clone(),
            message: crate::error::error_chain(&e),
        })?;
    let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, None).await;
    Ok((socket, protocol))
}

fn header_value(url: &str, value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value).map_err(|e| Error::BuildRequest(format!("{url}: {e}")))
}

/// Checks a `101` answer against RFC 6455 and the offer: the accept key must match ours, and the
/// server must have chosen one of the `offered` subprotocols, which is returned.
///
/// # Errors
/// What is wrong, as text.
pub(crate) fn check_handshake(
    headers: &HeaderMap,
    key: &str,
    offered: &[&str],
) -> std::result::Result<String, String> {
    let accept = headers.get(SEC_WEBSOCKET_ACCEPT).map(HeaderValue::as_bytes);
    if accept != Some(derive_accept_key(key.as_bytes()).as_bytes()) {
        return Err("the server's Sec-WebSocket-Accept does not match the key sent".to_owned());
    }
    let chosen = headers
        .get(SEC_WEBSOCKET_PROTOCOL)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or_default();
    if chosen.is_empty() {
        return Err(format!(
            "the server chose no subprotocol (offered: {})",
            offered.join(", ")
        ));
    }
    if !offered.contains(&chosen) {
        return Err(format!(
            "the server chose subprotocol {chosen:?}, which was not offered ({})",
            offered.join(", ")
        ));
    }
    Ok(chosen.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(accept: Option<&str>, protocol: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(accept) = accept {
            headers.insert(SEC_WEBSOCKET_ACCEPT, HeaderValue::from_str(accept).unwrap());
        }
        if let Some(protocol) = protocol {
            headers.insert(
                SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_str(protocol).unwrap(),
            );
        }
        headers
    }

    const OFFER: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

    #[test]
    fn a_matching_accept_key_and_an_offered_protocol_pass() {
        // The example of RFC 6455 section 1.3.
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let headers = answer(
            Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            Some("v4.channel.k8s.io"),
        );
        assert_eq!(
            check_handshake(&headers, key, &OFFER).as_deref(),
            Ok("v4.channel.k8s.io")
        );
    }

    #[test]
    fn a_wrong_key_or_a_missing_or_unoffered_protocol_fail() {
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let good = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
        let cases = [
            (answer(Some("bad"), Some(OFFER[0])), "does not match"),
            (answer(None, Some(OFFER[0])), "does not match"),
            (answer(Some(good), None), "chose no subprotocol"),
            (
                answer(Some(good), Some("channel.k8s.io")),
                "\"channel.k8s.io\", which was not offered",
            ),
        ];
        for (headers, expected) in cases {
            let err = check_handshake(&headers, key, &OFFER).unwrap_err();
            assert!(
                err.contains(expected),
                "{err:?} should contain {expected:?}"
            );
        }
    }
}
