//! exec and attach: run a command in a pod's container (or join its main process) with its
//! stdin, stdout and stderr carried over one WebSocket (or, when the WebSocket is refused, one
//! SPDY connection), and learn its exit code.
//!
//! Mirrors client-go `tools/remotecommand/fallback.go` (`NewFallbackExecutor`: the WebSocket
//! executor first, the SPDY executor when the upgrade fails, as kubectl builds it),
//! `websocket.go` (`NewWebSocketExecutor`), `spdy.go` (`NewSPDYExecutor`) and `remotecommand.go`
//! (`StreamOptions`), and kubectl's `pkg/cmd/exec/exec.go` and `pkg/cmd/attach/attach.go` (the
//! query parameters, `stderr` off with a TTY). The sessions live in `websocket_exec.rs` and
//! `spdy_exec.rs`, the fallback rule in `fallback.rs`.
//!
//! # Why an `AsyncRead`/`AsyncWrite` per stream
//! A backup through `exec` copies stdout into a file with `tokio::io::copy`; a test writes stdin
//! and reads stdout line by line. Each stream is one end of an in-memory pipe whose other end a
//! background task feeds from (or drains into) the connection, so callers use tokio's ordinary
//! I/O tools and the process keeps running while they are busy elsewhere.
//!
//! # Guarantees
//! - The streams asked for are [`RemoteProcess::take_stdin`] & co.; closing or dropping stdin
//!   ends the process's input (v5 sends the close signal, SPDY a FIN; v4 over a WebSocket cannot
//!   tell the server, see below).
//! - A stream that is dropped unread is discarded and never blocks the others. One that is
//!   held but not read stalls the session once its 64 KiB pipe is full, as a full pipe stalls a
//!   local process: read what you take, or drop it.
//! - [`RemoteProcess::wait`] resolves with the [`ExitStatus`] once the server ends the session.
//! - Dropping a [`RemoteProcess`] without waiting closes the connection.
//!
//! # The SPDY fallback
//! A WebSocket upgrade that gets any answer but a valid `101` (an error status too, as in
//! client-go) is retried once as a `POST` upgraded to SPDY/3.1 offering `v4.channel.k8s.io` down
//! to `channel.k8s.io`; the SPDY attempt's result is the one returned, so a missing pod is still
//! [`Error::is_not_found`]. [`RemoteProcess::over_spdy`] tells which one runs. Failures before
//! any answer (connection refused, timeouts) are not retried (`fallback.rs` has the table).
//!
//! # Differences from client-go
//! - `v4.channel.k8s.io` is offered after `v5.channel.k8s.io` (client-go offers v5 alone), so
//!   a kubelet that predates v5 (reached through a v1.15 API server's proxy) still answers over
//!   a WebSocket, with exit codes but without stdin's close signal: there, closing stdin does
//!   not reach the command, so one that reads its input to the end (`cat`, `psql -f -`) never
//!   ends; check [`RemoteProcess::protocol`]. (client-go gets SPDY, which can half-close, in
//!   that case.)
//! - No read deadline: client-go also fails a session that has not heard from the server for 61 s
//!   despite its pings; here the pings keep proxies from closing an idle connection, and a dead
//!   one ends when TCP notices.
//!
//! # What servers answer before the upgrade (v1.15 and v1.36, checked on both)
//! - A missing pod: 404 `pods "missing" not found` ([`Error::is_not_found`]).
//! - A pod without a node: 400 `pod one does not have a host assigned`; several containers and
//!   none named: 400 `a container name must be specified for pod two, choose one of: [a b]`
//!   ([`Error::is_bad_request`]).
//! - A pod bound to a Node that does not exist: 404 `pods "ghost-node" not found`.
//! - No permission: 403 ([`Error::is_forbidden`]). v1.15 wants `get` on `pods/exec` for the
//!   WebSocket `GET` (message `... cannot get resource "pods/exec" ...`); v1.36 also wants
//!   `create` (`AuthorizePodWebsocketUpgradeCreatePermission`, on since 1.35) and, to a user who
//!   has `get` but not `create`, answers with the bare message `pods "one" is forbidden: `.
//!   Either way the SPDY retry (a `POST`) is asked for `create` and is what is returned: on both
//!   versions `pods "one" is forbidden: User "nobody" cannot create resource "pods/exec" ...`.

