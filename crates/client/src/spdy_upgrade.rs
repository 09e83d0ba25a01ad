//! Upgrading a request to a raw SPDY/3.1 connection: the fallback of exec and attach when a
//! WebSocket is refused, over the client's own transport (same URL prefix, TLS and credentials
//! as every other request).
//!
//! Mirrors client-go `transport/spdy/spdy.go` (`Negotiate`: one `X-Stream-Protocol-Version`
//! header per offered protocol, the chosen one read back from the answer) and
//! `k8s.io/streaming/pkg/httpstream/spdy/roundtripper.go` (`NewConnection`: a `101` whose
//! `Connection` and `Upgrade` headers name the upgrade and `SPDY/3.1`, anything else refused).

use bytes::Bytes;
use http::Method;
use http::header::{CONNECTION, HeaderMap, HeaderValue, UPGRADE};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;

use crate::client::Client;
use crate::error::{Error, Result, error_chain};

/// An upgraded connection on which SPDY frames flow both ways.
pub(crate) type Connection = TokioIo<Upgraded>;

/// The `Upgrade` token of SPDY.
const SPDY_31: &str = "SPDY/3.1";
/// The header that offers (request) and names (answer) the stream protocol version.
const PROTOCOL_VERSION: &str = "x-stream-protocol-version";

/// Upgrades `request` (a streaming subresource) to SPDY offering `protocols`, best first, and
/// returns the connection with the protocol the server chose (empty when it named none, which
/// client-go reads as the original `channel.k8s.io`). The request is sent as a `POST`, as
/// kubectl sends its SPDY exec and attach (`create` on `pods/exec`).
///
/// # Errors
/// The server's refusal before the upgrade as [`Error::Api`] / [`Error::HttpStatus`];
/// [`Error::UpgradeFailed`] for a `101` that is not a SPDY upgrade; transport errors.
pub(crate) async fn connect(
    client: &Client,
    mut request: http::Request<Bytes>,
    protocols: &[&str],
) -> Result<(Connection, String)> {
    let url = request.uri().to_string();
    *request.method_mut() = Method::POST;
    let headers = request.headers_mut();
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(UPGRADE, HeaderValue::from_static(SPDY_31));
    for protocol in protocols {
        let value = HeaderValue::from_str(protocol)
            .map_err(|e| Error::BuildRequest(format!("{url}: {e}")))?;
        headers.append(PROTOCOL_VERSION, value);
    }
    let mut response = client.upgrade(request).await?;
    let chosen =
        check_upgrade(response.headers(), protocols).map_err(|message| Error::UpgradeFailed {
            url: url.clone(),
            message,
        })?;
    let upgraded = hyper::upgrade::on(&mut response)
        .await
        .map_err(|e| Error::UpgradeFailed {
            url: url.clone(),
            message: error_chain(&e),
        })?;
    Ok((TokioIo::new(upgraded), chosen))
}

/// Checks a `101` answer: `Connection` must name the upgrade and `Upgrade` SPDY/3.1 (case
/// insensitively, as Go's check), and a named protocol must be one of the `offered`.
///
/// # Errors
/// What is wrong, as text.
pub(crate) fn check_upgrade(
    headers: &HeaderMap,
    offered: &[&str],
) -> std::result::Result<String, String> {
    let header = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    if !header(CONNECTION).contains("upgrade") || !header(UPGRADE).contains("spdy/3.1") {
        return Err(format!(
            "the server's 101 does not upgrade to {SPDY_31} (Connection: {:?}, Upgrade: {:?})",
            header(CONNECTION),
            header(UPGRADE)
        ));
    }
    let chosen = headers
        .get(PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .unwrap_or_default();
    if !chosen.is_empty() && !offered.contains(&chosen) {
        return Err(format!(
            "the server chose stream protocol {chosen:?}, which was not offered ({})",
            offered.join(", ")
        ));
    }
    Ok(chosen.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(connection: &str, upgrade: &str, protocol: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONNECTION, HeaderValue::from_str(connection).unwrap());
        headers.insert(UPGRADE, HeaderValue::from_str(upgrade).unwrap());
        if let Some(protocol) = protocol {
            headers.insert(PROTOCOL_VERSION, HeaderValue::from_str(protocol).unwrap());
        }
        headers
    }

    const OFFER: [&str; 2] = ["v4.channel.k8s.io", "channel.k8s.io"];

    #[test]
    fn a_spdy_upgrade_with_an_offered_or_no_protocol_passes() {
        let headers = answer("Upgrade", "SPDY/3.1", Some("v4.channel.k8s.io"));
        assert_eq!(
            check_upgrade(&headers, &OFFER).as_deref(),
            Ok("v4.channel.k8s.io")
        );
        let headers = answer("upgrade", "spdy/3.1", None);
        assert_eq!(check_upgrade(&headers, &OFFER).as_deref(), Ok(""));
    }

    #[test]
    fn another_upgrade_or_an_unoffered_protocol_fails() {
        let cases = [
            (answer("Upgrade", "websocket", None), "does not upgrade"),
            (answer("keep-alive", "SPDY/3.1", None), "does not upgrade"),
            (
                answer("Upgrade", "SPDY/3.1", Some("v5.channel.k8s.io")),
                "\"v5.channel.k8s.io\", which was not offered",
            ),
        ];
        for (headers, expected) in cases {
            let err = check_upgrade(&headers, &OFFER).unwrap_err();
            assert!(
                err.contains(expected),
                "{err:?} should contain {expected:?}"
            );
        }
    }
}
