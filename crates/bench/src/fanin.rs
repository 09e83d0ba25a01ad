//! Watch fan-in: events per second through reflector -> DeltaFIFO -> indexer -> handler ->
//! workqueue, and the latency from the write to the handler.
//!
//! Two sources feed the same informer + handler + workqueue:
//! - `pipeline`: a synthetic [`ListWatch`] whose watch yields pre-built events from a channel. No
//!   HTTP, no JSON: the ceiling of the informer machinery itself.
//! - `server`: the in-process test server; a writer creates ConfigMaps through
//!   `ApiServer::handle` (no socket on the write side) and the informer watches over HTTP with
//!   kubegen-client, so the measurement includes the server's watch fan-out, the wire and decoding.
//!
//! Every event carries its sequence number (the resourceVersion for `pipeline`, `data.seq` for
//! `server`); the writer stamps the send time per sequence number before sending, the handler
//! subtracts it from the time it is called.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::{ListMeta, ObjectList, TypeMeta, WatchEvent};
use kubegen_cache::{
    EventHandler, EventStream, InformerOptions, ListRequest, ListWatch, ListWatchError,
    ListWatchErrorKind, SharedIndexInformer, WatchRequest,
};
use kubegen_workqueue::{NoopMetrics, Queue};
use parking_lot::Mutex;
use tokio::sync::{Notify, mpsc};

/// Distinct object names the events cycle through (so the workqueue rarely deduplicates).
pub const KEYS: usize = 10_000;

/// Send and receive times of every event, by sequence number.
pub struct Clock {
    origin: Instant,
    /// Nanoseconds since `origin` at which event `seq` was sent (0: not yet).
    sent: Vec<AtomicU64>,
    /// Handler-side latencies, nanoseconds.
    latencies: Mutex<Vec<u64>>,
    /// Events the handler received.
    received: AtomicUsize,
    /// Nanoseconds since `origin` of the last handler call.
    last_received: AtomicU64,
    /// Keys the workers finished.
    processed: AtomicUsize,
    /// Woken when `received` reaches the target.
    all_received: Notify,
    target: usize,
}

impl Clock {
    /// A clock for `events` events.
    pub fn new(events: usize) -> Arc<Clock> {
        Arc::new(Clock {
            origin: Instant::now(),
            sent: (0..events).map(|_| AtomicU64::new(0)).collect(),
            latencies: Mutex::new(Vec::with_capacity(events)),
            received: AtomicUsize::new(0),
            last_received: AtomicU64::new(0),
            processed: AtomicUsize::new(0),
            all_received: Notify::new(),
            target: events,
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Stamps event `seq` as sent now.
    pub fn stamp(&self, seq: usize) {
        if let Some(slot) = self.sent.get(seq) {
            slot.store(self.now().max(1), Ordering::Release);
        }
    }

    fn receive(&self, seq: Option<usize>) {
        let now = self.now();
        if let Some(sent) = seq.and_then(|seq| self.sent.get(seq)) {
            let sent = sent.load(Ordering::Acquire);
            if sent > 0 {
                self.latencies.lock().push(now.saturating_sub(sent));
            }
        }
        self.last_received.store(now, Ordering::Release);
        if self.received.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            self.all_received.notify_one();
        }
    }
}

/// Result of one fan-in run.
#[derive(Clone, Debug)]
pub struct FanIn {
    /// Events delivered to the handler.
    pub events: usize,
    /// Events per second from the first send to the last handler call.
    pub events_per_second: f64,
    /// Latency percentiles, microseconds: p50, p99, max.
    pub latency_us: [f64; 3],
    /// Keys the workqueue workers finished (dedup makes it ≤ events).
    pub processed: usize,
}

/// The handler: stamps latency and enqueues the key, as a controller's handler does.
struct LatencyHandler {
    clock: Arc<Clock>,
    queue: Queue<String>,
    seq: fn(&ConfigMap) -> Option<usize>,
}

impl LatencyHandler {
    fn handle(&self, obj: &ConfigMap) {
        self.clock.receive((self.seq)(obj));
        self.queue
            .add(obj.metadata.name.clone().unwrap_or_default());
    }
}

impl EventHandler<ConfigMap> for LatencyHandler {
    fn on_add(&self, obj: &Arc<ConfigMap>, _is_in_initial_list: bool) {
        self.handle(obj);
    }

    fn on_update(&self, _old: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.handle(new);
    }
}

/// Sequence number of a `pipeline` event: its resourceVersion minus 2.
pub fn seq_from_rv(obj: &ConfigMap) -> Option<usize> {
    let rv: usize = obj.metadata.resource_version.as_deref()?.parse().ok()?;
    rv.checked_sub(2)
}

/// Sequence number of a `server` event: `data.seq`.
pub fn seq_from_data(obj: &ConfigMap) -> Option<usize> {
    obj.data.as_ref()?.get("seq")?.parse().ok()
}

/// Runs `informer` with the latency handler and two workers until the clock's target is reached
/// (or `timeout`), while `produce` sends; returns the measurement.
pub async fn measure<P>(
    informer: SharedIndexInformer<ConfigMap>,
    clock: Arc<Clock>,
    seq: fn(&ConfigMap) -> Option<usize>,
    produce: P,
    timeout: Duration,
) -> Result<FanIn>
where
    P: Future<Output = Result<()>> + Send + 'static,
{
    let queue = Queue::<String>::new("fanin", Arc::new(NoopMetrics));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (queue, clock) = (queue.clone(), Arc::clone(&clock));
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    clock.processed.fetch_add(1, Ordering::Relaxed);
                    queue.done(&key);
                }
            })
        })
        .collect();
    let handler = LatencyHandler {
        clock: Arc::clone(&clock),
        queue: queue.clone(),
        seq,
    };
    informer
        .add_event_handler(handler)
        .context("registering the handler")?;
    informer.start();
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let first_send = clock.now();
    let producer = tokio::spawn(produce);
    let waited = tokio::time::timeout(timeout, clock.all_received.notified()).await;
    producer.await.context("producer panicked")??;
    if waited.is_err() && clock.received.load(Ordering::Acquire) < clock.target {
        bail!(
            "only {} of {} events reached the handler within {timeout:?}",
            clock.received.load(Ordering::Acquire),
            clock.target
        );
    }
    // Let the workers drain so `processed` is final.
    while !queue.is_empty() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    queue.shut_down();
    informer
        .shutdown_and_wait(Duration::from_secs(30))
        .await
        .context("informer shutdown")?;
    for worker in workers {
        let _ = worker.await;
    }
    let elapsed = clock
        .last_received
        .load(Ordering::Acquire)
        .saturating_sub(first_send);
    let mut latencies = std::mem::take(&mut *clock.latencies.lock());
    latencies.sort_unstable();
    let percentile = |p: f64| {
        let index = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies.get(index).map_or(0.0, |ns| *ns as f64 / 1000.0)
    };
    let events = clock.received.load(Ordering::Acquire);
    Ok(FanIn {
        events,
        events_per_second: events as f64 / (elapsed.max(1) as f64 / 1e9),
        latency_us: [percentile(0.5), percentile(0.99), percentile(1.0)],
        processed: clock.processed.load(Ordering::Acquire),
    })
}

