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
//!   synced (by a list, an event or a bookmark), also after a watch 410 (the watch cache
//!   serves a list "not older than" it); `""` (a consistent read) only after a *list* answered
//!   410 or "too large resource version". `docs/informer-internals.md` has the full table.
//! - A watch that ends cleanly, or whose connection breaks mid-stream
//!   ([`ListWatchErrorKind::Interrupted`]), is re-opened from the last version without a relist.
//! - Every transition is a `tracing` debug event carrying the resourceVersion.
//! - A transform that panics is caught: that object is skipped as if the server had not sent
//!   it (a watch event is dropped; a listed object is left out of the `Replace`, so the cache
//!   treats it as deleted until a later event brings it back), logged at error level with the
//!   object's key, and counted ([`InformerStats::transform_panics`](crate::InformerStats)). The
//!   reflector keeps running.
//!
//! # Page size: when a list sends `limit`
//! On a real API server a list with a concrete resourceVersion *and* a `limit` (and no
//! `resourceVersionMatch`) is an *Exact* read served from etcd, which fails with 410 once that
//! version is compacted (after about five minutes). Without `limit` the same list means "not
//! older than" and the watch cache serves it. So, as client-go's `list` does:
//! - [`InformerOptions::page_size`](crate::InformerOptions::page_size) `0` (the default) is
//!   client-go's unset `WatchListPageSize`: pages of 500 (the pager's default) for lists at
//!   `"0"` and `""`, and **no** `limit` for relists at a saved version, unless the first list
//!   (at `"0"`) came back paginated, which means the watch cache is off for this resource and
//!   every list goes to etcd anyway: then we keep paging.
//! - A non-zero `page_size` is an explicit `WatchListPageSize`: every list sends it.
//! - At `"0"` the limit is sent although the watch cache ignores it, so a server without a
//!   watch cache still pages.
//!
//! # After a 410: why not relist from etcd at once?
//! A watch 410 says the *events* after our version were compacted away, not that the state at
//! that version cannot be served. So, as client-go does, the relist asks for "not older than
//! the last synced version" (served from the API server's watch cache, no `limit`), and only
//! if that list itself answers 410 or "too large resource version" do we read `""` from etcd.
//! After an etcd compaction, thousands of informers relisting with `""` at once would be a
//! thundering herd on etcd; relisting at their last version costs a watch-cache read each.
//!
//! # Differences from client-go
//! - A watch that outlives its `timeoutSeconds` by [`WATCH_DEADLINE_MARGIN`] is abandoned and
//!   re-opened (no relist): the connection is assumed dead.
//! - A server whose `/version` predates streaming lists (before 1.27) is not asked for one:
//!   client-go v1.36 asks, and never syncs. A streaming list that is rejected as invalid, or
//!   (on a server whose version is unknown) does not reach its `k8s.io/initial-events-end`
//!   bookmark within `streaming_timeout`, means the server does not support streaming lists: we
//!   use paged lists for the rest of the reflector's life. client-go
//!   tries the streaming list again on every relist, and would wait for the bookmark again each
//!   time. Transient failures (429, 5xx, a broken connection) do not switch streaming off: see
//!   `reflector/streaming.rs`.

mod backoff;
mod incoming;
mod initial_set;
mod state;
mod streaming;

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
    time::Duration,
};

use kube_core::{Resource, WatchEvent};
use tokio::{sync::watch, time::Instant};
use tracing::{debug, error, warn};