use std::future::Future;

use tokio::io::{AsyncReadExt, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::channel::{Protocol, TerminalSize};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::exec_pipes::Pipes;
use crate::fallback::should_fall_back;
use crate::request::ResourcePath;
use crate::spdy_exec::{self, SpdyProtocol};
use crate::{spdy_upgrade, websocket, websocket_exec};

/// Capacity of each in-memory pipe between a stream and the socket.
const PIPE_CAPACITY: usize = 64 * 1024;

/// Which of the process's streams to connect, for [`Client::exec`] and [`Client::attach`]
/// (`PodExecOptions` / `PodAttachOptions` without the command).
///
/// The default connects stdout and stderr, without stdin or a terminal (`kubectl exec POD -- CMD`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    /// The container; required when the pod has more than one.
    pub container: Option<String>,
    /// Connect the process's standard input ([`RemoteProcess::take_stdin`]).
    pub stdin: bool,
    /// Connect its standard output.
    pub stdout: bool,
    /// Connect its standard error. Must be `false` with `tty` (a terminal merges both outputs
    /// into stdout; kubectl turns it off the same way).
    pub stderr: bool,
    /// Allocate a terminal: the process sees a TTY and [`RemoteProcess::resizer`] is available.
    pub tty: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            container: None,
            stdin: false,
            stdout: true,
            stderr: true,
            tty: false,
        }
    }
}

impl ExecOptions {
    /// The query parameters in `PodExecOptions` field order, `command` last (exec only).
    pub(crate) fn params(&self, command: &[&str]) -> Vec<(&'static str, String)> {
        let mut params = Vec::new();
        for (key, on) in [
            ("stdin", self.stdin),
            ("stdout", self.stdout),
            ("stderr", self.stderr),
            ("tty", self.tty),
        ] {
            if on {
                params.push((key, "true".to_owned()));
            }
        }
        if let Some(container) = &self.container {
            params.push(("container", container.clone()));
        }
        params.extend(command.iter().map(|arg| ("command", (*arg).to_owned())));
        params
    }
}

/// How a remote command ended: its exit code (0 to 255).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    code: u8,
}

impl ExitStatus {
    /// Whether the command exited with code 0.
    pub fn success(self) -> bool {
        self.code == 0
    }

    /// The exit code.
    pub fn code(self) -> i32 {
        i32::from(self.code)
    }
}

/// Everything a finished remote command wrote, and how it ended ([`RemoteProcess::output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessOutput {
    /// How the command ended.
    pub status: ExitStatus,
    /// What it wrote to stdout (empty when stdout was not connected).
    pub stdout: Vec<u8>,
    /// What it wrote to stderr (empty when stderr was not connected).
    pub stderr: Vec<u8>,
}

/// Sends terminal size changes of a TTY session (channel 4). Cheap to clone.
#[derive(Clone, Debug)]
pub struct TerminalResizer {
    sizes: mpsc::Sender<TerminalSize>,
    /// Path and query of the session's request, for errors.
    url: String,
}

impl TerminalResizer {
    /// Tells the remote terminal its new size.
    ///
    /// # Errors
    /// [`Error::StreamFailed`] when the session has already ended.
    pub async fn resize(&self, size: TerminalSize) -> Result<()> {
        self.sizes
            .send(size)
            .await
            .map_err(|_| Error::StreamFailed {
                url: self.url.clone(),
                message: "resize after the session ended".to_owned(),
            })
    }
}

/// A command running in a container (or a container's main process joined by attach).
#[derive(Debug)]
pub struct RemoteProcess {
    stdin: Option<DuplexStream>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    resizer: Option<TerminalResizer>,
    /// The stream protocol the server chose.
    protocol: &'static str,
    /// The WebSocket was refused and the session runs over SPDY.
    over_spdy: bool,
    /// Path and query of the request, for errors.
    url: String,
    /// The task moving data between the pipes and the connection, with the exit code it read;
    /// `None` once awaited.
    driver: Option<JoinHandle<Result<u8>>>,
}

