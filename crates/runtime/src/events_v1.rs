//! Recording `events.k8s.io/v1` Events, the API that replaced core/v1 Events for new
//! controllers: an Event says who reported it (`reportingController`, `reportingInstance`), what
//! it is about (`regarding`, and optionally `related`), what the controller did (`action`) and
//! why (`reason`, `note`); repeats become a *series* instead of a count.
//!
//! Mirrors client-go `tools/events` (`event_recorder.go`: `Eventf` and `makeEvent`;
//! `event_broadcaster.go`: the sink, `recordEvent`'s patch-then-create, and
//! `NewEventBroadcasterAdapter`, which picks this API when the server serves it and the core/v1
//! recorder otherwise). The series rule is in [`crate::event_series`]; names and the note's
//! length limit are shared with the core/v1 recorder ([`crate::events`]).
//!
//! # Which API
//! [`EventRecorder::for_server`] asks discovery for `events.k8s.io/v1` (served since 1.19) and
//! falls back to core/v1 Events otherwise: a v1.15 server serves only `events.k8s.io/v1beta1`,
//! and a controller must keep reporting there. The core/v1 fallback drops `action` and
//! `related`, which that API has no fields for, as client-go's `NewEventRecorderAdapter` does.
//!
//! # What the server checks (v1.36, 422 Invalid)
//! `eventTime`, `action`, `reason`, `reportingController` (a qualified name such as
//! `example.com/my-controller`) and `reportingInstance` are required; `type` is `Normal` or
//! `Warning`; `note` is at most 1024 bytes (cut here, as for core/v1), `action` and `reason` at
//! most 128 (left to the server's error: a reason is a constant of the caller's code);
//! `series.count` is at least 2.
//!
//! # Differences from client-go
//! - No broadcaster goroutine: [`EventsRecorder::eventf`] writes in the calling task and returns
//!   the API error; client-go retries a failed write up to 12 times, 10 s apart, in the
//!   background. The caller decides (Events are best effort: log and count).
//! - The series upkeep is two calls the caller schedules ([`EventsRecorder::finish_series`] every
//!   [`FINISH_TIME`](crate::event_series::FINISH_TIME), [`EventsRecorder::refresh_series`] every
//!   [`REFRESH_TIME`](crate::event_series::REFRESH_TIME)); client-go runs them in goroutines
//!   started by `StartRecordingToSink`.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube_core::Resource;
use kubegen_client::{Client, CreateOptions, Patch, PatchOptions, ResourceClient};
use parking_lot::Mutex;

use crate::event_series::{SeriesCache, Write};
use crate::events::{EventNames, EventType, MAX_MESSAGE_BYTES, Recorder, truncate};

/// Where Events go when the regarding object has no namespace (a Node, a cluster-scoped
/// custom resource), as in client-go.
const DEFAULT_NAMESPACE: &str = "default";

/// Records `events.k8s.io/v1` Events with series aggregation. Cheap to clone: clones share the
/// series cache and the name stamps.
#[derive(Clone, Debug)]
pub struct EventsRecorder {
    client: Client,
    /// `reportingController`, e.g. `example.com/my-controller`.
    controller: String,
    /// `reportingInstance`, e.g. the controller name and the pod's host name.
    instance: String,
    names: EventNames,
    series: Arc<Mutex<SeriesCache>>,
}

impl EventsRecorder {
    /// A recorder writing through `client` as `reporting_controller` / `reporting_instance`
    /// (client-go's `NewRecorder(scheme, reportingController)` uses
    /// `<reportingController>-<hostname>` as the instance).
    pub fn new(client: Client, reporting_controller: &str, reporting_instance: &str) -> Self {
        EventsRecorder {
            client,
            controller: reporting_controller.to_owned(),
            instance: reporting_instance.to_owned(),
            names: EventNames::default(),
            series: Arc::new(Mutex::new(SeriesCache::default())),
        }
    }

    /// The Event `eventf` records at `now` (client-go's `makeEvent`): in the regarding object's
    /// namespace (`default` for a cluster-scoped one), named after it.
    #[allow(clippy::too_many_arguments)] // client-go's Eventf arguments, plus the time
    pub(crate) fn build<K>(
        &self,
        regarding: &K,
        related: Option<&ObjectReference>,
        kind: EventType,
        reason: &str,
        action: &str,
        note: &str,
        now: Timestamp,
    ) -> Event
    where
        K: Resource<DynamicType = ()>,
    {
        let reference = regarding.object_ref(&());
        let object_name = reference.name.clone().unwrap_or_default();
        let namespace = reference
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
        Event {
            metadata: ObjectMeta {
                name: Some(self.names.next(&object_name, now.as_nanosecond())),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            action: Some(action.to_owned()),
            reason: Some(reason.to_owned()),
            regarding: Some(reference),
            related: related.cloned(),
            note: Some(truncate(note, MAX_MESSAGE_BYTES).into_owned()),
            type_: Some(kind.as_str().to_owned()),
            ..Event::default()
        }
    }

    /// Records that the controller did `action` about `regarding` (and `related`) for `reason`:
    /// client-go's `EventRecorder.Eventf`. The first Event of its kind is created, the second
    /// makes it a series (a patch), later ones are counted until the series is written by
    /// [`EventsRecorder::finish_series`] or [`EventsRecorder::refresh_series`].
    ///
    /// # Errors
    /// The API error of the create or patch.
    pub async fn eventf<K>(
        &self,
        regarding: &K,
        related: Option<&ObjectReference>,
        kind: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), kubegen_client::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        let now = Timestamp::now();
        let event = self.build(regarding, related, kind, reason, action, note, now);
        let write = self.series.lock().observe(event, now);
        match write {
            Some(Write::Create(event)) => self.create(&event).await,
            Some(Write::Patch(event)) => self.write_series(&event).await,
            None => Ok(()),
        }
    }

