//! Pod logs: `GET /api/v1/namespaces/{ns}/pods/{name}/log`, read whole or followed as a stream.
//!
//! Mirrors client-go `kubernetes/typed/core/v1/pod_expansion.go` (`GetLogs`, which returns a
//! request the caller `Do`es or `Stream`s) and kubectl's `pkg/cmd/logs/logs.go` (which streams
//! and copies lines). The options are `PodLogOptions` from `pkg/apis/core/types.go`.
//!
//! # Why a stream of lines and of bytes
//! A test harness waits for one line ("ready to accept connections"); a backup tool copies bytes.
//! [`LogStream::next_line`] serves the first, [`LogStream::next_chunk`] the second, on one
//! reader: mixing them is allowed, the line reader keeps any bytes it has buffered.
//!
//! # What servers answer (v1.15 and v1.36 alike, checked on both)
//! - A missing pod: 404 `pods "x" not found` ([`Error::is_not_found`]).
//! - A pod of several containers without [`LogOptions::container`]: 400
//!   `a container name must be specified for pod two, choose one of: [a b]`; an unknown
//!   container: 400 `container nope is not valid for pod one` ([`Error::is_bad_request`]).
//! - A pod bound to a Node that does not exist: 404 `pods "ghost-node" not found` (sic: the
//!   server reports the node lookup under the kind `pods`).
//! - A pod not yet scheduled: `204 No Content`, an empty log (no error).
//! - Invalid options: 422 `PodLogOptions "x" is invalid: tailLines: ...` ([`Error::is_invalid`]),
//!   e.g. `sinceSeconds` or `limitBytes` of 0, a negative `tailLines`, both `sinceSeconds` and
//!   `sinceTime`. v1.36 without the `PodLogsQuerySplitStreams` feature answers any `stream`
//!   with 422 `stream: Forbidden: may not be specified`; v1.15 ignores it.

use bytes::{Bytes, BytesMut};

use crate::body::Body;
use crate::client::{Client, read_body};
use crate::error::{Error, Result};
use crate::request::ResourcePath;

/// Which of the container's output streams a log request returns (`PodLogOptions.stream`,
/// Kubernetes 1.32+ behind the `PodLogsQuerySplitStreams` feature gate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogStreamSelector {
    /// Only what the container wrote to stdout.
    Stdout,
    /// Only what the container wrote to stderr.
    Stderr,
    /// Both, interleaved (the default when unset).
    All,
}

impl LogStreamSelector {
    fn as_str(self) -> &'static str {
        match self {
            LogStreamSelector::Stdout => "Stdout",
            LogStreamSelector::Stderr => "Stderr",
            LogStreamSelector::All => "All",
        }
    }
}

/// `PodLogOptions`: what part of which container's log to return. The default asks for the whole
/// current log of the pod's only container.
///
/// Fields left `None`/`false` are not sent, so the server applies its own defaults. The server,
/// not this client, validates them (see the module doc for its answers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// The container to read; required when the pod has more than one.
    pub container: Option<String>,
    /// Keep the response open and stream new lines as the container writes them.
    pub follow: bool,
    /// The log of the previous, terminated instance of the container.
    pub previous: bool,
    /// Only lines newer than this many seconds (at least 1). Exclusive with `since_time`.
    pub since_seconds: Option<i64>,
    /// Only lines written at or after this time (sent with second precision, RFC 3339).
    pub since_time: Option<jiff::Timestamp>,
    /// Prefix every line with its RFC 3339 timestamp.
    pub timestamps: bool,
    /// Only the last this many lines (at least 0).
    pub tail_lines: Option<i64>,
    /// Stop after this many bytes (at least 1); the last line may be cut.
    pub limit_bytes: Option<i64>,
    /// Let the API server skip verifying the kubelet's serving certificate for this request.
    pub insecure_skip_tls_verify_backend: bool,
    /// Only one of the container's output streams (1.32+, feature-gated on the server).
    pub stream: Option<LogStreamSelector>,
}

impl LogOptions {
    /// The query parameters, in `PodLogOptions` field order.
    fn params(&self) -> Vec<(&'static str, String)> {
        let mut params = Vec::new();
        let flag = |params: &mut Vec<_>, key, on: bool| {
            if on {
                params.push((key, "true".to_owned()));
            }
        };
        if let Some(container) = &self.container {
            params.push(("container", container.clone()));
        }
        flag(&mut params, "follow", self.follow);
        flag(&mut params, "previous", self.previous);
        if let Some(seconds) = self.since_seconds {
            params.push(("sinceSeconds", seconds.to_string()));
        }
        if let Some(time) = self.since_time {
            params.push(("sinceTime", time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()));
        }
        flag(&mut params, "timestamps", self.timestamps);
        if let Some(lines) = self.tail_lines {
            params.push(("tailLines", lines.to_string()));
        }
        if let Some(bytes) = self.limit_bytes {
            params.push(("limitBytes", bytes.to_string()));
        }
        flag(
            &mut params,
            "insecureSkipTLSVerifyBackend",
            self.insecure_skip_tls_verify_backend,
        );
        if let Some(stream) = self.stream {
            params.push(("stream", stream.as_str().to_owned()));
        }
        params
    }
}

