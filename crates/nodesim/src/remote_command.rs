//! `/exec/{namespace}/{pod}/{container}` and `/attach/...`: a simulated process's stdin, stdout and
//! stderr over a WebSocket speaking `v5.channel.k8s.io` or `v4.channel.k8s.io`, and how it ended
//! on the error channel.
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/remotecommand/{exec,attach,websocket}.go` and
//! `status.go` (the `Status` written on channel 3: `Success`, `NonZeroExitCode` with the code as
//! an `ExitCode` cause, or `InternalError` for a command that could not run), over the channel
//! framing of `k8s.io/apimachinery/pkg/util/httpstream/wsstream/conn.go` (one channel byte before
//! each message's data; v5's `[255, channel]` closes a channel). The process is
//! [`crate::process`]'s: a built-in command, never a host one.
//!
//! # Attach
//! The simulated main process of a container copies its stdin to its stdout. An attach with stdin
//! ends when the client closes stdin; one without ends when the container stops or the client
//! goes away, with `Success`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::process::{self, Environment, Exit, Output, Stdio};
use crate::streaming::{
    Body, Host, accept_websocket, channel_frame as frame, container, normal_closure, text,
};

/// The subprotocols spoken, best first.
const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
/// v5's close signal.
const CLOSE: u8 = 255;
/// How often an attach without stdin looks whether its container still runs.
const ATTACH_POLL: Duration = Duration::from_millis(200);

/// The streams a request asks for (`PodExecOptions`, `PodAttachOptions`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Streams {
    pub(crate) stdin: bool,
    pub(crate) stdout: bool,
    pub(crate) stderr: bool,
    pub(crate) tty: bool,
    /// `command` parameters, in order (exec only).
    pub(crate) command: Vec<String>,
}

impl Streams {
    pub(crate) fn parse(query: Option<&str>) -> Streams {
        let mut streams = Streams::default();
        for (key, value) in query
            .unwrap_or_default()
            .split('&')
            .filter_map(|p| p.split_once('='))
        {
            let value = percent_encoding::percent_decode_str(&value.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned();
            let on = value == "true" || value == "1";
            match key {
                "stdin" | "input" => streams.stdin = on,
                "stdout" | "output" => streams.stdout = on,
                "stderr" | "error" => streams.stderr = on,
                "tty" => streams.tty = on,
                "command" => streams.command.push(value),
                _ => {}
            }
        }
        streams
    }
}

/// What runs behind the streams.
enum Job {
    /// `exec`: a command.
    Exec(Vec<String>),
    /// `attach`: the container's main process, until the container (`namespace/pod`) stops.
    Attach { key: String, container: String },
}

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
    let (response, protocol, upgrade) = match accept_websocket(&mut request, &PROTOCOLS) {
        Ok(accepted) => accepted,
        Err(refusal) => return refusal.response(),
    };
    let job = if attach {
        Job::Attach {
            key: format!("{namespace}/{pod_name}"),
            container: container_name.to_owned(),
        }
    } else {
        Job::Exec(streams.command.clone())
    };
    let host = host.clone();
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
    let argv = format!("[{}]", streams.command.join(" "));
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

/// Runs the job; an attach ends when its stdin does or, without stdin, when the container stops.
async fn run(job: Job, env: Environment, mut stdio: Stdio, host: Arc<Host>) -> Exit {
    match job {
        Job::Exec(argv) => process::run(&argv, &env, &mut stdio).await,
        Job::Attach {
            key,
            container: name,
        } => {
            if stdio.stdin.is_some() {
                stdio.echo_stdin().await;
            } else {
                while running(host.pods.get_by_key(&key).as_deref(), &name) {
                    tokio::time::sleep(ATTACH_POLL).await;
                }
            }
            Exit::Code(0)
        }
    }
}

fn running(pod: Option<&Pod>, name: &str) -> bool {
    pod.and_then(|pod| container(pod, name).ok())
        .and_then(|(_, status)| status?.state.as_ref()?.running.as_ref())
        .is_some()
}

/// The `Status` the streaming server writes on the error channel for `exit` of `argv`.
pub(crate) fn status_of(exit: &Exit, argv: &str) -> Value {
    match exit {
        Exit::Code(0) => json!({"metadata": {}, "status": "Success"}),
        Exit::Code(code) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("command terminated with non-zero exit code: error executing command {argv}, exit code {code}"),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        }),
        Exit::StartFailed(why) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("Internal error occurred: error executing command in container: {why}"),
            "reason": "InternalError",
            "code": 500,
        }),
    }
}
