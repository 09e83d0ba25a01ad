//! The streaming list (`sendInitialEvents=true`): one watch whose first events are the current
//! state, closed by a bookmark annotated `k8s.io/initial-events-end`.
//!
//! Mirrors client-go `tools/cache/reflector.go` (`watchList`). On by default
//! (`InformerOptions::streaming_list`), as client-go's `WatchListClient` gate is since 1.35: the
//! initial objects go into a temporary set as their events arrive, in the shape the queue and the
//! indexer keep them afterwards (one shared `Arc` each; bytes in a byte-backed informer), so the
//! peak stays near what the cache keeps.
//!
//! # Which servers are asked
//! Before the first streaming list the reflector asks the [`ListWatch`] whether the server
//! serves them (kubegen-client's asks `/version`). A server before 1.27 ignores
//! `sendInitialEvents`: it sends the current objects and never the end bookmark, so client-go
//! v1.36 never syncs against 1.15 with its default. Here such a server gets paged lists at once.
//! A 1.27+ server either streams or rejects the request with 422 (WatchList feature off), and
//! waits as long as the initial phase takes, as client-go does; only when the answer is unknown
//! does `streaming_timeout` bound the initial phase.
//!
//! # When a streaming list fails
//! client-go's `ListAndWatch` falls back to a paged list for *this* relist whenever `watchList`
//! fails, and tries streaming again on the next relist; inside `watchList` it retries 429 and
//! refused connections after a backoff, and a version the server does not have with `""`. We do
//! the same, and only switch streaming off for good when the server shows it does not support it:
//!
//! | failure                                            | next step                                 |
//! |----------------------------------------------------|-------------------------------------------|
//! | 429, connection refused                            | back off, stream again at the same version |
//! | 410 / too large resourceVersion                    | stream again at once with `""` (backoff if it was `""` already) |
//! | 5xx, other errors, stream broke or closed early    | paged list now; stream again next relist  |
//! | 400/422 (parameters rejected)                      | paged lists for the reflector's life      |
//! | no end bookmark within `streaming_timeout`         | paged lists for the reflector's life      |

use kube_core::{Resource, WatchEvent};
use tracing::{debug, warn};

use super::{Reflector, initial_set::InitialSet, next_event, state::State};
use crate::list_watch::{ListWatch, ListWatchError, ListWatchErrorKind};

/// The bookmark annotation that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

impl<K, L> Reflector<K, L>
where
    K: Resource + Clone + Send + Sync + 'static,
    L: ListWatch<K>,
{
    /// Streaming list: collect the initial events until the end bookmark, `Replace`, and keep
    /// the watch. See the module doc for what each failure leads to.
    pub(super) async fn stream_list(&mut self) -> State<L::Watch> {
        let support = match self.streaming_support {
            Some(known) => known,
            None => {
                let asked = self.list_watch.serves_streaming_lists().await;
                self.streaming_support = Some(asked);
                asked
            }
        };
        if support == Some(false) {
            debug!(reflector = %self.config.name, "server predates streaming lists; using list + watch");
            self.config.streaming_list = false;
            return self.fallback_list();
        }
        let req = self.watch_request(true);
        self.config
            .metrics
            .list_started(!self.last_synced_rv.is_empty());
        // A streaming list is one watch request: it counts as both.
        self.config.metrics.watch_started();
        let mut open = match self.list_watch.watch(&req).await {
            Ok(stream) => Self::open(stream, &req),
            Err(err) => return self.streaming_failed(&err, &req.resource_version),
        };
        // One deadline for the whole initial phase, not one per event: a server that ignores
        // sendInitialEvents sends the current state and then live events, never the end
        // bookmark, and would never fall silent long enough to trip a per-event timeout. A server
        // known to serve streaming lists gets no deadline (a large initial set over a slow link
        // may take long).
        let timeout = self.config.streaming_timeout;
        let deadline = async move {
            match support {
                Some(true) => std::future::pending::<()>().await,
                _ => tokio::time::sleep(timeout).await,
            }
        };
        tokio::pin!(deadline);
        let mut initial = InitialSet::default();
        let fetch = self.fetch();
        loop {
            let next = tokio::select! {
                biased; // a server that floods events cannot starve the deadline
                () = &mut deadline => Err(()),
                next = next_event(&mut open.stream, fetch) => Ok(next),
            };
            let event = match next {
                Ok(Some(Ok(event))) => event,
                Ok(Some(Err(err))) => return self.streaming_failed(&err, &req.resource_version),
                Ok(None) => {
                    let err = streaming_error("closed before initial-events-end");
                    return self.streaming_failed(&err, &req.resource_version);
                }
                Err(()) => return self.streaming_unsupported(),
            };
            open.events += 1;
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    let entry = obj
                        .arrive(|obj| self.transform(obj))
                        .and_then(|arrived| self.fifo.entry(arrived));
                    if let Some(entry) = entry {
                        initial.upsert(entry);
                    }
                }
                WatchEvent::Deleted(obj) => initial.remove(&obj.key()),
                WatchEvent::Bookmark(bookmark) => {
                    let end = bookmark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true");
                    if end {
                        debug!(reflector = %self.config.name, rv = %bookmark.metadata.resource_version, items = initial.len(), "streaming list done, replace");
                        self.fifo.replace_entries(initial.into_items());
                        self.last_synced_rv = bookmark.metadata.resource_version;
                        self.config.metrics.synced();
                        self.last_rv_unavailable = false;
                        return State::Watching(open);
                    }
                }
                WatchEvent::Error(status) => {
                    let err = ListWatchError::from_status(&status);
                    return self.streaming_failed(&err, &req.resource_version);
                }
            }
        }
    }

    /// A streaming list at `resource_version` failed with `err` (see the module doc's table).
    fn streaming_failed(
        &mut self,
        err: &ListWatchError,
        resource_version: &str,
    ) -> State<L::Watch> {
        self.report("streaming list", err);
        match err.kind() {
            ListWatchErrorKind::TooManyRequests | ListWatchErrorKind::Unavailable => {
                self.back_off(err, State::StreamList)
            }
            ListWatchErrorKind::Expired | ListWatchErrorKind::ResourceVersionTooLarge => {
                self.last_rv_unavailable = true;
                if resource_version.is_empty() {
                    self.back_off(err, State::StreamList)
                } else {
                    State::StreamList
                }
            }
            ListWatchErrorKind::Invalid => {
                warn!(reflector = %self.config.name, "server rejected the streaming list; using list + watch from now on");
                self.config.streaming_list = false;
                self.fallback_list()
            }
            ListWatchErrorKind::Interrupted | ListWatchErrorKind::Other => {
                warn!(reflector = %self.config.name, "streaming list failed; listing instead this time");
                self.fallback_list()
            }
        }
    }

    /// No end bookmark in time: the server ignores `sendInitialEvents` (before 1.27, or the
    /// WatchList feature is off). Streaming would never work, so it is switched off for good.
    fn streaming_unsupported(&mut self) -> State<L::Watch> {
        self.report(
            "streaming list",
            &streaming_error("no initial-events-end bookmark in time"),
        );
        warn!(reflector = %self.config.name, "server does not support streaming lists; using list + watch from now on");
        self.config.streaming_list = false;
        self.fallback_list()
    }

    /// A paged list at the version a relist would use.
    fn fallback_list(&self) -> State<L::Watch> {
        State::List {
            resource_version: self.relist_resource_version(),
        }
    }
}

/// Why a streaming list is given up on, when the server sent no error of its own.
fn streaming_error(message: &str) -> ListWatchError {
    ListWatchError::new(ListWatchErrorKind::Other, message)
}
