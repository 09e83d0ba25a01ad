//! Recording core/v1 Events: what `kubectl describe` and `kubectl get events` show people about
//! a controller's actions. The counterpart of client-go's `tools/record` (`EventRecorder`,
//! `EventCorrelator`, the sink writing to the API).
//!
//! [`EventBuilder`] builds an Event about an object; [`Recorder`] runs it through the
//! [`Correlator`] (aggregation, deduplication, spam filter; see [`crate::correlator`]) and creates
//! or patches it. core/v1 Events (not `events.k8s.io/v1`) keep controllers compatible with
//! Kubernetes 1.15+.
//!
//! # Differences from client-go's recorder
//! - No broadcaster goroutine: `record` writes in the calling task and returns the API error,
//!   so the caller decides (Events are best effort: log and count, never fail a reconcile).
//! - A patch of an Event that is gone (expired by the API server's TTL, or whose creation
//!   failed) falls back to creating it, as client-go's sink does on NotFound.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use k8s_openapi::api::core::v1::{Event, EventSource};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube_core::Resource;
use kubegen_client::{Client, CreateOptions, Patch, PatchOptions, ResourceClient};
use parking_lot::Mutex;

use crate::correlator::{Correlated, Correlator};

/// The API server rejects Event messages (core/v1 `message`, events.k8s.io/v1 `note`) longer
/// than this many bytes (v1.36: `message: Invalid value: "": can have at most 1024 characters`).
pub(crate) const MAX_MESSAGE_BYTES: usize = 1024;

/// `type` of an Event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Routine information.
    Normal,
    /// Something a person should look at.
    Warning,
}

impl EventType {
    /// The API's spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// Builds Events attributed to one controller instance.
#[derive(Clone, Debug)]
pub struct EventBuilder {
    /// `source.component` and `reportingComponent`: the controller's name.
    component: String,
    /// `reportingInstance`: the replica's identity (pod name or host name).
    instance: String,
    /// Event names, never repeated (shared by clones).
    names: EventNames,
}

/// Hands out Event names as client-go does (`<object name>.<unix nanoseconds in hex>`), so
/// Events of one object sort by time and two replicas practically never collide. Names built
/// from the same instant (one reconcile recording Events about several objects that share a
/// name) get stamps one nanosecond apart: a repeated name would be refused as AlreadyExists and
/// the Event lost. Used by both recorders (core/v1 and `events.k8s.io/v1`). Cheap to clone;
/// clones share the last stamp.
#[derive(Clone, Debug)]
pub(crate) struct EventNames {
    /// The nanosecond stamp of the last name handed out.
    last_stamp: Arc<AtomicI64>,
}

impl Default for EventNames {
    fn default() -> Self {
        EventNames {
            last_stamp: Arc::new(AtomicI64::new(i64::MIN)),
        }
    }
}

impl EventNames {
    /// The name of an Event about `object_name` at `nanos` (nanoseconds since 1970).
    pub(crate) fn next(&self, object_name: &str, nanos: i128) -> String {
        let stamp = self.unique_stamp(nanos);
        format!("{object_name}.{stamp:x}")
    }

    /// `wanted`, or one past the last stamp handed out if that is not earlier.
    fn unique_stamp(&self, wanted: i128) -> i64 {
        // Nanoseconds since 1970 fit an i64 until the year 2262.
        let wanted = i64::try_from(wanted).unwrap_or(i64::MAX);
        let mut last = self.last_stamp.load(Ordering::Relaxed);
        loop {
            let stamp = wanted.max(last.saturating_add(1));
            match self.last_stamp.compare_exchange_weak(
                last,
                stamp,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return stamp,
                Err(current) => last = current,
            }
        }
    }
}

impl EventBuilder {
    /// A builder for Events of `component` reported by `instance`.
    pub fn new(component: &str, instance: &str) -> EventBuilder {
        EventBuilder {
            component: component.to_owned(),
            instance: instance.to_owned(),
            names: EventNames::default(),
        }
    }

