//! `garbage-collector-controller`: deletes objects whose owners are gone, and carries out
//! foreground and orphan deletions.
//!
//! Mirrors `pkg/controller/garbagecollector/`: `graph_builder.go` (one metadata-only informer,
//! a "monitor", per resource discovery lists with `list`, `watch` and `delete`, custom resources
//! included; monitors are resynced with discovery every 30 s, and here also whenever a
//! CustomResourceDefinition changes, so a CRD created later is watched without waiting),
//! `graph.go` (the owner/dependent graph, `graph.rs`) and `garbagecollector.go` (two queues,
//! `attemptToDelete` and `attemptToOrphan`, worked in `attempt.rs`).
//!
//! # Rules
//! - Background: an owner's deletion wakes its dependents; a dependent all of whose owners are
//!   gone (absent, or present under another uid) is deleted with the propagation its own
//!   finalizers ask for (`orphan`, `foregroundDeletion`, else background).
//! - A dependent with at least one live owner survives; references to absent owners are then
//!   removed from it.
//! - Foreground (`foregroundDeletion` finalizer on a deleting owner): its dependents are
//!   deleted; once none with `blockOwnerDeletion: true` remains, the finalizer is removed and
//!   the apiserver completes the deletion.
//! - Orphan (`orphan` finalizer): every dependent loses its reference to the owner, then the
//!   finalizer is removed.
//! - A namespaced owner resolves in the dependent's namespace; a cluster-scoped dependent naming
//!   a namespaced owner is left alone with a Warning event `OwnerRefInvalidNamespace`.
//! - Events (`events` and `events.k8s.io`) are not monitored (`DefaultIgnoredResources`).

mod attempt;
mod events;
mod graph;
mod shared;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kube_core::{DynamicObject, metadata::PartialObjectMeta};
use kubegen_cache::{
    ClientListWatch, DeletedObject, HandlerFns, InformerOptions, SharedIndexInformer,
};
use kubegen_client::{ListOptions, ResourceClient, ServedResource, discover};
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;

use crate::context::{Context, Runner, stopped};
use crate::worker;

use graph::{Graph, Node};
use shared::Shared;

/// How often monitors are resynced with discovery (`--garbage-collector` resync period).
const RESYNC_PERIOD: Duration = Duration::from_secs(30);

type Monitor = SharedIndexInformer<PartialObjectMeta<DynamicObject>>;

/// Whether the collector watches `served` (`GetDeletableResources` minus the ignored events).
fn monitored(served: &ServedResource) -> bool {
    let events = served.resource.plural == "events"
        && matches!(served.resource.group.as_str(), "" | "events.k8s.io");
    !events
        && ["list", "watch", "delete"]
            .iter()
            .all(|verb| served.supports(verb))
}

/// The runner: monitors, resyncs and the workers of both queues until the manager stops.
pub(crate) fn start(context: &Context) -> Runner {
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        graph: Mutex::new(Graph::default()),
        resources: RwLock::new(HashMap::new()),
        resync: Notify::new(),
        delete_queue: worker::queue("garbage_collector_attempt_to_delete"),
        orphan_queue: worker::queue("garbage_collector_attempt_to_orphan"),
    });
    let workers = context.options.workers_or(20);
    let stop = context.stop.clone();
    Box::pin(async move {
        let mut monitors: HashMap<String, Monitor> = HashMap::new();
        resync(&shared, &mut monitors).await;
        let deleting = {
            let shared = Arc::clone(&shared);
            worker::spawn(
                shared.delete_queue.clone(),
                workers,
                worker::Retries::Forever,
                move |uid: String| {
                    let shared = Arc::clone(&shared);
                    async move { attempt::attempt_to_delete(&shared, &uid).await }
                },
            )
        };
        let orphaning = {
            let shared = Arc::clone(&shared);
            worker::spawn(
                shared.orphan_queue.clone(),
                workers,
                worker::Retries::Forever,
                move |uid: String| {
                    let shared = Arc::clone(&shared);
                    async move { attempt::attempt_to_orphan(&shared, &uid).await }
                },
            )
        };
        let until_stopped = stopped(stop);
        tokio::pin!(until_stopped);
        loop {
            tokio::select! {
                () = &mut until_stopped => break,
                () = shared.resync.notified() => {}
                () = tokio::time::sleep(RESYNC_PERIOD) => {}
            }
            resync(&shared, &mut monitors).await;
        }
        deleting.stop().await;
        orphaning.stop().await;
        for monitor in monitors.into_values() {
            let _ = monitor.shutdown_and_wait(Duration::from_secs(5)).await;
        }
    })
}

