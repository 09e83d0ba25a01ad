//! The SPDY session of exec and attach, used when the WebSocket upgrade is refused: each of the
//! process's streams is its own SPDY stream, named by a `streamType` header, on one upgraded
//! connection (`spdy_upgrade.rs`), framed by `spdy.rs`.
//!
//! Mirrors client-go `tools/remotecommand/v1.go` to `v4.go` (which streams each version opens,
//! in which order, and how its error stream reads) and `errorstream.go`, over
//! `k8s.io/streaming/pkg/httpstream/spdy/connection.go` (client pings every 5 s, odd stream ids).
//!
//! # The streams
//! The client opens, in this order, `error`, then `stdin`, `stdout` and `stderr` when asked for
//! (`stderr` never with a TTY), then `resize` with a TTY on v3 and v4. All are opened before any
//! stdin byte is sent, as client-go does so that a server that starts copying only once every
//! stream has arrived is never flooded first (kubernetes#16373). The server writes the process's
//! output on `stdout` and `stderr` and ends each with FIN, then writes how it ended on `error`:
//! a `metav1.Status` on v4 (an exit code, as over the WebSocket), plain text on v1 to v3 (no exit
//! codes there). Closing stdin is a FIN on `stdin`, which SPDY can always express; the server
//! ending `stdin` ends it on the client's side too (client-go's second stdin goroutine).
//!
//! # Guarantees
//! - The session ends when `stdout`, `stderr` and `error` have all ended (FIN or reset), or when
//!   the connection closes; output pipes reach their end of file as soon as their stream ends.
//! - Server pings (even ids) are answered; the answers to the client's own pings (odd ids) are not
//!   echoed back.

use std::time::Duration;

use bytes::Bytes;
use kube_core::Status;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::channel::{self, TerminalSize};
use crate::error::{Error, Result, error_chain};
use crate::exec_pipes::{self, Pipes, next_size, read_some, write_or_drop};
use crate::spdy::{self, Frame};
use crate::spdy_upgrade::Connection;

/// How often the client pings the server (client-go's SPDY round tripper's `PingPeriod`).
const PING_PERIOD: Duration = Duration::from_secs(5);

/// The stream protocol versions spoken over SPDY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpdyProtocol {
    /// Exit codes on the error stream (`metav1.Status`), resize.
    V4,
    /// Resize; plain-text errors.
    V3,
    /// Separate stdin half-close; plain-text errors, no resize.
    V2,
    /// The original protocol (also what a server that names no version speaks).
    V1,
}

impl SpdyProtocol {
    /// What the SPDY fallback offers, best first: client-go's `SupportedStreamingProtocols`.
    pub(crate) const OFFERED: [SpdyProtocol; 4] = [
        SpdyProtocol::V4,
        SpdyProtocol::V3,
        SpdyProtocol::V2,
        SpdyProtocol::V1,
    ];

    /// The `X-Stream-Protocol-Version` token.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SpdyProtocol::V4 => "v4.channel.k8s.io",
            SpdyProtocol::V3 => "v3.channel.k8s.io",
            SpdyProtocol::V2 => "v2.channel.k8s.io",
            SpdyProtocol::V1 => "channel.k8s.io",
        }
    }

    /// The version a server's answer names; none named is v1, as in client-go.
    pub(crate) fn from_name(name: &str) -> Option<SpdyProtocol> {
        if name.is_empty() {
            return Some(SpdyProtocol::V1);
        }
        SpdyProtocol::OFFERED.into_iter().find(|p| p.name() == name)
    }

    /// Whether a TTY session opens a `resize` stream (v3 and later).
    fn has_resize(self) -> bool {
        matches!(self, SpdyProtocol::V4 | SpdyProtocol::V3)
    }
}

/// The ids of one session's streams. The client opens them all, so they are odd, numbered in
/// the order they are opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Streams {
    pub(crate) error: u32,
    pub(crate) stdin: Option<u32>,
    pub(crate) stdout: Option<u32>,
    pub(crate) stderr: Option<u32>,
    pub(crate) resize: Option<u32>,
}

impl Streams {
    /// The streams `pipes` need under `protocol`, in client-go's order.
    pub(crate) fn for_pipes(protocol: SpdyProtocol, pipes: &Pipes) -> Streams {
        // The error stream is always first.
        let mut next = 3;
        let mut open = |wanted: bool| {
            wanted.then(|| {
                let id = next;
                next += 2;
                id
            })
        };
        Streams {
            error: 1,
            stdin: open(pipes.stdin.is_some()),
            stdout: open(pipes.stdout.is_some()),
            stderr: open(pipes.stderr.is_some()),
            resize: open(pipes.sizes.is_some() && protocol.has_resize()),
        }
    }

