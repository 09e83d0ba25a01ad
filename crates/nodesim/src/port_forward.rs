//! `/portForward/{namespace}/{pod}?port=P[,Q]`: connections to a simulated Pod's ports over a
//! WebSocket speaking `v4.channel.k8s.io`, or over SPDY (`port_forward_spdy.rs`: upgraded, or
//! tunnelled in a WebSocket), each reaching an in-process responder
//! ([`crate::port_forward_responder`]).
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/portforward/websocket.go`: two channels per asked
//! port, data (`2i`) and error (`2i+1`); the server's first message on each is the port, two bytes
//! little-endian; then the client's data on the data channel goes to the port and what the port
//! answers comes back on it.
//!
//! Which one is chosen mirrors `pkg/kubelet/server/server.go`'s `getPortForward`: a SPDY upgrade
//! is SPDY (the ports come from each stream's headers, the query needs none); a WebSocket
//! offering `SPDY/3.1+portforward.k8s.io` is the tunnel (also without ports in the query); any
//! other WebSocket is `v4.channel.k8s.io` and must name its ports.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::port_forward_responder::Responder;
use crate::port_forward_spdy::{self, PROTOCOL as SPDY_PROTOCOL, TUNNEL_PROTOCOL};
use crate::spdy_session::Transport;
use crate::streaming::{
    Body, Host, accept_spdy, accept_websocket, channel_frame as frame, is_spdy_upgrade,
    normal_closure, offered_subprotocols, text,
};

/// The subprotocols spoken.
const PROTOCOLS: [&str; 1] = ["v4.channel.k8s.io"];
/// Capacity of the in-memory pipe to each port's responder.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The `port` parameters of the query (`port=80,81` or repeated, as the API server sends
/// `PodPortForwardOptions.ports`), each 1 to 65535.
///
/// # Errors
/// The kubelet's message for a missing or bad port.
pub(crate) fn ports(query: Option<&str>) -> Result<Vec<u16>, String> {
    let mut ports = Vec::new();
    for (key, value) in query
        .unwrap_or_default()
        .split('&')
        .filter_map(|p| p.split_once('='))
    {
        if key != "port" {
            continue;
        }
        let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
        for port in value.split(',') {
            match port.trim().parse::<u16>() {
                Ok(port) if port > 0 => ports.push(port),
                _ => {
                    return Err(format!(
                        "unable to parse {port:?} as a port: port must be in the range 1-65535"
                    ));
                }
            }
        }
    }
    if ports.is_empty() {
        return Err("query parameter \"port\" is required".to_owned());
    }
    Ok(ports)
}

/// Serves a port-forward request.
pub(crate) fn serve<B>(
    host: &Arc<Host>,
    (namespace, pod_name): (&str, &str),
    mut request: Request<B>,
) -> Response<Body> {
    if let Err(refusal) = host.pod(namespace, pod_name) {
        return refusal.response();
    }
    let responder = host.responder.clone();
    if is_spdy_upgrade(&request) {
        let (response, _, upgrade) = match accept_spdy(&mut request, &[SPDY_PROTOCOL]) {
            Ok(accepted) => accepted,
            Err(refusal) => return *refusal,
        };
        tokio::spawn(async move {
            if let Ok(upgraded) = upgrade.await {
                let transport = Transport::Raw(TokioIo::new(upgraded));
                port_forward_spdy::session(transport, responder).await;
            }
        });
        return response;
    }
    if offered_subprotocols(&request)
        .iter()
        .any(|p| p == TUNNEL_PROTOCOL)
    {
        let (response, _, upgrade) = match accept_websocket(&mut request, &[TUNNEL_PROTOCOL]) {
            Ok(accepted) => accepted,
            Err(refusal) => return refusal.response(),
        };
        tokio::spawn(async move {
            if let Ok(upgraded) = upgrade.await {
                let io = TokioIo::new(upgraded);
                let socket = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
                port_forward_spdy::session(Transport::Tunnel(Box::new(socket)), responder).await;
            }
        });
        return response;
    }
    let ports = match ports(request.uri().query()) {
        Ok(ports) => ports,
        Err(message) => return text(StatusCode::BAD_REQUEST, message),
    };
    let (response, _, upgrade) = match accept_websocket(&mut request, &PROTOCOLS) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal.response(),
    };
    tokio::spawn(session(upgrade, ports, responder));
    response
}

/// Copies between the socket's channels and each port's responder until the client closes.
async fn session(upgrade: OnUpgrade, ports: Vec<u16>, responder: Responder) {
    let Ok(upgraded) = upgrade.await else { return };
    let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    let (mut sink, mut source) = socket.split();
    let (answers, mut answered) = mpsc::channel::<(u8, Bytes)>(16);
    let mut writers: Vec<Option<WriteHalf<tokio::io::DuplexStream>>> = Vec::new();
    for (index, &port) in ports.iter().enumerate() {
        let data_channel = (index * 2) as u8;
        for channel in [data_channel, data_channel + 1] {
            let opening = frame(channel, &port.to_le_bytes());
            if sink.send(Message::Binary(opening)).await.is_err() {
                return;
            }
        }
        let (ours, theirs) = tokio::io::duplex(PIPE_CAPACITY);
        let responder = responder.clone();
        tokio::spawn(async move { responder.serve(port, theirs).await });
        let (mut reader, writer) = tokio::io::split(ours);
        writers.push(Some(writer));
        let answers = answers.clone();
        tokio::spawn(async move {
            let mut buffer = vec![0; 32 * 1024];
            while let Ok(n) = reader.read(&mut buffer).await {
                if n == 0
                    || answers
                        .send((data_channel, Bytes::copy_from_slice(&buffer[..n])))
                        .await
                        .is_err()
                {
                    break;
                }
            }
        });
    }
    drop(answers);
    // Every responder has ended its side (the client's data has nowhere to go but is read on).
    let mut ports_done = false;
    loop {
        tokio::select! {
            message = source.next() => match message {
                Some(Ok(Message::Binary(data))) => {
                    let Some((&channel, bytes)) = data.split_first() else { continue };
                    let writer = writers.get_mut(usize::from(channel / 2)).filter(|_| channel % 2 == 0);
                    if let Some(slot) = writer
                        && let Some(writer) = slot
                        && writer.write_all(bytes).await.is_err()
                    {
                        *slot = None;
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            answer = answered.recv(), if !ports_done => {
                let Some((channel, bytes)) = answer else {
                    ports_done = true;
                    continue;
                };
                if sink.send(Message::Binary(frame(channel, &bytes))).await.is_err() {
                    break;
                }
            },
        }
    }
    for writer in writers.iter_mut().flatten() {
        let _ = writer.shutdown().await;
    }
    // A normal closure (1000): clients read it as the end of every channel, while a close
    // without a code (1005) is an error to client-go's reader.
    let _ = sink.send(Message::Close(Some(normal_closure()))).await;
    let _ = sink.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_a_list_or_repeated_parameters() {
        assert_eq!(ports(Some("port=80,8080")), Ok(vec![80, 8080]));
        assert_eq!(ports(Some("port=80&port=81")), Ok(vec![80, 81]));
        assert_eq!(
            ports(None),
            Err("query parameter \"port\" is required".to_owned())
        );
        assert!(ports(Some("port=0")).unwrap_err().contains("1-65535"));
    }
}
