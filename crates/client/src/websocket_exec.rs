//! The WebSocket session of exec and attach: moves the process's streams over the binary
//! messages of one WebSocket in the `v5.channel.k8s.io` / `v4.channel.k8s.io` framing
//! (`channel.rs`) until the server closes it, then reads the exit code.
//!
//! Mirrors client-go `tools/remotecommand/websocket.go` (`wsStreamCreator.readDemuxLoop`, the
//! ping loop, `v5.go`'s close signal).

use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::{self, Message};

use crate::channel::{self, Protocol, TerminalSize};
use crate::error::{Error, Result, error_chain};
use crate::exec_pipes::{self, Pipes, next_size, read_some, write_or_drop};
use crate::websocket::Socket;

/// How often the client pings the server, keeping idle connections open through proxies
/// (client-go's `pingPeriod`).
const PING_PERIOD: Duration = Duration::from_secs(5);

/// Runs one session to its end; the exit code, or why it failed.
pub(crate) async fn run(
    socket: Socket,
    protocol: Protocol,
    url: String,
    pipes: Pipes,
) -> Result<u8> {
    Session {
        socket,
        protocol,
        url,
        pipes,
        error_channel: Vec::new(),
    }
    .run()
    .await
}

/// The driver's side of one session: the socket and the pipe ends it feeds or drains.
struct Session {
    socket: Socket,
    protocol: Protocol,
    /// Path and query of the request, for errors.
    url: String,
    /// The caller's streams.
    pipes: Pipes,
    /// Everything received on the error channel so far.
    error_channel: Vec<u8>,
}

/// What woke the driver up.
enum Event {
    Received(Option<std::result::Result<Message, tungstenite::Error>>),
    Stdin(std::io::Result<usize>),
    Resize(Option<TerminalSize>),
    Ping,
}

impl Session {
    async fn run(mut self) -> Result<u8> {
        let mut buffer = vec![0; 32 * 1024];
        let mut ping =
            tokio::time::interval_at(tokio::time::Instant::now() + PING_PERIOD, PING_PERIOD);
        loop {
            let event = tokio::select! {
                message = self.socket.next() => Event::Received(message),
                read = read_some(&mut self.pipes.stdin, &mut buffer), if self.pipes.stdin.is_some() => Event::Stdin(read),
                size = next_size(&mut self.pipes.sizes), if self.pipes.sizes.is_some() => Event::Resize(size),
                _ = ping.tick() => Event::Ping,
            };
            match event {
                Event::Received(None) => break,
                Event::Received(Some(Ok(message))) => {
                    if !self.receive(message).await? {
                        break;
                    }
                }
                Event::Received(Some(Err(e))) => match e {
                    tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
                        break;
                    }
                    // The command's status has arrived: a connection dropped without a close
                    // handshake after it loses nothing.
                    _ if !self.error_channel.is_empty() => break,
                    other => return Err(self.failed(error_chain(&other))),
                },
                Event::Stdin(Ok(0) | Err(_)) => self.end_stdin().await?,
                Event::Stdin(Ok(n)) => {
                    let frame = channel::data_frame(channel::STDIN, &buffer[..n]);
                    self.send(frame).await?;
                }
                Event::Resize(Some(size)) => self.send(channel::resize_frame(size)).await?,
                Event::Resize(None) => self.pipes.sizes = None,
                Event::Ping => self.send_message(Message::Ping(Bytes::new())).await?,
            }
        }
        self.pipes.stdout = None;
        self.pipes.stderr = None;
        // The server has closed; answering its close frame is a courtesy that may fail.
        let _ = self.socket.close(None).await;
        exec_pipes::exit_code(self.url, &self.error_channel)
    }

    /// Handles one message; `false` when the server is closing the session.
    async fn receive(&mut self, message: Message) -> Result<bool> {
        let data = match message {
            Message::Binary(data) => data,
            Message::Close(_) => return Ok(false),
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => return Ok(true),
            Message::Text(_) => {
                return Err(self.failed(
                    "a text message on a binary channel protocol (base64 protocols are not offered)"
                        .to_owned(),
                ));
            }
        };
        let Some((channel, payload)) = channel::split_frame(&data) else {
            return Ok(true);
        };
        match channel {
            channel::STDOUT => write_or_drop(&mut self.pipes.stdout, &payload).await,
            channel::STDERR => write_or_drop(&mut self.pipes.stderr, &payload).await,
            channel::ERROR => self.error_channel.extend_from_slice(&payload),
            other => tracing::debug!(channel = other, "ignoring data on an unexpected channel"),
        }
        Ok(true)
    }

    /// The caller closed stdin: tell the server when the protocol can.
    async fn end_stdin(&mut self) -> Result<()> {
        self.pipes.stdin = None;
        if self.protocol.can_close_stdin() {
            self.send(channel::close_frame(channel::STDIN)).await?;
        }
        Ok(())
    }

    async fn send(&mut self, frame: Bytes) -> Result<()> {
        self.send_message(Message::Binary(frame)).await
    }

    async fn send_message(&mut self, message: Message) -> Result<()> {
        self.socket
            .send(message)
            .await
            .map_err(|e| self.failed(error_chain(&e)))
    }

    fn failed(&self, message: String) -> Error {
        Error::StreamFailed {
            url: self.url.clone(),
            message,
        }
    }
}
