//! The driver's side of a remote process's streams, shared by the two sessions that can carry
//! exec and attach: the WebSocket one (`websocket_exec.rs`) and the SPDY one (`spdy_exec.rs`).
//!
//! Mirrors what client-go's `tools/remotecommand/v2.go` (`copyStdin`, `copyStdout`,
//! `copyStderr`) and `errorstream.go` (`watchErrorStream`) do whatever carries the bytes: feed
//! stdin to the server, hand stdout and stderr to the caller, and turn the error channel into an
//! exit code. Only the framing differs between the two sessions, so these pieces are written once.

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

use crate::channel::{self, Outcome, TerminalSize};
use crate::error::{Error, Result};

/// The driver's ends of the pipes whose other ends the caller holds.
#[derive(Debug)]
pub(crate) struct Pipes {
    /// Read end of stdin; `None` once it ended (or was never asked for).
    pub(crate) stdin: Option<DuplexStream>,
    /// Write end of stdout; `None` when not asked for or dropped by the caller.
    pub(crate) stdout: Option<DuplexStream>,
    /// Write end of stderr; as `stdout`.
    pub(crate) stderr: Option<DuplexStream>,
    /// Terminal sizes to send; `None` without a TTY or once every resizer is dropped.
    pub(crate) sizes: Option<mpsc::Receiver<TerminalSize>>,
}

/// Reads from stdin's pipe (only polled while it is open).
pub(crate) async fn read_some(
    stdin: &mut Option<DuplexStream>,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    match stdin {
        Some(pipe) => pipe.read(buffer).await,
        None => std::future::pending().await,
    }
}

/// The next terminal size (only polled while a resizer may still send).
pub(crate) async fn next_size(
    sizes: &mut Option<mpsc::Receiver<TerminalSize>>,
) -> Option<TerminalSize> {
    match sizes {
        Some(sizes) => sizes.recv().await,
        None => std::future::pending().await,
    }
}

/// Writes to an output pipe; a pipe whose reader is gone is dropped, and its data discarded.
pub(crate) async fn write_or_drop(pipe: &mut Option<DuplexStream>, data: &[u8]) {
    if let Some(writer) = pipe
        && writer.write_all(data).await.is_err()
    {
        *pipe = None;
    }
}

/// The exit code a `v4.channel.k8s.io` (or v5) error channel reports, read by
/// [`channel::outcome`].
///
/// # Errors
/// [`Error::RemoteCommandFailed`] for a failure that is not an exit code;
/// [`Error::StreamFailed`] for an error channel that breaks the protocol.
pub(crate) fn exit_code(url: String, error_channel: &[u8]) -> Result<u8> {
    match channel::outcome(error_channel) {
        Ok(Outcome::Exited(code)) => Ok(code),
        Ok(Outcome::Failed(status)) => Err(Error::RemoteCommandFailed { url, status }),
        Err(message) => Err(Error::StreamFailed { url, message }),
    }
}
