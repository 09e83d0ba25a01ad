//! The seam between the cache and an API: list one page, open one watch.
//!
//! Mirrors client-go `tools/cache/listwatch.go` (`ListerWatcher`). The trait lives here, not in
//! the HTTP client, so this crate does not depend on any transport: the `client` feature's
//! [`ClientListWatch`](crate::ClientListWatch) implements it over `kubegen_client`, tests
//! implement it with scripted in-memory responses.

use std::{error::Error as StdError, fmt, future::Future, sync::Arc, time::Duration};

use kube_core::{ObjectList, Status, WatchEvent};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;

use crate::store_mode::{WireBytes, WireCodec, WireItem};

/// One LIST request, as the reflector wants it sent.
///
/// Namespace, label and field selectors are not here: they are fixed per informer and are the
/// implementor's business.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListRequest {
    /// `resourceVersion`: `"0"` (any, e.g. the watch cache), a concrete version (not older than),
    /// or `""` (a consistent read from etcd).
    pub resource_version: String,
    /// `limit` (page size); `None` asks for everything at once.
    pub limit: Option<u32>,
    /// `continue` token of the previous page.
    pub continue_token: Option<String>,
}

/// One WATCH request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchRequest {
    /// `resourceVersion` to watch from (events strictly after it).
    pub resource_version: String,
    /// `timeoutSeconds`: the server closes the watch cleanly after this long.
    pub timeout_seconds: u32,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents` (streaming list): the server first sends the current state as
    /// `Added` events, then a bookmark annotated `k8s.io/initial-events-end`. When set,
    /// `resourceVersionMatch=NotOlderThan` must be sent too.
    pub send_initial_events: bool,
}

/// What the reflector needs from an API server: list a page, open a watch.
pub trait ListWatch<K: Clone>: Send + Sync + 'static {
    /// The event stream of an open watch.
    type Watch: EventStream<K>;

    /// Lists one page of objects.
    fn list(
        &self,
        req: &ListRequest,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send;

    /// Lists one page, handing each object to `each` as it is decoded and returning the page
    /// with empty `items`. The reflector lists this way so that its transform runs on each object
    /// before the next arrives: what a page costs in memory is then what the cache keeps, even
    /// when a watch cache answers with every object at once. The default lists the whole page
    /// with [`list`](Self::list) first; implement it when objects can be had one at a time.
    fn list_each(
        &self,
        req: &ListRequest,
        mut each: impl FnMut(K) + Send,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send {
        async move {
            let mut page = self.list(req).await?;
            page.items.drain(..).for_each(&mut each);
            Ok(page)
        }
    }

    /// [`list_each`](Self::list_each), handing each object over with the bytes it was decoded
    /// from (see [`WireBytes`]), which [`wire_codec`](Self::wire_codec) decodes back into it. A
    /// byte-backed informer without a transform lists this way and stores those bytes. The
    /// default hands over no bytes: the informer then encodes each object itself.
    fn list_each_with_bytes(
        &self,
        req: &ListRequest,
        mut each: impl FnMut(K, Option<WireBytes>) + Send,
    ) -> impl Future<Output = Result<ObjectList<K>, ListWatchError>> + Send {
        self.list_each(req, move |obj| each(obj, None))
    }

    /// Whether [`list_each_wire`](Self::list_each_wire) and the watch's
    /// [`next_wire_event`](EventStream::next_wire_event) are served: each object handed over as
    /// its bytes and the few metadata fields read from them, not decoded in full (see
    /// `store_mode.rs`). A byte-backed informer without a transform or custom indexers then
    /// lists and watches this way. The default: `false`.
    fn hands_out_wire_items(&self) -> bool {
        false
    }

    /// Lists one page, handing each object to `each` as a [`WireItem`] and returning the page's
    /// `ListMeta`. Called only when [`hands_out_wire_items`](Self::hands_out_wire_items); the
    /// default, for list-watches that do not, fails.
    fn list_each_wire(
        &self,
        req: &ListRequest,
        each: impl FnMut(WireItem) + Send,
    ) -> impl Future<Output = Result<ListMeta, ListWatchError>> + Send {
        let _ = (req, each);
        async { Err(no_wire_items()) }
    }

    /// Opens a watch.
    fn watch(
        &self,
        req: &WatchRequest,
    ) -> impl Future<Output = Result<Self::Watch, ListWatchError>> + Send;

    /// How objects of this list-watch are kept as bytes by an informer in
    /// [`StoreMode::Bytes`](crate::StoreMode). `None` (the default): it has no codec, and such an
    /// informer keeps its objects decoded.
    fn wire_codec(&self) -> Option<WireCodec<K>> {
        None
    }

    /// Whether the server serves streaming lists, when that can be told before trying one:
    /// `Some(false)` for a server that predates them (it would ignore `sendInitialEvents` and
    /// never end the initial phase), `Some(true)` for one that either serves them or rejects the
    /// request, `None` when unknown (the default). Asked once, before the first streaming list;
    /// see `reflector/streaming.rs` for what each answer leads to.
    fn serves_streaming_lists(&self) -> impl Future<Output = Option<bool>> + Send {
        async { None }
    }
}

/// The events of one open watch.
pub trait EventStream<K>: Send + 'static {
    /// The next event; `None` when the server closed the watch cleanly. An `Err` ends the watch;
    /// a broken connection should be reported as [`ListWatchErrorKind::Interrupted`].
    fn next_event(
        &mut self,
    ) -> impl Future<Output = Option<Result<WatchEvent<K>, ListWatchError>>> + Send;

    /// [`next_event`](Self::next_event), with the bytes the event's object was decoded from (see
    /// [`ListWatch::list_each_with_bytes`]); the default hands over none.
    fn next_event_with_bytes(
        &mut self,
    ) -> impl Future<Output = Option<Result<EventWithBytes<K>, ListWatchError>>> + Send {
        async {
            let next = self.next_event().await?;
            Some(next.map(|event| (event, None)))
        }
    }

    /// [`next_event`](Self::next_event), with the event's object handed over as a [`WireItem`]
    /// (see [`ListWatch::list_each_wire`]). Called only when the list-watch
    /// [`hands_out_wire_items`](ListWatch::hands_out_wire_items); the default fails.
    fn next_wire_event(
        &mut self,
    ) -> impl Future<Output = Option<Result<WatchEvent<WireItem>, ListWatchError>>> + Send {
        async { Some(Err(no_wire_items())) }
    }
}

/// The error of a wire-item call to a list-watch that does not hand out wire items.
fn no_wire_items() -> ListWatchError {
    ListWatchError::new(
        ListWatchErrorKind::Other,
        "this list-watch does not hand out wire items",
    )
}

/// A watch event with the bytes of its object, when the stream has them.
pub type EventWithBytes<K> = (WatchEvent<K>, Option<WireBytes>);

/// Why a list or watch failed, reduced to what the reflector must decide on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListWatchErrorKind {
    /// 410 Gone / reason `Expired`: the resourceVersion (or continue token) is too old.
    Expired,
    /// The requested resourceVersion is newer than the server's (a lagging apiserver).
    ResourceVersionTooLarge,
    /// 429: the server asks us to slow down.
    TooManyRequests,
    /// No response at all (connection refused or reset): the server is probably restarting.
    Unavailable,
    /// An open watch's stream broke mid-way (connection reset, unexpected EOF, HTTP/2 ping or
    /// idle timeout). The watch is over but its resourceVersion is still good: the reflector
    /// opens a new watch from it, without a relist (client-go: `IsProbableEOF` / `IsTimeout`
    /// on a watch stream end the watch like a clean close).
    Interrupted,
    /// The request was rejected as invalid (400/422): e.g. a server that does not support
    /// streaming lists.
    Invalid,
    /// Anything else.
    Other,
}

impl fmt::Display for ListWatchErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Expired => "resourceVersion expired",
            Self::ResourceVersionTooLarge => "resourceVersion too large",
            Self::TooManyRequests => "throttled",
            Self::Unavailable => "server unreachable",
            Self::Interrupted => "watch stream interrupted",
            Self::Invalid => "request rejected as invalid",
            Self::Other => "request failed",
        })
    }
}

/// A failed list or watch, classified by [`ListWatchErrorKind`], keeping what the server said.
///
/// # Where the server's words are
/// - [`status`](Self::status): the server's `Status` (code, reason, message, details), when it
///   sent one, as an error response or a watch `ERROR` event. "deployments.apps is forbidden:
///   User ... cannot list ..." is its `message`.
/// - [`source`](std::error::Error::source): the underlying error (for
///   [`ClientListWatch`](crate::ClientListWatch), the `kubegen_client::Error`, whose display
///   carries the request and the server's message).
///
/// `Display` is the kind, followed by the message only when there is no source, so printing
/// the error chain (`{err:#}` here, or any chain printer) shows the server's message once.
#[derive(Clone, Debug)]
pub struct ListWatchError {
    kind: ListWatchErrorKind,
    /// Our description; empty when `source` describes the failure.
    message: String,
    retry_after: Option<Duration>,
    status: Option<Box<Status>>,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl ListWatchError {
    /// An error of `kind` described by `message`.
    pub fn new(kind: ListWatchErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after: None,
            status: None,
            source: None,
        }
    }

    /// An error of `kind` caused by `source`, which describes it (the message stays empty, so
    /// the chain does not repeat it).
    pub fn from_source(
        kind: ListWatchErrorKind,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self {
            source: Some(Arc::new(source)),
            ..Self::new(kind, "")
        }
    }

    /// Adds the server's `Retry-After`.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// Adds the server's `Status`.
    pub fn with_status(mut self, status: Option<Status>) -> Self {
        self.status = status.map(Box::new);
        self
    }

    /// Classifies a watch `ERROR` event's Status (410 → `Expired`, 429 → `TooManyRequests`, ...).
    pub fn from_status(status: &Status) -> Self {
        let kind = match (status.code, status.reason.as_str()) {
            (410, _) | (_, "Expired" | "Gone") => ListWatchErrorKind::Expired,
            (429, _) | (_, "TooManyRequests") => ListWatchErrorKind::TooManyRequests,
            (400 | 422, _) | (_, "BadRequest" | "Invalid") => ListWatchErrorKind::Invalid,
            _ => ListWatchErrorKind::Other,
        };
        Self::new(
            kind,
            format!("{} ({}, {})", status.message, status.reason, status.code),
        )
        .with_status(Some(status.clone()))
    }

    /// The classification.
    pub fn kind(&self) -> ListWatchErrorKind {
        self.kind
    }

    /// The human-readable description: ours, or the source's when it has one.
    pub fn message(&self) -> String {
        match &self.source {
            Some(source) if self.message.is_empty() => source.to_string(),
            _ => self.message.clone(),
        }
    }

    /// How long the server asked us to wait, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The server's `Status`, if it sent one (code, reason, message, details).
    pub fn status(&self) -> Option<&Status> {
        self.status.as_deref()
    }
}

impl fmt::Display for ListWatchError {
    /// `kind: message`; with `{:#}`, followed by every cause (`: `-separated).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if f.alternate() {
            let mut cause = StdError::source(self);
            while let Some(err) = cause {
                write!(f, ": {err}")?;
                cause = err.source();
            }
        }
        Ok(())
    }
}