    /// An Event about `object`, in the object's namespace, at `now`, named as client-go names Events
    /// (one reconcile deleting several Deployments records Events per Deployment and per
    /// WhiteList, and a Deployment may share a WhiteList's name: the names still differ).
    pub fn build<K>(
        &self,
        object: &K,
        kind: EventType,
        reason: &str,
        message: &str,
        now: &Time,
    ) -> Event
    where
        K: Resource<DynamicType = ()>,
    {
        let involved = object.object_ref(&());
        let object_name = involved.name.clone().unwrap_or_default();
        let name = self.names.next(&object_name, now.0.as_nanosecond());
        Event {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: involved.namespace.clone(),
                ..ObjectMeta::default()
            },
            involved_object: involved,
            reason: Some(reason.to_owned()),
            message: Some(truncate(message, MAX_MESSAGE_BYTES).into_owned()),
            type_: Some(kind.as_str().to_owned()),
            count: Some(1),
            first_timestamp: Some(now.clone()),
            last_timestamp: Some(now.clone()),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: None,
            }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        }
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, marking the cut with `...`.
pub(crate) fn truncate(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max - 3;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", &text[..end]))
}

/// Records Events through the [`Correlator`] into the API. Cheap to clone: clones share the
/// correlator's memory.
#[derive(Clone, Debug)]
pub struct Recorder {
    client: Client,
    builder: EventBuilder,
    correlator: Arc<Mutex<Correlator>>,
}

impl Recorder {
    /// A recorder writing through `client`, attributing Events to `component` / `instance`.
    pub fn new(client: Client, component: &str, instance: &str) -> Recorder {
        Recorder {
            client,
            builder: EventBuilder::new(component, instance),
            correlator: Arc::new(Mutex::new(Correlator::default())),
        }
    }

    /// Records an Event about `object` at `now`: created, patched (a repeat), or dropped (spam).
    ///
    /// # Errors
    /// The API error of the create or patch.
    pub async fn record<K>(
        &self,
        object: &K,
        kind: EventType,
        reason: &str,
        message: &str,
        now: &Time,
    ) -> Result<(), kubegen_client::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        let event = self.builder.build(object, kind, reason, message, now);
        let correlated = self.correlator.lock().correlate(event, now.0);
        match correlated {
            Correlated::Create(event) => self.create(&event).await,
            Correlated::Patch {
                namespace,
                name,
                event,
            } => {
                let patch = Patch::Strategic(serde_json::json!({
                    "count": event.count,
                    "lastTimestamp": event.last_timestamp,
                    "message": event.message,
                }));
                let events = ResourceClient::<Event>::namespaced(self.client.clone(), &namespace);
                match events.patch(&name, &patch, &PatchOptions::default()).await {
                    Err(error) if error.is_not_found() => self.create(&event).await,
                    result => result.map(drop),
                }
            }
            Correlated::Dropped => {
                tracing::debug!(reason, "Event dropped by the spam filter");
                Ok(())
            }
        }
    }

