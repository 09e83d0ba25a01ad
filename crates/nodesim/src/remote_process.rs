//! What runs behind an exec or attach, whichever protocol carries its streams: the options a
//! request asks for, the simulated process (a built-in command for exec, the container's main
//! process for attach), and the `Status` that reports how it ended.
//!
//! Mirrors `k8s.io/cri-streaming/pkg/streaming/remotecommand/{exec,attach}.go` (`ServeExec`:
//! `Success`, `NonZeroExitCode` with the code as an `ExitCode` cause, or `InternalError` for a
//! command that could not run) and `pkg/kubelet/server/server.go`'s `remotecommandserver.NewOptions`.
//!
//! # Attach
//! The simulated main process of a container copies its stdin to its stdout. An attach with stdin
//! ends when the client closes stdin; one without ends when the container stops or the client
//! goes away, with `Success`.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::process::{self, Environment, Exit, Stdio};
use crate::streaming::{Host, container};

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
    /// The options of an exec or attach query (`stdin=true&command=echo&...`).
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

    /// The command as the `Status` messages quote it (Go's `%v` of a string slice).
    pub(crate) fn argv(&self) -> String {
        format!("[{}]", self.command.join(" "))
    }
}

/// What runs behind the streams.
pub(crate) enum Job {
    /// `exec`: a command.
    Exec(Vec<String>),
    /// `attach`: the container's main process, until the container (`namespace/pod`) stops.
    Attach { key: String, container: String },
}

/// Runs the job; an attach ends when its stdin does or, without stdin, when the container stops.
pub(crate) async fn run(job: Job, env: Environment, mut stdio: Stdio, host: Arc<Host>) -> Exit {
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
