//! One port-forward connection over SPDY/3.1: either inside the `SPDY/3.1+portforward.k8s.io`
//! WebSocket tunnel (SPDY framing carried as the bytes of binary WebSocket messages, which a 1.31+
//! API server, `PortForwardWebsockets`, hands to the kubelet's SPDY port-forward unchanged), or on
//! a connection upgraded to SPDY/3.1 itself (`portforward.k8s.io`), the fallback when the
//! WebSocket is refused.
//!
//! Mirrors client-go `tools/portforward/portforward.go` (`handleConnection`: an error stream and a
//! data stream per connection, headers `streamType`, `port`, `requestID`; the error stream is
//! closed at once; the connection ends when the pod's side of the data stream ends) over
//! `tunneling_connection.go` (the WebSocket as a byte stream) or `spdy.NewDialer` (the plain
//! upgrade). Frames are built by `spdy.rs`; the two carriers differ only in [`Link`].

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::error::{Error, Result, error_chain};
use crate::spdy::{self, Frame};
use crate::spdy_upgrade;
use crate::websocket::Socket;

/// The WebSocket subprotocol of the tunnel.
pub(crate) const PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";
/// The stream protocol of a plain SPDY upgrade (`PortForwardProtocolV1Name`).
pub(crate) const UPGRADE_PROTOCOL: &str = "portforward.k8s.io";

/// What carries the SPDY frames.
pub(crate) enum Link {
    /// Binary messages of the WebSocket tunnel (boxed: a WebSocket's state is much larger than
    /// an upgraded connection's).
    Tunnel(Box<Socket>),
    /// The bytes of a connection upgraded to SPDY/3.1.
    Upgraded(spdy_upgrade::Connection),
}

impl Link {
    /// The next bytes from the server; `None` when it has closed.
    async fn receive(&mut self, buffer: &mut [u8]) -> std::result::Result<Option<Bytes>, String> {
        match self {
            Link::Tunnel(socket) => loop {
                match socket.next().await {
                    None
                    | Some(Err(
                        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed,
                    ))
                    | Some(Ok(Message::Close(_))) => return Ok(None),
                    Some(Err(e)) => return Err(error_chain(&e)),
                    Some(Ok(Message::Binary(bytes))) => return Ok(Some(bytes)),
                    Some(Ok(_)) => {}
                }
            },
            Link::Upgraded(connection) => match connection.read(buffer).await {
                Ok(0) => Ok(None),
                Ok(n) => Ok(Some(Bytes::copy_from_slice(&buffer[..n]))),
                Err(e) => Err(error_chain(&e)),
            },
        }
    }

    async fn send(&mut self, frame: Bytes) -> std::result::Result<(), String> {
        match self {
            Link::Tunnel(socket) => socket
                .send(Message::Binary(frame))
                .await
                .map_err(|e| error_chain(&e)),
            Link::Upgraded(connection) => connection
                .write_all(&frame)
                .await
                .map_err(|e| error_chain(&e)),
        }
    }

    /// Ends the connection; the server may already have closed its side.
    async fn close(&mut self) {
        match self {
            Link::Tunnel(socket) => {
                let _ = socket.as_mut().close(None).await;
            }
            Link::Upgraded(connection) => {
                let _ = connection.shutdown().await;
            }
        }
    }
}
/// The client's streams: odd ids, the error stream first as client-go opens them.
const ERROR_STREAM: u32 = 1;
const DATA_STREAM: u32 = 3;

/// Where one connection stands.
#[derive(Debug, Default)]
struct State {
    /// The pod's side of the data stream has ended (FIN or reset).
    remote_done: bool,
    /// The error stream has ended.
    error_done: bool,
    /// What the server wrote on the error stream, or why a stream was reset.
    error: Vec<u8>,
    /// The server is going away.
    going_away: bool,
}

impl State {
    /// The connection is over: the pod's side and the error stream have ended, or the server is
    /// going away.
    fn finished(&self) -> bool {
        self.going_away || (self.remote_done && self.error_done)
    }
}