/// The log request of one pod.
pub(crate) fn log_request(
    namespace: &str,
    pod: &str,
    opts: &LogOptions,
) -> Result<http::Request<Bytes>> {
    ResourcePath::new("", "v1", "pods", Some(namespace)).stream(pod, "log", &opts.params())
}

impl Client {
    /// The log of pod `pod` in `namespace`, read whole: `kubectl logs` without `-f`, client-go's
    /// `GetLogs(name, opts).DoRaw(ctx)`.
    ///
    /// Runs under the client's request timeout, so it is not for `follow`: use
    /// [`Client::pod_log_stream`] for that (with `follow`, this would wait for the container to
    /// end).
    ///
    /// # Errors
    /// The server's answers as [`Error::Api`] (see the module doc: 404 for a missing pod, 400 for
    /// a missing or unknown container, 422 for invalid options), transport errors otherwise.
    pub async fn pod_logs(&self, namespace: &str, pod: &str, opts: &LogOptions) -> Result<Vec<u8>> {
        let request = log_request(namespace, pod, opts)?;
        let url = request.uri().to_string();
        self.with_timeout("GET", &url, async {
            let mut response = self.send(request).await?;
            read_body(response.body_mut(), "GET", &url).await
        })
        .await
    }

    /// The log of pod `pod` as it streams in: `kubectl logs -f` when `opts.follow` is set,
    /// client-go's `GetLogs(name, opts).Stream(ctx)`.
    ///
    /// Resolves once the server has answered (so its errors come from here); the stream then has
    /// no timeout and ends when the server closes it: with `follow`, when the container ends (or
    /// the kubelet drops the connection).
    ///
    /// # Errors
    /// As [`Client::pod_logs`], for the request itself.
    pub async fn pod_log_stream(
        &self,
        namespace: &str,
        pod: &str,
        opts: &LogOptions,
    ) -> Result<LogStream> {
        let request = log_request(namespace, pod, opts)?;
        let url = request.uri().to_string();
        let response = self.send(request).await?;
        Ok(LogStream::new(url, response.into_body()))
    }
}

/// A pod's log as it arrives, read as chunks of bytes or as lines.
///
/// # Invariants
/// `pending` holds bytes received but not yet returned, never a complete line unless the
/// previous call was [`LogStream::next_chunk`] (which returns `pending` first).
#[derive(Debug)]
pub struct LogStream {
    /// Path and query of the log request, for errors.
    url: String,
    body: Body,
    /// Bytes read from `body` and not yet returned.
    pending: BytesMut,
    /// The body has ended (or failed); only `pending` is left.
    done: bool,
}

impl LogStream {
    fn new(url: String, body: Body) -> LogStream {
        LogStream {
            url,
            body,
            pending: BytesMut::new(),
            done: false,
        }
    }

    /// The next bytes of the log as they arrived; `None` once the server has closed the stream.
    ///
    /// # Errors
    /// [`Error::LogStreamFailed`] when the connection breaks mid-stream; the stream ends after it.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes>> {
        if !self.pending.is_empty() {
            return Some(Ok(self.pending.split().freeze()));
        }
        self.read()
            .await
            .map(|read| read.map(|()| self.pending.split().freeze()))
    }

    /// The next line of the log, without its `\n` (and `\r\n`'s `\r`), decoded as UTF-8 with
    /// invalid bytes replaced. A last line without a newline is returned when the stream ends.
    /// `None` once the server has closed the stream and every line was returned.
    ///
    /// # Errors
    /// [`Error::LogStreamFailed`] when the connection breaks mid-stream; the stream ends after it.
    pub async fn next_line(&mut self) -> Option<Result<String>> {
        loop {
            if let Some(end) = memchr::memchr(b'\n', &self.pending) {
                let line = self.pending.split_to(end + 1);
                return Some(Ok(line_text(&line)));
            }
            if self.done {
                if self.pending.is_empty() {
                    return None;
                }
                let line = self.pending.split();
                return Some(Ok(line_text(&line)));
            }
            if let Some(Err(e)) = self.read().await {
                return Some(Err(e));
            }
        }
    }

    /// Reads the rest of the log until the server closes the stream.
    ///
    /// # Errors
    /// [`Error::LogStreamFailed`] when the connection breaks mid-stream.
    pub async fn read_to_end(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(chunk) = self.next_chunk().await {
            out.extend_from_slice(&chunk?);
        }
        Ok(out)
    }

    /// Reads one more chunk into `pending`; `None` at the end of the body.
    async fn read(&mut self) -> Option<Result<()>> {
        if self.done {
            return None;
        }
        match self.body.next_chunk().await {
            Some(Ok(chunk)) => {
                self.pending.extend_from_slice(&chunk);
                Some(Ok(()))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(Error::LogStreamFailed {
                    url: self.url.clone(),
                    message: crate::error::error_chain(e.as_ref()),
                }))
            }
            None => {
                self.done = true;
                None
            }
        }
    }
}

/// A line's text without its line ending.
fn line_text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
#[path = "pod_logs_tests.rs"]
mod tests;
