//! The streaming list (`sendInitialEvents=true`): one watch whose first events are the current
//! state, closed by a bookmark annotated `k8s.io/initial-events-end`.
//!
//! Mirrors client-go `tools/cache/reflector.go` (`watchList`). Off unless
//! `InformerOptions::streaming_list` is set; any failure falls back to list + watch for good.

use kube_core::{Resource, WatchEvent};
use tracing::{debug, warn};

use super::{Reflector, initial_set::InitialSet, state::State};
use crate::{
    key::ObjectKey,
    list_watch::{EventStream, ListWatch, ListWatchError, ListWatchErrorKind},
};

/// The bookmark annotation that ends the initial events of a streaming list.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

impl<K, L> Reflector<K, L>
where
    K: Resource + Clone + Send + Sync + 'static,
    L: ListWatch<K>,
{
    /// Streaming list: collect the initial events until the end bookmark, `Replace`, and keep
    /// the watch. Any failure, or no end bookmark within `streaming_timeout`, falls back to a
    /// paged list, for good.
    pub(super) async fn stream_list(&mut self) -> State<L::Watch> {
        let req = self.watch_request(true);
        self.config
            .metrics
            .list_started(!self.last_synced_rv.is_empty());
        let mut open = match self.list_watch.watch(&req).await {
            Ok(stream) => Self::open(stream, &req),
            Err(err) => return self.streaming_failed(&err),
        };
        // One deadline for the whole initial phase, not one per event: a server that ignores
        // sendInitialEvents sends the current state and then live events, never the end
        // bookmark, and would never fall silent long enough to trip a per-event timeout.
        let deadline = tokio::time::sleep(self.config.streaming_timeout);
        tokio::pin!(deadline);
        let mut initial = InitialSet::default();
        loop {
            let next = tokio::select! {
                biased; // a server that floods events cannot starve the deadline
                () = &mut deadline => Err(()),
                next = open.stream.next_event() => Ok(next),
            };
            let event = match next {
                Ok(Some(Ok(event))) => event,
                Ok(Some(Err(err))) => return self.streaming_failed(&err),
                Ok(None) => {
                    return self
                        .streaming_failed(&streaming_error("closed before initial-events-end"));
                }
                Err(()) => {
                    return self.streaming_failed(&streaming_error(
                        "no initial-events-end bookmark in time",
                    ));
                }
            };
            open.events += 1;
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    initial.upsert(self.transform(obj));
                }
                WatchEvent::Deleted(obj) => initial.remove(&ObjectKey::of(&obj)),
                WatchEvent::Bookmark(bookmark) => {
                    let end = bookmark
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true");
                    if end {
                        debug!(reflector = %self.config.name, rv = %bookmark.metadata.resource_version, items = initial.len(), "streaming list done, replace");
                        self.fifo.replace(initial.into_items());
                        self.last_synced_rv = bookmark.metadata.resource_version;
                        self.config.metrics.synced();
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

/// Why a streaming list is given up on, when the server sent no error of its own.
fn streaming_error(message: &str) -> ListWatchError {
    ListWatchError::new(ListWatchErrorKind::Other, message)
}
