//! The reflector's states. Each value says what the reflector will do on its next step.
//!
//! client-go encodes this state in the call stack of `ListAndWatch` (list, then loop on
//! `watch`, return to re-list); kube-rs in a `watcher::State` enum stepped by a stream
//! combinator. We keep kube-rs's idea of an explicit enum but step it from a plain `async fn`
//! loop, so a debugger or a trace shows exactly one transition at a time.

use std::time::Duration;

use std::pin::Pin;

use tokio::time::{Instant, Sleep};

/// What the reflector does next.
///
/// ```text
///  start ──> relist
///
///  relist = StreamList while streaming lists are on, else List{rv}, where rv is "0" before the
///           first sync, "" once a list said the last synced version is unavailable, and the
///           last synced version otherwise (also after a watch 410: client-go's rule)
///
///  List{rv} ── all pages, Replace ──────────────────────────────────────> Watch
///     │ 410 / too large, rv != "" ──> List{""} at once (consistent read)
///     └ anything else, or at "" ────> BackingOff ──> List{same rule}
///
///  Watch ── opened ──> Watching ── event / bookmark: apply ──> Watching
///    ^  ^                 │ clean close, stream broke, deadline passed ──> Watch
///    │  │                 │   (closed within 1 s without events: BackingOff first)
///    │  └── BackingOff <──┤ 429, refused (Watch or Watching)
///    │                    ├ 410 / too large (Watch or Watching) ─────────> relist at once
///    │                    └ invalid, other (Watch or Watching) ──> BackingOff ──> relist
///    │
///  StreamList ── initial events + initial-events-end bookmark: Replace ──> Watching
///     │ 429, refused ──────────────> BackingOff ──> StreamList
///     │ 410 / too large ───────────> StreamList at "" (BackingOff first if it was "")
///     │ 5xx, other, broke, closed ─> List{rv} this time; streaming stays on
///     └ 400/422, no end bookmark within streaming_timeout ──> List{rv}, streaming off for good
/// ```
pub(crate) enum State<W> {
    /// List everything, page by page, at `resource_version`, then `Replace` the store.
    List {
        /// `"0"` before the first sync, the last synced version afterwards (also after a
        /// watch 410), `""` after a *list* answered 410 or "too large resource version".
        resource_version: String,
    },
    /// Streaming list: a watch with `sendInitialEvents=true` whose initial events (the latest
    /// object per key), closed by the `k8s.io/initial-events-end` bookmark, replace the store;
    /// the same watch then keeps running.
    StreamList,
    /// Open a watch from the last synced resourceVersion.
    Watch,
    /// A watch is open: apply its next event.
    Watching(OpenWatch<W>),
    /// Wait, then continue with `then`.
    BackingOff {
        /// How long to wait.
        delay: Duration,
        /// The state to enter afterwards.
        then: Box<State<W>>,
    },
}

/// An open watch and what we know about it.
pub(crate) struct OpenWatch<W> {
    /// The event stream.
    pub(crate) stream: W,
    /// When it was opened (a watch that ends within a second without events is suspicious).
    pub(crate) opened: Instant,
    /// The server promised to close it by `timeoutSeconds`; past this deadline (that plus a
    /// margin) we assume the connection died silently and re-watch.
    pub(crate) deadline: Pin<Box<Sleep>>,
    /// Events received so far.
    pub(crate) events: u64,
}

impl<W> State<W> {
    /// The state's name, for traces.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::List { .. } => "List",
            Self::StreamList => "StreamList",
            Self::Watch => "Watch",
            Self::Watching(_) => "Watching",
            Self::BackingOff { .. } => "BackingOff",
        }
    }
}