/// Brings the monitors in line with discovery: starts one for each new deletable resource and
/// stops those of resources no longer served (`GarbageCollector.Sync`).
async fn resync(shared: &Arc<Shared>, monitors: &mut HashMap<String, Monitor>) {
    let discovery = match discover(&shared.client).await {
        Ok(discovery) => discovery,
        Err(e) => {
            tracing::debug!(error = %e, "garbage collector: discovery failed");
            return;
        }
    };
    let mut resources = HashMap::new();
    let mut wanted = HashMap::new();
    for served in discovery.resources {
        let key = (served.resource.group.clone(), served.resource.kind.clone());
        if monitored(&served) {
            let id = format!("{}/{}", served.resource.api_version, served.resource.plural);
            wanted.insert(id, served.clone());
        }
        resources.insert(key, served);
    }
    *shared.resources.write() = resources;
    let gone: Vec<String> = monitors
        .keys()
        .filter(|id| !wanted.contains_key(*id))
        .cloned()
        .collect();
    for id in gone {
        if let Some(monitor) = monitors.remove(&id) {
            let _ = monitor.shutdown_and_wait(Duration::from_secs(5)).await;
        }
    }
    for (id, served) in wanted {
        if let std::collections::hash_map::Entry::Vacant(slot) = monitors.entry(id) {
            let monitor = monitor(shared, &served);
            monitor.start();
            slot.insert(monitor);
        }
    }
}

/// A metadata-only informer of `served` across namespaces, feeding the graph.
fn monitor(shared: &Arc<Shared>, served: &ServedResource) -> Monitor {
    let client = ResourceClient::dynamic_metadata(shared.client.clone(), &served.resource, None);
    let list_watch = ClientListWatch::new(client, ListOptions::default());
    let mut options = InformerOptions::default();
    options.name = format!(
        "{}.{}.metadata",
        served.resource.plural, served.resource.group
    );
    options.transform = Some(Arc::new(kubegen_cache::strip_managed_fields));
    let informer = SharedIndexInformer::new(list_watch, options);
    let crds = served.resource.group == "apiextensions.k8s.io"
        && served.resource.plural == "customresourcedefinitions";
    let (on_add, on_update, on_delete) =
        (Arc::clone(shared), Arc::clone(shared), Arc::clone(shared));
    let (add_resource, update_resource) = (served.resource.clone(), served.resource.clone());
    let handler = HandlerFns::new()
        .on_add(move |obj: &Arc<PartialObjectMeta<DynamicObject>>, _| {
            if let Some(node) = Node::of(&add_resource, &obj.metadata) {
                let work = on_add.graph.lock().upsert(node);
                on_add.queue(work);
            }
            if crds {
                on_add.resync.notify_one();
            }
        })
        .on_update(move |_, obj: &Arc<PartialObjectMeta<DynamicObject>>| {
            if let Some(node) = Node::of(&update_resource, &obj.metadata) {
                let work = on_update.graph.lock().upsert(node);
                on_update.queue(work);
            }
        })
        .on_delete(
            move |deleted: &DeletedObject<PartialObjectMeta<DynamicObject>>| {
                if let Some(uid) = &deleted.object().metadata.uid {
                    let work = on_delete.graph.lock().remove(uid);
                    on_delete.queue(work);
                }
                if crds {
                    on_delete.resync.notify_one();
                }
            },
        );
    // A new informer accepts handlers (only a shut-down one refuses).
    let _ = informer.add_event_handler(handler);
    informer
}
