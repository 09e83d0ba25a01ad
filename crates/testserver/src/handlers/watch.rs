//! Watch streams: newline-delimited JSON events (or, for built-in kinds when negotiated,
//! length-prefixed protobuf `WatchEvent` frames, written by `crate::encode`) over a chunked response,
//! served from the store's
//! event history (apiserver `storage/cacher/cache_watcher.go`, `endpoints/handlers/watch.go`).
//!
//! # Lifecycle of one watch
//! 1. Resolve the start: no resourceVersion or "0" sends the current state as synthetic `ADDED`
//!    events; `sendInitialEvents=true` does the same and then a BOOKMARK annotated
//!    `k8s.io/initial-events-end: "true"`; a resourceVersion N replays history after N, or sends the
//!    real server's 410 `ERROR` event when N was compacted away.
//! 2. A task per watch (a plain loop) waits for new resourceVersions, bookmark ticks, fault
//!    controls, the timeout or the client going away, and writes each event into the body channel.
//!    With `timeoutSeconds` and bookmarks allowed, one more BOOKMARK goes out 2 s before the
//!    timeout if the resource changed since the watch started, as the watch cache's
//!    `nextBookmarkTime` schedules it, so a client resumes from a fresh version.
//! 3. Selectors are evaluated on the new and previous object: leaving the selection is sent as
//!    `DELETED` (the previous object at the new resourceVersion), entering as `ADDED`.

use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::apiserver::ApiServer;
use crate::body::{BoxBody, ChannelBody};
use crate::encode::conversion::Conversion;
use crate::encode::{stored_watch_event, watch_content_type, watch_event};
use crate::faults::WatchControl;
use crate::handlers::read::wait_for_rv;
use crate::object::partial_object_metadata;
use crate::request::negotiation::WireFormat;
use crate::request::query::{ListParams, Query};
use crate::request::scope::Scope;
use crate::request::selectors::FieldSelector;
use crate::status::ApiError;
use crate::storage::objects::{Event, EventType, ListQuery, Stored};

/// Everything a watch task needs, fixed when the watch starts.
struct Watcher {
    api: ApiServer,
    target: Scope,
    params: ListParams,
    /// Restricts events to one object (legacy `/watch/<plural>/<name>` or `?watch` on an item).
    name: Option<FieldSelector>,
    tx: mpsc::Sender<Bytes>,
    /// Invariant: every event of the resource with rv <= cursor was already considered.
    cursor: u64,
    /// Events carry single-row Tables (`kubectl get -w`) or PartialObjectMetadata instead of
    /// objects.
    conversion: Option<Conversion>,
    /// Whether a Table with column definitions was sent; later ones omit them, as the real
    /// server's watch encoder does.
    table_headers_sent: bool,
    /// Where the stream started. Invariant: <= `resource_rv`.
    start_rv: u64,
    /// The newest resourceVersion of any change to this resource (whatever the namespace or
    /// selectors): the watch cache of the resource, and so its pre-timeout bookmark, only moves
    /// with these.
    resource_rv: u64,
    /// The test's fault controls, and their state when the request was answered: a
    /// `drop_watches` after a client has its response always ends this watch, however late the
    /// task gets to run.
    control: watch::Receiver<WatchControl>,
    started: WatchControl,
}

/// `GET .../<plural>?watch=true` (and the legacy `/watch/` paths).
pub(crate) async fn start(
    api: &ApiServer,
    target: &Scope,
    query: &Query,
    conversion: Option<Conversion>,
) -> Result<Response<BoxBody>, ApiError> {
    let streaming_supported = api.inner.options.streaming_list;
    let mut params = ListParams::parse_for(query, &target.def, true, streaming_supported)?;
    params.read_shard_selector(query, api.inner.options.sharded_list_and_watch)?;
    let name = target.name.as_deref().map(FieldSelector::name_equals);
    let streaming = params.send_initial_events == Some(true);
    if let Some(rv) = params.resource_version.filter(|rv| *rv > 0 && streaming)
        && rv > api.resource_version()
    {
        wait_for_rv(api, rv).await?;
    }
    let (tx, rx) = mpsc::channel(256);
    let mut control = api.inner.faults.watch_control();
    let started = *control.borrow_and_update();
    let mut watcher = Watcher {
        api: api.clone(),
        target: target.clone(),
        params,
        name,
        tx,
        cursor: 0,
        conversion,
        table_headers_sent: false,
        start_rv: 0,
        resource_rv: 0,
        control,
        started,
    };
    let initial = watcher.initial_state(streaming);
    tokio::spawn(async move { watcher.run(initial, streaming).await });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, watch_content_type(target.format))
        .body(ChannelBody::boxed(rx))
        .map_err(|e| ApiError::internal(e.to_string()))
}