    /// The `SYN_STREAM` frames that open them, each with its `streamtype` header.
    pub(crate) fn opening(&self, writer: &mut spdy::Writer) -> Vec<Bytes> {
        [
            (Some(self.error), "error"),
            (self.stdin, "stdin"),
            (self.stdout, "stdout"),
            (self.stderr, "stderr"),
            (self.resize, "resize"),
        ]
        .into_iter()
        .filter_map(|(id, kind)| id.map(|id| writer.syn_stream(id, &[("streamtype", kind)], false)))
        .collect()
    }
}

/// Opens the streams and runs the session to its end; the exit code, or why it failed.
///
/// # Errors
/// As [`RemoteProcess::wait`](crate::RemoteProcess::wait).
pub(crate) async fn run(
    conn: Connection,
    protocol: SpdyProtocol,
    url: String,
    pipes: Pipes,
) -> Result<u8> {
    let streams = Streams::for_pipes(protocol, &pipes);
    let mut session = Session {
        conn,
        protocol,
        url,
        pipes,
        streams,
        reader: spdy::Reader::default(),
        stdout_done: streams.stdout.is_none(),
        stderr_done: streams.stderr.is_none(),
        error_done: false,
        error_stream: Vec::new(),
        error_reset: None,
        stdin_ended: streams.stdin.is_none(),
        next_ping: 1,
    };
    let mut writer = spdy::Writer::default();
    for frame in streams.opening(&mut writer) {
        session.send(&frame).await?;
    }
    session.run().await
}

/// One session's connection, the caller's pipes and what has ended so far.
struct Session {
    conn: Connection,
    protocol: SpdyProtocol,
    /// Path and query of the request, for errors.
    url: String,
    pipes: Pipes,
    streams: Streams,
    reader: spdy::Reader,
    /// The server has ended `stdout` (or it was never opened).
    stdout_done: bool,
    /// The server has ended `stderr` (or it was never opened).
    stderr_done: bool,
    /// The server has ended `error`.
    error_done: bool,
    /// Everything received on `error`.
    error_stream: Vec<u8>,
    /// The SPDY status with which the server reset `error`, if it did.
    error_reset: Option<u32>,
    /// The client has sent `stdin`'s FIN, or the stream is gone (or never opened).
    stdin_ended: bool,
    /// The id of the client's next ping (odd, as the client's).
    next_ping: u32,
}

/// What woke the driver up.
enum Event {
    Received(std::io::Result<usize>),
    Stdin(std::io::Result<usize>),
    Resize(Option<TerminalSize>),
    Ping,
}

impl Session {
    async fn run(mut self) -> Result<u8> {
        let mut incoming = vec![0; 32 * 1024];
        let mut buffer = vec![0; 32 * 1024];
        let mut ping =
            tokio::time::interval_at(tokio::time::Instant::now() + PING_PERIOD, PING_PERIOD);
        while !(self.stdout_done && self.stderr_done && self.error_done) {
            let event = tokio::select! {
                read = self.conn.read(&mut incoming) => Event::Received(read),
                read = read_some(&mut self.pipes.stdin, &mut buffer), if self.pipes.stdin.is_some() => Event::Stdin(read),
                size = next_size(&mut self.pipes.sizes), if self.pipes.sizes.is_some() => Event::Resize(size),
                _ = ping.tick() => Event::Ping,
            };
            match event {
                Event::Received(Ok(0)) => break,
                Event::Received(Ok(n)) => {
                    self.reader.push(&incoming[..n]);
                    while let Some(frame) = self.reader.next_frame().map_err(|m| self.failed(m))? {
                        self.receive(frame).await?;
                    }
                }
                // The command's status has arrived: a connection dropped after it loses nothing.
                Event::Received(Err(_)) if self.error_done => break,
                Event::Received(Err(e)) => return Err(self.failed(error_chain(&e))),
                Event::Stdin(Ok(0) | Err(_)) => self.end_stdin().await?,
                Event::Stdin(Ok(n)) => {
                    if let Some(id) = self.streams.stdin {
                        self.send(&spdy::data_frame(id, false, &buffer[..n]))
                            .await?;
                    }
                }
                Event::Resize(Some(size)) => self.resize(size).await?,
                Event::Resize(None) => self.pipes.sizes = None,
                Event::Ping => {
                    let id = self.next_ping;
                    self.next_ping = self.next_ping.wrapping_add(2);
                    self.send(&spdy::ping_frame(id)).await?;
                }
            }
        }
        self.pipes.stdout = None;
        self.pipes.stderr = None;
        // The session is over; the server may already have closed its side.
        let _ = self.conn.shutdown().await;
        self.outcome()
    }

