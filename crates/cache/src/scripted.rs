//! A scripted in-memory `ListWatch` for unit tests, recording every call with its virtual time.

use std::{
    collections::{BTreeMap, VecDeque},
    sync::{Arc, Mutex as StdMutex},
    time::Duration,
};

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ListMeta};
use kube_core::{
    ObjectList, TypeMeta, WatchEvent,
    watch::{Bookmark, BookmarkMeta},
};
use tokio::time::Instant;

use crate::{
    list_watch::{
        EventStream, ListRequest, ListWatch, ListWatchError, ListWatchErrorKind, WatchRequest,
    },
    store_mode::WireCodec,
    test_util::cm,
};

/// One scripted step of a watch.
#[allow(clippy::large_enum_variant)] // test scripts: size does not matter
pub(crate) enum Step {
    Event(WatchEvent<ConfigMap>),
    Fail(ListWatchError),
    /// The server closes the watch cleanly.
    End,
    /// Nothing happens for a while.
    Pause(Duration),
}

/// A `ListWatch` answering from a script and recording each call with its virtual time.
#[derive(Default)]
pub(crate) struct Script {
    lists: StdMutex<VecDeque<Result<ObjectList<ConfigMap>, ListWatchError>>>,
    watches: StdMutex<VecDeque<Result<Vec<Step>, ListWatchError>>>,
    calls: StdMutex<Vec<(Duration, String)>>,
    /// The `timeoutSeconds` of each watch request, in order.
    watch_timeouts: StdMutex<Vec<u32>>,
    start: StdMutex<Option<Instant>>,
    /// What `serves_streaming_lists` answers (`None`, unknown, by default).
    streams: StdMutex<Option<bool>>,
}

impl Script {
    pub(crate) fn list(
        self: &Arc<Self>,
        r: Result<ObjectList<ConfigMap>, ListWatchError>,
    ) -> &Arc<Self> {
        self.lists.lock().unwrap().push_back(r);
        self
    }
    pub(crate) fn watch(self: &Arc<Self>, r: Result<Vec<Step>, ListWatchError>) -> &Arc<Self> {
        self.watches.lock().unwrap().push_back(r);
        self
    }
    /// Sets what the server says of streaming lists before the first one.
    pub(crate) fn serves_streaming(self: &Arc<Self>, answer: bool) -> &Arc<Self> {
        *self.streams.lock().unwrap() = Some(answer);
        self
    }
    fn record(&self, call: String) {
        let start = *self.start.lock().unwrap().get_or_insert_with(Instant::now);
        self.calls.lock().unwrap().push((start.elapsed(), call));
    }
    pub(crate) fn calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }
    pub(crate) fn times(&self) -> Vec<Duration> {
        self.calls.lock().unwrap().iter().map(|(t, _)| *t).collect()
    }
    pub(crate) fn watch_timeouts(&self) -> Vec<u32> {
        self.watch_timeouts.lock().unwrap().clone()
    }
}

pub(crate) struct ScriptedWatch(VecDeque<Step>);

impl EventStream<ConfigMap> for ScriptedWatch {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<ConfigMap>, ListWatchError>> {
        loop {
            return match self.0.pop_front() {
                Some(Step::Event(e)) => Some(Ok(e)),
                Some(Step::Fail(e)) => Some(Err(e)),
                Some(Step::End) => None,
                Some(Step::Pause(d)) => {
                    tokio::time::sleep(d).await;
                    continue;
                }
                None => std::future::pending().await, // an idle watch
            };
        }
    }
}

impl ListWatch<ConfigMap> for Arc<Script> {
    type Watch = ScriptedWatch;

    async fn list(&self, req: &ListRequest) -> Result<ObjectList<ConfigMap>, ListWatchError> {
        self.record(format!(
            "list rv={:?} limit={:?} continue={:?}",
            req.resource_version, req.limit, req.continue_token
        ));
        let next = self.lists.lock().unwrap().pop_front();
        match next {
            Some(r) => r,
            None => std::future::pending().await,
        }
    }

    fn wire_codec(&self) -> Option<WireCodec<ConfigMap>> {
        Some(WireCodec::json())
    }

    async fn watch(&self, req: &WatchRequest) -> Result<ScriptedWatch, ListWatchError> {
        assert!(
            (300..=600).contains(&req.timeout_seconds),
            "timeoutSeconds {}",
            req.timeout_seconds
        );
        assert!(req.allow_watch_bookmarks);
        let initial = if req.send_initial_events {
            " initial-events"
        } else {
            ""
        };
        self.record(format!("watch rv={:?}{initial}", req.resource_version));
        self.watch_timeouts
            .lock()
            .unwrap()
            .push(req.timeout_seconds);
        let next = self.watches.lock().unwrap().pop_front();
        match next {
            Some(r) => r.map(|steps| ScriptedWatch(steps.into())),
            None => std::future::pending().await,
        }
    }

    async fn serves_streaming_lists(&self) -> Option<bool> {
        let answer = *self.streams.lock().unwrap();
        if answer.is_some() {
            self.record("version".to_owned());
        }
        answer
    }
}

pub(crate) fn page(
    names: &[&str],
    rv: &str,
    continue_token: Option<&str>,
) -> Result<ObjectList<ConfigMap>, ListWatchError> {
    Ok(ObjectList {
        types: TypeMeta {
            api_version: "v1".into(),
            kind: "List".into(),
        },
        metadata: ListMeta {
            resource_version: Some(rv.into()),
            continue_: continue_token.map(Into::into),
            ..ListMeta::default()
        },
        items: names.iter().map(|n| cm("ns", n, rv)).collect(),
    })
}

pub(crate) fn err(kind: ListWatchErrorKind) -> ListWatchError {
    ListWatchError::new(kind, "scripted")
}

pub(crate) fn added(name: &str, rv: &str) -> Step {
    Step::Event(WatchEvent::Added(cm("ns", name, rv)))
}

pub(crate) fn bookmark(rv: &str, initial_end: bool) -> Step {
    let annotations = if initial_end {
        BTreeMap::from([("k8s.io/initial-events-end".to_owned(), "true".to_owned())])
    } else {
        BTreeMap::new()
    };
    Step::Event(WatchEvent::Bookmark(Bookmark {
        types: TypeMeta {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        },
        metadata: BookmarkMeta {
            resource_version: rv.into(),
            annotations,
        },
    }))
}

pub(crate) fn status_410() -> Step {
    let status = kube_core::Status::failure("too old resource version", "Expired").with_code(410);
    Step::Event(WatchEvent::Error(Box::new(status)))
}

pub(crate) fn modified(name: &str, rv: &str) -> Step {
    Step::Event(WatchEvent::Modified(cm("ns", name, rv)))
}

pub(crate) fn deleted(name: &str, rv: &str) -> Step {
    Step::Event(WatchEvent::Deleted(cm("ns", name, rv)))
}