/// Sends `count` items at `rate` per second (0: as fast as possible), calling `send(i)` for each.
/// Paces against the schedule, not per item, so a late tick sends a small burst to catch up.
pub async fn paced<F, Fut>(count: usize, rate: u64, mut send: F) -> Result<()>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let start = tokio::time::Instant::now();
    for i in 0..count {
        if let Some(offset) = (i as u64 * 1_000_000_000).checked_div(rate) {
            let due = start + Duration::from_nanos(offset);
            if due > tokio::time::Instant::now() {
                tokio::time::sleep_until(due).await;
            }
        }
        send(i).await?;
    }
    Ok(())
}

/// A [`ListWatch`] with an empty list and one watch fed by a channel: the `pipeline` source.
pub struct ChannelListWatch {
    events: Mutex<Option<mpsc::UnboundedReceiver<WatchEvent<ConfigMap>>>>,
}

impl ChannelListWatch {
    /// The source and the sender the producer feeds.
    pub fn new() -> (
        ChannelListWatch,
        mpsc::UnboundedSender<WatchEvent<ConfigMap>>,
    ) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            ChannelListWatch {
                events: Mutex::new(Some(receiver)),
            },
            sender,
        )
    }
}

/// The one watch of a [`ChannelListWatch`].
pub struct ChannelWatch {
    events: mpsc::UnboundedReceiver<WatchEvent<ConfigMap>>,
}

impl EventStream<ConfigMap> for ChannelWatch {
    async fn next_event(&mut self) -> Option<Result<WatchEvent<ConfigMap>, ListWatchError>> {
        self.events.recv().await.map(Ok)
    }
}

impl ListWatch<ConfigMap> for ChannelListWatch {
    type Watch = ChannelWatch;

    async fn list(&self, _req: &ListRequest) -> Result<ObjectList<ConfigMap>, ListWatchError> {
        Ok(ObjectList {
            types: TypeMeta {
                api_version: "v1".to_owned(),
                kind: "ConfigMapList".to_owned(),
            },
            metadata: ListMeta {
                resource_version: Some("1".to_owned()),
                ..ListMeta::default()
            },
            items: Vec::new(),
        })
    }

    async fn watch(&self, _req: &WatchRequest) -> Result<ChannelWatch, ListWatchError> {
        match self.events.lock().take() {
            Some(events) => Ok(ChannelWatch { events }),
            None => Err(ListWatchError::new(
                ListWatchErrorKind::Other,
                "the synthetic source has one watch only",
            )),
        }
    }
}

/// An informer over `list_watch` with default options and a name.
pub fn informer(
    list_watch: impl ListWatch<ConfigMap>,
    name: &str,
) -> SharedIndexInformer<ConfigMap> {
    let mut options = InformerOptions::<ConfigMap>::default();
    options.name = name.to_owned();
    SharedIndexInformer::new(list_watch, options)
}