impl RemoteProcess {
    /// The process's standard input, if [`ExecOptions::stdin`] was set (once). Shut it down
    /// (`AsyncWriteExt::shutdown`) or drop it to end the input.
    pub fn take_stdin(&mut self) -> Option<DuplexStream> {
        self.stdin.take()
    }

    /// The process's standard output, if [`ExecOptions::stdout`] was set (once).
    pub fn take_stdout(&mut self) -> Option<DuplexStream> {
        self.stdout.take()
    }

    /// The process's standard error, if [`ExecOptions::stderr`] was set (once).
    pub fn take_stderr(&mut self) -> Option<DuplexStream> {
        self.stderr.take()
    }

    /// A handle to resize the remote terminal, if [`ExecOptions::tty`] was set.
    pub fn resizer(&self) -> Option<TerminalResizer> {
        self.resizer.clone()
    }

    /// The stream protocol the server chose: over a WebSocket `v5.channel.k8s.io` or
    /// `v4.channel.k8s.io` (without stdin's close signal); over SPDY `v4.channel.k8s.io` down to
    /// `channel.k8s.io` (exit codes only with v4).
    pub fn protocol(&self) -> &'static str {
        self.protocol
    }

    /// Whether the server refused the WebSocket and the session fell back to SPDY.
    pub fn over_spdy(&self) -> bool {
        self.over_spdy
    }

    /// Waits until the server ends the session and returns the exit code. Streams not taken are
    /// discarded (stdin is closed first).
    ///
    /// # Errors
    /// [`Error::RemoteCommandFailed`] when the command could not run (the error channel's
    /// `Status`); [`Error::StreamFailed`] when the connection broke or the server broke the
    /// protocol.
    pub async fn wait(mut self) -> Result<ExitStatus> {
        self.stdin = None;
        self.stdout = None;
        self.stderr = None;
        let driver = self.driver.take();
        match driver {
            Some(driver) => {
                let code = driver.await.map_err(|e| Error::StreamFailed {
                    url: self.url.clone(),
                    message: format!("session task ended abnormally: {e}"),
                })??;
                Ok(ExitStatus { code })
            }
            None => Err(Error::StreamFailed {
                url: self.url.clone(),
                message: "the session was already awaited".to_owned(),
            }),
        }
    }

    /// Closes stdin (a command gets no input, like `std::process::Command::output`), reads
    /// stdout and stderr to their ends, and waits for the exit code.
    ///
    /// # Errors
    /// As [`RemoteProcess::wait`].
    pub async fn output(mut self) -> Result<ProcessOutput> {
        self.stdin = None;
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let (stdout, stderr) = tokio::join!(read_all(stdout), read_all(stderr));
        let status = self.wait().await?;
        Ok(ProcessOutput {
            status,
            stdout,
            stderr,
        })
    }
}

impl Drop for RemoteProcess {
    fn drop(&mut self) {
        if let Some(driver) = &self.driver {
            driver.abort();
        }
    }
}

/// Reads a pipe to its end; a pipe that breaks yields what was read so far.
async fn read_all(pipe: Option<DuplexStream>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(mut pipe) = pipe {
        // The driver only ever closes its end; an error here cannot carry more data.
        let _ = pipe.read_to_end(&mut out).await;
    }
    out
}

impl Client {
    /// Runs `command` in a container of pod `pod`: `kubectl exec`, client-go's
    /// `NewWebSocketExecutor(config, "GET", req.URL()).StreamWithContext(...)`.
    ///
    /// Resolves once the server has accepted the WebSocket; the command then runs until it ends
    /// ([`RemoteProcess::wait`], [`RemoteProcess::output`]).
    ///
    /// # Errors
    /// [`Error::BuildRequest`] for an empty command or no stream asked for; the server's refusal
    /// as [`Error::Api`] (see the module doc); [`Error::UpgradeFailed`] for a broken handshake.
    pub async fn exec(
        &self,
        namespace: &str,
        pod: &str,
        command: &[&str],
        opts: &ExecOptions,
    ) -> Result<RemoteProcess> {
        if command.is_empty() {
            return Err(Error::BuildRequest(format!(
                "exec in pod {namespace}/{pod}: the command is empty"
            )));
        }
        self.start(namespace, pod, "exec", &opts.params(command), opts)
            .await
    }

