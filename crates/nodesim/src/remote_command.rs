//! `/exec/{namespace}/{pod}/{container}` and `/attach/...`: a simulated process's stdin, stdout and
//! stderr over a WebSocket speaking `v5.channel.k8s.io` or `v4.channel.k8s.io`, or over SPDY
//! (`remote_command_spdy.rs`), and how it ended on the error channel.
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/remotecommand/{exec,attach,websocket}.go` and
//! `status.go` (the `Status` written on channel 3), over the channel framing of
//! `k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go` (one channel byte before each
//! message's data; v5's `[255, channel]` closes a channel). The process and its `Status` are
//! [`crate::remote_process`]'s: a built-in command, never a host one.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::process::{Environment, Exit, Output, Stdio};
use crate::remote_command_spdy;
use crate::remote_process::{Job, Streams, run, status_of};
use crate::streaming::{
    Body, Host, accept_spdy, accept_websocket, channel_frame as frame, container, is_spdy_upgrade,
    normal_closure, text,
};

/// The subprotocols spoken, best first.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
/// v5's close signal.
const CLOSE: u8 = 255;

/// Serves an exec or attach request.
pub(crate) fn serve<B>(
    host: &Arc<Host>,
    (namespace, pod_name, container_name): (&str, &str, &str),
    attach: bool,
    mut request: Request<B>,
) -> Response<Body> {
    let pod = match host.pod(namespace, pod_name) {
        Ok(pod) => pod,
        Err(refusal) => return refusal.response(),
    };
    let (spec, status) = match container(&pod, container_name) {
        Ok(found) => found,
        Err(refusal) => return refusal.response(),
    };
    let state = status.and_then(|s| s.state.as_ref());
    if state.is_none_or(|s| s.running.is_none()) {
        let message = if state.is_some_and(|s| s.terminated.is_some()) {
            "cannot exec in a stopped state: unknown".to_owned()
        } else {
            format!("container not found ({container_name:?})")
        };
        return text(StatusCode::INTERNAL_SERVER_ERROR, message);
    }
    let streams = Streams::parse(request.uri().query());
    if !attach && streams.command.is_empty() {
        return text(
            StatusCode::BAD_REQUEST,
            "you must specify at least 1 command\n",
        );
    }
    let env = Environment::of(&pod, spec);
    let job = if attach {
        Job::Attach {
            key: format!("{namespace}/{pod_name}"),
            container: container_name.to_owned(),
        }
    } else {
        Job::Exec(streams.command.clone())
    };
    let host = host.clone();
    if is_spdy_upgrade(&request) {
        let (response, protocol, upgrade) =
            match accept_spdy(&mut request, &remote_command_spdy::PROTOCOLS) {
                Ok(accepted) => accepted,
                Err(refusal) => return *refusal,
            };
        let session = remote_command_spdy::session(upgrade, protocol, streams, (job, env, host));
        tokio::spawn(session);
        return response;
    }
    let (response, protocol, upgrade) = match accept_websocket(&mut request, &PROTOCOLS) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal.response(),
    };
    let v5 = protocol == PROTOCOLS[0];
    tokio::spawn(session(upgrade, v5, streams, (job, env, host)));
    response
}

/// One exec or attach: copies between the socket and the process until the process ends (its
/// output sender drops), then writes its `Status` and closes. A client that goes away ends the
/// session (the simulated process with it).
async fn session(
    upgrade: OnUpgrade,
    v5: bool,
    streams: Streams,
    (job, env, host): (Job, Environment, Arc<Host>),
) {
    let Ok(upgraded) = upgrade.await else { return };
    let socket = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    let (mut sink, mut source) = socket.split();
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    let mut stdin_tx = streams.stdin.then_some(stdin_tx);
    let (output, mut outputs) = mpsc::channel(16);
    let stdio = Stdio {
        stdin: streams.stdin.then_some(stdin_rx),
        output,
    };
    let argv = streams.argv();
    let process = tokio::spawn(run(job, env, stdio, host));
    loop {
        tokio::select! {
            message = source.next() => match message {
                Some(Ok(Message::Binary(data))) => match data.split_first() {
                    Some((&STDIN, bytes)) => {
                        if let Some(stdin) = &stdin_tx {
                            let _ = stdin.send(Bytes::copy_from_slice(bytes)).await;
                        }
                    }
                    Some((&CLOSE, [STDIN])) if v5 => stdin_tx = None,
                    _ => {}
                },
                Some(Ok(Message::Close(_)) | Err(_)) | None => {
                    process.abort();
                    return;
                }
                Some(Ok(_)) => {}
            },
            out = outputs.recv() => {
                let Some(out) = out else { break };
                let (channel, bytes) = match out {
                    Output::Stdout(bytes) => (STDOUT, bytes),
                    // A terminal merges stderr into stdout.
                    Output::Stderr(bytes) => (if streams.tty { STDOUT } else { STDERR }, bytes),
                };
                let wanted = if channel == STDOUT { streams.stdout } else { streams.stderr };
                if wanted && sink.send(Message::Binary(frame(channel, &bytes))).await.is_err() {
                    process.abort();
                    return;
                }
            },
        }
    }
    let exit = process
        .await
        .unwrap_or_else(|e| Exit::StartFailed(format!("the simulated process failed: {e}")));
    let status = status_of(&exit, &argv).to_string();
    let _ = sink
        .send(Message::Binary(frame(ERROR, status.as_bytes())))
        .await;
    // A normal closure (1000): clients read it as the end of every channel, while a close
    // without a code (1005) is an error to client-go's reader.
    let _ = sink.send(Message::Close(Some(normal_closure()))).await;
    let _ = sink.close().await;
}
