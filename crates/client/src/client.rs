//! [`Client`]: sends requests through a [`Transport`], with the policies that apply to every
//! request whatever the transport: client-side rate limiting, `Retry-After` on 429, the request
//! timeout, a `tracing` span, request metrics ([`ClientMetrics`]), and the mapping of error
//! responses to [`Error`].
//!
//! Mirrors client-go `rest/client.go` (`RESTClient`) and the retry half of `rest/request.go`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response};
use kubegen_flowcontrol::TokenBucket;
use tracing::Instrument;

use crate::body::Body;
use crate::config::Config;
use crate::error::{Error, Result, from_error_response, parse_retry_after};
use crate::metrics::{AttemptGuard, ClientMetrics, DurationGuard, RequestRecorder};
use crate::protobuf::WireFormat;
use crate::transport::{HttpTransport, Transport};

/// Error bodies larger than this are cut (a `Status` is a few hundred bytes).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Request policies of a [`Client`], set from its [`Config`].
#[derive(Clone, Debug)]
pub(crate) struct Policies {
    /// Limit on one non-watch request, from sending to the last body byte.
    pub(crate) timeout: Option<Duration>,
    /// Added to a watch's `timeoutSeconds` to get its idle timeout.
    pub(crate) watch_idle_margin: Duration,
    /// Idle timeout of a watch without `timeoutSeconds`.
    pub(crate) watch_idle_default: Duration,
    /// Retries of an idempotent request answered with 429 and `Retry-After`.
    pub(crate) max_429_retries: u32,
    /// Longest `Retry-After` honoured; longer waits return the 429 to the caller.
    pub(crate) max_retry_after: Duration,
    /// What `get`, `list` and `watch` of built-in kinds ask for.
    pub(crate) wire_format: WireFormat,
}

impl Policies {
    /// How long to wait before retry number `attempt + 1` of a 429 answer with these headers;
    /// `None` when there is no `Retry-After`, it is too long, or the retries are used up.
    fn retry_wait(&self, headers: &http::HeaderMap, attempt: u32) -> Option<Duration> {
        let wait = parse_retry_after(headers)?;
        (attempt < self.max_429_retries && wait <= self.max_retry_after).then_some(wait)
    }
}

impl Default for Policies {
    fn default() -> Self {
        Policies {
            timeout: Some(Duration::from_secs(295)),
            watch_idle_margin: Duration::from_secs(30),
            watch_idle_default: Duration::from_secs(630),
            max_429_retries: 5,
            max_retry_after: Duration::from_secs(60),
            wire_format: WireFormat::default(),
        }
    }
}

