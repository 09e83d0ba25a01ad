//! The one error type of kubegen-client, and the mapping from an HTTP error response to it.
//!
//! Mirrors client-go `k8s.io/apimachinery/pkg/api/errors` (the `IsNotFound`, `IsConflict`, ...
//! predicates) plus the transport and configuration failures of `rest` and `tools/clientcmd`.
//!
//! # Why predicates instead of matching on codes
//! Controllers branch on *what happened* (gone, conflict, throttled), and the API server encodes
//! that in two places: the HTTP status code and the `reason` of the `Status` body. The predicates
//! look at both, so callers never parse either themselves.

use std::path::PathBuf;
use std::time::Duration;

use kube_core::Status;

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between loading a kubeconfig and decoding a response.
///
/// Variants are named after the step that failed. Messages name the file, field or URL involved
/// and never contain a bearer token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API server answered with an error status and a `Status` body.
    #[error("{verb} {url}: {} ({}, {})", .status.message, .status.reason, .status.code)]
    Api {
        /// HTTP method of the failed request.
        verb: String,
        /// Path and query of the failed request.
        url: String,
        /// The server's `Status`, as sent.
        status: Box<Status>,
        /// The `Retry-After` header (or `details.retryAfterSeconds`), if any.
        retry_after: Option<Duration>,
    },
    /// The server answered with an error status but a body that is not a `Status` (an HTML page
    /// from a proxy, an empty body, plain text).
    #[error("{verb} {url}: HTTP {code}: {body_excerpt}")]
    HttpStatus {
        /// HTTP method of the failed request.
        verb: String,
        /// Path and query of the failed request.
        url: String,
        /// HTTP status code.
        code: u16,
        /// The start of the body (at most 256 bytes, lossy UTF-8), or `<empty body>`.
        body_excerpt: String,
        /// The `Retry-After` header, if any.
        retry_after: Option<Duration>,
    },
    /// No connection could be established (refused, reset, DNS, TLS handshake) before a response.
    #[error("connecting to {url}: {message}")]
    Connect {
        /// The request URL.
        url: String,
        /// The cause, flattened into text (it includes the full cause chain).
        message: String,
    },
    /// The request failed after the connection was set up, or reading the response body failed.
    #[error("{verb} {url}: {message}")]
    RequestFailed {
        /// HTTP method.
        verb: String,
        /// Path and query.
        url: String,
        /// The cause, flattened into text.
        message: String,
    },
    /// The request did not complete within the client's request timeout.
    #[error("{verb} {url}: no complete response within {after:?}")]
    Timeout {
        /// HTTP method.
        verb: String,
        /// Path and query.
        url: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The server does not know server-side apply: it answered an `application/apply-patch+yaml`
    /// patch with 415 (Kubernetes before 1.16, or 1.14/1.15 without the `ServerSideApply`
    /// feature gate).
    #[error(
        "{verb} {url}: the server does not support server-side apply (it answered 415: {message}); Kubernetes 1.16 or newer is needed"
    )]
    ApplyUnsupported {
        /// HTTP method of the failed request.
        verb: String,
        /// Path and query of the failed request.
        url: String,
        /// The server's message.
        message: String,
    },
    /// A watch stream delivered no bytes for longer than its idle timeout (a dead connection).
    #[error("watch {url}: no data for {after:?}, assuming the connection is dead")]
    WatchIdle {
        /// Path and query of the watch.
        url: String,
        /// The idle timeout that expired.
        after: Duration,
    },
    /// The body of an open watch broke mid-stream: connection reset, unexpected EOF, an HTTP/2
    /// GOAWAY, stream reset or keepalive-ping timeout. The stream ends after this error.
    ///
    /// The watch is over, but nothing is wrong with the resourceVersion it had reached: open a
    /// new watch from the last version seen, as client-go does (its `StreamWatcher` treats
    /// `IsProbableEOF` and timeouts as the watch ending, not as a failure that needs a relist).
    #[error("watch {url}: stream broke: {message}")]
    WatchInterrupted {
        /// Path and query of the watch.
        url: String,
        /// The cause, flattened into text (it includes the full cause chain).
        message: String,
    },
    /// A response body could not be decoded.
    #[error("decoding {what}: {source} (near: {excerpt})")]
    Decode {
        /// What was being decoded, e.g. `list item 3 of /api/v1/pods`.
        what: String,
        /// A truncated excerpt of the offending bytes.
        excerpt: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A list body is not a JSON object of the expected shape.
    #[error("decoding list {url}: malformed JSON at byte {offset}: {message}")]
    MalformedList {
        /// The list URL.
        url: String,
        /// Byte offset in the body.
        offset: u64,
        /// What the scanner expected.
        message: String,
    },
    /// A line of a watch stream is not a valid watch event. The stream ends after this error.
    #[error("watch {url}: malformed event on line {line}: {source} (line starts: {excerpt})")]
    WatchDecode {
        /// Path and query of the watch.
        url: String,
        /// 1-based line number within the stream.
        line: u64,
        /// A truncated excerpt of the line.
        excerpt: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A protobuf response body (a built-in kind's object, list or watch frame) could not be
    /// decoded. For a watch, the stream ends after this error.
    #[error("decoding protobuf {what}: {source}")]
    ProtobufDecode {
        /// What was being decoded, e.g. `list /api/v1/pods` or `watch /api/v1/pods`.
        what: String,
        /// What the codec found wrong, naming the field or body offset.
        #[source]
        source: kubegen_codec::CodecError,
    },
    /// A request body could not be serialized.
    #[error("encoding request body for {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// [`extract`](crate::extract) could not build the apply configuration a field manager owns: a
    /// malformed `fieldsV1`, or owned fields the configuration type cannot hold.
    #[error("extracting the fields {manager:?} owns of {what}: {message}")]
    ExtractFailed {
        /// The object, e.g. `apps/v1 StatefulSet ns/web`.
        what: String,
        /// The field manager.
        manager: String,
        /// What went wrong.
        message: String,
    },
    /// [`extract`](crate::extract) was given an object without `metadata.managedFields`: they
    /// were stripped (an informer's `strip_managed_fields` transform) or never recorded. There is
    /// nothing to extract from, and an empty configuration applied back would release every field
    /// the manager owns, so this is an error rather than an empty result.
    #[error(
        "extracting the fields {manager:?} owns of {what}: the object has no managedFields (stripped, e.g. by an informer's strip_managed_fields transform, or never recorded by the server); read it from a cache that keeps them or GET it"
    )]
    ManagedFieldsMissing {
        /// The object, e.g. `apps/v1 StatefulSet ns/web`.
        what: String,
        /// The field manager.
        manager: String,
    },
    /// A request could not be built (bad name, bad server URL).
    #[error("building request: {0}")]
    BuildRequest(String),
    /// A kubeconfig file is missing, unreadable, malformed, or refers to something that is not
    /// there (unknown context, missing certificate file).
    #[error("kubeconfig {}: {message}", .path.display())]
    Kubeconfig {
        /// The file (or `<merged>` for a merged configuration).
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// No configuration was found anywhere, or in-cluster configuration is incomplete.
    #[error("in-cluster config: {0}")]
    InCluster(String),
    /// An exec credential plugin failed or printed something unusable.
    #[error("exec plugin {command:?}: {message}")]
    ExecPlugin {
        /// The plugin command as written in the kubeconfig.
        command: String,
        /// What went wrong (exit status and stderr excerpt, or the parse error).
        message: String,
    },
    /// A bearer token could not be read from its file.
    #[error("token file {}: {message}", .path.display())]
    TokenFile {
        /// The token file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// TLS material (CA, client certificate, key) is unusable.
    #[error("TLS setup: {0}")]
    Tls(String),
    /// Discovery does not list the kind (apimachinery `NoKindMatchError`), even after a refresh.
    #[error("no matches for kind {kind:?} in {}", match version {
        Some(version) if group.is_empty() => format!("version {version:?}"),
        Some(version) => format!("version \"{group}/{version}\""),
        None => format!("group {group:?}"),
    })]
    NoKindMatch {
        /// The group asked for (`""`: the core group).
        group: String,
        /// The version asked for, if one was.
        version: Option<String>,
        /// The kind asked for.
        kind: String,
    },
    /// Discovery lists no resource of that name (apimachinery `NoResourceMatchError`), even
    /// after a refresh.
    #[error("the server doesn't have a resource type {resource:?}")]
    NoResourceMatch {
        /// The name asked for, as typed.
        resource: String,
    },
    /// More than one resource of the deciding group version matches (apimachinery
    /// `AmbiguousResourceError`, `AmbiguousKindError`).
    #[error("{asked} matches more than one resource: {}", candidates.join(", "))]
    AmbiguousMapping {
        /// What was asked.
        asked: String,
        /// `plural.group/version (Kind)` of each match.
        candidates: Vec<String>,
    },
    /// [`Config::rate_limit`](crate::Config::rate_limit) holds a rate no token bucket can honour
    /// (qps not a finite number above 0, or burst 0).
    #[error("client-side rate limit (Config::rate_limit) is invalid")]
    RateLimitInvalid {
        /// What is wrong with it.
        #[source]
        source: kubegen_flowcontrol::InvalidRate,
    },
    /// A pod log stream broke mid-way (connection reset, unexpected EOF). The stream ends here;
    /// ask again with `sinceTime` of the last line seen to go on.
    #[error("log stream {url}: {message}")]
    LogStreamFailed {
        /// Path and query of the log request.
        url: String,
        /// The cause, flattened into text.
        message: String,
    },
    /// The server answered a WebSocket or SPDY upgrade (exec, attach, port-forward) with a
    /// success that is not a valid upgrade: a `2xx` other than `101`, a wrong
    /// `Sec-WebSocket-Accept`, another `Upgrade` than asked for, or a (sub)protocol this client
    /// did not offer; or the transport cannot upgrade connections at all. Error statuses before
    /// the upgrade (403, 404, 400) are [`Error::Api`] instead.
    #[error("upgrading {url}: {message}")]
    UpgradeFailed {
        /// Path and query of the request.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// An open exec, attach or port-forward connection broke, or the server broke the channel
    /// protocol (a frame for an unknown channel, an error channel that is not a `Status`).
    #[error("stream {url}: {message}")]
    StreamFailed {
        /// Path and query of the request.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A port-forward connection ended with the server's error text: the kubelet could not reach
    /// the port in the pod (nothing listens there), or lost the connection.
    #[error("{url}: forwarding port {port}: {message}")]
    PortForwardFailed {
        /// Path and query of the request.
        url: String,
        /// The pod's port.
        port: u16,
        /// What the server wrote on the error channel.
        message: String,
    },
    /// No local address could be bound for a port-forward mapping.
    #[error("unable to listen on port {port}: {message}")]
    ListenFailed {
        /// The local port asked for (0: any).
        port: u16,
        /// Why each address failed.
        message: String,
    },
    /// A remote command (exec, attach) could not run or failed for a reason other than its exit
    /// code: the error channel carried a `Failure` status without an `ExitCode` cause (a missing
    /// executable, a container that is not running).
    #[error("{url}: error executing remote command: {}", .status.message)]
    RemoteCommandFailed {
        /// Path and query of the request.
        url: String,
        /// The `Status` the server wrote on the error channel.
        status: Box<Status>,
    },
}

impl Error {
    /// The server's `Status`, when the error response carried one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api { status, .. } => Some(status),
            _ => None,
        }
    }

    /// HTTP status code of an error response (from the `Status` or the raw response).
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::ApplyUnsupported { .. } => Some(415),
            Error::Api { status, .. } if status.code != 0 => Some(status.code),
            Error::HttpStatus { code, .. } => Some(*code),
            _ => None,
        }
    }

    fn reason(&self) -> &str {
        self.status().map_or("", |s| s.reason.as_str())
    }

    fn is(&self, code: u16, reason: &str) -> bool {
        self.code() == Some(code) || self.reason() == reason
    }

    /// An apply's error: a 415 becomes [`Error::ApplyUnsupported`], anything else stays.
    pub(crate) fn for_apply(self) -> Error {
        match self {
            Error::Api {
                verb, url, status, ..
            } if status.code == 415 => Error::ApplyUnsupported {
                verb,
                url,
                message: status.message,
            },
            Error::HttpStatus {
                verb,
                url,
                code: 415,
                body_excerpt,
                ..
            } => Error::ApplyUnsupported {
                verb,
                url,
                message: body_excerpt,
            },
            other => other,
        }
    }

    /// The server does not support server-side apply ([`Error::ApplyUnsupported`]).
    pub fn is_apply_unsupported(&self) -> bool {
        matches!(self, Error::ApplyUnsupported { .. })
    }

    /// A kind or resource name that discovery does not list ([`Error::NoKindMatch`],
    /// [`Error::NoResourceMatch`]; apimachinery `meta.IsNoMatchError`).
    pub fn is_no_match(&self) -> bool {
        matches!(
            self,
            Error::NoKindMatch { .. } | Error::NoResourceMatch { .. }
        )
    }

    /// 404 / `NotFound`.
    pub fn is_not_found(&self) -> bool {
        self.is(404, "NotFound")
    }

    /// 409 with reason `AlreadyExists` (a create whose name is taken).
    pub fn is_already_exists(&self) -> bool {
        self.reason() == "AlreadyExists"
    }

    /// 409 `Conflict`: the object changed since it was read (stale `resourceVersion`).
    ///
    /// Like client-go, a 409 `AlreadyExists` is *not* a conflict.
    pub fn is_conflict(&self) -> bool {
        self.reason() == "Conflict" || (self.code() == Some(409) && !self.is_already_exists())
    }

    /// 410 Gone or reason `Expired`: the requested resourceVersion (or continue token) is too old.
    pub fn is_gone(&self) -> bool {
        self.is(410, "Gone") || self.reason() == "Expired"
    }

    /// 403 / `Forbidden` (RBAC denied the request).
    pub fn is_forbidden(&self) -> bool {
        self.is(403, "Forbidden")
    }

    /// 400 / `BadRequest` (for pods' `log`, `exec` and `attach`: no container named when the
    /// pod has several, an unknown container, a pod without a node).
    pub fn is_bad_request(&self) -> bool {
        self.is(400, "BadRequest")
    }

    /// 422 / `Invalid` (the object or options failed validation; the `Status` names the fields).
    pub fn is_invalid(&self) -> bool {
        self.is(422, "Invalid")
    }

    /// 401 / `Unauthorized` (no or bad credentials).
    pub fn is_unauthorized(&self) -> bool {
        self.is(401, "Unauthorized")
    }

    /// 429 / `TooManyRequests` (API priority and fairness rejected the request).
    pub fn is_too_many_requests(&self) -> bool {
        self.is(429, "TooManyRequests")
    }

    /// A timeout: the server's 504 / reason `Timeout` or `ServerTimeout`, or this client's own
    /// request timeout ([`Error::Timeout`]).
    ///
    /// # Differences from client-go
    /// client-go's `IsTimeout` only looks at the server's reason; a client-side timeout is a
    /// transport error there. Callers retry both the same way, so one predicate covers both.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
            || self.is(504, "Timeout")
            || self.reason() == "ServerTimeout"
    }

    /// The server cannot serve a resourceVersion newer than its watch cache ("Too large resource
    /// version"): wait and retry, or list with resourceVersion "".
    pub fn is_resource_version_too_large(&self) -> bool {
        let Some(status) = self.status() else {
            return false;
        };
        let cause = status.details.as_ref().is_some_and(|d| {
            d.causes
                .iter()
                .any(|c| c.reason == "ResourceVersionTooLarge")
        });
        cause || status.message.contains("Too large resource version")
    }

    /// The request never reached the server (connection refused or reset before a response).
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Connect { .. })
    }

    /// How long the server asked us to wait (`Retry-After`), if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } | Error::HttpStatus { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// At most this many bytes of a body are quoted in an error message.
