//! The remote-command channel protocol (`v4.channel.k8s.io`, `v5.channel.k8s.io`) without I/O:
//! how exec and attach multiplex stdin, stdout, stderr, the error channel and terminal resizes
//! over the binary messages of one WebSocket, and how the error channel's `Status` becomes an
//! exit code.
//!
//! Mirrors client-go `tools/remotecommand/websocket.go` (framing), `v4.go` (`errorDecoderV4`),
//! `v5.go` (the close signal), `resize.go`, and the constants of apimachinery
//! `pkg/util/remotecommand/constants.go`; the server side is `wsstream/conn.go`.
//!
//! # The framing
//! Every binary message is one channel byte followed by that channel's data: 0 stdin, 1 stdout,
//! 2 stderr, 3 error (a JSON `metav1.Status`, written once when the command ends), 4 resize (a
//! JSON `{"Width":w,"Height":h}`, client to server). v5 adds `[255, channel]`: the client has
//! nothing more to write on `channel` (stdin's end of file, which v4 cannot express).

use bytes::{BufMut, Bytes, BytesMut};
use kube_core::Status;
use kube_core::response::StatusSummary;

/// Channel of the process's standard input (client to server).
pub(crate) const STDIN: u8 = 0;
/// Channel of the process's standard output.
pub(crate) const STDOUT: u8 = 1;
/// Channel of the process's standard error.
pub(crate) const STDERR: u8 = 2;
/// Channel of the final `Status`.
pub(crate) const ERROR: u8 = 3;
/// Channel of terminal size changes (client to server).
pub(crate) const RESIZE: u8 = 4;
/// v5's close signal, followed by the channel being closed.
pub(crate) const CLOSE: u8 = 255;

/// The `Status.reason` of a command that exited with a non-zero code.
const NON_ZERO_EXIT_CODE: &str = "NonZeroExitCode";
/// The cause type (JSON `reason`) that carries the exit code as text.
const EXIT_CODE_CAUSE: &str = "ExitCode";

/// The subprotocol versions this client speaks, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Exit codes and the stdin close signal (API servers 1.30+, 1.29 behind the
    /// `TranslateStreamCloseWebsocketRequests` gate).
    V5,
    /// Exit codes, no close signal (what a kubelet speaks over WebSockets when an older API
    /// server proxies the connection to it).
    V4,
}

impl Protocol {
    /// What exec and attach offer, best first. client-go's WebSocket executor offers v5 only;
    /// offering v4 too lets a server that predates v5 (a v1.15 apiserver proxying to its kubelet)
    /// answer with a protocol that still carries exit codes instead of refusing.
    pub(crate) const OFFERED: [Protocol; 2] = [Protocol::V5, Protocol::V4];

    /// The `Sec-WebSocket-Protocol` token.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protocol::V5 => "v5.channel.k8s.io",
            Protocol::V4 => "v4.channel.k8s.io",
        }
    }

    /// The version a server's `Sec-WebSocket-Protocol` answer names, if this client speaks it.
    pub(crate) fn from_name(name: &str) -> Option<Protocol> {
        Protocol::OFFERED.into_iter().find(|p| p.name() == name)
    }

    /// Whether the client can tell the server that stdin has ended.
    pub(crate) fn can_close_stdin(self) -> bool {
        self == Protocol::V5
    }
}

/// A terminal's size in character cells, sent on the resize channel when the local terminal
/// changes (`remotecommand.TerminalSize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalSize {
    /// Columns.
    pub width: u16,
    /// Rows.
    pub height: u16,
}

/// A message on `channel` carrying `data`.
pub(crate) fn data_frame(channel: u8, data: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(data.len() + 1);
    frame.put_u8(channel);
    frame.put_slice(data);
    frame.freeze()
}

/// v5's message closing `channel` from the client's side.
pub(crate) fn close_frame(channel: u8) -> Bytes {
    Bytes::copy_from_slice(&[CLOSE, channel])
}

/// The resize message for `size`.
pub(crate) fn resize_frame(size: TerminalSize) -> Bytes {
    data_frame(RESIZE, resize_json(size).as_bytes())
}

/// `size` as JSON; the keys are Go's field names (the type has no JSON tags).
pub(crate) fn resize_json(size: TerminalSize) -> String {
    format!(r#"{{"Width":{},"Height":{}}}"#, size.width, size.height)
}

/// Splits a received message into its channel and data. `None` for an empty message (which
/// carries nothing; servers may send them).
pub(crate) fn split_frame(message: &Bytes) -> Option<(u8, Bytes)> {
    let (&channel, _) = message.split_first()?;
    Some((channel, message.slice(1..)))
}

/// How a remote command ended, read from its error channel.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// The command ran and exited with this code (0 when the server reported success or wrote
    /// nothing on the error channel).
    Exited(u8),
    /// The command failed for another reason (it could not start, the container is gone).
    Failed(Box<Status>),
}

/// Reads everything the server wrote on the error channel, as client-go's `errorDecoderV4`:
/// nothing or a `Success` status is exit code 0; a `Failure` with reason `NonZeroExitCode` carries
/// the code in its `ExitCode` cause; any other `Failure` is a failure to run.
///
/// # Errors
/// A description of the protocol violation: not a `Status`, a `NonZeroExitCode` without a
/// usable `ExitCode` cause, or a status that is neither `Success` nor `Failure`.
pub(crate) fn outcome(error_channel: &[u8]) -> Result<Outcome, String> {
    if error_channel.trim_ascii().is_empty() {
        return Ok(Outcome::Exited(0));
    }
    let status: Status = serde_json::from_slice(error_channel).map_err(|e| {
        format!(
            "error channel protocol error: {e} in {:?}",
            String::from_utf8_lossy(error_channel)
        )
    })?;
    match status.status {
        Some(StatusSummary::Success) => Ok(Outcome::Exited(0)),
        Some(StatusSummary::Failure) if status.reason == NON_ZERO_EXIT_CODE => {
            let causes = status.details.as_ref().map(|d| d.causes.as_slice());
            let cause = causes
                .ok_or("error channel protocol error: NonZeroExitCode without details")?
                .iter()
                .find(|c| c.reason == EXIT_CODE_CAUSE)
                .ok_or("error channel protocol error: no ExitCode cause given")?;
            cause
                .message
                .parse::<u8>()
                .map(Outcome::Exited)
                .map_err(|_| {
                    format!(
                        "error channel protocol error: invalid exit code value {:?}",
                        cause.message
                    )
                })
        }
        Some(StatusSummary::Failure) => Ok(Outcome::Failed(Box::new(status))),
        None => Err("error channel protocol error: a Status without `status`".to_owned()),
    }
}

#[cfg(test)]
#[path = "channel_tests.rs"]
mod tests;
