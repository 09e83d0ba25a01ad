//! Events recorded the way client-go's `EventBroadcaster` records them: the controller hands an
//! Event over and goes on; one background task writes them in order through kubegen-runtime's
//! [`Recorder`] (client-go's correlator: aggregation, deduplication, spam filter).
//!
//! # Why not write them inline
//! A sync that waited for its Event to be written would be one round trip slower than the real
//! controller's, and the deployment controller's conditions depend on timing: its second status
//! write in a sync conflicts, and what the retry sees decides between `NewReplicaSetCreated` and
//! `ReplicaSetUpdated`. Writing Events aside keeps our syncs as fast as the real ones.

use futures_util::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube_core::Resource;
use kubegen_client::Client;
use kubegen_runtime::{EventType, Recorder};
use tokio::sync::mpsc;

use super::meta::describe;

/// Where a controller's Events go; cheap to clone. The writing task ends when the last clone is
/// dropped.
#[derive(Clone)]
pub(crate) struct EventSink {
    recorder: Recorder,
    queue: mpsc::UnboundedSender<BoxFuture<'static, ()>>,
}

impl EventSink {
    /// Events from `component` (`source.component` and `reportingComponent`; the
    /// `reportingInstance` is empty, as kube-controller-manager's).
    pub(crate) fn new(client: Client, component: &str) -> EventSink {
        let (queue, mut pending) = mpsc::unbounded_channel::<BoxFuture<'static, ()>>();
        tokio::spawn(async move {
            while let Some(write) = pending.recv().await {
                write.await;
            }
        });
        EventSink {
            recorder: Recorder::new(client, component, ""),
            queue,
        }
    }

    /// Records an Event about `object`, stamped now. Events are best effort: one the API server
    /// refuses is logged.
    pub(crate) fn record<K>(&self, object: &K, kind: EventType, reason: &str, message: String)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let now = Time(Timestamp::now());
        let (recorder, object, reason) = (self.recorder.clone(), object.clone(), reason.to_owned());
        let write = async move {
            if let Err(e) = recorder
                .record(&object, kind, &reason, &message, &now)
                .await
            {
                tracing::warn!(object = %describe(&object), reason, error = %e, "could not record Event");
            }
        };
        // Fails only once the task is gone, i.e. the runtime is shutting down.
        let _ = self.queue.send(Box::pin(write));
    }
}
