//! The shared informer: one list+watch per resource type, feeding one cache and many handlers.
//!
//! Mirrors client-go `tools/cache/shared_informer.go` (`sharedIndexInformer`,
//! `HandleDeltas`/`processDeltas`) and the `controller.go` process loop.
//!
//! # The pipeline
//! ```text
//! ListWatch ─> Reflector ─Replace/Add/Update/Delete─> DeltaFifo ─pop─> handle_deltas:
//!                                                                        1. update the Indexer
//!                                                                        2. Processor::distribute
//!                                                                             ├─> handler A (own task)
//!                                                                             └─> handler B (own task)
//! ```
//! "Shared" means every controller component interested in a type uses the same informer
//! (usually through a factory), so there is one watch and one copy of each object per process.

use std::{
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use kube_core::Resource;
use parking_lot::Mutex;
use tokio::sync::watch;
use tracing::trace;

use crate::{
    delta::{DeletedObject, Queued},
    delta_fifo::DeltaFifo,
    error::Error,
    handler::EventHandler,
    health::{InformerStats, PanicCounters},
    indexer::{Indexer, Indexers},
    key::ObjectKey,
    list_watch::ListWatch,
    lister::Lister,
    metrics::InformerMetrics,
    processor::{Notification, Processor, Progress},
    reflector::{Reflector, ReflectorConfig, WatchErrorHandler, resync_loop},
    store_mode::StoreMode,
    stored::{ByteStore, Stored},
    tasks::Tasks,
    transform::Transform,
};

/// How an informer lists, watches, stores and resyncs.
#[non_exhaustive]
pub struct InformerOptions<K> {
    /// Name used in traces and sync errors; defaults to the Rust type name.
    pub name: String,
    /// Default resync period of handlers added with `add_event_handler` (`ZERO`: no resync).
    /// A resync replays the cache to handlers; it does not contact the API server.
    pub resync: Duration,
    /// Runs on every object before it is stored, e.g. [`strip_managed_fields`](crate::strip_managed_fields).
    /// If it panics, the object is skipped (see [`InformerStats`]).
    pub transform: Option<Transform<K>>,
    /// LIST page size (`limit`), client-go's `Reflector.WatchListPageSize`.
    ///
    /// `0` (the default) lets the reflector choose, as client-go does when it is unset: pages
    /// of 500 for the first list and for consistent reads, but *no* `limit` when relisting
    /// from a saved resourceVersion, so the API server's watch cache serves the relist instead
    /// of etcd (a version plus a limit is an exact read from etcd, which fails with 410 once
    /// the version is compacted). If the first list came back in pages, the watch cache is off
    /// for this resource and relists keep paging.
    ///
    /// Any other value is sent with every list, relists included: set it only when the server
    /// is known to page from etcd anyway.
    pub page_size: u32,
    /// Stream the initial list (`sendInitialEvents=true`) where the server serves it, falling
    /// back to paged lists where it does not (see the reflector's `streaming` module). Default
    /// true, as client-go's `WatchListClient` since 1.35.
    pub streaming_list: bool,
    /// How long the whole initial phase of a streaming list may take, up to its
    /// `k8s.io/initial-events-end` bookmark, before we fall back to list + watch for good, on a
    /// server whose support is unknown (one known to serve streaming lists gets no deadline).
    /// Default 10 s.
    pub streaming_timeout: Duration,
    /// Called with every list or watch failure (the reflector retries on its own).
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// Where the informer's `informer_*` series go, labelled with its `name`. Default: a fresh
    /// set nobody has registered; give every informer of a process the same registered one.
    pub metrics: InformerMetrics,
    /// How the cache keeps objects: decoded (the default) or as bytes decoded on read
    /// ([`StoreMode::Bytes`]). Bytes need the list-watch's [`wire_codec`](ListWatch::wire_codec):
    /// without one, the informer keeps objects decoded and logs a warning.
    pub store_mode: StoreMode,
}

impl<K> Default for InformerOptions<K> {
    fn default() -> Self {
        Self {
            name: String::new(),
            resync: Duration::ZERO,
            transform: None,
            page_size: 0,
            streaming_list: true,
            streaming_timeout: Duration::from_secs(10),
            watch_error_handler: None,
            metrics: InformerMetrics::default(),
            store_mode: StoreMode::Decoded,
        }
    }
}

type ReflectorTask =
    Box<dyn FnOnce(watch::Receiver<bool>) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// One reflector + DeltaFIFO + indexer for a resource type, shared by any number of handlers.
///
/// # Guarantees
/// - For each popped key, the indexer is updated first, then handlers are notified: a handler
///   that reads the lister sees at least the state it is notified about.
/// - Add vs update is decided by the indexer (was the key cached?), not by the event type, so
///   a relist delivers updates for known objects and adds for new ones.
/// - Update notifications say whether they are resyncs (`on_resync`): a `Sync` delta, or a
///   relist that found the same resourceVersion. Resyncs go only to handlers whose own resync
///   period is due.
/// - A handler added after start first receives an `on_add` for every cached object, and never
///   a notification that overlaps them (delta processing pauses while it registers).
/// - A panic in user code never stops the informer: a transform, index function or handler
///   that panics is caught, logged at error level with the object's key, and counted in
///   [`stats`](Self::stats); the object is skipped (transform), left out of that index (index
///   function), or the notification dropped for that handler. We chose skipping over marking
///   the informer failed: one bad object should not take every other object's updates away,
///   and the counts make the skips visible to a health check or metrics.
/// - [`shutdown_and_wait`](Self::shutdown_and_wait) returns only once every task the informer
///   spawned (reflector, resync timer, process loop, one per handler) has ended, or aborts the
///   stragglers past its bound.
///
/// # Differences from client-go
/// - `add_event_handler` on a shut-down informer returns [`Error::ShutDown`] (client-go too),
///   and the informer cannot be restarted (client-go neither, silently).
/// - client-go lets a panicking transform or index function crash the process; here it is
///   caught and counted (see above), since on tokio it would only end one task silently.
/// - Indexers are added with [`add_indexers`](Self::add_indexers) only, which reports a taken
///   name; client-go's constructor takes them too, but an infallible constructor could only
///   drop them on a clash.
/// - Handlers get `Arc<K>` and typed [`DeletedObject`](crate::DeletedObject)s, no type switches.
///
/// # Byte-backed caches
/// With [`StoreMode::Bytes`] handlers still get decoded objects: the new state is the object
/// as it arrived (it is dropped once every handler has seen it, unless it is among the
/// recently decoded); the old state of an update is decoded from the cache (should it not
/// decode, which is logged, the change reaches handlers as an add).
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<K> {
    name: String,
    default_resync: Duration,
    indexer: Indexer<K>,
    fifo: Arc<DeltaFifo<K>>,
    processor: Processor<K>,
    /// Held while a popped key is handled and while a handler registers, so a new handler's
    /// initial adds and the next notifications never overlap (client-go's `blockDeltas`).
    block_deltas: Mutex<()>,
    /// The reflector's run future, taken by the first `run`.
    reflector: Mutex<Option<ReflectorTask>>,
    /// Every task spawned for this informer, joined by `shutdown_and_wait`.
    tasks: Arc<Tasks>,
    /// Caught panics of user code, shared with the reflector, indexer and processor.
    panics: Arc<PanicCounters>,
    /// Set by `run`/`start`; shared with the handler registrations, which report it.
    started: Arc<AtomicBool>,
    /// Turns true on shutdown.
    stop: watch::Sender<bool>,
}

/// A handler's registration: its own sync state, and the handle to remove it.
pub struct HandlerRegistration {
    id: u64,
    progress: Arc<Progress>,
    informer_synced: Arc<dyn Fn() -> bool + Send + Sync>,
    /// The informer's `started` flag: a registration on an informer never started never syncs.
    informer_started: Arc<AtomicBool>,
    /// The informer's name, for sync errors.
    informer_name: String,
}

impl HandlerRegistration {
    /// Whether the informer this handler is registered with was started.
    pub(crate) fn informer_started(&self) -> bool {
        self.informer_started.load(Ordering::Acquire)
    }

    /// The name of the informer this handler is registered with.
    pub(crate) fn informer_name(&self) -> &str {
        &self.informer_name
    }

    /// Whether the informer has synced and this handler has processed every notification
    /// queued up to then, i.e. it has seen the whole initial list (client-go 1.27's
    /// `ResourceEventHandlerRegistration.HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.progress.has_synced((self.informer_synced)())
    }
}

