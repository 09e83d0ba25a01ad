//! Measures the informer pipeline without HTTP: an in-memory `ListWatch` feeds a
//! `SharedIndexInformer` (reflector → DeltaFIFO → indexer → handler).
//!
//! 1. Cold sync: one list of N ConfigMaps (pages of 500), until the handler has seen every add.
//! 2. Watch fan-in: M `MODIFIED` events, until the handler has seen every update.
//!
//! Run with: `cargo run --release -p kubegen-cache --example pipeline_throughput -- [N] [M]`
#![allow(clippy::unwrap_used)] // an example: failing loudly is fine

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ListMeta};
use kube_core::{ObjectList, TypeMeta, WatchEvent};
use kubegen_cache::{
    EventHandler, EventStream, InformerOptions, ListRequest, ListWatch, ListWatchError,
    SharedIndexInformer, WatchRequest,
};
use tokio::sync::{Notify, mpsc};

fn configmap(i: usize, rv: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("cm-{i:06}"));
    cm.metadata.namespace = Some("bench".to_owned());
    cm.metadata.resource_version = Some(rv.to_string());
    cm.data = Some(BTreeMap::from([("payload".to_owned(), "x".repeat(512))]));
    cm
}

/// Serves `n` objects in pages, then a watch fed from a channel.
struct InMemory {
    n: usize,
    events: parking_lot::Mutex<Option<mpsc::UnboundedReceiver<WatchEvent<ConfigMap>>>>,
}

struct ChannelWatch(mpsc::UnboundedReceiver<WatchEvent<ConfigMap>>);

impl EventStream<ConfigMap> for ChannelWatch {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<ConfigMap>, ListWatchError>> {
        Some(Ok(self.0.recv().await?))
    }
}

impl ListWatch<ConfigMap> for InMemory {
    type Watch = ChannelWatch;

    async fn list(&self, req: &ListRequest) -> Result<ObjectList<ConfigMap>, ListWatchError> {
        let start: usize = req
            .continue_token
            .as_deref()
            .map_or(0, |t| t.parse().unwrap());
        let end = (start + req.limit.unwrap_or(u32::MAX) as usize).min(self.n);
        let more = (end < self.n).then(|| end.to_string());
        Ok(ObjectList {
            types: TypeMeta {
                api_version: "v1".into(),
                kind: "List".into(),
            },
            metadata: ListMeta {
                resource_version: Some(self.n.to_string()),
                continue_: more,
                ..ListMeta::default()
            },
            items: (start..end).map(|i| configmap(i, i + 1)).collect(),
        })
    }

    async fn watch(&self, _: &WatchRequest) -> Result<ChannelWatch, ListWatchError> {
        let events = self.events.lock().take();
        match events {
            Some(rx) => Ok(ChannelWatch(rx)),
            None => std::future::pending().await,
        }
    }
}

/// Counts adds and updates; wakes the main task at each target.
struct Counter {
    adds: AtomicUsize,
    updates: AtomicUsize,
    add_target: usize,
    update_target: usize,
    done: Arc<Notify>,
}

impl EventHandler<ConfigMap> for Counter {
    fn on_add(&self, _: &Arc<ConfigMap>, _: bool) {
        if self.adds.fetch_add(1, Ordering::Relaxed) + 1 == self.add_target {
            self.done.notify_one();
        }
    }
    fn on_update(&self, _: &Arc<ConfigMap>, _: &Arc<ConfigMap>) {
        if self.updates.fetch_add(1, Ordering::Relaxed) + 1 == self.update_target {
            self.done.notify_one();
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().unwrap());
    let n = args.next().unwrap_or(100_000);
    let m = args.next().unwrap_or(500_000);
    let (tx, rx) = mpsc::unbounded_channel();
    let list_watch = InMemory {
        n,
        events: parking_lot::Mutex::new(Some(rx)),
    };
    let informer = SharedIndexInformer::new(list_watch, InformerOptions::default());
    let done = Arc::new(Notify::new());
    let counter = Arc::new(Counter {
        adds: AtomicUsize::new(0),
        updates: AtomicUsize::new(0),
        add_target: n,
        update_target: m,
        done: Arc::clone(&done),
    });
    informer.add_event_handler(Arc::clone(&counter)).unwrap();

    let started = Instant::now();
    informer.start();
    done.notified().await;
    let sync = started.elapsed();
    println!(
        "cold sync: {n} objects in {sync:?} ({:.0} objects/s, incl. building them)",
        n as f64 / sync.as_secs_f64()
    );

    // Pre-build the events so the measurement is the pipeline, not the object construction.
    let events: Vec<_> = (0..m)
        .map(|j| WatchEvent::Modified(configmap(j % n, n + 1 + j)))
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await; // let the watch open
    let started = Instant::now();
    for event in events {
        tx.send(event).unwrap();
    }
    done.notified().await;
    let fan_in = started.elapsed();
    println!(
        "watch fan-in: {m} events in {fan_in:?} ({:.0} events/s)",
        m as f64 / fan_in.as_secs_f64()
    );
    informer.shutdown();
}