enum Initial {
    Objects(Vec<Stored>),
    /// (requested, oldest available)
    TooOld(u64, u64),
}

impl Watcher {
    /// Decides where the stream starts (see the module docs) and sets the cursor accordingly.
    fn initial_state(&mut self, streaming: bool) -> Initial {
        let synthetic = streaming
            || matches!(self.params.resource_version, None | Some(0))
                && self.params.send_initial_events.is_none();
        let api = self.api.clone();
        let state = api.inner.storage.lock();
        let store = &state.store;
        if synthetic {
            let keep = |s: &Stored| self.passes(&s.value);
            let query = ListQuery {
                namespace: self.target.namespace.as_deref(),
                at: None,
                after: None,
                limit: None,
                keep: &keep,
            };
            let items = store
                .list(&self.target.def.key(), &query)
                .map(|(items, _)| items);
            self.cursor = store.current_rv();
            return Initial::Objects(items.unwrap_or_default());
        }
        match self.params.resource_version.unwrap_or(0) {
            0 => {
                self.cursor = store.current_rv();
                Initial::Objects(Vec::new())
            }
            rv if rv < store.compacted_rv() => Initial::TooOld(rv, store.compacted_rv()),
            rv => {
                self.cursor = rv;
                Initial::Objects(Vec::new())
            }
        }
    }

    fn passes(&self, object: &Value) -> bool {
        self.params.matches(object) && self.name.as_ref().is_none_or(|n| n.matches(object))
    }

    async fn send(&self, chunk: Bytes) -> bool {
        self.tx.send(chunk).await.is_ok()
    }

    fn bookmark(&mut self, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": self.cursor.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.target.def.kind, "apiVersion": self.target.def.api_version(), "metadata": metadata});
        self.event("BOOKMARK", &object, object.to_string().as_bytes())
    }

    /// One event line carrying `object` (whose serialized form is `json`), or its Table.
    fn event(&mut self, kind: &str, object: &Value, json: &[u8]) -> Bytes {
        let table = match self.conversion {
            None => return watch_event(self.target.format, kind, object, json),
            Some(Conversion::Metadata(version)) => {
                let partial = partial_object_metadata(object, version);
                let json = partial.to_string();
                return watch_event(self.target.format, kind, &partial, json.as_bytes());
            }
            Some(Conversion::Table(table)) => table,
        };
        let mut meta = serde_json::Map::new();
        if let Some(rv) = object.pointer("/metadata/resourceVersion") {
            meta.insert("resourceVersion".into(), rv.clone());
        }
        let rendered = table.render(&self.target.def, &[object], meta, !self.table_headers_sent);
        self.table_headers_sent = true;
        watch_event(
            WireFormat::Json,
            kind,
            &rendered,
            rendered.to_string().as_bytes(),
        )
    }

    fn bookmarks_wanted(&self) -> bool {
        self.params.allow_bookmarks && self.api.inner.faults.bookmarks_enabled()
    }

    /// The event as this watcher must see it, if at all.
    fn translate(&mut self, event: &Event) -> Option<Bytes> {
        if self
            .target
            .namespace
            .as_ref()
            .is_some_and(|ns| *ns != event.key.0)
        {
            return None;
        }
        let now = self.passes(&event.object.value);
        let before = event.prev.as_ref().is_some_and(|p| self.passes(&p.value));
        let (kind, object) = match (event.kind, now, before) {
            (EventType::Added | EventType::Deleted, true, _) => {
                (event.kind.as_str(), &event.object)
            }
            (EventType::Modified, true, true) => ("MODIFIED", &event.object),
            (EventType::Modified, true, false) => ("ADDED", &event.object),
            // Left the selection: the previous state, stamped with this event's resourceVersion.
            (EventType::Modified, false, true) => ("DELETED", event.departed()?),
            _ => return None,
        };
        Some(self.stored_event(kind, object))
    }

    /// [`Watcher::event`] of a stored object version: without a conversion, its protobuf
    /// form is shared with every other watcher sending it.
    fn stored_event(&mut self, kind: &str, object: &Stored) -> Bytes {
        if self.conversion.is_none() {
            return stored_watch_event(self.target.format, kind, object);
        }
        self.event(kind, &object.value, &object.json)
    }