    async fn create(&self, event: &Event) -> Result<(), kubegen_client::Error> {
        let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
        let mut fresh = event.clone();
        fresh.metadata.resource_version = None;
        ResourceClient::<Event>::namespaced(self.client.clone(), namespace)
            .create(&fresh, &CreateOptions::default())
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use k8s_openapi::api::apps::v1::Deployment;

    use super::*;

    fn deployment() -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("team".into()),
                uid: Some("u-1".into()),
                resource_version: Some("42".into()),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    #[test]
    fn event_points_at_the_object_and_names_the_reporter() {
        let now = Time(Timestamp::from_second(1_700_000_000).unwrap_or_else(|e| panic!("{e}")));
        let event = EventBuilder::new("image-police", "pod-a").build(
            &deployment(),
            EventType::Warning,
            "DeletedForbiddenImage",
            "gone",
            &now,
        );
        assert_eq!(event.metadata.name.as_deref(), Some("web.17979cfe362a0000"));
        assert_eq!(event.metadata.namespace.as_deref(), Some("team"));
        let involved = &event.involved_object;
        assert_eq!(involved.kind.as_deref(), Some("Deployment"));
        assert_eq!(involved.api_version.as_deref(), Some("apps/v1"));
        assert_eq!(involved.uid.as_deref(), Some("u-1"));
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(event.reason.as_deref(), Some("DeletedForbiddenImage"));
        assert_eq!(event.reporting_instance.as_deref(), Some("pod-a"));
        assert_eq!(
            event.source.and_then(|s| s.component).as_deref(),
            Some("image-police")
        );
        assert_eq!(event.count, Some(1));
    }

    #[test]
    fn events_built_from_one_timestamp_get_distinct_names() {
        let now = Time(Timestamp::from_second(1_700_000_000).unwrap_or_else(|e| panic!("{e}")));
        let builder = EventBuilder::new("image-police", "pod-a");
        let clone = builder.clone();
        let names: Vec<_> = [&builder, &clone, &builder]
            .iter()
            .map(|b| {
                b.build(&deployment(), EventType::Warning, "R", "m", &now)
                    .metadata
                    .name
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(
            names,
            [
                "web.17979cfe362a0000",
                "web.17979cfe362a0001",
                "web.17979cfe362a0002"
            ]
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let long = "é".repeat(600);
        let cut = truncate(&long, MAX_MESSAGE_BYTES);
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
        assert!(cut.ends_with("..."));
        assert_eq!(truncate("short", MAX_MESSAGE_BYTES), "short");
    }

    async fn client_with_namespace_team() -> Client {
        let client = kubegen_fake::FakeClient::new().client();
        let namespace = k8s_openapi::api::core::v1::Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                ..ObjectMeta::default()
            },
            ..Default::default()
        };
        ResourceClient::cluster(client.clone())
            .create(&namespace, &CreateOptions::default())
            .await
            .unwrap_or_else(|e| panic!("namespace: {e}"));
        client
    }

    fn at(second: i64) -> Time {
        Time(Timestamp::from_second(second).unwrap_or_else(|e| panic!("{e}")))
    }

    async fn stored_events(client: &Client) -> Vec<Event> {
        ResourceClient::<Event>::namespaced(client.clone(), "team")
            .list(&kubegen_client::ListOptions::default())
            .await
            .unwrap_or_else(|e| panic!("list: {e}"))
            .items
    }

    #[tokio::test]
    async fn a_repeated_event_is_created_once_then_patched_with_its_count() {
        let client = client_with_namespace_team().await;
        let recorder = Recorder::new(client.clone(), "image-police", "pod-a");
        for second in [1_700_000_000, 1_700_000_060] {
            recorder
                .record(&deployment(), EventType::Warning, "R", "same", &at(second))
                .await
                .unwrap_or_else(|e| panic!("record: {e}"));
        }
        let stored = stored_events(&client).await;
        assert_eq!(stored.len(), 1, "one object for both");
        let event = &stored[0];
        assert_eq!(event.count, Some(2));
        assert_eq!(event.first_timestamp, Some(at(1_700_000_000)));
        assert_eq!(event.last_timestamp, Some(at(1_700_000_060)));
    }

    #[tokio::test]
    async fn a_repeat_of_an_event_that_is_gone_creates_it_again() {
        let client = client_with_namespace_team().await;
        let recorder = Recorder::new(client.clone(), "image-police", "pod-a");
        let record = |second| {
            let recorder = recorder.clone();
            async move {
                recorder
                    .record(&deployment(), EventType::Warning, "R", "same", &at(second))
                    .await
                    .unwrap_or_else(|e| panic!("record: {e}"));
            }
        };
        record(1_700_000_000).await;
        let first = stored_events(&client).await;
        let name = first[0].metadata.name.clone().unwrap_or_default();
        ResourceClient::<Event>::namespaced(client.clone(), "team")
            .delete(&name, &kubegen_client::DeleteOptions::default())
            .await
            .unwrap_or_else(|e| panic!("delete: {e}"));
        record(1_700_000_060).await;
        let again = stored_events(&client).await;
        assert_eq!(again.len(), 1, "the patch's NotFound fell back to a create");
        assert_eq!(again[0].count, Some(2));
        assert_eq!(again[0].last_timestamp, Some(at(1_700_000_060)));
    }
}