const EXCERPT_LEN: usize = 256;

/// A printable excerpt of `bytes`: lossy UTF-8, at most [`EXCERPT_LEN`] bytes, `...` when cut.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let trimmed = bytes.trim_ascii();
    if trimmed.is_empty() {
        return "<empty body>".to_owned();
    }
    let cut = &trimmed[..trimmed.len().min(EXCERPT_LEN)];
    let mut text = String::from_utf8_lossy(cut).into_owned();
    if cut.len() < trimmed.len() {
        text.push_str("...");
    }
    text
}

/// Parses a `Retry-After` header given in seconds (the only form the API server sends).
pub(crate) fn parse_retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Turns a complete non-2xx response into an [`Error`].
///
/// A body that parses as a `Status` (JSON or protobuf; `kind: Status`, or at least a
/// `code`/`reason`) becomes
/// [`Error::Api`]; anything else becomes [`Error::HttpStatus`] with an excerpt of the body.
pub(crate) fn from_error_response(
    verb: &str,
    url: &str,
    code: http::StatusCode,
    headers: &http::HeaderMap,
    body: &[u8],
) -> Error {
    let header_retry = parse_retry_after(headers);
    // A client that accepts protobuf gets its errors in protobuf too (a real server encodes the
    // `Status` with the negotiated serializer).
    let parsed = if body.starts_with(&kubegen_codec::MAGIC) {
        kubegen_codec::from_body::<Status>(body).ok()
    } else {
        serde_json::from_slice::<Status>(body).ok()
    };
    if let Some(mut status) = parsed
        && (!status.reason.is_empty() || status.code != 0 || !status.message.is_empty())
    {
        if status.code == 0 {
            status.code = code.as_u16();
        }
        let detail_retry = status
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s)));
        return Error::Api {
            verb: verb.to_owned(),
            url: url.to_owned(),
            status: Box::new(status),
            retry_after: header_retry.or(detail_retry),
        };
    }
    Error::HttpStatus {
        verb: verb.to_owned(),
        url: url.to_owned(),
        code: code.as_u16(),
        body_excerpt: excerpt(body),
        retry_after: header_retry,
    }
}

