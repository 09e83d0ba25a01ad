//! Port-forward against a scripted peer. With `v4.channel.k8s.io` it plays the kubelet's
//! WebSocket port-forward (reached through the API server's proxy): it announces the port on both
//! channels, then upper-cases what it receives. With `SPDY/3.1+portforward.k8s.io` it plays the
//! kubelet's SPDY side behind a 1.31+ API server's tunnel: it answers both streams with the
//! `SYN_REPLY` frames Go's framer wrote, upper-cases data, and ends both streams when the client
//! ends its data stream. With `portforward.k8s.io` it refuses every WebSocket (a 400) and plays
//! the same SPDY side on a plain SPDY/3.1 upgrade (a `POST`), as a server behind a proxy that
//! does not pass WebSockets. On port 9999 all report an error on the error channel or stream; a
//! refusal given to [`peer`] answers both kinds of upgrade.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

use crate::channel::data_frame;
use crate::config::Config;

/// Starts the peer; it serves any number of connections and counts them.
// The callback's error type is tungstenite's, not ours to shrink.
#[allow(clippy::result_large_err)]
async fn peer(
    protocol: &'static str,
    refuse: Option<(u16, &'static str)>,
) -> (Client, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = [0; 4];
                if tcp.peek(&mut head).await.is_ok() && &head == b"POST" {
                    serve_spdy_upgrade(tcp, protocol, refuse).await;
                    return;
                }
                let mut port = 0;
                let callback = |request: &Request, mut response: Response| {
                    let query = request.uri().query().unwrap_or_default().to_owned();
                    port = query
                        .strip_prefix("ports=")
                        .unwrap()
                        .parse::<u16>()
                        .unwrap();
                    assert_eq!(
                        request.headers()["sec-websocket-protocol"],
                        "SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io"
                    );
                    let refuse = refuse.or((protocol == spdy_forward::UPGRADE_PROTOCOL)
                        .then_some((400, "no WebSockets through this proxy")));
                    if let Some((code, body)) = refuse {
                        let mut refusal = ErrorResponse::new(Some(body.to_owned()));
                        *refusal.status_mut() = http::StatusCode::from_u16(code).unwrap();
                        return Err(refusal);
                    }
                    response
                        .headers_mut()
                        .insert("sec-websocket-protocol", protocol.parse().unwrap());
                    Ok(response)
                };
                let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(tcp, callback).await
                else {
                    return;
                };
                if protocol == spdy_forward::PROTOCOL {
                    play_spdy(PeerLink::Tunnel(Box::new(socket)), port).await;
                    return;
                }
                let prefix = port.to_le_bytes();
                for channel in [DATA, ERROR] {
                    let frame = data_frame(channel, &prefix);
                    socket.send(Message::Binary(frame)).await.unwrap();
                }
                if port == 9999 {
                    let text = "error forwarding port 9999 to pod web, uid : dial tcp4 127.0.0.1:9999: connect: connection refused";
                    socket
                        .send(Message::Binary(data_frame(ERROR, text.as_bytes())))
                        .await
                        .unwrap();
                    socket.close(None).await.unwrap();
                    return;
                }
                while let Some(Ok(message)) = socket.next().await {
                    if let Message::Binary(frame) = message {
                        assert_eq!(frame[0], DATA, "the client sends data only");
                        let upper = frame[1..].to_ascii_uppercase();
                        socket
                            .send(Message::Binary(data_frame(DATA, &upper)))
                            .await
                            .unwrap();
                    }
                }
            });
        }
    });
    let config = Config::new(format!("http://{address}").parse().unwrap());
    (Client::new(config).unwrap(), connections)
}

