//! The server's end of a SPDY/3.1 connection: the streams a client opens are accepted and
//! handed over as events, pings are answered, and frames are written for the handlers. The
//! connection is an upgraded HTTP one (`Upgrade: SPDY/3.1`), or a WebSocket whose binary
//! messages carry the SPDY bytes (`SPDY/3.1+portforward.k8s.io`, client-go 1.31+'s tunnel).
//!
//! Mirrors the server side of `k8s.io/apimachinery/pkg/util/httpstream/spdy/connection.go`
//! (`newConnection` with a `newStreamHandler` that accepts every stream: spdystream's
//! `Stream.SendReply` answers each `SYN_STREAM` with an empty `SYN_REPLY`), spdystream's ping
//! answers, and `k8s.io/apiserver/pkg/util/proxy/streamtunnel.go`'s view of a WebSocket as a
//! byte stream. The framing is `kubegen_client::spdy`'s, shared with the client.
//!
//! # Tasks
//! A reader task turns frames into [`Event`]s (and answers `SYN_STREAM` and `PING` itself, so a
//! client waiting for its streams' replies is never stalled by a busy handler); a writer task
//! owns the connection's sending half. [`Outgoing::close`] closes the connection once the queued frames are out.

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use kubegen_client::spdy::{self, Frame, Headers};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::streaming::normal_closure;

/// An upgraded connection.
type Io = TokioIo<Upgraded>;

/// What carries the SPDY bytes.
pub(crate) enum Transport {
    /// The upgraded connection itself.
    Raw(Io),
    /// Binary messages of a WebSocket on it.
    Tunnel(Box<WebSocketStream<Io>>),
}

/// What the client did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// Opened a stream (already accepted).
    Opened { stream_id: u32, headers: Headers },
    /// Sent data on a stream; `fin` ends its side.
    Data {
        stream_id: u32,
        data: Bytes,
        fin: bool,
    },
    /// Reset a stream.
    Reset { stream_id: u32 },
}

/// What the writer task is asked to do.
enum Out {
    Frame(Bytes),
    Close,
}

/// Sends frames on a session's connection; cheap to clone.
#[derive(Clone)]
pub(crate) struct Outgoing(mpsc::Sender<Out>);

impl Outgoing {
    /// An `Outgoing` whose frames a test reads back (`None` marks [`Outgoing::close`]).
    #[cfg(test)]
    pub(crate) fn for_test() -> (Outgoing, mpsc::Receiver<Option<Bytes>>) {
        let (tx, mut rx) = mpsc::channel(64);
        let (frames_tx, frames) = mpsc::channel(64);
        tokio::spawn(async move {
            while let Some(out) = rx.recv().await {
                let frame = match out {
                    Out::Frame(frame) => Some(frame),
                    Out::Close => None,
                };
                if frames_tx.send(frame).await.is_err() {
                    return;
                }
            }
        });
        (Outgoing(tx), frames)
    }

    /// Data on `stream_id`; `fin` ends the server's side. False when the connection is gone.
    pub(crate) async fn data(&self, stream_id: u32, data: &[u8], fin: bool) -> bool {
        let frame = spdy::data_frame(stream_id, fin, data);
        self.0.send(Out::Frame(frame)).await.is_ok()
    }

    /// Closes the connection after the frames already queued (as the kubelet closes it when its
    /// handler returns; the client has seen every stream end by then).
    pub(crate) async fn close(&self) {
        let _ = self.0.send(Out::Close).await;
    }
}

/// A running session: its events (ending with the connection) and its sender.
pub(crate) struct Session {
    pub(crate) events: mpsc::Receiver<Event>,
    pub(crate) outgoing: Outgoing,
}

/// Starts serving `transport`.
pub(crate) fn start(transport: Transport) -> Session {
    let (out_tx, out_rx) = mpsc::channel(64);
    let (event_tx, events) = mpsc::channel(64);
    let outgoing = Outgoing(out_tx);
    match transport {
        Transport::Raw(io) => {
            let (mut read, write) = tokio::io::split(io);
            tokio::spawn(write_raw(write, out_rx));
            let replies = outgoing.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0; 32 * 1024];
                let mut reader = Receiver::new(replies, event_tx);
                while let Ok(n) = read.read(&mut buffer).await {
                    if n == 0 || !reader.received(&buffer[..n]).await {
                        break;
                    }
                }
            });
        }
        Transport::Tunnel(socket) => {
            let (sink, mut source) = (*socket).split();
            tokio::spawn(write_tunnel(sink, out_rx));
            let replies = outgoing.clone();
            tokio::spawn(async move {
                let mut reader = Receiver::new(replies, event_tx);
                while let Some(Ok(message)) = source.next().await {
                    match message {
                        Message::Binary(bytes) if !reader.received(&bytes).await => break,
                        Message::Close(_) => break,
                        _ => {}
                    }
                }
            });
        }
    }
    Session { events, outgoing }
}

/// The reader task's state: the frame reader, the header writer for replies, and where events
/// and replies go.
struct Receiver {
    frames: spdy::Reader,
    headers: spdy::Writer,
    replies: Outgoing,
    events: mpsc::Sender<Event>,
}

impl Receiver {
    fn new(replies: Outgoing, events: mpsc::Sender<Event>) -> Receiver {
        Receiver {
            frames: spdy::Reader::default(),
            headers: spdy::Writer::default(),
            replies,
            events,
        }
    }

    /// Handles received bytes; false when the session is over (bad framing, handler gone).
    async fn received(&mut self, bytes: &[u8]) -> bool {
        self.frames.push(bytes);
        loop {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return true,
                Err(e) => {
                    tracing::debug!(error = %e, "SPDY session ended: bad frame");
                    return false;
                }
            };
            let event = match frame {
                Frame::SynStream {
                    stream_id, headers, ..
                } => {
                    let reply = self.headers.syn_reply(stream_id, &[], false);
                    if self.replies.0.send(Out::Frame(reply)).await.is_err() {
                        return false;
                    }
                    Event::Opened { stream_id, headers }
                }
                Frame::Data {
                    stream_id,
                    fin,
                    data,
                } => Event::Data {
                    stream_id,
                    data,
                    fin,
                },
                Frame::RstStream { stream_id, .. } => Event::Reset { stream_id },
                // Odd ids are the client's pings, to answer; even ones answer the server's.
                Frame::Ping { id } if id % 2 == 1 => {
                    let pong = Out::Frame(spdy::ping_frame(id));
                    if self.replies.0.send(pong).await.is_err() {
                        return false;
                    }
                    continue;
                }
                Frame::GoAway => return false,
                Frame::Ping { .. } | Frame::SynReply { .. } | Frame::Ignored => continue,
            };
            if self.events.send(event).await.is_err() {
                return false;
            }
        }
    }
}

/// Writes queued frames until asked to close (or the session is dropped), then closes.
async fn write_raw(mut write: tokio::io::WriteHalf<Io>, mut out: mpsc::Receiver<Out>) {
    while let Some(Out::Frame(frame)) = out.recv().await {
        if write.write_all(&frame).await.is_err() {
            return;
        }
    }
    let _ = write.shutdown().await;
}

/// As [`write_raw`], each frame one binary message; ends with a normal closure.
async fn write_tunnel<S>(mut sink: S, mut out: mpsc::Receiver<Out>)
where
    S: futures_util::Sink<Message> + Unpin,
{
    while let Some(Out::Frame(frame)) = out.recv().await {
        if sink.send(Message::Binary(frame)).await.is_err() {
            return;
        }
    }
    let _ = sink.send(Message::Close(Some(normal_closure()))).await;
    let _ = sink.close().await;
}