/// An error and all its causes, `: `-separated (hyper's top-level messages alone say little).
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderMap, HeaderValue, StatusCode};

    fn map(code: u16, body: &str) -> Error {
        let code = StatusCode::from_u16(code).expect("valid code");
        from_error_response(
            "GET",
            "/api/v1/pods",
            code,
            &HeaderMap::new(),
            body.as_bytes(),
        )
    }

    #[test]
    fn an_apply_refused_with_415_reads_as_unsupported_and_other_errors_stay() {
        // What Kubernetes 1.15 answers to an apply patch.
        let body = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}"#;
        let err = from_error_response(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/x?fieldManager=m",
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &HeaderMap::new(),
            body.as_bytes(),
        )
        .for_apply();
        assert!(err.is_apply_unsupported());
        assert_eq!(err.code(), Some(415));
        assert_eq!(
            err.to_string(),
            "PATCH /api/v1/namespaces/default/configmaps/x?fieldManager=m: the server does not support server-side apply (it answered 415: 415: Unsupported Media Type); Kubernetes 1.16 or newer is needed"
        );
        let conflict = map(
            409,
            r#"{"kind":"Status","reason":"Conflict","code":409,"message":"Apply failed"}"#,
        );
        assert!(conflict.for_apply().is_conflict());
    }

    fn status_body(code: u16, reason: &str, message: &str) -> String {
        serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": code, "reason": reason, "message": message,
        })
        .to_string()
    }

    #[test]
    fn status_body_becomes_api_error_with_predicates() {
        let err = map(404, &status_body(404, "NotFound", "pods \"x\" not found"));
        assert!(err.is_not_found());
        assert!(!err.is_conflict());
        assert_eq!(
            err.status().map(|s| s.message.as_str()),
            Some("pods \"x\" not found")
        );
        assert_eq!(
            err.to_string(),
            "GET /api/v1/pods: pods \"x\" not found (NotFound, 404)"
        );
    }

    #[test]
    fn already_exists_is_not_a_conflict() {
        let exists = map(409, &status_body(409, "AlreadyExists", "exists"));
        assert!(exists.is_already_exists());
        assert!(!exists.is_conflict());
        let conflict = map(409, &status_body(409, "Conflict", "modified"));
        assert!(conflict.is_conflict());
        assert!(!conflict.is_already_exists());
    }

    #[test]
    fn gone_matches_code_410_and_reason_expired() {
        assert!(map(410, &status_body(410, "Gone", "too old")).is_gone());
        assert!(map(410, &status_body(0, "Expired", "too old")).is_gone());
        assert!(map(410, "").is_gone());
        assert!(!map(404, "").is_gone());
    }

    #[test]
    fn each_predicate_matches_its_code() {
        assert!(map(403, "").is_forbidden());
        assert!(map(401, "").is_unauthorized());
        assert!(map(429, "").is_too_many_requests());
        assert!(map(504, "").is_timeout());
        assert!(map(500, &status_body(500, "ServerTimeout", "slow")).is_timeout());
    }

    #[test]
    fn html_body_yields_readable_http_status_error() {
        let err = map(502, "<html><body>Bad Gateway</body></html>");
        assert!(err.status().is_none());
        assert_eq!(err.code(), Some(502));
        assert_eq!(
            err.to_string(),
            "GET /api/v1/pods: HTTP 502: <html><body>Bad Gateway</body></html>"
        );
    }

    #[test]
    fn empty_body_yields_readable_http_status_error() {
        let err = map(404, "");
        assert!(err.is_not_found());
        assert_eq!(err.to_string(), "GET /api/v1/pods: HTTP 404: <empty body>");
    }

    #[test]
    fn long_body_is_truncated_in_the_message() {
        let body = "x".repeat(10_000);
        let err = map(500, &body);
        let Error::HttpStatus { body_excerpt, .. } = &err else {
            panic!("expected HttpStatus, got {err:?}");
        };
        assert_eq!(body_excerpt.len(), EXCERPT_LEN + 3);
        assert!(body_excerpt.ends_with("..."));
    }

    #[test]
    fn retry_after_comes_from_header_or_status_details() {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::RETRY_AFTER, HeaderValue::from_static("7"));
        let err = from_error_response("GET", "/x", StatusCode::TOO_MANY_REQUESTS, &headers, b"");
        assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));

        let body = serde_json::json!({
            "kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "slow down",
            "details": {"retryAfterSeconds": 3},
        });
        let err = map(429, &body.to_string());
        assert_eq!(err.retry_after(), Some(Duration::from_secs(3)));
    }

    #[test]
    fn too_large_resource_version_is_recognised_by_cause_or_message() {
        let body = serde_json::json!({
            "kind": "Status", "code": 504, "reason": "Timeout",
            "message": "Too large resource version: 20, current: 10",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]},
        });
        let err = map(504, &body.to_string());
        assert!(err.is_resource_version_too_large());
        assert!(err.is_timeout());
        assert!(!map(504, &status_body(504, "Timeout", "slow")).is_resource_version_too_large());
    }
}
