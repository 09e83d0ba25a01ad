//! What the kubelet server's handlers share: the Pods they serve, the kubelet's 404s and
//! plain-text errors, and accepting an upgrade: a WebSocket (the server side of
//! `k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go`'s handshake: the first offered
//! subprotocol the server speaks wins) or SPDY/3.1 (`httpstream.Handshake` in
//! `k8s.io/apimachinery/pkg/util/httpstream/httpstream.go` and `httpstream/spdy/upgrade.go`: the
//! first of the client's `X-Stream-Protocol-Version`s the server speaks wins).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL, UPGRADE,
};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::upgrade::OnUpgrade;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use kubegen_cache::Lister;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::port_forward_responder::Responder;

/// The body of every answer: whole or streamed.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// What the request handlers share: the Pods of the simulated Nodes and the port-forward
/// responders.
pub(crate) struct Host {
    /// The Pods, from the simulator's shared informer.
    pub(crate) pods: Lister<Pod>,
    /// What answers a forwarded port.
    pub(crate) responder: Responder,
}

impl Host {
    /// The Pod `namespace/name`, or the kubelet's 404 `pod "name" does not exist`.
    pub(crate) fn pod(&self, namespace: &str, name: &str) -> Result<Arc<Pod>, Refusal> {
        self.pods
            .get_by_key(&format!("{namespace}/{name}"))
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::NOT_FOUND,
                    format!("pod {name:?} does not exist"),
                )
            })
    }
}

/// The container `name` of `pod` (init, app or ephemeral) and its status, or the kubelet's 404
/// `container "c" not found in pod "p"`.
pub(crate) fn container<'a>(
    pod: &'a Pod,
    name: &str,
) -> Result<(&'a Container, Option<&'a ContainerStatus>), Refusal> {
    let spec = pod.spec.as_ref();
    let containers = spec.into_iter().flat_map(|s| {
        s.containers
            .iter()
            .chain(s.init_containers.iter().flatten())
    });
    let Some(container) = containers.into_iter().find(|c| c.name == name) else {
        let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            format!("container {name:?} not found in pod {pod_name:?}"),
        ));
    };
    let status = pod.status.as_ref().and_then(|s| {
        s.container_statuses
            .iter()
            .flatten()
            .chain(s.init_container_statuses.iter().flatten())
            .find(|c| c.name == name)
    });
    Ok((container, status))
}

/// A request refused before any stream starts: the status and text the kubelet answers.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    message: String,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
        }
    }

    /// The answer to send.
    pub(crate) fn response(self) -> Response<Body> {
        text(self.status, self.message)
    }
}

/// A plain-text answer, as go-restful's `WriteError` writes the kubelet's errors.
pub(crate) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// An accepted upgrade: the `101` answer to send, the protocol chosen, and the upgrade to await.
pub(crate) type Accepted = (Response<Body>, &'static str, OnUpgrade);

/// The header that offers (request) and names (answer) a SPDY stream protocol.
const PROTOCOL_VERSION: &str = "x-stream-protocol-version";
/// The header that lists the server's protocols when none of the offered ones is spoken.
const ACCEPTED_PROTOCOL_VERSIONS: &str = "x-accepted-stream-protocol-versions";

/// Whether `request` asks for a SPDY/3.1 upgrade (rather than a WebSocket).
pub(crate) fn is_spdy_upgrade<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("SPDY/3.1"))
}

/// Accepts a SPDY/3.1 upgrade of `request` with the first of its offered stream protocols that
/// is in `speaks`: the `101` answer to send, the protocol, and the upgrade to await. Refused as
/// the kubelet refuses: `400` without an offer, `403` (listing `speaks`) when none is spoken.
pub(crate) fn accept_spdy<B>(
    request: &mut Request<B>,
    speaks: &[&'static str],
) -> Result<Accepted, Box<Response<Body>>> {
    let offered: Vec<String> = request
        .headers()
        .get_all(PROTOCOL_VERSION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    if offered.is_empty() {
        return Err(Box::new(text(
            StatusCode::BAD_REQUEST,
            "unable to upgrade: header X-Stream-Protocol-Version does not exist in request\n",
        )));
    }
    let Some(protocol) = offered
        .iter()
        .find_map(|p| speaks.iter().copied().find(|s| s == p))
    else {
        let mut refusal = text(
            StatusCode::FORBIDDEN,
            format!(
                "unable to upgrade: unable to negotiate protocol: client supports [{}], server accepts [{}]\n",
                offered.join(" "),
                speaks.join(" ")
            ),
        );
        for protocol in speaks {
            refusal.headers_mut().append(
                ACCEPTED_PROTOCOL_VERSIONS,
                HeaderValue::from_static(protocol),
            );
        }
        return Err(Box::new(refusal));
    };
    let upgrade = hyper::upgrade::on(request);
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let answer = response.headers_mut();
    answer.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    answer.insert(UPGRADE, HeaderValue::from_static("SPDY/3.1"));
    answer.insert(PROTOCOL_VERSION, HeaderValue::from_static(protocol));
    Ok((response, protocol, upgrade))
}

/// Accepts a WebSocket upgrade of `request` with the first subprotocol of its offer that is in
/// `speaks`: the `101` answer to send, the subprotocol, and the upgrade to await. A request
/// that is no WebSocket upgrade, or offers none of `speaks`, gets the `400` to send instead.
pub(crate) fn accept_websocket<B>(
    request: &mut Request<B>,
    speaks: &[&'static str],
) -> Result<Accepted, Refusal> {
    let headers = request.headers();
    let is_websocket = headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let Some(key) = headers.get(SEC_WEBSOCKET_KEY).filter(|_| is_websocket) else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "Upgrade request required\n",
        ));
    };
    let accept = derive_accept_key(key.as_bytes());
    let offered = offered_subprotocols(request);
    let Some(protocol) = offered
        .iter()
        .find_map(|p| speaks.iter().copied().find(|s| s == p))
    else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            format!(
                "unable to upgrade: none of the offered subprotocols {offered:?} is supported (supported: {speaks:?})\n"
            ),
        ));
    };
    let upgrade = hyper::upgrade::on(request);
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let answer = response.headers_mut();
    answer.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    answer.insert(UPGRADE, HeaderValue::from_static("websocket"));
    answer.insert(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(protocol));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        answer.insert(SEC_WEBSOCKET_ACCEPT, accept);
    }
    Ok((response, protocol, upgrade))
}

/// The WebSocket subprotocols `request` offers, in its order.
pub(crate) fn offered_subprotocols<B>(request: &Request<B>) -> Vec<String> {
    request
        .headers()
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_owned())
        .collect()
}

/// One message of the channel protocols: the channel byte, then `data`.
pub(crate) fn channel_frame(channel: u8, data: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(data.len() + 1);
    frame.push(channel);
    frame.extend_from_slice(data);
    Bytes::from(frame)
}

/// The close frame that ends a session normally (code 1000).
pub(crate) fn normal_closure() -> CloseFrame {
    CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    }
}