/// Moves bytes between `local` and port `port` of the pod until the pod's side ends.
///
/// # Errors
/// [`Error::PortForwardFailed`] with the error stream's text; [`Error::StreamFailed`] when the
/// carrier or the SPDY framing breaks.
pub(crate) async fn forward<S>(mut link: Link, local: S, port: u16, url: String) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let failed = |message: String| Error::StreamFailed {
        url: url.clone(),
        message,
    };
    let port_text = port.to_string();
    let headers = |kind| {
        [
            ("streamtype", kind),
            ("port", port_text.as_str()),
            ("requestid", "0"),
        ]
    };
    let mut writer = spdy::Writer::default();
    let opening = [
        writer.syn_stream(ERROR_STREAM, &headers("error"), false),
        spdy::data_frame(ERROR_STREAM, true, b""),
        writer.syn_stream(DATA_STREAM, &headers("data"), false),
    ];
    for frame in opening {
        link.send(frame).await.map_err(failed)?;
    }
    let (mut local_reader, mut local_writer) = tokio::io::split(local);
    let mut reader = spdy::Reader::default();
    let mut state = State::default();
    let mut buffer = vec![0; 32 * 1024];
    let mut incoming = vec![0; 32 * 1024];
    let mut local_open = true;
    while !state.finished() {
        tokio::select! {
            received = link.receive(&mut incoming) => match received.map_err(failed)? {
                None => break,
                Some(bytes) => {
                    reader.push(&bytes);
                    while let Some(frame) = reader.next_frame().map_err(failed)? {
                        let reply = receive(frame, &mut state, &mut local_writer).await;
                        if let Some(reply) = reply {
                            link.send(reply).await.map_err(failed)?;
                        }
                    }
                }
            },
            read = local_reader.read(&mut buffer), if local_open => {
                let frame = match read {
                    Ok(n) if n > 0 => spdy::data_frame(DATA_STREAM, false, &buffer[..n]),
                    _ => {
                        local_open = false;
                        spdy::data_frame(DATA_STREAM, true, b"")
                    }
                };
                link.send(frame).await.map_err(failed)?;
            },
        }
    }
    let _ = local_writer.shutdown().await;
    link.close().await;
    let text = String::from_utf8_lossy(&state.error).trim().to_owned();
    if text.is_empty() {
        Ok(())
    } else {
        Err(Error::PortForwardFailed {
            url,
            port,
            message: text,
        })
    }
}

/// Applies one frame from the server; returns a frame to answer with (a ping's echo).
async fn receive<W: AsyncWrite + Unpin>(
    frame: Frame,
    state: &mut State,
    local: &mut W,
) -> Option<Bytes> {
    match frame {
        Frame::Data {
            stream_id: DATA_STREAM,
            fin,
            data,
        } => {
            if !data.is_empty() && local.write_all(&data).await.is_err() {
                // The local side is gone: nothing more can be delivered (client-go closes).
                state.remote_done = true;
                state.error_done = true;
            }
            state.remote_done |= fin;
        }
        Frame::Data {
            stream_id: ERROR_STREAM,
            fin,
            data,
        } => {
            state.error.extend_from_slice(&data);
            state.error_done |= fin;
        }
        // As in client-go: a reset data stream ends the copy, a reset error stream is an error.
        Frame::RstStream {
            stream_id: DATA_STREAM,
            ..
        } => state.remote_done = true,
        Frame::RstStream {
            stream_id: ERROR_STREAM,
            status,
        } => {
            state.error_done = true;
            if state.error.is_empty() {
                state.error =
                    format!("error stream reset by the server (SPDY status {status})").into_bytes();
            }
        }
        Frame::Ping { id } => return Some(spdy::ping_frame(id)),
        Frame::GoAway => state.going_away = true,
        Frame::Data { .. }
        | Frame::RstStream { .. }
        | Frame::SynReply { .. }
        | Frame::SynStream { .. }
        | Frame::Ignored => {}
    }
    None
}
