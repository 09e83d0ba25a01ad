//! The `events.k8s.io/v1` recorder end to end: against kubegen-testserver (always) and against a
//! real cluster when `KUBEGEN_E2E_KUBECONFIG` names a kubeconfig (the `_on_cluster` variant is
//! `#[ignore]`d; `scripts/test.sh` runs it when the variable is set). On v1.36 the recorder writes
//! `events.k8s.io/v1` Events the server validates (action, reportingController and instance,
//! eventTime) and patches a repeat into a series; on v1.15, which serves only
//! `events.k8s.io/v1beta1`, it falls back to core/v1 Events.
//!
//! Each run works in a scratch namespace `clientsurface-events-…`, deleted afterwards.

// Tests may unwrap: a panic is exactly how a test reports failure.
#![allow(clippy::unwrap_used)]

use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, ObjectReference};
use k8s_openapi::api::events::v1::Event;
use kubegen_client::{Client, CreateOptions, ListOptions, ResourceClient};
use kubegen_runtime::{EventRecorder, EventType};
use kubegen_testserver::TestServer;

async fn records_a_series_or_falls_back(client: Client) {
    kubegen_e2e_support::in_scratch_namespace(
        &client,
        "clientsurface-events-",
        |client, ns| async move {
            let mut config_map = ConfigMap::default();
            config_map.metadata.name = Some("settings".into());
            let config_map = ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns)
                .create(&config_map, &CreateOptions::default())
                .await
                .unwrap_or_else(|e| panic!("config map: {e}"));
            let recorder =
                EventRecorder::for_server(client.clone(), "example.com/clientsurface", "e2e-1")
                    .await;
            let related = ObjectReference {
                kind: Some("Node".into()),
                name: Some("n1".into()),
                ..ObjectReference::default()
            };
            for note in ["first", "second", "third"] {
                recorder
                    .eventf(
                        &config_map,
                        Some(&related),
                        EventType::Normal,
                        "Reloaded",
                        "Reload",
                        note,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("eventf {note}: {e}"));
            }
            match &recorder {
                EventRecorder::EventsV1(v1) => {
                    let events = ResourceClient::<Event>::namespaced(client.clone(), &ns);
                    let stored = events.list(&ListOptions::default()).await.unwrap().items;
                    assert_eq!(stored.len(), 1, "{stored:?}");
                    let event = &stored[0];
                    assert_eq!(event.action.as_deref(), Some("Reload"));
                    assert_eq!(event.note.as_deref(), Some("first"));
                    assert_eq!(
                        event.reporting_controller.as_deref(),
                        Some("example.com/clientsurface")
                    );
                    assert_eq!(
                        event.related.as_ref().and_then(|r| r.name.as_deref()),
                        Some("n1")
                    );
                    assert_eq!(event.series.as_ref().map(|s| s.count), Some(2));
                    v1.refresh_series().await.unwrap();
                    let stored = events.list(&ListOptions::default()).await.unwrap().items;
                    assert_eq!(stored[0].series.as_ref().map(|s| s.count), Some(3));
                }
                EventRecorder::CoreV1(_) => {
                    let events = ResourceClient::<CoreEvent>::namespaced(client.clone(), &ns);
                    let mut stored = events.list(&ListOptions::default()).await.unwrap().items;
                    // The core/v1 correlator only merges identical Events (or ten distinct messages):
                    // three notes are three Events, without action or related object.
                    stored.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
                    let messages: Vec<_> = stored.iter().map(|e| e.message.as_deref()).collect();
                    assert_eq!(messages, [Some("first"), Some("second"), Some("third")]);
                    assert!(
                        stored
                            .iter()
                            .all(|e| e.reason.as_deref() == Some("Reloaded"))
                    );
                    assert!(
                        stored
                            .iter()
                            .all(|e| e.action.is_none() && e.related.is_none())
                    );
                    assert_eq!(
                        stored[0].reporting_component.as_deref(),
                        Some("example.com/clientsurface")
                    );
                }
            }
        },
    )
    .await;
}

#[tokio::test]
async fn events_v1_recorder_writes_a_series() {
    let server = TestServer::start().await;
    let client = server.client();
    records_a_series_or_falls_back(client.clone()).await;
}

#[tokio::test]
#[ignore = "needs a real cluster: scripts/test.sh runs it when KUBEGEN_E2E_KUBECONFIG is set"]
async fn events_v1_recorder_writes_a_series_or_falls_back_to_core_on_cluster() {
    records_a_series_or_falls_back(kubegen_e2e_support::cluster_client().await).await;
}
