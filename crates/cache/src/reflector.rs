//! The reflector: keeps a DeltaFIFO in step with the API server by listing, then watching.
//!
//! Mirrors client-go `tools/cache/reflector.go` (plus `tools/pager/pager.go` for paging).
//!
//! # Why list *and* watch?
//! A watch alone cannot start from nothing: it only reports changes after a resourceVersion.
//! A list alone would have to be repeated constantly. So the reflector lists once to learn the
//! full state and the resourceVersion it is valid at, then watches from that version, and only
//! lists again when the watch cannot continue (the version fell out of the server's history).
//!
//! # Guarantees
//! - The store sees one `Replace` per (possibly paged) list, then one delta per watch event.
//! - The list resourceVersion never goes back in time: `"0"` first, then the last version
//!   synced (by a list, an event or a bookmark), `""` (a consistent read) after a 410 or a
//!   "too large resource version" error.
//! - A watch that ends cleanly is re-opened from the last version without a relist.
//! - Every transition is a `tracing` debug event carrying the resourceVersion.
//!
//! # Differences from client-go
//! - After a 410 on a *watch* we relist with `""` directly; client-go first retries its last
//!   version, which the server has just told us is gone, and only falls back after a second 410.
//! - A watch that outlives its `timeoutSeconds` by [`WATCH_DEADLINE_MARGIN`] is abandoned and
//!   re-opened (no relist): the connection is assumed dead.
//! - A streaming list that fails falls back to paged lists for the rest of the reflector's life.

mod backoff;
mod state;

use std::{sync::Arc, time::Duration};

use kube_core::{Resource, WatchEvent};
use tokio::{sync::watch, time::Instant};
use tracing::{debug, warn};

pub(crate) use self::state::State;
use self::{backoff::Backoff, state::OpenWatch};
use crate::{
    delta_fifo::DeltaFifo,
    list_watch::{
        EventStream, ListRequest, ListWatch, ListWatchError, ListWatchErrorKind, WatchRequest,
    },
    transform::Transform,
};

/// Called with every list or watch failure (the reflector retries on its own; this is for
/// logging and metrics). client-go's `WatchErrorHandler`.
pub type WatchErrorHandler = Arc<dyn Fn(&ListWatchError) + Send + Sync>;

/// Lower bound of the random watch `timeoutSeconds`.
pub(crate) const WATCH_TIMEOUT_MIN_SECS: u32 = 300;
/// Upper bound of the random watch `timeoutSeconds`.
pub(crate) const WATCH_TIMEOUT_MAX_SECS: u32 = 600;
/// How long after its `timeoutSeconds` a silent watch is given up as dead.
pub const WATCH_DEADLINE_MARGIN: Duration = Duration::from_secs(30);
/// A watch closing this fast without any event is treated as a failure (backoff), so a server
/// that closes watches at once cannot make us spin.
const SHORT_WATCH: Duration = Duration::from_secs(1);
/// The bookmark annotation that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// Reflector settings, filled from the informer's options.
pub(crate) struct ReflectorConfig<K> {
    /// Name for traces (usually the resource's plural).
    pub(crate) name: String,
    /// List page size (`limit`).
    pub(crate) page_size: u32,
    /// Try the streaming list first.
    pub(crate) streaming_list: bool,
    /// How long a streaming list may go without an event before we fall back to listing.
    pub(crate) streaming_timeout: Duration,
    pub(crate) transform: Option<Transform<K>>,
    pub(crate) on_watch_error: Option<WatchErrorHandler>,
}

/// Drives one [`ListWatch`] into one [`DeltaFifo`].
pub(crate) struct Reflector<K, L> {
    list_watch: L,
    fifo: Arc<DeltaFifo<K>>,
    config: ReflectorConfig<K>,
    /// The resourceVersion of the last list, event or bookmark applied ("" before the first).
    last_synced_rv: String,
    /// Set by a 410 / too-large error: the next list must be a consistent read (`""`).
    last_rv_unavailable: bool,
    backoff: Backoff,
}