impl StdError for ListWatchError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct ServerSaid;

    impl fmt::Display for ServerSaid {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(
                "GET /api/v1/pods: pods is forbidden: User \"x\" cannot list (Forbidden, 403)",
            )
        }
    }

    impl StdError for ServerSaid {}

    #[test]
    fn the_chain_shows_the_sources_message_once() {
        let status = Status::failure("pods is forbidden: User \"x\" cannot list", "Forbidden")
            .with_code(403);
        let err = ListWatchError::from_source(ListWatchErrorKind::Other, ServerSaid)
            .with_status(Some(status));
        assert_eq!(err.to_string(), "request failed");
        let chain = format!("{err:#}");
        assert_eq!(
            chain,
            "request failed: GET /api/v1/pods: pods is forbidden: User \"x\" cannot list (Forbidden, 403)"
        );
        assert_eq!(chain.matches("is forbidden").count(), 1);
        assert_eq!(err.message(), ServerSaid.to_string());
        assert_eq!(
            err.status().map(|s| (s.code, s.reason.as_str())),
            Some((403, "Forbidden"))
        );
    }

    #[test]
    fn a_watch_error_event_keeps_its_status() {
        let status = Status::failure("too old resource version: 5 (9)", "Expired").with_code(410);
        let err = ListWatchError::from_status(&status);
        assert_eq!(err.kind(), ListWatchErrorKind::Expired);
        assert_eq!(
            format!("{err:#}"),
            "resourceVersion expired: too old resource version: 5 (9) (Expired, 410)"
        );
        assert_eq!(err.status().map(|s| s.code), Some(410));
        assert!(StdError::source(&err).is_none());
    }
}