pub(crate) use self::state::State;
use self::{
    backoff::Backoff,
    incoming::{Fetch, Incoming, next_event},
    state::OpenWatch,
};
use crate::{
    delta_fifo::DeltaFifo,
    health::{PanicCounters, panic_message},
    key::ObjectKey,
    list_watch::{ListRequest, ListWatch, ListWatchError, ListWatchErrorKind, WatchRequest},
    metrics::ReflectorMetrics,
    stored::Arrived,
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
/// Page size when none was set explicitly (client-go's `pager.defaultPageSize`).
pub(crate) const DEFAULT_PAGE_SIZE: u32 = 500;

/// Reflector settings, filled from the informer's options.
pub(crate) struct ReflectorConfig<K> {
    /// Name for traces (usually the resource's plural).
    pub(crate) name: String,
    /// An explicit list page size (client-go's `WatchListPageSize`): sent with every list.
    /// `None`: [`DEFAULT_PAGE_SIZE`], left out where the watch cache can serve the list (see the
    /// module doc).
    pub(crate) page_size: Option<u32>,
    /// Try the streaming list first.
    pub(crate) streaming_list: bool,
    /// How long the initial phase of a streaming list may take, up to its
    /// `k8s.io/initial-events-end` bookmark, before we fall back to list + watch.
    pub(crate) streaming_timeout: Duration,
    pub(crate) transform: Option<Transform<K>>,
    pub(crate) on_watch_error: Option<WatchErrorHandler>,
    /// Where caught transform panics are counted (shared with the informer).
    pub(crate) panics: Arc<PanicCounters>,
    /// Counts lists and watches, and stamps the last sync.
    pub(crate) metrics: ReflectorMetrics,
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
    /// Set for good once a list at `"0"` came back in pages: the watch cache does not serve
    /// this resource, so relists keep paging (client-go's `paginatedResult`).
    paginated_result: bool,
    /// What [`ListWatch::serves_streaming_lists`] answered, asked before the first streaming list
    /// (`None` until then, and when the implementor cannot tell).
    streaming_support: Option<Option<bool>>,
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
            paginated_result: false,
            streaming_support: None,
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

    /// The `limit` of the first page of a list at `resource_version` (see the module doc).
    pub(crate) fn list_limit(&self, resource_version: &str) -> Option<u32> {
        match self.config.page_size {
            Some(explicit) => Some(explicit),
            None if self.paginated_result => Some(DEFAULT_PAGE_SIZE),
            // "": etcd pages anyway; "0": the watch cache ignores the limit, etcd honours it.
            None if resource_version.is_empty() || resource_version == "0" => {
                Some(DEFAULT_PAGE_SIZE)
            }
            // A saved version without a limit is "not older than": served by the watch cache.
            None => None,
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

    fn report(&self, what: &'static str, err: &ListWatchError) {
        // `{:#}`: the whole chain, so the server's message (e.g. an RBAC denial) is in the log.
        warn!(reflector = %self.config.name, rv = %self.last_synced_rv, error = %format_args!("{err:#}"), "{what} failed");
        self.config.metrics.failed(what, err);
        if let Some(hook) = &self.config.on_watch_error {
            hook(err);
        }
    }

    /// The form to ask the list-watch for objects in: bytes when the queue keeps bytes and no
    /// transform changes the object after it was decoded from them; bytes and metadata only
    /// (no full decode) when, besides, no custom index function needs the typed object and the
    /// list-watch can (see `store_mode.rs`).
    fn fetch(&self) -> Fetch {
        Fetch::choose(
            self.fifo.keeps_bytes(),
            self.config.transform.is_some(),
            self.fifo.files_decoded(),
            self.list_watch.hands_out_wire_items(),
        )
    }

    /// Runs the transform, if any. A transform that panics is caught: the object is skipped
    /// (`None`), logged with its key, and counted (see the module doc).
    fn transform(&self, obj: K) -> Option<Arc<K>> {
        let Some(transform) = &self.config.transform else {
            return Some(Arc::new(obj));
        };
        let key = ObjectKey::of(&obj);
        match catch_unwind(AssertUnwindSafe(|| transform(obj))) {
            Ok(obj) => Some(Arc::new(obj)),
            Err(panic) => {
                self.config.panics.transform.inc();
                error!(reflector = %self.config.name, %key, panic = panic_message(panic.as_ref()), "transform panicked; object skipped");
                None
            }
        }
    }

    /// Lists all pages at `resource_version` and replaces the store with the result.
    async fn list(&mut self, resource_version: String) -> State<L::Watch> {
        debug!(reflector = %self.config.name, rv = %resource_version, "listing");
        self.config
            .metrics
            .list_started(!self.last_synced_rv.is_empty());
        // Each object as the queue will hold it (bytes, in a byte-backed informer), made as it
        // arrives: the decoded object is dropped before the next one is decoded.
        let mut items = Vec::new();
        let mut paginated = false;
        let mut req = ListRequest {
            resource_version: resource_version.clone(),
            limit: self.list_limit(&resource_version),
            continue_token: None,
        };
        let fetch = self.fetch();
        let list_rv = loop {
            let listed = items.len();
            let mut keep = |incoming: Incoming<K>| {
                let entry = incoming
                    .arrive(|obj| self.transform(obj))
                    .and_then(|arrived| self.fifo.entry(arrived));
                items.extend(entry);
            };
            let page = match fetch {
                Fetch::Wire => {
                    self.list_watch
                        .list_each_wire(&req, |item| keep(Incoming::Wire(item)))
                        .await
                }
                Fetch::WithBytes => self
                    .list_watch
                    .list_each_with_bytes(&req, |obj, wire| keep(Incoming::Object(obj, wire)))
                    .await
                    .map(|page| page.metadata),
                Fetch::Decoded => self
                    .list_watch
                    .list_each(&req, |obj| keep(Incoming::Object(obj, None)))
                    .await
                    .map(|page| page.metadata),
            };
            let page = match page {
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
                Err(err) => return self.list_failed(&err, &resource_version),
            };
            let continue_token = page.continue_.filter(|c| !c.is_empty());
            debug!(reflector = %self.config.name, rv = %req.resource_version, items = items.len() - listed, more = continue_token.is_some(), "listed page");
            match continue_token {
                Some(token) => {
                    paginated = true;
                    req.continue_token = Some(token);
                    req.resource_version.clear(); // the token pins the version
                }
                None => break page.resource_version.unwrap_or_default(),
            }
        };
        debug!(reflector = %self.config.name, rv = %list_rv, items = items.len(), "replace");
        self.fifo.replace_entries(items);
        self.last_synced_rv = list_rv;
        self.config.metrics.synced();
        self.last_rv_unavailable = false;
        // Only a list at "0" tells us about the watch cache: a list at "" comes from etcd and
        // pages even when the cache would serve later relists (client-go decides the same way).
        if resource_version == "0" && paginated {
            self.paginated_result = true;
        }
        State::Watch
    }

    /// A list at `resource_version` failed. A version the server no longer has (410) or does not
    /// have yet is retried at once as a consistent read (`""`), as client-go does within the same
    /// list call: the version is the problem, not the server. Anything else backs off first.
    fn list_failed(&mut self, err: &ListWatchError, resource_version: &str) -> State<L::Watch> {
        self.report("list", err);
        let version_unavailable = matches!(
            err.kind(),
            ListWatchErrorKind::Expired | ListWatchErrorKind::ResourceVersionTooLarge
        );
        if version_unavailable {
            self.last_rv_unavailable = true;
        }
        let then = State::List {
            resource_version: self.relist_resource_version(),
        };
        if version_unavailable && !resource_version.is_empty() {
            return then;
        }
        self.back_off(err, then)
    }

    fn watch_request(&self, send_initial_events: bool) -> WatchRequest {
        WatchRequest {
            // A streaming list asks for "not older than" this version (client-go's
            // `rewatchResourceVersion`): the last synced one, `""` before the first sync or once
            // the server said it no longer has it.
            resource_version: if send_initial_events && self.last_rv_unavailable {
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
        self.config.metrics.watch_started();
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
            // `Interrupted` comes from an open stream (see `next_event`); should a ListWatch
            // report it when opening, the version is still good: wait and re-watch.
            ListWatchErrorKind::TooManyRequests
            | ListWatchErrorKind::Unavailable
            | ListWatchErrorKind::Interrupted => self.back_off(err, State::Watch),
            // The *events* after our version are gone, not the state: a list "not older than"
            // it is still served by the watch cache. Only if that list answers 410 / too large
            // does `list_failed` fall back to a consistent read (client-go's rule).
            ListWatchErrorKind::Expired | ListWatchErrorKind::ResourceVersionTooLarge => {
                debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "watch history expired, relisting at the last synced version");
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
        let fetch = self.fetch();
        let next = tokio::select! {
            biased;
            next = next_event(&mut open.stream, fetch) => Ok(next),
            () = &mut open.deadline => Err(()),
        };
        let event = match next {
            Err(()) => {
                debug!(reflector = %self.config.name, rv = %self.last_synced_rv, "watch passed its deadline, re-watching");
                return State::Watch;
            }
            Ok(None) => return self.watch_ended(&open, None),
            // The connection broke, not the watch: like a clean close (client-go's
            // StreamWatcher ends the watch on a probable EOF or timeout), no relist.
            Ok(Some(Err(err))) if err.kind() == ListWatchErrorKind::Interrupted => {
                return self.watch_ended(&open, Some(&err));
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

    /// A watch ended, cleanly or `interrupted` by a broken connection: re-watch from the last
    /// version at once, or after a backoff if it ended at once without any event, so a server
    /// or proxy that drops every watch cannot make us spin.
    fn watch_ended(
        &mut self,
        open: &OpenWatch<L::Watch>,
        interrupted: Option<&ListWatchError>,
    ) -> State<L::Watch> {
        if open.events == 0 && open.opened.elapsed() < SHORT_WATCH {
            let err = interrupted.cloned().unwrap_or_else(|| {
                ListWatchError::new(
                    ListWatchErrorKind::Other,
                    "watch closed at once without events",
                )
            });
            self.report("watch", &err);
            return self.back_off(&err, State::Watch);
        }
        if let Some(err) = interrupted {
            self.report("watch", err);
        }
        debug!(reflector = %self.config.name, rv = %self.last_synced_rv, interrupted = interrupted.is_some(), "watch ended, re-watching");
        State::Watch
    }

    /// Applies one watch event to the store and advances the last synced resourceVersion.
    fn apply(&mut self, event: WatchEvent<Incoming<K>>) -> Result<(), ListWatchError> {
        match event {
            WatchEvent::Added(obj) => {
                if let Some(arrived) = self.observe(obj, "Added") {
                    self.fifo.added(arrived);
                }
            }
            WatchEvent::Modified(obj) => {
                if let Some(arrived) = self.observe(obj, "Modified") {
                    self.fifo.updated(arrived);
                }
            }
            WatchEvent::Deleted(obj) => {
                if let Some(arrived) = self.observe(obj, "Deleted") {
                    self.fifo.deleted(arrived);
                }
            }
            WatchEvent::Bookmark(bookmark) => {
                debug!(reflector = %self.config.name, rv = %bookmark.metadata.resource_version, "bookmark");
                self.last_synced_rv = bookmark.metadata.resource_version;
            }
            WatchEvent::Error(status) => return Err(ListWatchError::from_status(&status)),
        }
        self.config.metrics.synced();
        Ok(())
    }

    /// Records an event's resourceVersion and transforms its object (`None`: skipped, the
    /// transform panicked).
    fn observe(&mut self, incoming: Incoming<K>, event: &'static str) -> Option<Arrived<K>> {
        if let Some(rv) = incoming.resource_version() {
            rv.clone_into(&mut self.last_synced_rv);
        }
        debug!(reflector = %self.config.name, rv = %self.last_synced_rv, key = %incoming.key(), event, "watch event");
        incoming.arrive(|obj| self.transform(obj))
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