impl<K> SharedIndexInformer<K>
where
    K: Resource + Clone + Send + Sync + 'static,
{
    /// An informer over `list_watch`. Nothing happens until [`run`](Self::run) or
    /// [`start`](Self::start).
    pub fn new(list_watch: impl ListWatch<K>, options: InformerOptions<K>) -> Self {
        let name = if options.name.is_empty() {
            std::any::type_name::<K>()
                .rsplit("::")
                .next()
                .unwrap_or_default()
                .to_owned()
        } else {
            options.name
        };
        let panics = Arc::new(PanicCounters::new(&options.metrics, &name));
        let tasks = Arc::new(Tasks::default());
        let bytes = match (options.store_mode, list_watch.wire_codec()) {
            (StoreMode::Decoded, _) => None,
            (mode, Some(codec)) => ByteStore::for_mode(mode, codec),
            (StoreMode::Bytes { .. }, None) => {
                tracing::warn!(informer = %name, "byte-backed store asked for, but the list-watch has no wire codec: objects are kept decoded");
                None
            }
        };
        let indexer = Indexer::with_store(Arc::clone(&panics), bytes);
        let fifo = Arc::new(DeltaFifo::new(indexer.clone()).named(&name));
        let config = ReflectorConfig {
            name: name.clone(),
            page_size: (options.page_size != 0).then_some(options.page_size),
            streaming_list: options.streaming_list,
            streaming_timeout: options.streaming_timeout,
            transform: options.transform,
            on_watch_error: options.watch_error_handler,
            panics: Arc::clone(&panics),
            metrics: options.metrics.reflector(&name),
        };
        let reflector = Reflector::new(list_watch, Arc::clone(&fifo), config);
        let task: ReflectorTask = Box::new(move |stop| Box::pin(reflector.run(stop)));
        let processor = Processor::new(options.resync, Arc::clone(&panics), Arc::clone(&tasks))
            .with_metrics(options.metrics, name.clone());
        let inner = Inner {
            name,
            default_resync: options.resync,
            indexer,
            fifo,
            processor,
            block_deltas: Mutex::new(()),
            reflector: Mutex::new(Some(task)),
            tasks,
            panics,
            started: Arc::new(AtomicBool::new(false)),
            stop: watch::Sender::new(false),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Registers `handler` with the informer's default resync period.
    ///
    /// # Errors
    /// [`Error::ShutDown`] after [`shutdown`](Self::shutdown).
    pub fn add_event_handler(
        &self,
        handler: impl EventHandler<K>,
    ) -> Result<HandlerRegistration, Error> {
        self.add_event_handler_with_resync_period(handler, self.inner.default_resync)
    }

    /// Registers `handler` with its own resync period, adjusted by client-go's rules: at least
    /// 1 s; before start, a period below the informer's check period lowers that check period;
    /// after start, it is raised to the check period; an informer created with no resync
    /// (`ZERO`) never resyncs any handler.
    ///
    /// # Errors
    /// [`Error::ShutDown`] after [`shutdown`](Self::shutdown).
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl EventHandler<K>,
        resync: Duration,
    ) -> Result<HandlerRegistration, Error> {
        if *self.inner.stop.borrow() {
            return Err(Error::ShutDown {
                name: self.inner.name.clone(),
            });
        }
        let _paused = self.inner.block_deltas.lock();
        let cached = self.inner.indexer.list();
        let (id, progress) = self.inner.processor.add(Arc::new(handler), resync, cached);
        let fifo = Arc::clone(&self.inner.fifo);
        Ok(HandlerRegistration {
            id,
            progress,
            informer_synced: Arc::new(move || fifo.has_synced()),
            informer_started: Arc::clone(&self.inner.started),
            informer_name: self.inner.name.clone(),
        })
    }

    /// Removes a handler; it receives nothing after its current notification. Returns false
    /// if it was already removed.
    pub fn remove_event_handler(&self, registration: &HandlerRegistration) -> bool {
        self.inner.processor.remove(registration.id)
    }

    /// Adds named indices, indexing the objects already cached. All or nothing.
    ///
    /// # Errors
    /// [`Error::IndexerConflict`] naming a taken name (the built-in [`NAMESPACE_INDEX`](crate::NAMESPACE_INDEX)
    /// included); then none of `indexers` is added and every index already there is kept.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.inner.indexer.add_indexers(indexers)
    }

    /// The cache.
    pub fn indexer(&self) -> Indexer<K> {
        self.inner.indexer.clone()
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.inner.indexer.clone())
    }

    /// Whether the first full list has been stored and handed to the handlers' buffers.
    pub fn has_synced(&self) -> bool {
        self.inner.fifo.has_synced()
    }

    /// Whether `run` (or `start`) was called.
    pub fn has_started(&self) -> bool {
        self.inner.started.load(Ordering::Acquire)
    }

    /// The informer's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// How often user code (transform, index functions, handlers) panicked so far. Each panic
    /// skipped one object or notification; see the type's guarantees.
    pub fn stats(&self) -> InformerStats {
        self.inner.panics.snapshot()
    }

    /// Spawns [`run`](Self::run) onto the current tokio runtime; [`shutdown_and_wait`](Self::shutdown_and_wait)
    /// waits for it.
    pub fn start(&self) {
        self.inner.started.store(true, Ordering::Release);
        let this = self.clone();
        let task = async move { this.run().await };
        self.inner.tasks.spawn("process loop".into(), task);
    }

    /// Runs the informer until [`shutdown`](Self::shutdown). A second call returns at once.
    ///
    /// The process loop runs in this future; the reflector, the resync timer and the handlers
    /// run on tasks of their own, which [`shutdown_and_wait`](Self::shutdown_and_wait) joins.
    pub async fn run(&self) {
        let Some(reflector) = self.inner.reflector.lock().take() else {
            tracing::warn!(informer = %self.inner.name, "informer already started");
            return;
        };
        if *self.inner.stop.borrow() {
            return;
        }
        self.inner.started.store(true, Ordering::Release);
        self.inner.processor.start();
        let tasks = &self.inner.tasks;
        tasks.spawn("reflector".into(), reflector(self.inner.stop.subscribe()));
        let inner = Arc::clone(&self.inner);
        let mut stop = self.inner.stop.subscribe();
        let period = inner.processor.resync_check_period();
        tasks.spawn("resync timer".into(), async move {
            let resync = resync_loop(
                period,
                || inner.processor.should_resync(tokio::time::Instant::now()),
                || inner.fifo.resync(),
            );
            tokio::select! {
                _ = stop.wait_for(|stop| *stop) => {}
                () = resync => {}
            }
        });
        let inner = Arc::clone(&self.inner);
        while let Some(()) = inner
            .fifo
            .pop_entries(|key, deltas, initial| inner.handle_deltas(key, deltas, initial))
            .await
        {}
    }

    /// Stops the reflector, the process loop and every handler task. Idempotent.
    ///
    /// Dropping every handle does *not* stop a started informer (its tasks hold it): call this.
    pub fn shutdown(&self) {
        self.inner.stop.send_replace(true);
        self.inner.fifo.close();
        self.inner.processor.stop();
    }

    /// [`shutdown`](Self::shutdown), then waits until every task the informer spawned has
    /// ended: the reflector, the resync timer, the process loop (when started with
    /// [`start`](Self::start)) and every handler's task. A handler in the middle of a
    /// notification finishes it; the ones queued behind it are dropped.
    ///
    /// # Errors
    /// [`Error::ShutdownTimeout`] naming the tasks still running after `timeout`. They were
    /// aborted, which ends them at their next `.await`; a handler stuck in synchronous code
    /// keeps its thread until it returns (nothing in Rust can stop it), and is then ended
    /// without another notification.
    pub async fn shutdown_and_wait(&self, timeout: Duration) -> Result<(), Error> {
        self.shutdown();
        self.inner
            .tasks
            .join(timeout)
            .await
            .map_err(|tasks| Error::ShutdownTimeout {
                name: self.inner.name.clone(),
                timeout,
                tasks,
            })
    }
}