    /// Joins the main process of a container of pod `pod`: `kubectl attach`. The process keeps
    /// running after the session ends (unless it exits because its stdin closed).
    ///
    /// # Errors
    /// As [`Client::exec`].
    pub async fn attach(
        &self,
        namespace: &str,
        pod: &str,
        opts: &ExecOptions,
    ) -> Result<RemoteProcess> {
        self.start(namespace, pod, "attach", &opts.params(&[]), opts)
            .await
    }

    async fn start(
        &self,
        namespace: &str,
        pod: &str,
        subresource: &str,
        params: &[(&str, String)],
        opts: &ExecOptions,
    ) -> Result<RemoteProcess> {
        if !(opts.stdin || opts.stdout || opts.stderr) {
            return Err(Error::BuildRequest(format!(
                "{subresource} in pod {namespace}/{pod}: at least one of stdin, stdout or stderr must be connected"
            )));
        }
        let path = ResourcePath::new("", "v1", "pods", Some(namespace));
        let request = path.stream(pod, subresource, params)?;
        let url = request.uri().to_string();
        let offered = Protocol::OFFERED.map(Protocol::name);
        let refusal = match websocket::connect(self, request, &offered).await {
            Ok((socket, chosen)) => {
                let protocol =
                    Protocol::from_name(&chosen).ok_or_else(|| Error::UpgradeFailed {
                        url: url.clone(),
                        message: format!("unexpected subprotocol {chosen:?}"),
                    })?;
                let run = |pipes| websocket_exec::run(socket, protocol, url.clone(), pipes);
                return Ok(spawn(protocol.name(), false, url.clone(), opts, run));
            }
            Err(refusal) if should_fall_back(&refusal) => refusal,
            Err(other) => return Err(other),
        };
        tracing::debug!(error = %refusal, "WebSocket refused, retrying {subresource} over SPDY");
        let request = path.stream(pod, subresource, params)?;
        let offered = SpdyProtocol::OFFERED.map(SpdyProtocol::name);
        let (conn, chosen) = spdy_upgrade::connect(self, request, &offered).await?;
        let protocol = SpdyProtocol::from_name(&chosen).ok_or_else(|| Error::UpgradeFailed {
            url: url.clone(),
            message: format!("unexpected stream protocol {chosen:?}"),
        })?;
        let run = |pipes| spdy_exec::run(conn, protocol, url.clone(), pipes);
        Ok(spawn(protocol.name(), true, url.clone(), opts, run))
    }
}

/// One end of a pipe for the caller and the other for the driver, when `wanted`.
fn pipe(wanted: bool) -> (Option<DuplexStream>, Option<DuplexStream>) {
    if wanted {
        let (caller, driver) = tokio::io::duplex(PIPE_CAPACITY);
        (Some(caller), Some(driver))
    } else {
        (None, None)
    }
}

/// Makes the pipes `opts` ask for and starts `run` on the driver's ends.
fn spawn<F, Fut>(
    protocol: &'static str,
    over_spdy: bool,
    url: String,
    opts: &ExecOptions,
    run: F,
) -> RemoteProcess
where
    F: FnOnce(Pipes) -> Fut,
    Fut: Future<Output = Result<u8>> + Send + 'static,
{
    let (stdin, stdin_driver) = pipe(opts.stdin);
    let (stdout, stdout_driver) = pipe(opts.stdout);
    let (stderr, stderr_driver) = pipe(opts.stderr && !opts.tty);
    let (resizer, sizes) = if opts.tty {
        let (tx, rx) = mpsc::channel(4);
        let resizer = TerminalResizer {
            sizes: tx,
            url: url.clone(),
        };
        (Some(resizer), Some(rx))
    } else {
        (None, None)
    };
    let pipes = Pipes {
        stdin: stdin_driver,
        stdout: stdout_driver,
        stderr: stderr_driver,
        sizes,
    };
    RemoteProcess {
        stdin,
        stdout,
        stderr,
        resizer,
        protocol,
        over_spdy,
        url,
        driver: Some(tokio::spawn(run(pipes))),
    }
}

#[cfg(test)]
#[path = "remote_command_tests.rs"]
mod tests;