    /// Applies one frame from the server.
    async fn receive(&mut self, frame: Frame) -> Result<()> {
        let streams = self.streams;
        match frame {
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                if Some(stream_id) == streams.stdout {
                    write_or_drop(&mut self.pipes.stdout, &data).await;
                    if fin {
                        self.stdout_done = true;
                        self.pipes.stdout = None;
                    }
                } else if Some(stream_id) == streams.stderr {
                    write_or_drop(&mut self.pipes.stderr, &data).await;
                    if fin {
                        self.stderr_done = true;
                        self.pipes.stderr = None;
                    }
                } else if stream_id == streams.error {
                    self.error_stream.extend_from_slice(&data);
                    self.error_done |= fin;
                } else if Some(stream_id) == streams.stdin && fin {
                    self.end_stdin().await?;
                }
            }
            Frame::RstStream { stream_id, status } => {
                if Some(stream_id) == streams.stdout {
                    self.stdout_done = true;
                    self.pipes.stdout = None;
                } else if Some(stream_id) == streams.stderr {
                    self.stderr_done = true;
                    self.pipes.stderr = None;
                } else if stream_id == streams.error {
                    self.error_done = true;
                    self.error_reset = Some(status);
                } else if Some(stream_id) == streams.stdin {
                    self.pipes.stdin = None;
                    self.stdin_ended = true;
                }
            }
            // Even ids are the server's pings; odd ones answer the client's.
            Frame::Ping { id } if id % 2 == 0 => self.send(&spdy::ping_frame(id)).await?,
            // GOAWAY forbids new streams; the open ones go on until the connection closes.
            Frame::Ping { .. }
            | Frame::GoAway
            | Frame::SynReply { .. }
            | Frame::SynStream { .. }
            | Frame::Ignored => {}
        }
        Ok(())
    }

    /// Ends stdin: the caller closed it or the server ended the stream. Sends FIN once.
    async fn end_stdin(&mut self) -> Result<()> {
        self.pipes.stdin = None;
        if !self.stdin_ended {
            self.stdin_ended = true;
            if let Some(id) = self.streams.stdin {
                self.send(&spdy::data_frame(id, true, b"")).await?;
            }
        }
        Ok(())
    }

    /// Sends a terminal size as client-go's JSON encoder writes it (one object per line). Without
    /// a resize stream (v1, v2) sizes are dropped, as client-go has nowhere to send them either.
    async fn resize(&mut self, size: TerminalSize) -> Result<()> {
        if let Some(id) = self.streams.resize {
            let line = format!("{}\n", channel::resize_json(size));
            self.send(&spdy::data_frame(id, false, line.as_bytes()))
                .await?;
        }
        Ok(())
    }

    /// How the command ended, from the error stream.
    fn outcome(self) -> Result<u8> {
        if let Some(status) = self.error_reset
            && self.error_stream.is_empty()
        {
            return Err(Error::StreamFailed {
                url: self.url,
                message: format!("error stream reset by the server (SPDY status {status})"),
            });
        }
        if self.protocol == SpdyProtocol::V4 {
            return exec_pipes::exit_code(self.url, &self.error_stream);
        }
        // v1 to v3 write plain text, and only when the command could not run or failed.
        let text = String::from_utf8_lossy(&self.error_stream)
            .trim()
            .to_owned();
        if text.is_empty() {
            return Ok(0);
        }
        Err(Error::RemoteCommandFailed {
            url: self.url,
            status: Box::new(Status::failure(&text, "")),
        })
    }

    async fn send(&mut self, frame: &[u8]) -> Result<()> {
        let sent = self.conn.write_all(frame).await;
        sent.map_err(|e| self.failed(error_chain(&e)))
    }

    fn failed(&self, message: String) -> Error {
        Error::StreamFailed {
            url: self.url.clone(),
            message,
        }
    }
}

#[cfg(test)]
#[path = "spdy_exec_tests.rs"]
mod tests;
