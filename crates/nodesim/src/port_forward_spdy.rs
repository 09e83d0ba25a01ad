//! Port-forward over SPDY/3.1, on an upgraded connection (`portforward.k8s.io`) or tunnelled in a
//! WebSocket (`SPDY/3.1+portforward.k8s.io`): for each forwarded connection the client opens an
//! `error` and a `data` stream carrying the same `requestID` and `port` headers; once both are
//! open, the data stream is joined to the Pod's port (its responder) until the port's side ends,
//! then both streams are closed.
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/portforward/httpstream.go` (`httpStreamHandler`:
//! streams paired by `requestID`, `portForward` closing data and error when the forward returns,
//! a failure written as text on the error stream) and, for the tunnel,
//! `k8s.io/apiserver/pkg/util/proxy/streamtunnel.go` (the WebSocket's binary messages as the SPDY
//! byte stream), which a v1.36 kubelet with `ExtendWebSocketsToKubelet` serves itself.

use std::collections::HashMap;

use kubegen_client::spdy::{Headers, header};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, WriteHalf};

use crate::port_forward_responder::Responder;
use crate::spdy_session::{self, Event, Outgoing, Transport};

/// The stream protocol of a SPDY port-forward (`portforward.PortForwardProtocolV1Name`).
pub(crate) const PROTOCOL: &str = "portforward.k8s.io";
/// The WebSocket subprotocol of the tunnel (`constants.WebsocketsSPDYTunnelingPortForwardV1`).
pub(crate) const TUNNEL_PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";
/// Capacity of the in-memory pipe to a port's responder.
const PIPE_CAPACITY: usize = 64 * 1024;

/// The streams of one forwarded connection, as they arrive.
#[derive(Debug, Default)]
struct Pair {
    /// The data stream and the port its headers name.
    data: Option<(u32, String)>,
    error: Option<u32>,
}

/// Serves a port-forward session on `transport` until the client closes it.
pub(crate) async fn session(transport: Transport, responder: Responder) {
    let spdy_session::Session {
        mut events,
        outgoing,
    } = spdy_session::start(transport);
    let mut pairs: HashMap<String, Pair> = HashMap::new();
    // Data stream id → where the client's bytes for the port go.
    let mut ports: HashMap<u32, WriteHalf<DuplexStream>> = HashMap::new();
    while let Some(event) = events.recv().await {
        match event {
            Event::Opened { stream_id, headers } => {
                let Some(pair) = pair_up(&mut pairs, stream_id, &headers) else {
                    continue;
                };
                if let Some((data, writer)) = forward(pair, &responder, &outgoing) {
                    ports.insert(data, writer);
                }
            }
            Event::Data {
                stream_id,
                data,
                fin,
            } => {
                if let Some(port) = ports.get_mut(&stream_id)
                    && (port.write_all(&data).await.is_err() || fin)
                    && let Some(mut port) = ports.remove(&stream_id)
                {
                    let _ = port.shutdown().await;
                }
            }
            Event::Reset { stream_id } => {
                if let Some(mut port) = ports.remove(&stream_id) {
                    let _ = port.shutdown().await;
                }
            }
        }
    }
    for port in ports.values_mut() {
        let _ = port.shutdown().await;
    }
    outgoing.close().await;
}

/// Files stream `stream_id` under its `requestid`; the pair once both of its streams are open.
/// A stream of another type is ignored.
fn pair_up(pairs: &mut HashMap<String, Pair>, stream_id: u32, headers: &Headers) -> Option<Pair> {
    let kind = header(headers, "streamtype");
    if !matches!(kind, Some("data" | "error")) {
        return None;
    }
    let request_id = header(headers, "requestid").unwrap_or_default().to_owned();
    let pair = pairs.entry(request_id.clone()).or_default();
    if kind == Some("data") {
        let port = header(headers, "port").unwrap_or_default().to_owned();
        pair.data = Some((stream_id, port));
    } else {
        pair.error = Some(stream_id);
    }
    if pair.data.is_some() && pair.error.is_some() {
        return pairs.remove(&request_id);
    }
    None
}

/// Joins a complete pair's data stream to its port's responder: the data stream's id and where
/// the client's bytes go, or `None` when the port is not one (then the error stream says so).
fn forward(
    pair: Pair,
    responder: &Responder,
    outgoing: &Outgoing,
) -> Option<(u32, WriteHalf<DuplexStream>)> {
    let (Some((data, port_text)), Some(error)) = (pair.data, pair.error) else {
        return None;
    };
    let outgoing = outgoing.clone();
    let Some(port) = port_text.parse::<u16>().ok().filter(|p| *p > 0) else {
        let message =
            format!("error forwarding port {port_text}: port must be in the range 1-65535");
        tokio::spawn(async move {
            outgoing.data(error, message.as_bytes(), true).await;
            outgoing.data(data, b"", true).await;
        });
        return None;
    };
    let (ours, theirs) = tokio::io::duplex(PIPE_CAPACITY);
    let responder = responder.clone();
    tokio::spawn(async move { responder.serve(port, theirs).await });
    let (mut reader, writer) = tokio::io::split(ours);
    tokio::spawn(async move {
        let mut buffer = vec![0; 32 * 1024];
        while let Ok(n) = reader.read(&mut buffer).await {
            if n == 0 || !outgoing.data(data, &buffer[..n], false).await {
                break;
            }
        }
        // The port's side ended: the kubelet closes the data stream, then the error stream.
        outgoing.data(data, b"", true).await;
        outgoing.data(error, b"", true).await;
    });
    Some((data, writer))
}

#[cfg(test)]
mod tests {
    use kubegen_client::spdy::{Frame, Reader};

    use super::*;

    /// The frames `outgoing` sends until both of a pair's streams have ended.
    async fn frames_until_closed(
        frames: &mut tokio::sync::mpsc::Receiver<Option<bytes::Bytes>>,
    ) -> Vec<Frame> {
        let mut reader = Reader::default();
        let mut seen = Vec::new();
        let mut fins = 0;
        while fins < 2 {
            let frame = frames.recv().await.unwrap().unwrap();
            reader.push(&frame);
            while let Some(frame) = reader.next_frame().unwrap() {
                if matches!(frame, Frame::Data { fin: true, .. }) {
                    fins += 1;
                }
                seen.push(frame);
            }
        }
        seen
    }

    fn pair(port: &str) -> Pair {
        Pair {
            data: Some((3, port.to_owned())),
            error: Some(1),
        }
    }

    #[tokio::test]
    async fn a_pair_reaches_its_ports_responder_and_both_streams_end_with_it() {
        let (outgoing, mut frames) = Outgoing::for_test();
        let (data, mut port) = forward(pair("9000"), &Responder::default(), &outgoing).unwrap();
        assert_eq!(data, 3);
        port.write_all(b"ping").await.unwrap();
        port.shutdown().await.unwrap();
        let data = |fin, bytes: &'static [u8]| Frame::Data {
            stream_id: 3,
            fin,
            data: bytes::Bytes::from_static(bytes),
        };
        let error_fin = Frame::Data {
            stream_id: 1,
            fin: true,
            data: bytes::Bytes::new(),
        };
        assert_eq!(
            frames_until_closed(&mut frames).await,
            [data(false, b"ping"), data(true, b""), error_fin]
        );
    }

    #[tokio::test]
    async fn a_bad_port_is_reported_on_the_error_stream() {
        let (outgoing, mut frames) = Outgoing::for_test();
        assert!(forward(pair("http"), &Responder::default(), &outgoing).is_none());
        let seen = frames_until_closed(&mut frames).await;
        let Frame::Data {
            stream_id: 1,
            fin: true,
            data,
        } = &seen[0]
        else {
            panic!("{seen:?}");
        };
        assert_eq!(
            String::from_utf8_lossy(data),
            "error forwarding port http: port must be in the range 1-65535"
        );
        assert!(matches!(
            seen[1],
            Frame::Data {
                stream_id: 3,
                fin: true,
                ..
            }
        ));
    }

    fn headers(kind: &str, port: &str, request: &str) -> Headers {
        vec![
            ("streamtype".to_owned(), kind.to_owned()),
            ("port".to_owned(), port.to_owned()),
            ("requestid".to_owned(), request.to_owned()),
        ]
    }

    #[test]
    fn streams_pair_up_by_request_id_in_either_order() {
        let mut pairs = HashMap::new();
        assert!(pair_up(&mut pairs, 1, &headers("error", "80", "0")).is_none());
        assert!(pair_up(&mut pairs, 3, &headers("data", "81", "1")).is_none());
        let pair = pair_up(&mut pairs, 5, &headers("data", "80", "0")).unwrap();
        assert_eq!(pair.data, Some((5, "80".to_owned())));
        assert_eq!(pair.error, Some(1));
        let pair = pair_up(&mut pairs, 7, &headers("error", "81", "1")).unwrap();
        assert_eq!((pair.data.unwrap().0, pair.error), (3, Some(7)));
        assert!(pairs.is_empty());
        assert!(pair_up(&mut pairs, 9, &headers("other", "80", "2")).is_none());
        assert!(pairs.is_empty(), "another type is not filed");
    }
}