impl<K: Send + Sync + 'static> Inner<K> {
    /// client-go's `processDeltas`: for each delta, update the indexer, then notify. The
    /// entries are stored as queued; only what handlers receive is decoded (in a byte-backed
    /// informer: the new state, and the old one of an update).
    fn handle_deltas(&self, key: ObjectKey, deltas: Vec<Queued<K>>, is_in_initial_list: bool)
    where
        K: Resource,
    {
        let _paused = self.block_deltas.lock();
        for delta in deltas {
            trace!(informer = %self.name, %key, delta = delta.type_name(), "index update");
            let (entry, sync_type) = match delta {
                Queued::Deleted { last, tombstone } => {
                    self.indexer.discard(key.as_str());
                    let Some(obj) = self.decoded(&key, &last) else {
                        continue;
                    };
                    let gone = match tombstone {
                        false => DeletedObject::Known(obj),
                        true => DeletedObject::Tombstone {
                            key: key.clone(),
                            last_known: obj,
                        },
                    };
                    self.processor.distribute(Notification::Delete(gone), false);
                    continue;
                }
                Queued::Added(entry) | Queued::Updated(entry) => (entry, SyncType::No),
                Queued::Replaced(entry) => (entry, SyncType::IfSameVersion),
                Queued::Sync(entry) => (entry, SyncType::Yes),
            };
            let (entry, old) = self.indexer.insert_stored(key.clone(), entry);
            let notification = match old {
                Some(old) => {
                    let is_resync = match sync_type {
                        SyncType::Yes => true,
                        SyncType::No => false,
                        SyncType::IfSameVersion => {
                            old.resource_version() == entry.resource_version()
                        }
                    };
                    let update = Notification::Update {
                        old: self.indexer.pending(&key, old),
                        new: self.indexer.pending(&key, entry),
                        is_resync,
                    };
                    (update, is_resync)
                }
                None => {
                    let add = Notification::Add {
                        obj: self.indexer.pending(&key, entry),
                        is_in_initial_list,
                    };
                    (add, false)
                }
            };
            self.processor.distribute(notification.0, notification.1);
        }
    }

    /// `entry`'s object for the handlers of a delete; `None` (logged) when a byte-backed entry
    /// does not decode: its handlers are not told about this change.
    fn decoded(&self, key: &ObjectKey, entry: &Stored<K>) -> Option<Arc<K>> {
        self.indexer
            .decode(key, entry)
            .map_err(|err| tracing::error!(informer = %self.name, error = %err, "cached object not decoded for the handlers"))
            .ok()
    }
}

/// Whether an update is a resync: client-go treats a `Replaced` delta whose resourceVersion did
/// not change as one, so a relist does not wake every handler for nothing.
enum SyncType {
    No,
    Yes,
    IfSameVersion,
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;
