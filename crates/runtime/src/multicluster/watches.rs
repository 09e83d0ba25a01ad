//! Member-to-hub watches: objects in every engaged member enqueue keys of a hub controller. The
//! counterpart of multicluster-runtime's cluster-aware `handler.EnqueueRequestsFromMapFunc`
//! sources, for the direction the builder cannot express (a hub controller knows no member's
//! informer when it is built; members come and go). The other direction, a hub object
//! enqueueing work in a member, needs nothing extra: a member's controller takes a hub informer
//! ([`crate::multicluster::Cluster::hub`]) as its primary or watched kind.

use std::sync::Arc;

use kubegen_cache::{DeletedObject, HandlerFns, ObjectKey, Synced, wait_for_cache_sync};
use kubegen_workqueue::RateLimitingQueue;

use crate::error::Error;
use crate::multicluster::cluster::Cluster;
use crate::multicluster::engagement::{FleetController, Progress, RunSettings, Started};
use kubegen_client::ApiObject;

use crate::reconcile::Object;
use crate::stop::Stop;

/// Maps a member's object (and the member's name) to keys of the hub controller's queue.
pub(crate) type MemberMap<W> = Arc<dyn Fn(&str, &W) -> Vec<ObjectKey> + Send + Sync>;

/// A handler on every engaged member's informer of `W` feeding one hub queue.
pub(crate) struct MemberWatch<W> {
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) map: MemberMap<W>,
}

impl<W: Object + ApiObject> FleetController for MemberWatch<W> {
    fn start(
        &self,
        cluster: &Cluster,
        stop: Stop,
        progress: Progress,
        settings: &RunSettings,
    ) -> Result<Started, Error> {
        let informer = cluster.factory().informer::<W>();
        let enqueue = {
            let (queue, map, name) = (
                self.queue.clone(),
                Arc::clone(&self.map),
                cluster.name().to_owned(),
            );
            move |object: &W| map(&name, object).into_iter().for_each(|k| queue.add(k))
        };
        let (on_add, on_update, on_delete) = (enqueue.clone(), enqueue.clone(), enqueue);
        let handler = HandlerFns::<W>::new()
            .on_add(move |object, _| on_add(object))
            .on_update(move |_, object| on_update(object))
            .on_delete(move |gone: &DeletedObject<W>| on_delete(gone.object()));
        let registration = informer
            .add_event_handler(handler)
            .map_err(|source| Error::HandlerRegistrationFailed { source })?;
        let registration = Arc::new(registration);
        let (synced, timeout) = (Arc::clone(&registration), settings.sync_timeout);
        let task = tokio::spawn(async move {
            let sync = async {
                let synced: [&dyn Synced; 1] = [synced.as_ref()];
                while let Err(error) = wait_for_cache_sync(timeout, &synced).await {
                    tracing::warn!(%error, "member watch not synced yet; still waiting");
                }
                progress.synced_one();
            };
            tokio::select! {
                () = sync => stop.wait().await,
                () = stop.wait() => {}
            }
        });
        Ok(Started::new(
            task,
            Box::new(move || {
                informer.remove_event_handler(&registration);
            }),
        ))
    }
}
