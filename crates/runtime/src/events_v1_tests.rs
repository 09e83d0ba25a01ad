use std::future::Future;
use std::pin::Pin;

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kubegen_client::{Body, ListOptions, Transport};

use super::*;

fn pod() -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            namespace: Some("team".into()),
            uid: Some("u-1".into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    }
}

fn node_ref() -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Node".into()),
        name: Some("n1".into()),
        ..ObjectReference::default()
    }
}

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap()
}

#[test]
fn an_event_names_its_reporter_regarding_related_action_and_cuts_the_note() {
    let recorder = EventsRecorder::new(
        kubegen_fake::FakeClient::new().client(),
        "example.com/ctl",
        "ctl-host",
    );
    let long = "é".repeat(600);
    let event = recorder.build(
        &pod(),
        Some(&node_ref()),
        EventType::Normal,
        "Scheduled",
        "Binding",
        &long,
        at(1_700_000_000),
    );
    assert_eq!(
        event.metadata.name.as_deref(),
        Some("web-0.17979cfe362a0000")
    );
    assert_eq!(event.metadata.namespace.as_deref(), Some("team"));
    assert_eq!(event.event_time, Some(MicroTime(at(1_700_000_000))));
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("example.com/ctl")
    );
    assert_eq!(event.reporting_instance.as_deref(), Some("ctl-host"));
    assert_eq!(event.action.as_deref(), Some("Binding"));
    assert_eq!(event.reason.as_deref(), Some("Scheduled"));
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    let regarding = event.regarding.unwrap();
    assert_eq!(regarding.kind.as_deref(), Some("Pod"));
    assert_eq!(regarding.uid.as_deref(), Some("u-1"));
    assert_eq!(event.related, Some(node_ref()));
    let note = event.note.unwrap();
    assert!(note.len() <= MAX_MESSAGE_BYTES && note.ends_with("..."));
    assert!(event.series.is_none());
}

#[test]
fn an_event_about_a_cluster_scoped_object_goes_to_default() {
    let recorder = EventsRecorder::new(kubegen_fake::FakeClient::new().client(), "c", "i");
    let node = Node {
        metadata: ObjectMeta {
            name: Some("n1".into()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    let event = recorder.build(&node, None, EventType::Warning, "R", "A", "n", at(1));
    assert_eq!(event.metadata.namespace.as_deref(), Some("default"));
}

async fn client_with_namespace_team() -> Client {
    let client = kubegen_fake::FakeClient::new().client();
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    ResourceClient::cluster(client.clone())
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap();
    client
}

async fn stored(client: &Client) -> Vec<Event> {
    ResourceClient::<Event>::namespaced(client.clone(), "team")
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
}

#[tokio::test]
async fn repeats_become_one_series_written_on_the_second_and_when_finished() {
    let client = client_with_namespace_team().await;
    let recorder = EventsRecorder::new(client.clone(), "example.com/ctl", "ctl-host");
    let record = |note: &'static str| {
        let recorder = recorder.clone();
        async move {
            recorder
                .eventf(&pod(), None, EventType::Normal, "Pulled", "Pulling", note)
                .await
                .unwrap();
        }
    };
    record("first").await;
    let events = stored(&client).await;
    assert_eq!(events.len(), 1);
    assert!(events[0].series.is_none());
    record("second").await;
    record("third").await;
    let events = stored(&client).await;
    assert_eq!(events.len(), 1, "one object for the series");
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(events[0].note.as_deref(), Some("first"));
    recorder.refresh_series().await.unwrap();
    let events = stored(&client).await;
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(3));
    // Long after the last occurrence, the series is written a last time and forgotten.
    let later = Timestamp::now() + jiff::SignedDuration::from_secs(3600);
    recorder.finish_series(later).await.unwrap();
    record("again").await;
    assert_eq!(
        stored(&client).await.len(),
        2,
        "a new Event after the finish"
    );
}

#[tokio::test]
async fn a_series_whose_event_is_gone_is_created_again() {
    let client = client_with_namespace_team().await;
    let recorder = EventsRecorder::new(client.clone(), "example.com/ctl", "ctl-host");
    recorder
        .eventf(&pod(), None, EventType::Warning, "Failed", "Pulling", "x")
        .await
        .unwrap();
    let name = stored(&client).await[0].metadata.name.clone().unwrap();
    ResourceClient::<Event>::namespaced(client.clone(), "team")
        .delete(&name, &kubegen_client::DeleteOptions::default())
        .await
        .unwrap();
    recorder
        .eventf(&pod(), None, EventType::Warning, "Failed", "Pulling", "y")
        .await
        .unwrap();
    let events = stored(&client).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].metadata.name.as_deref(), Some(name.as_str()));
    assert_eq!(events[0].series.as_ref().map(|s| s.count), Some(2));
}

/// A transport in front of a fake server that does not serve `events.k8s.io/v1`, as v1.15.
struct WithoutEventsV1(kubegen_fake::FakeClient);

impl Transport for WithoutEventsV1 {
    fn send(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = kubegen_client::Result<http::Response<Body>>> + Send + '_>>
    {
        Box::pin(async move {
            if request.uri().path().starts_with("/apis/events.k8s.io/v1") {
                let mut response =
                    http::Response::new(Body::from_bytes(&b"404 page not found\n"[..]));
                *response.status_mut() = http::StatusCode::NOT_FOUND;
                return Ok(response);
            }
            Ok(self.0.api_server().handle(request).await.map(Body::new))
        })
    }
}

#[tokio::test]
async fn a_server_serving_events_v1_gets_them_and_one_that_does_not_gets_core_events() {
    let client = client_with_namespace_team().await;
    let recorder = EventRecorder::for_server(client.clone(), "example.com/ctl", "i").await;
    assert!(matches!(recorder, EventRecorder::EventsV1(_)));

    let fake = kubegen_fake::FakeClient::new();
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    ResourceClient::cluster(fake.client())
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap();
    let old = Client::with_transport(Arc::new(WithoutEventsV1(fake.clone())), "default");
    let recorder = EventRecorder::for_server(old.clone(), "example.com/ctl", "i").await;
    assert!(matches!(recorder, EventRecorder::CoreV1(_)));
    recorder
        .eventf(
            &pod(),
            Some(&node_ref()),
            EventType::Normal,
            "Scheduled",
            "Binding",
            "bound",
        )
        .await
        .unwrap();
    let core =
        ResourceClient::<k8s_openapi::api::core::v1::Event>::namespaced(fake.client(), "team")
            .list(&ListOptions::default())
            .await
            .unwrap()
            .items;
    assert_eq!(core.len(), 1);
    assert_eq!(core[0].reason.as_deref(), Some("Scheduled"));
    assert_eq!(core[0].message.as_deref(), Some("bound"));
    assert_eq!(
        core[0].reporting_component.as_deref(),
        Some("example.com/ctl")
    );
}