impl<K, L> Reflector<K, L>
where
    K: Resource + Clone + Send + Sync + 'static,
    L: ListWatch<K>,
{
    pub(crate) fn new(list_watch: L, fifo: Arc<DeltaFifo<K>>, config: ReflectorConfig<K>) -> Self {
        Self {
            list_watch,
            fifo,
            config,
            last_synced_rv: String::new(),
            last_rv_unavailable: false,
            backoff: Backoff::default(),
        }
    }

    /// Runs until `shutdown` turns true (or its sender is dropped).
    pub(crate) async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let mut state = self.relist_state();
        loop {
            debug!(reflector = %self.config.name, state = state.name(), rv = %self.last_synced_rv, "reflector step");
            tokio::select! {
                biased;
                _ = shutdown.wait_for(|stop| *stop) => break,
                next = self.step(state) => state = next,
            }
        }
        debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "reflector stopped");
    }

    /// Performs one state's work and returns the next state.
    pub(crate) async fn step(&mut self, state: State<L::Watch>) -> State<L::Watch> {
        match state {
            State::List { resource_version } => self.list(resource_version).await,
            State::StreamList => self.stream_list().await,
            State::Watch => self.start_watch().await,
            State::Watching(open) => self.next_event(open).await,
            State::BackingOff { delay, then } => {
                tokio::time::sleep(delay).await;
                *then
            }
        }
    }

    /// client-go's `relistResourceVersion`: where a (re)list must start.
    pub(crate) fn relist_resource_version(&self) -> String {
        if self.last_rv_unavailable {
            String::new() // the server cannot serve our version: read the latest from etcd
        } else if self.last_synced_rv.is_empty() {
            "0".to_owned() // first list: any version will do, the watch cache can serve it
        } else {
            self.last_synced_rv.clone()
        }
    }

    fn relist_state(&self) -> State<L::Watch> {
        if self.config.streaming_list {
            State::StreamList
        } else {
            State::List {
                resource_version: self.relist_resource_version(),
            }
        }
    }

    fn back_off(&mut self, err: &ListWatchError, then: State<L::Watch>) -> State<L::Watch> {
        let delay = self
            .backoff
            .next_delay(Instant::now())
            .max(err.retry_after().unwrap_or_default());
        debug!(reflector = %self.config.name, ?delay, then = then.name(), rv = %self.last_synced_rv, "backing off");
        State::BackingOff {
            delay,
            then: Box::new(then),
        }
    }

    fn report(&self, what: &str, err: &ListWatchError) {
        warn!(reflector = %self.config.name, rv = %self.last_synced_rv, error = %err, "{what} failed");
        if let Some(hook) = &self.config.on_watch_error {
            hook(err);
        }
    }

    fn transform(&self, obj: K) -> Arc<K> {
        Arc::new(match &self.config.transform {
            Some(t) => t(obj),
            None => obj,
        })
    }

    /// Lists all pages at `resource_version` and replaces the store with the result.
    async fn list(&mut self, resource_version: String) -> State<L::Watch> {
        debug!(reflector = %self.config.name, rv = %resource_version, "listing");
        let mut items: Vec<Arc<K>> = Vec::new();
        let mut req = ListRequest {
            resource_version: resource_version.clone(),
            limit: Some(self.config.page_size),
            continue_token: None,
        };
        let list_rv = loop {
            let page = match self.list_watch.list(&req).await {
                Ok(page) => page,
                Err(err)
                    if err.kind() == ListWatchErrorKind::Expired
                        && req.continue_token.is_some() =>
                {
                    // The continue token outlived the server's history: list in one go instead.
                    debug!(reflector = %self.config.name, rv = %resource_version, "continue token expired, listing in full");
                    items.clear();
                    req = ListRequest {
                        resource_version: resource_version.clone(),
                        limit: None,
                        continue_token: None,
                    };
                    continue;
                }
                Err(err) => return self.list_failed(&err),
            };
            let continue_token = page.metadata.continue_.filter(|c| !c.is_empty());
            debug!(reflector = %self.config.name, rv = %req.resource_version, items = page.items.len(), more = continue_token.is_some(), "listed page");
            items.reserve(page.items.len());
            items.extend(page.items.into_iter().map(|obj| self.transform(obj)));
            match continue_token {
                Some(token) => {
                    req.continue_token = Some(token);
                    req.resource_version.clear(); // the token pins the version
                }
                None => break page.metadata.resource_version.unwrap_or_default(),
            }
        };
        debug!(reflector = %self.config.name, rv = %list_rv, items = items.len(), "replace");
        self.fifo.replace(items);
        self.last_synced_rv = list_rv;
        self.last_rv_unavailable = false;
        State::Watch
    }

    fn list_failed(&mut self, err: &ListWatchError) -> State<L::Watch> {
        self.report("list", err);
        if matches!(
            err.kind(),
            ListWatchErrorKind::Expired | ListWatchErrorKind::ResourceVersionTooLarge
        ) {
            self.last_rv_unavailable = true;
        }
        let then = State::List {
            resource_version: self.relist_resource_version(),
        };
        self.back_off(err, then)
    }

    fn watch_request(&self, send_initial_events: bool) -> WatchRequest {
        WatchRequest {
            resource_version: if send_initial_events {
                String::new()
            } else {
                self.last_synced_rv.clone()
            },
            timeout_seconds: rand::random_range(WATCH_TIMEOUT_MIN_SECS..=WATCH_TIMEOUT_MAX_SECS),
            allow_watch_bookmarks: true,
            send_initial_events,
        }
    }

    fn open(stream: L::Watch, req: &WatchRequest) -> OpenWatch<L::Watch> {
        let opened = Instant::now();
        let deadline =
            opened + Duration::from_secs(req.timeout_seconds.into()) + WATCH_DEADLINE_MARGIN;
        OpenWatch {
            stream,
            opened,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            events: 0,
        }
    }

    async fn start_watch(&mut self) -> State<L::Watch> {
        let req = self.watch_request(false);
        match self.list_watch.watch(&req).await {
            Ok(stream) => {
                debug!(reflector = %self.config.name, rv = %req.resource_version, timeout = req.timeout_seconds, "watch opened");
                State::Watching(Self::open(stream, &req))
            }
            Err(err) => self.watch_failed(&err),
        }
    }

    /// Decides what a watch failure means: wait and re-watch, or relist.
    fn watch_failed(&mut self, err: &ListWatchError) -> State<L::Watch> {
        self.report("watch", err);
        match err.kind() {
            ListWatchErrorKind::TooManyRequests | ListWatchErrorKind::Unavailable => {
                self.back_off(err, State::Watch)
            }
            ListWatchErrorKind::Expired | ListWatchErrorKind::ResourceVersionTooLarge => {
                self.last_rv_unavailable = true;
                debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "resource version expired, relisting");
                self.relist_state()
            }
            ListWatchErrorKind::Invalid | ListWatchErrorKind::Other => {
                let then = self.relist_state();
                self.back_off(err, then)
            }
        }
    }

    async fn next_event(&mut self, mut open: OpenWatch<L::Watch>) -> State<L::Watch> {
        // One timer per watch, not per event: `open.deadline` is polled, never re-armed.
        let next = tokio::select! {
            biased;
            next = open.stream.next_event() => Ok(next),
            () = &mut open.deadline => Err(()),
        };
        let event = match next {
            Err(()) => {
                debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "watch passed its deadline, re-watching");
                return State::Watch;
            }
            Ok(None) if open.events == 0 && open.opened.elapsed() < SHORT_WATCH => {
                let err = ListWatchError::new(
                    ListWatchErrorKind::Other,
                    "watch closed at once without events",
                );
                self.report("watch", &err);
                return self.back_off(&err, State::Watch);
            }
            Ok(None) => {
                debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "watch closed, re-watching");
                return State::Watch;
            }
            Ok(Some(Err(err))) => return self.watch_failed(&err),
            Ok(Some(Ok(event))) => event,
        };
        open.events += 1;
        match self.apply(event) {
            Ok(()) => State::Watching(open),
            Err(err) => self.watch_failed(&err),
        }
    }

    /// Applies one watch event to the store and advances the last synced resourceVersion.
    fn apply(&mut self, event: WatchEvent<K>) -> Result<(), ListWatchError> {
        match event {
            WatchEvent::Added(obj) => {
                let obj = self.observe(obj, "Added");
                self.fifo.add(obj);
            }
            WatchEvent::Modified(obj) => {
                let obj = self.observe(obj, "Modified");
                self.fifo.update(obj);
            }
            WatchEvent::Deleted(obj) => {
                let obj = self.observe(obj, "Deleted");
                self.fifo.delete(obj);
            }
            WatchEvent::Bookmark(bookmark) => {
                debug!(reflector = %self.config.name, rv = %bookmark.metadata.resource_version, "bookmark");
                self.last_synced_rv = bookmark.metadata.resource_version;
            }
            WatchEvent::Error(status) => return Err(ListWatchError::from_status(&status)),
        }
        Ok(())
    }

    /// Records an event's resourceVersion and transforms its object.
    fn observe(&mut self, obj: K, event: &'static str) -> Arc<K> {
        if let Some(rv) = &obj.meta().resource_version {
            self.last_synced_rv.clone_from(rv);
        }
        debug!(reflector = %self.config.name, rv = %self.last_synced_rv, event, "watch event");
        self.transform(obj)
    }

    /// Streaming list: collect the initial `Added` events until the end bookmark, `Replace`,
    /// and keep the watch. Any failure falls back to a paged list, for good.
    async fn stream_list(&mut self) -> State<L::Watch> {
        let req = self.watch_request(true);
        let mut open = match self.list_watch.watch(&req).await {
            Ok(stream) => Self::open(stream, &req),
            Err(err) => return self.streaming_failed(&err),
        };
        let mut items: Vec<Arc<K>> = Vec::new();
        loop {
            let event =
                match tokio::time::timeout(self.config.streaming_timeout, open.stream.next_event())
                    .await
                {
                    Ok(Some(Ok(event))) => event,
                    Ok(Some(Err(err))) => return self.streaming_failed(&err),
                    Ok(None) => {
                        return self.streaming_failed(&ListWatchError::new(
                            ListWatchErrorKind::Other,
                            "closed before initial-events-end",
                        ));
                    }
                    Err(_) => {
                        return self.streaming_failed(&ListWatchError::new(
                            ListWatchErrorKind::Other,
                            "no initial-events-end bookmark in time",
                        ));
                    }
                };
            open.events += 1;
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    items.push(self.transform(obj))
                }
                WatchEvent::Deleted(obj) => {
                    let key = crate::key::ObjectKey::of(&obj);
                    items.retain(|o| crate::key::ObjectKey::of(o.as_ref()) != key);
                }
                WatchEvent::Bookmark(bookmark) => {
                    let end = bookmark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true");
                    if end {
                        debug!(reflector = %self.config.name, rv = %bookmark.metadata.resource_version, items = items.len(), "streaming list done, replace");
                        self.fifo.replace(items);
                        self.last_synced_rv = bookmark.metadata.resource_version;
                        self.last_rv_unavailable = false;
                        return State::Watching(open);
                    }
                }
                WatchEvent::Error(status) => {
                    return self.streaming_failed(&ListWatchError::from_status(&status));
                }
            }
        }
    }

    fn streaming_failed(&mut self, err: &ListWatchError) -> State<L::Watch> {
        self.report("streaming list", err);
        warn!(reflector = %self.config.name, "server does not support streaming lists; falling back to list + watch");
        self.config.streaming_list = false;
        State::List {
            resource_version: self.relist_resource_version(),
        }
    }
}

/// Calls `resync` every `period` while `should_resync` says a handler is due. client-go runs this
/// loop inside the reflector; it only replays the cache (see [`DeltaFifo::resync`]).
pub(crate) async fn resync_loop(
    period: Duration,
    should_resync: impl Fn() -> bool,
    resync: impl Fn(),
) {
    if period.is_zero() {
        return std::future::pending().await;
    }
    let mut ticker = tokio::time::interval_at(Instant::now() + period, period);
    loop {
        ticker.tick().await;
        if should_resync() {
            debug!(?period, "resync");
            resync();
        }
    }
}

#[cfg(test)]
#[path = "reflector_tests.rs"]
mod tests;