    /// Sends events after the cursor. False when the stream must end.
    async fn deliver(&mut self) -> bool {
        let fetched = self
            .api
            .inner
            .storage
            .lock()
            .store
            .events_after(&self.target.def.key(), self.cursor);
        match fetched {
            Ok((events, scanned)) => {
                if let Some(last) = events.last() {
                    self.resource_rv = self.resource_rv.max(last.rv);
                }
                for event in &events {
                    if let Some(chunk) = self.translate(event)
                        && !self.send(chunk).await
                    {
                        return false;
                    }
                }
                self.cursor = self.cursor.max(scanned);
                true
            }
            Err(compacted) => {
                // This watcher fell behind the history (e.g. stalled): end it as the real server does.
                let _ = self
                    .send(too_old(self.target.format, self.cursor, compacted.oldest))
                    .await;
                false
            }
        }
    }

    async fn run(mut self, initial: Initial, streaming: bool) {
        self.start_rv = self.cursor;
        self.resource_rv = self.cursor;
        match initial {
            Initial::TooOld(requested, oldest) => {
                let _ = self
                    .send(too_old(self.target.format, requested, oldest))
                    .await;
                return;
            }
            Initial::Objects(items) => {
                for item in items {
                    let chunk = self.stored_event("ADDED", &item);
                    if !self.send(chunk).await {
                        return;
                    }
                }
                if streaming {
                    let chunk = self.bookmark(true);
                    if !self.send(chunk).await {
                        return;
                    }
                }
            }
        }
        self.follow().await;
    }

    /// A bookmark when this resource changed since the watch started (seen on v1.36: the
    /// watch cache's pre-timeout bookmark comes only then, even if the client saw the change).
    /// False when the stream must end.
    async fn bookmark_if_moved(&mut self) -> bool {
        if !self.deliver().await {
            return false;
        }
        if !self.bookmarks_wanted() || self.resource_rv <= self.start_rv {
            return true;
        }
        let chunk = self.bookmark(false);
        self.send(chunk).await
    }

    async fn follow(&mut self) {
        let mut changes = self.api.inner.storage.subscribe();
        // A clone keeps the version seen when the request was answered.
        let mut control = self.control.clone();
        let started = self.started;
        let mut bookmark_generation = started.bookmark_generation;
        let period = self
            .api
            .inner
            .options
            .bookmark_interval
            .max(Duration::from_millis(10));
        let mut ticker = tokio::time::interval_at(Instant::now() + period, period);
        // A timeout too far away for an `Instant` (e.g. `timeoutSeconds=18446744073709551615`)
        // is no timeout at all.
        let deadline = self
            .params
            .timeout_seconds
            .and_then(|s| Instant::now().checked_add(Duration::from_secs(s)));
        // The cacher's bookmark right before the timeout, 2 s ahead of it.
        let mut pre_timeout = deadline
            .and_then(|d| d.checked_sub(Duration::from_secs(2)))
            .filter(|at| *at > Instant::now());
        loop {
            let current = *control.borrow_and_update();
            if current.drop_generation != started.drop_generation {
                return;
            }
            if !current.stalled {
                if !self.deliver().await {
                    return;
                }
                if current.bookmark_generation != bookmark_generation && self.bookmarks_wanted() {
                    let chunk = self.bookmark(false);
                    if !self.send(chunk).await {
                        return;
                    }
                }
                bookmark_generation = current.bookmark_generation;
            }
            tokio::select! {
                _ = self.tx.closed() => return,
                _ = sleep_until(deadline) => return,
                changed = changes.changed() => if changed.is_err() { return },
                changed = control.changed() => if changed.is_err() { return },
                _ = ticker.tick() => {
                    if !current.stalled && self.bookmarks_wanted() {
                        let chunk = self.bookmark(false);
                        if !self.send(chunk).await {
                            return;
                        }
                    }
                }
                _ = sleep_until(pre_timeout) => {
                    pre_timeout = None;
                    if !current.stalled && !self.bookmark_if_moved().await {
                        return;
                    }
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The real server's `ERROR` event for a watch from a compacted resourceVersion.
fn too_old(format: WireFormat, requested: u64, oldest: u64) -> Bytes {
    let status = ApiError::expired(format!("too old resource version: {requested} ({oldest})"));
    let json = status.to_json();
    let object = serde_json::from_slice(&json).unwrap_or_default();
    watch_event(format, "ERROR", &object, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_old_event_is_a_410_expired_status() {
        let chunk = too_old(WireFormat::Json, 3, 10);
        let value: Value = serde_json::from_slice(&chunk).unwrap();
        assert_eq!(value["type"], "ERROR");
        assert_eq!(value["object"]["code"], 410);
        assert_eq!(value["object"]["reason"], "Expired");
        assert_eq!(
            value["object"]["message"],
            "too old resource version: 3 (10)"
        );
        assert!(chunk.ends_with(b"\n"));
    }
}