/// A handle to one API server. Cheap to clone: all clones share one connection pool.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Arc<dyn Transport>,
    default_namespace: String,
    policies: Policies,
    /// Client-side QPS limit; `None` (the default) leaves throttling to the server.
    rate_limiter: Option<TokenBucket>,
    /// Where request counts and latencies go, shared by all clones.
    recorder: RequestRecorder,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("default_namespace", &self.inner.default_namespace)
            .field("policies", &self.inner.policies)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client speaking HTTP(S) to the server of `config`.
    ///
    /// # Errors
    /// [`Error::Tls`] when the CA or client certificate in the config is unusable;
    /// [`Error::RateLimitInvalid`] for a [`Config::rate_limit`] no token bucket can honour.
    pub fn new(config: Config) -> Result<Client> {
        let rate_limiter = config.rate_limit.map(|r| r.bucket()).transpose()?;
        let transport = HttpTransport::new(&config)?;
        let policies = Policies {
            timeout: config.timeout,
            wire_format: config.wire_format,
            ..Policies::default()
        };
        let host = config
            .cluster_url()
            .authority()
            .map_or_else(String::new, ToString::to_string);
        Ok(Client {
            inner: Arc::new(Inner {
                transport: Arc::new(transport),
                default_namespace: config.default_namespace().to_owned(),
                policies,
                rate_limiter,
                recorder: RequestRecorder {
                    metrics: config.metrics,
                    host,
                },
            }),
        })
    }

    /// A client over any transport (an in-process server, a fake), with default policies and no
    /// client-side rate limit. It records into its own [`ClientMetrics`], with an empty `host`
    /// label.
    pub fn with_transport(transport: Arc<dyn Transport>, default_namespace: &str) -> Client {
        Client {
            inner: Arc::new(Inner {
                transport,
                default_namespace: default_namespace.to_owned(),
                policies: Policies::default(),
                rate_limiter: None,
                recorder: RequestRecorder {
                    metrics: ClientMetrics::default(),
                    host: String::new(),
                },
            }),
        }
    }

    /// The namespace of the kubeconfig context (or the pod's namespace in-cluster).
    pub fn default_namespace(&self) -> &str {
        &self.inner.default_namespace
    }

    /// The series this client and all its clones record into (those of
    /// [`Config::metrics`]); register them once to export them.
    pub fn metrics(&self) -> ClientMetrics {
        self.inner.recorder.metrics.clone()
    }

    pub(crate) fn policies(&self) -> &Policies {
        &self.inner.policies
    }

    /// Sends one request and returns a successful (2xx) response with its body still streaming.
    ///
    /// Waits for the client-side rate limit first (if configured), retries an idempotent request
    /// (GET, PUT, DELETE) that the server rejected with 429 and a `Retry-After` of at most a
    /// minute, and turns any non-2xx response into an [`Error`]. Records every attempt and the
    /// whole call's duration in [`Client::metrics`].
    ///
    /// # Errors
    /// [`Error::Api`] / [`Error::HttpStatus`] for error statuses, transport errors otherwise.
    pub async fn send(&self, request: Request<Bytes>) -> Result<Response<Body>> {
        let verb = request.method().clone();
        let path = request.uri().to_string();
        let span = tracing::debug_span!(
            "request",
            verb = %verb,
            path = %path,
            status = tracing::field::Empty,
            latency_ms = tracing::field::Empty,
        );
        let _duration = DurationGuard::start(&self.inner.recorder, &verb);
        self.send_in_span(request, &verb, &path)
            .instrument(span)
            .await
    }

    async fn send_in_span(
        &self,
        request: Request<Bytes>,
        verb: &Method,
        path: &str,
    ) -> Result<Response<Body>> {
        let started = tokio::time::Instant::now();
        if let Some(limiter) = &self.inner.rate_limiter {
            let waited = limiter.acquire().await;
            let recorder = &self.inner.recorder;
            recorder
                .metrics
                .observe_rate_limiter(&recorder.host, verb, waited);
            if waited > Duration::from_millis(50) {
                tracing::info!(
                    waited_ms = waited.as_millis() as u64,
                    "client-side rate limit delayed request"
                );
            }
        }
        let (parts, body) = request.into_parts();
        let idempotent = matches!(
            parts.method,
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE
        );
        let mut attempt = 0;
        loop {
            let mut request = Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            let attempt_guard = AttemptGuard::start(&self.inner.recorder, verb);
            let response = self.inner.transport.send(request).await;
            attempt_guard.finish(response.as_ref().ok().map(Response::status));
            let span = tracing::Span::current();
            if let Ok(response) = &response {
                span.record("status", response.status().as_u16());
            }
            span.record("latency_ms", started.elapsed().as_millis() as u64);
            let response = response?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retry = (status == http::StatusCode::TOO_MANY_REQUESTS && idempotent)
                .then(|| self.inner.policies.retry_wait(response.headers(), attempt))
                .flatten();
            if let Some(wait) = retry {
                attempt += 1;
                tracing::info!(
                    attempt,
                    wait_ms = wait.as_millis() as u64,
                    "429 from server, retrying after Retry-After"
                );
                tokio::time::sleep(wait).await;
                continue;
            }
            return Err(error_from_response(verb, path, response).await);
        }
    }

    /// Sends an HTTP/1.1 upgrade request through the transport and returns the `101 Switching
    /// Protocols` response (its extensions hold the upgraded connection). Waits for the
    /// client-side rate limit first; no retries (an exec must not run twice). The request timeout
    /// bounds the handshake only, not the session that follows.
    ///
    /// # Errors
    /// An error status (403 without `create` on `pods/exec`, 404, 400) as [`Error::Api`] /
    /// [`Error::HttpStatus`], as for [`Client::send`]; a 2xx that is not 101 as
    /// [`Error::UpgradeFailed`]; transport errors otherwise.
    pub(crate) async fn upgrade(&self, request: Request<Bytes>) -> Result<Response<Body>> {
        if let Some(limiter) = &self.inner.rate_limiter {
            limiter.acquire().await;
        }
        let verb = request.method().clone();
        let path = request.uri().to_string();
        self.with_timeout(verb.as_str(), &path, async {
            let response = self.inner.transport.upgrade(request).await?;
            let status = response.status();
            if status == http::StatusCode::SWITCHING_PROTOCOLS {
                return Ok(response);
            }
            if status.is_success() {
                return Err(Error::UpgradeFailed {
                    url: path.clone(),
                    message: format!(
                        "the server answered {status} instead of 101 Switching Protocols"
                    ),
                });
            }
            Err(error_from_response(&verb, &path, response).await)
        })
        .await
    }

    /// Sends a request and decodes the whole JSON response as `T`, within the request timeout:
    /// client-go's `RESTClient.Do(ctx).Into(obj)`, for requests no typed client covers
    /// (discovery documents, a kind known only at run time).
    ///
    /// # Errors
    /// As [`Client::send`], and [`Error::Decode`] when the body is not a `T`.
    pub async fn request_json<T: serde::de::DeserializeOwned>(
        &self,
        request: Request<Bytes>,
    ) -> Result<T> {
        let verb = request.method().to_string();
        let url = request.uri().to_string();
        self.with_timeout(&verb, &url, async {
            let mut response = self.send(request).await?;
            let bytes = read_body(response.body_mut(), &verb, &url).await?;
            serde_json::from_slice(&bytes).map_err(|source| Error::Decode {
                what: format!("response of {verb} {url}"),
                excerpt: crate::error::excerpt(&bytes),
                source,
            })
        })
        .await
    }

    /// Runs `work` under the request timeout (if any).
    pub(crate) async fn with_timeout<T>(
        &self,
        verb: &str,
        url: &str,
        work: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        match self.inner.policies.timeout {
            None => work.await,
            Some(after) => tokio::time::timeout(after, work).await.unwrap_or_else(|_| {
                Err(Error::Timeout {
                    verb: verb.to_owned(),
                    url: url.to_owned(),
                    after,
                })
            }),
        }
    }
}

/// Reads a whole (non-streaming) response body.
pub(crate) async fn read_body(body: &mut Body, verb: &str, url: &str) -> Result<Vec<u8>> {
    body.collect_limited(usize::MAX)
        .await
        .map_err(|e| Error::RequestFailed {
            verb: verb.to_owned(),
            url: url.to_owned(),
            message: format!("reading response body: {e}"),
        })
}

async fn error_from_response(verb: &Method, path: &str, response: Response<Body>) -> Error {
    let (parts, mut body) = response.into_parts();
    // A body that fails mid-way still leaves the status code to report.
    let bytes = body
        .collect_limited(MAX_ERROR_BODY)
        .await
        .unwrap_or_default();
    from_error_response(verb.as_str(), path, parts.status, &parts.headers, &bytes)
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
