//! exec and attach over SPDY/3.1: each of the process's streams is a SPDY stream the client
//! opens, named by its `streamtype` header; the process starts once every stream the request
//! asked for is open, and how it ended is written on the `error` stream.
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/remotecommand/httpstream.go`
//! (`createHTTPStreamStreams`: the protocol negotiated from `X-Stream-Protocol-Version`, then
//! `waitForStreams` of the chosen version: `error`, and `stdin`, `stdout`, `stderr` as asked, no
//! `stderr` with a TTY, `resize` with a TTY from v3 on, within the stream creation timeout) and
//! `errorstream.go` (v4 writes the `Status` as JSON; v1 to v3 write a failure's message as text
//! and nothing on success). The client side is `kubegen_client`'s `spdy_exec.rs`.

use std::time::Duration;

use bytes::Bytes;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use kubegen_client::spdy::header;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::process::{Environment, Exit, Output, Stdio};
use crate::remote_process::{Job, Streams, run, status_of};
use crate::spdy_session::{self, Event, Transport};
use crate::streaming::Host;

/// The stream protocols spoken over SPDY, best first (`remotecommand.SupportedStreamingProtocols`).
pub(crate) const PROTOCOLS: [&str; 4] = [
    "v4.channel.k8s.io",
    "v3.channel.k8s.io",
    "v2.channel.k8s.io",
    "channel.k8s.io",
];
/// How long the client has to open its streams (the kubelet's `streamCreationTimeout` default).
const STREAM_CREATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The ids of the streams the client opened, by type.
#[derive(Debug, Default, PartialEq, Eq)]
struct Ids {
    error: Option<u32>,
    stdin: Option<u32>,
    stdout: Option<u32>,
    stderr: Option<u32>,
    resize: Option<u32>,
}

impl Ids {
    /// Records stream `id` of type `kind` (unknown types are ignored, as the kubelet logs them).
    fn opened(&mut self, kind: &str, id: u32) {
        let slot = match kind {
            "error" => &mut self.error,
            "stdin" => &mut self.stdin,
            "stdout" => &mut self.stdout,
            "stderr" => &mut self.stderr,
            "resize" => &mut self.resize,
            _ => return,
        };
        *slot = Some(id);
    }

    /// Whether every stream `streams` needs under a protocol with or without `resize` is open.
    fn complete(&self, streams: &Streams, resize: bool) -> bool {
        let needs = |wanted: bool, id: Option<u32>| !wanted || id.is_some();
        self.error.is_some()
            && needs(streams.stdin, self.stdin)
            && needs(streams.stdout, self.stdout)
            && needs(streams.stderr && !streams.tty, self.stderr)
            && needs(streams.tty && resize, self.resize)
    }
}

/// One exec or attach over SPDY speaking `protocol` (one of [`PROTOCOLS`]).
pub(crate) async fn session(
    upgrade: OnUpgrade,
    protocol: &'static str,
    streams: Streams,
    (job, env, host): (Job, Environment, Arc<Host>),
) {
    let Ok(upgraded) = upgrade.await else { return };
    let spdy_session::Session {
        mut events,
        outgoing,
    } = spdy_session::start(Transport::Raw(TokioIo::new(upgraded)));
    let v4 = protocol == PROTOCOLS[0];
    let resize = v4 || protocol == PROTOCOLS[1];
    let mut ids = Ids::default();
    let opened = tokio::time::timeout(STREAM_CREATION_TIMEOUT, async {
        while !ids.complete(&streams, resize) {
            match events.recv().await {
                Some(Event::Opened { stream_id, headers }) => {
                    ids.opened(
                        header(&headers, "streamtype").unwrap_or_default(),
                        stream_id,
                    );
                }
                Some(_) => {}
                None => return false,
            }
        }
        true
    })
    .await;
    if opened != Ok(true) {
        outgoing.close().await;
        return;
    }
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    let mut stdin_tx = ids.stdin.map(|_| stdin_tx);
    let (output, mut outputs) = mpsc::channel(16);
    let stdio = Stdio {
        stdin: ids.stdin.map(|_| stdin_rx),
        output,
    };
    let process = tokio::spawn(run(job, env, stdio, host));
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(Event::Data { stream_id, data, fin }) if Some(stream_id) == ids.stdin => {
                    if let Some(stdin) = &stdin_tx
                        && !data.is_empty()
                    {
                        let _ = stdin.send(data).await;
                    }
                    if fin {
                        stdin_tx = None;
                    }
                }
                Some(Event::Reset { stream_id }) if Some(stream_id) == ids.stdin => stdin_tx = None,
                Some(_) => {}
                None => {
                    process.abort();
                    return;
                }
            },
            out = outputs.recv() => {
                let Some(out) = out else { break };
                let (id, bytes) = match out {
                    Output::Stdout(bytes) => (ids.stdout, bytes),
                    // A terminal merges stderr into stdout.
                    Output::Stderr(bytes) => (if streams.tty { ids.stdout } else { ids.stderr }, bytes),
                };
                if let Some(id) = id
                    && !outgoing.data(id, &bytes, false).await
                {
                    process.abort();
                    return;
                }
            },
        }
    }
    let exit = process
        .await
        .unwrap_or_else(|e| Exit::StartFailed(format!("the simulated process failed: {e}")));
    for id in [ids.stdout, ids.stderr].into_iter().flatten() {
        outgoing.data(id, b"", true).await;
    }
    if let Some(error) = ids.error {
        let report = error_report(&exit, &streams.argv(), v4);
        outgoing.data(error, report.as_bytes(), true).await;
    }
    outgoing.close().await;
}

/// What the error stream carries for `exit`: the `Status` as JSON on v4; on older versions a
/// failure's message as text, and nothing for a success.
fn error_report(exit: &Exit, argv: &str, v4: bool) -> String {
    let status = status_of(exit, argv);
    if v4 {
        return status.to_string();
    }
    status["message"].as_str().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(stdin: bool, stderr: bool, tty: bool) -> Streams {
        Streams {
            stdin,
            stdout: true,
            stderr,
            tty,
            command: vec!["echo".to_owned()],
        }
    }

    #[test]
    fn the_process_waits_for_every_stream_asked_for() {
        let mut ids = Ids::default();
        let streams = asked(true, true, false);
        for (kind, id) in [("error", 1), ("stdin", 3), ("stdout", 5)] {
            ids.opened(kind, id);
            assert!(!ids.complete(&streams, true), "only up to {kind}");
        }
        ids.opened("stderr", 7);
        assert!(ids.complete(&streams, true));
    }

    #[test]
    fn a_terminal_has_no_stderr_and_a_resize_stream_from_v3_on() {
        let mut ids = Ids::default();
        let streams = asked(false, true, true);
        ids.opened("error", 1);
        ids.opened("stdout", 3);
        assert!(ids.complete(&streams, false), "v2: no resize stream");
        assert!(!ids.complete(&streams, true), "v3+: a resize stream");
        ids.opened("resize", 5);
        assert!(ids.complete(&streams, true));
        ids.opened("bogus", 7);
        assert_eq!(ids.resize, Some(5));
    }

    #[test]
    fn v4_reports_a_status_and_older_versions_a_failures_text() {
        let failed = Exit::Code(3);
        let json: serde_json::Value =
            serde_json::from_str(&error_report(&failed, "[sh -c exit 3]", true)).unwrap();
        assert_eq!(json["reason"], "NonZeroExitCode");
        assert_eq!(json["details"]["causes"][0]["message"], "3");
        assert_eq!(
            error_report(&failed, "[sh -c exit 3]", false),
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
        );
        assert_eq!(error_report(&Exit::Code(0), "[true]", false), "");
        assert_eq!(
            error_report(&Exit::Code(0), "[true]", true),
            r#"{"metadata":{},"status":"Success"}"#
        );
    }
}