    /// Writes the series that saw no new occurrence for
    /// [`FINISH_TIME`](crate::event_series::FINISH_TIME) before `now` one last time, and forgets
    /// them and the old single Events (client-go's `finishSeries`). Call it that often.
    ///
    /// # Errors
    /// The first API error; the other series are still written.
    pub async fn finish_series(&self, now: Timestamp) -> Result<(), kubegen_client::Error> {
        let finished = self.series.lock().finish(now);
        self.write_all(&finished).await
    }

    /// Writes every open series again (client-go's `refreshExistingEventSeries`), so a long
    /// series shows its progress. Call it every
    /// [`REFRESH_TIME`](crate::event_series::REFRESH_TIME).
    ///
    /// # Errors
    /// The first API error; the other series are still written.
    pub async fn refresh_series(&self) -> Result<(), kubegen_client::Error> {
        let open = self.series.lock().open_series();
        self.write_all(&open).await
    }

    async fn write_all(&self, events: &[Event]) -> Result<(), kubegen_client::Error> {
        let mut first_error = None;
        for event in events {
            if let Err(error) = self.write_series(event).await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Patches a series into its stored Event; creates it when it is gone (client-go's
    /// `recordEvent`: a series patch that finds nothing falls back to a create).
    async fn write_series(&self, event: &Event) -> Result<(), kubegen_client::Error> {
        let namespace = event
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(DEFAULT_NAMESPACE);
        let name = event.metadata.name.as_deref().unwrap_or_default();
        // client-go's two-way merge of the Event without and with its series: only `series`.
        let patch = Patch::Strategic(serde_json::json!({ "series": event.series }));
        let events = ResourceClient::<Event>::namespaced(self.client.clone(), namespace);
        match events.patch(name, &patch, &PatchOptions::default()).await {
            Err(error) if error.is_not_found() => self.create(event).await,
            result => result.map(drop),
        }
    }

    async fn create(&self, event: &Event) -> Result<(), kubegen_client::Error> {
        let namespace = event
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(DEFAULT_NAMESPACE);
        let mut fresh = event.clone();
        fresh.metadata.resource_version = None;
        ResourceClient::<Event>::namespaced(self.client.clone(), namespace)
            .create(&fresh, &CreateOptions::default())
            .await
            .map(drop)
    }
}

/// The recorder a controller should use on a server it does not know: `events.k8s.io/v1`
/// where served, core/v1 Events otherwise (client-go's `EventBroadcasterAdapter.NewRecorder`).
#[derive(Clone, Debug)]
pub enum EventRecorder {
    /// The server serves `events.k8s.io/v1` (1.19+).
    EventsV1(EventsRecorder),
    /// It does not (1.15 to 1.18): core/v1 Events, without `action` and `related`.
    CoreV1(Recorder),
}

impl EventRecorder {
    /// Asks the server whether it serves `events.k8s.io/v1` and picks the recorder. As in
    /// client-go, any discovery failure picks core/v1 (which every server serves).
    pub async fn for_server(
        client: Client,
        reporting_controller: &str,
        reporting_instance: &str,
    ) -> EventRecorder {
        match serves_events_v1(&client).await {
            Ok(()) => EventRecorder::EventsV1(EventsRecorder::new(
                client,
                reporting_controller,
                reporting_instance,
            )),
            Err(error) => {
                tracing::info!(%error, "events.k8s.io/v1 is not served; recording core/v1 Events");
                EventRecorder::CoreV1(Recorder::new(
                    client,
                    reporting_controller,
                    reporting_instance,
                ))
            }
        }
    }

    /// Records an Event as [`EventsRecorder::eventf`]; on core/v1, as [`Recorder::record`] with
    /// `note` as the message (`action` and `related` have no place there).
    ///
    /// # Errors
    /// The API error of the write.
    pub async fn eventf<K>(
        &self,
        regarding: &K,
        related: Option<&ObjectReference>,
        kind: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), kubegen_client::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        match self {
            EventRecorder::EventsV1(recorder) => {
                recorder
                    .eventf(regarding, related, kind, reason, action, note)
                    .await
            }
            EventRecorder::CoreV1(recorder) => {
                let now = Time(Timestamp::now());
                recorder.record(regarding, kind, reason, note, &now).await
            }
        }
    }
}

/// `Ok` when discovery lists `events.k8s.io/v1` (client-go's
/// `ServerResourcesForGroupVersion("events.k8s.io/v1")`).
async fn serves_events_v1(client: &Client) -> Result<(), kubegen_client::Error> {
    let request = http::Request::get("/apis/events.k8s.io/v1")
        .header(http::header::ACCEPT, "application/json")
        .body(bytes::Bytes::new())
        .map_err(|e| kubegen_client::Error::BuildRequest(e.to_string()))?;
    client
        .request_json::<serde_json::Value>(request)
        .await
        .map(drop)
}

#[cfg(test)]
#[path = "events_v1_tests.rs"]
mod tests;