/// A plain SPDY/3.1 upgrade (`POST`, one `X-Stream-Protocol-Version` per offered protocol):
/// refused with `refuse`'s status, else answered with a `101` naming `portforward.k8s.io` and
/// played like the tunnel when the peer serves plain SPDY.
async fn serve_spdy_upgrade(
    mut tcp: TcpStream,
    protocol: &'static str,
    refuse: Option<(u16, &'static str)>,
) {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0; 1];
        if tcp.read_exact(&mut byte).await.is_err() {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let port = head
        .split_once("ports=")
        .and_then(|(_, rest)| rest.split(' ').next())
        .unwrap()
        .parse::<u16>()
        .unwrap();
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("upgrade: spdy/3.1\r\n"), "{head}");
    assert!(
        lower.contains("x-stream-protocol-version: portforward.k8s.io\r\n"),
        "{head}"
    );
    let refuse =
        refuse.or((protocol != spdy_forward::UPGRADE_PROTOCOL).then_some((400, "no SPDY here")));
    if let Some((code, body)) = refuse {
        let answer = format!(
            "HTTP/1.1 {code} Refused\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = tcp.write_all(answer.as_bytes()).await;
        return;
    }
    let answer = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n";
    tcp.write_all(answer.as_bytes()).await.unwrap();
    play_spdy(PeerLink::Upgraded(tcp), port).await;
}

/// What carries the peer's SPDY frames.
enum PeerLink {
    Tunnel(Box<tokio_tungstenite::WebSocketStream<TcpStream>>),
    Upgraded(TcpStream),
}

impl PeerLink {
    async fn receive(&mut self) -> Option<Vec<u8>> {
        match self {
            PeerLink::Tunnel(socket) => loop {
                match socket.next().await {
                    Some(Ok(Message::Binary(bytes))) => return Some(bytes.to_vec()),
                    Some(Ok(_)) => {}
                    _ => return None,
                }
            },
            PeerLink::Upgraded(tcp) => {
                let mut buffer = vec![0; 4096];
                match tcp.read(&mut buffer).await {
                    Ok(n) if n > 0 => Some(buffer[..n].to_vec()),
                    _ => None,
                }
            }
        }
    }

    async fn send(&mut self, frame: Bytes) {
        match self {
            PeerLink::Tunnel(socket) => socket.send(Message::Binary(frame)).await.unwrap(),
            PeerLink::Upgraded(tcp) => tcp.write_all(&frame).await.unwrap(),
        }
    }
}

/// The kubelet's SPDY side of one connection.
async fn play_spdy(mut link: PeerLink, port: u16) {
    use crate::spdy::{Frame, Reader, data_frame};
    /// SYN_REPLY for streams 1 and 3, as Go's framer wrote them (see `spdy_tests.rs`).
    const GO_SYN_REPLIES: &str = "80030002000000140000000178f9e3c6a7c26260606000000000ffff8003000200000013000000036260606004e10a105109000000ffff";
    let replies: Vec<u8> = (0..GO_SYN_REPLIES.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&GO_SYN_REPLIES[i..i + 2], 16).unwrap())
        .collect();
    let mut reader = Reader::default();
    let mut opened = Vec::new();
    while let Some(bytes) = link.receive().await {
        reader.push(&bytes);
        while let Some(frame) = reader.next_frame().unwrap() {
            match frame {
                Frame::SynStream { stream_id, .. } => {
                    opened.push(stream_id);
                    if opened == [1, 3] {
                        link.send(replies.clone().into()).await;
                        if port == 9999 {
                            let text = "error forwarding port 9999 to pod web, uid : dial tcp4 127.0.0.1:9999: connect: connection refused";
                            for frame in [
                                data_frame(1, true, text.as_bytes()),
                                data_frame(3, true, b""),
                            ] {
                                link.send(frame).await;
                            }
                        }
                    }
                }
                Frame::Data {
                    stream_id: 3,
                    fin,
                    data,
                } => {
                    assert_eq!(opened, [1, 3], "data only after both streams are open");
                    if !data.is_empty() {
                        let upper = data_frame(3, false, &data.to_ascii_uppercase());
                        link.send(upper).await;
                    }
                    if fin {
                        for frame in [data_frame(3, true, b""), data_frame(1, true, b"")] {
                            link.send(frame).await;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn port_mappings_parse_like_kubectl() {
    let parse = |spec: &str| spec.parse::<PortMapping>().map(|m| (m.local, m.remote));
    assert_eq!(parse("8080:80").unwrap(), (8080, 80));
    assert_eq!(parse(":80").unwrap(), (0, 80));
    assert_eq!(parse("5432").unwrap(), (5432, 5432));
    assert_eq!(parse("0:80").unwrap(), (0, 80));
    for (spec, expected) in [
        ("1:2:3", "invalid port format"),
        ("x:80", "error parsing local port \"x\""),
        ("80:", "error parsing remote port \"\""),
        ("65536", "error parsing local port \"65536\""),
        ("8080:0", "remote port must be > 0"),
        ("0", "remote port must be > 0"),
    ] {
        let err = parse(spec).unwrap_err().to_string();
        assert!(err.contains(expected), "{spec}: {err}");
    }
}

#[test]
fn the_port_prefix_is_checked_and_stripped_even_when_split() {
    let mut frames = Frames::new(8080);
    let [lo, hi] = 8080u16.to_le_bytes();
    assert_eq!(
        frames.receive(&Bytes::copy_from_slice(&[DATA, lo])),
        Ok(None)
    );
    assert_eq!(
        frames.receive(&Bytes::copy_from_slice(&[DATA, hi, b'o', b'k'])),
        Ok(Some(Bytes::from_static(b"ok")))
    );
    assert_eq!(
        frames.receive(&Bytes::from_static(b"\x00more")),
        Ok(Some(Bytes::from_static(b"more")))
    );
    assert_eq!(
        frames.receive(&Bytes::copy_from_slice(&[ERROR, lo, hi])),
        Ok(None)
    );
    assert_eq!(frames.error_text(), None);
    assert_eq!(
        frames.receive(&Bytes::from_static(b"\x01refused ")),
        Ok(None)
    );
    assert_eq!(frames.error_text().as_deref(), Some("refused"));
    assert_eq!(frames.receive(&Bytes::new()), Ok(None));
}

#[test]
fn a_wrong_port_or_channel_is_a_protocol_error() {
    let mut frames = Frames::new(80);
    let err = frames
        .receive(&Bytes::copy_from_slice(&[DATA, 81, 0]))
        .unwrap_err();
    assert_eq!(err, "port-forward: channel 0 is for port 81, expected 80");
    let err = frames.receive(&Bytes::from_static(b"\x02x")).unwrap_err();
    assert_eq!(err, "port-forward: data on unknown channel 2");
}

#[tokio::test]
async fn a_connection_carries_bytes_both_ways_and_ends_when_closed() {
    let (client, _) = peer(CHANNEL_PROTOCOL, None).await;
    let mut connection = client.port_forward("ns1", "web", 8080).await.unwrap();
    let mut stream = connection.take_stream().unwrap();
    stream.write_all(b"hello").await.unwrap();
    let mut answer = [0; 5];
    stream.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HELLO");
    stream.shutdown().await.unwrap();
    drop(stream);
    connection.wait().await.unwrap();
}

#[tokio::test]
async fn the_servers_error_text_fails_the_connection() {
    let (client, _) = peer(CHANNEL_PROTOCOL, None).await;
    let mut connection = client.port_forward("ns1", "web", 9999).await.unwrap();
    let mut stream = connection.take_stream().unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    let err = connection.wait().await.unwrap_err();
    assert!(
        matches!(&err, Error::PortForwardFailed { port: 9999, message, .. } if message.ends_with("connection refused")),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_upgrade_is_the_servers_error() {
    let body = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pod one does not have a host assigned","reason":"BadRequest","code":400}"#;
    let (client, connections) = peer(CHANNEL_PROTOCOL, Some((400, body))).await;
    let err = client.port_forward("ns1", "one", 80).await.unwrap_err();
    assert!(err.is_bad_request(), "{err}");
    // Asked twice, as client-go asks: the SPDY attempt's answer is the one returned.
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    assert_eq!(
        err.to_string(),
        "POST /api/v1/namespaces/ns1/pods/one/portforward?ports=80: pod one does not have a host assigned (BadRequest, 400)"
    );
    let err = client.port_forward("ns1", "one", 0).await.unwrap_err();
    assert!(err.to_string().contains("port must be > 0"), "{err}");
}

#[tokio::test]
async fn local_ports_forward_each_connection_over_its_own_websocket() {
    let (client, connections) = peer(CHANNEL_PROTOCOL, None).await;
    let mappings = [":80".parse().unwrap()];
    let loopback = [IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let forwarder = client
        .forward_local_ports("ns1", "web", &mappings, &loopback)
        .await
        .unwrap();
    let [bound] = forwarder.addresses() else {
        panic!("one address expected: {:?}", forwarder.addresses());
    };
    assert_eq!(bound.remote, 80);
    assert_ne!(bound.local.port(), 0, "a free port was picked");
    assert_eq!(
        bound.to_string(),
        format!("Forwarding from 127.0.0.1:{} -> 80", bound.local.port())
    );
    for word in ["one", "two"] {
        let mut tcp = TcpStream::connect(bound.local).await.unwrap();
        tcp.write_all(word.as_bytes()).await.unwrap();
        let mut answer = vec![0; word.len()];
        tcp.read_exact(&mut answer).await.unwrap();
        assert_eq!(answer, word.to_uppercase().as_bytes());
    }
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    forwarder.stop();
}

#[tokio::test]
async fn a_port_taken_on_every_address_fails_to_listen() {
    let (client, _) = peer(CHANNEL_PROTOCOL, None).await;
    let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = taken.local_addr().unwrap().port();
    let mapping = PortMapping {
        local: port,
        remote: 80,
    };
    let err = client
        .forward_local_ports("ns1", "web", &[mapping], &[IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::ListenFailed { port: p, message } if *p == port && message.starts_with("127.0.0.1: ")),
        "{err}"
    );
}

#[tokio::test]
async fn spdy_tunnel_carries_bytes_and_half_closes_like_client_go() {
    let (client, _) = peer(spdy_forward::PROTOCOL, None).await;
    let connection = client.port_forward("ns1", "web", 8080).await.unwrap();
    assert_eq!(connection.protocol(), "SPDY/3.1+portforward.k8s.io");
    hello_then_half_close(connection).await;
}

/// Sends `hello` over an upper-casing SPDY peer, reads `HELLO`, then half-closes: the pod's side
/// answers the FIN with its own, and the reader sees the end.
async fn hello_then_half_close(mut connection: PortConnection) {
    let mut stream = connection.take_stream().unwrap();
    stream.write_all(b"hello").await.unwrap();
    let mut answer = [0; 5];
    stream.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HELLO");
    stream.shutdown().await.unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    connection.wait().await.unwrap();
}

#[tokio::test]
async fn a_refused_websocket_falls_back_to_plain_spdy() {
    let (client, connections) = peer(spdy_forward::UPGRADE_PROTOCOL, None).await;
    let connection = client.port_forward("ns1", "web", 8080).await.unwrap();
    assert_eq!(connection.protocol(), "portforward.k8s.io");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        2,
        "a WebSocket, then SPDY"
    );
    hello_then_half_close(connection).await;

    let mut connection = client.port_forward("ns1", "web", 9999).await.unwrap();
    let mut stream = connection.take_stream().unwrap();
    stream.read_to_end(&mut Vec::new()).await.unwrap();
    let err = connection.wait().await.unwrap_err();
    assert!(
        matches!(&err, Error::PortForwardFailed { port: 9999, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn spdy_error_stream_text_fails_the_connection() {
    let (client, _) = peer(spdy_forward::PROTOCOL, None).await;
    let mut connection = client.port_forward("ns1", "web", 9999).await.unwrap();
    let mut stream = connection.take_stream().unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.unwrap();
    let err = connection.wait().await.unwrap_err();
    assert!(
        matches!(&err, Error::PortForwardFailed { port: 9999, message, .. } if message.ends_with("connection refused")),
        "{err}"
    );
}

#[tokio::test]
async fn local_ports_use_the_spdy_tunnel_when_the_server_picks_it() {
    let (client, connections) = peer(spdy_forward::PROTOCOL, None).await;
    let forwarder = client
        .forward_local_ports(
            "ns1",
            "web",
            &[":80".parse().unwrap()],
            &[IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )
        .await
        .unwrap();
    let local = forwarder.addresses()[0].local;
    let mut tcp = TcpStream::connect(local).await.unwrap();
    tcp.write_all(b"ping").await.unwrap();
    let mut answer = [0; 4];
    tcp.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"PING");
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}
