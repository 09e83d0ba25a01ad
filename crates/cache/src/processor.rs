//! Fan-out from the informer to its handlers: one unbounded buffer and one task per handler.
//!
//! Mirrors client-go `tools/cache/shared_informer.go` (`sharedProcessor`, `processorListener`).
//!
//! # Why a buffer and a task per handler?
//! The informer must never wait for a handler: if it did, one slow handler would stall every
//! other handler and, through the DeltaFIFO, the watch itself. So `distribute` only pushes onto
//! each handler's unbounded channel, and each handler drains its own channel on its own task.
//! A handler that panics is caught (`catch_unwind`), logged, counted
//! ([`InformerStats::handler_panics`](crate::InformerStats)), and keeps its task.
//!
//! Every handler task is spawned through the informer's [`Tasks`], so shutdown can wait for it.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use kube_core::Resource;
use parking_lot::Mutex;
use prometheus_client::metrics::gauge::Gauge;
use tokio::{sync::mpsc, time::Instant};

use crate::{
    delta::DeletedObject,
    error::Error,
    handler::EventHandler,
    health::{PanicCounters, panic_message},
    key::ObjectKey,
    metrics::InformerMetrics,
    stored::Pending,
    tasks::Tasks,
};

/// The smallest resync period a handler may ask for (client-go's `minimumResyncPeriod`).
pub(crate) const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// One notification for one handler. Adds and updates carry [`Pending`] objects, decoded by
/// the handler's task (a byte-backed informer's buffers hold its cached entries, not copies).
pub(crate) enum Notification<K> {
    Add {
        obj: Pending<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Pending<K>,
        new: Pending<K>,
        is_resync: bool,
    },
    Delete(DeletedObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add {
                obj,
                is_in_initial_list,
            } => Self::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Self::Update {
                old,
                new,
                is_resync,
            } => Self::Update {
                old: old.clone(),
                new: new.clone(),
                is_resync: *is_resync,
            },
            Self::Delete(d) => Self::Delete(d.clone()),
        }
    }
}

impl<K: Resource> Notification<K> {
    /// The key of the object this notification is about, for logs.
    fn key(&self) -> ObjectKey {
        match self {
            Self::Add { obj, .. } | Self::Update { new: obj, .. } => obj.key(),
            Self::Delete(DeletedObject::Known(obj)) => ObjectKey::of(obj.as_ref()),
            Self::Delete(DeletedObject::Tombstone { key, .. }) => key.clone(),
        }
    }
}

/// Counters shared between a listener, its task and its registration handle.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Notifications pushed onto the buffer. Invariant: `>= processed`.
    pub(crate) enqueued: AtomicU64,
    /// Notifications the handler has returned from (or panicked in).
    pub(crate) processed: AtomicU64,
    /// `enqueued` at the moment the informer was first seen synced; `u64::MAX` until then.
    pub(crate) sync_target: AtomicU64,
    /// Set when the registration is removed or the informer shut down: stop calling the handler.
    pub(crate) stopped: AtomicBool,
    /// `enqueued - processed`, exported as `informer_handler_backlog`. Invariant: never negative
    /// (raised before a notification is sent, lowered after it was handled).
    pub(crate) backlog: Gauge,
}

impl Progress {
    /// Whether the handler has processed everything queued before the informer synced.
    /// `informer_synced` must be the informer's current `has_synced()`.
    pub(crate) fn has_synced(&self, informer_synced: bool) -> bool {
        if !informer_synced {
            return false;
        }
        let enqueued = self.enqueued.load(Ordering::Acquire);
        let _ = self.sync_target.compare_exchange(
            u64::MAX,
            enqueued,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        self.processed.load(Ordering::Acquire) >= self.sync_target.load(Ordering::Acquire)
    }
}

/// A listener's handler and receiver, waiting for the informer to start.
type PendingTask<K> = (
    Arc<dyn EventHandler<K>>,
    mpsc::UnboundedReceiver<Notification<K>>,
);

struct Listener<K> {
    id: u64,
    tx: mpsc::UnboundedSender<Notification<K>>,
    /// Handler and receiver, until the listener's task is spawned (at informer start).
    pending_task: Option<PendingTask<K>>,
    /// The resync period the caller asked for (after the 1 s floor).
    requested_resync: Duration,
    /// The period actually used: see `effective_resync`. `ZERO` = never.
    resync: Duration,
    next_resync: Instant,
    /// Whether this listener takes part in the resync currently being distributed.
    syncing: bool,
    progress: Arc<Progress>,
}

/// All listeners of one informer.
pub(crate) struct Processor<K> {
    state: Mutex<ProcessorState<K>>,
    /// Where handler panics are counted (shared with the informer).
    panics: Arc<PanicCounters>,
    /// Where listener tasks are spawned (shared with the informer, which joins them).
    tasks: Arc<Tasks>,
    /// Where each listener's backlog gauge lives.
    metrics: InformerMetrics,
    /// The informer's name: the `informer` label of the backlog gauges.
    informer: String,
}

struct ProcessorState<K> {
    listeners: Vec<Listener<K>>,
    /// Whether `start` ran: new listeners get their task at once.
    started: bool,
    /// How often the informer checks whether some listener's resync is due. Invariant:
    /// no listener has `0 < resync < resync_check_period`.
    resync_check_period: Duration,
    next_id: u64,
}

/// client-go's `determineResyncPeriod`: no resync if either side disables it, and never more
/// often than the informer checks.
fn effective_resync(requested: Duration, check: Duration) -> Duration {
    if requested.is_zero() || check.is_zero() {
        Duration::ZERO
    } else {
        requested.max(check)
    }
}

impl<K: Resource + Send + Sync + 'static> Processor<K> {
    pub(crate) fn new(
        resync_check_period: Duration,
        panics: Arc<PanicCounters>,
        tasks: Arc<Tasks>,
    ) -> Self {
        let state = ProcessorState {
            listeners: Vec::new(),
            started: false,
            resync_check_period,
            next_id: 0,
        };
        Self {
            state: Mutex::new(state),
            panics,
            tasks,
            metrics: InformerMetrics::default(),
            informer: String::new(),
        }
    }

    /// Exports the listeners' backlogs in `metrics`, labelled with `informer`.
    pub(crate) fn with_metrics(self, metrics: InformerMetrics, informer: String) -> Self {
        Self {
            metrics,
            informer,
            ..self
        }
    }

    /// Registers `handler`, first queueing `initial` as `Add { is_in_initial_list: true }`.
    /// Returns the listener id and its progress counters.
    pub(crate) fn add(
        &self,
        handler: Arc<dyn EventHandler<K>>,
        resync: Duration,
        initial: Vec<Arc<K>>,
    ) -> (u64, Arc<Progress>) {
        let mut state = self.state.lock();
        let mut requested = resync;
        if !requested.is_zero() && requested < MINIMUM_RESYNC_PERIOD {
            tracing::warn!(
                ?requested,
                "resync period too small, using {MINIMUM_RESYNC_PERIOD:?}"
            );
            requested = MINIMUM_RESYNC_PERIOD;
        }
        if !requested.is_zero() && requested < state.resync_check_period {
            if state.started {
                tracing::warn!(?requested, check = ?state.resync_check_period, "informer already started: resync raised to its check period");
                requested = state.resync_check_period;
            } else {
                state.resync_check_period = requested;
                let check = requested;
                for l in &mut state.listeners {
                    l.resync = effective_resync(l.requested_resync, check);
                }
            }
        }
        let resync = effective_resync(requested, state.resync_check_period);
        let (tx, rx) = mpsc::unbounded_channel();
        let id = state.next_id;
        state.next_id += 1;
        let progress = Arc::new(Progress {
            enqueued: AtomicU64::new(0),
            processed: AtomicU64::new(0),
            sync_target: AtomicU64::new(u64::MAX),
            stopped: AtomicBool::new(false),
            backlog: self.metrics.handler_backlog(&self.informer, id),
        });
        for obj in initial {
            progress.enqueued.fetch_add(1, Ordering::AcqRel);
            progress.backlog.inc();
            let _ = tx.send(Notification::Add {
                obj: obj.into(),
                is_in_initial_list: true,
            });
        }
        let mut listener = Listener {
            id,
            tx,
            pending_task: Some((handler, rx)),
            requested_resync: requested,
            resync,
            next_resync: Instant::now() + resync,
            syncing: false,
            progress: Arc::clone(&progress),
        };
        if state.started {
            self.spawn_listener(&mut listener);
        }
        state.listeners.push(listener);
        (id, progress)
    }

    /// Removes a listener: its task stops before the next notification.
    pub(crate) fn remove(&self, id: u64) -> bool {
        let mut state = self.state.lock();
        let Some(pos) = state.listeners.iter().position(|l| l.id == id) else {
            return false;
        };
        let listener = state.listeners.remove(pos);
        listener.progress.stopped.store(true, Ordering::Release);
        self.metrics.remove_handler(&self.informer, id);
        true
    }

    /// Spawns the task of every listener that does not have one yet.
    pub(crate) fn start(&self) {
        let mut state = self.state.lock();
        state.started = true;
        for listener in &mut state.listeners {
            self.spawn_listener(listener);
        }
    }

    /// Stops every listener and forgets them.
    pub(crate) fn stop(&self) {
        let mut state = self.state.lock();
        for l in state.listeners.drain(..) {
            l.progress.stopped.store(true, Ordering::Release);
            self.metrics.remove_handler(&self.informer, l.id);
        }
    }

    /// Sends `notification` to every listener, or for a resync only to listeners whose resync
    /// is due (marked by the last `should_resync`).
    pub(crate) fn distribute(&self, notification: Notification<K>, is_resync: bool) {
        let state = self.state.lock();
        let mut targets = state
            .listeners
            .iter()
            .filter(|l| !is_resync || l.syncing)
            .peekable();
        let mut notification = Some(notification);
        while let Some(listener) = targets.next() {
            // Move the notification into the last target instead of cloning it once more.
            let n = if targets.peek().is_some() {
                notification.clone()
            } else {
                notification.take()
            };
            if let Some(n) = n {
                listener.progress.enqueued.fetch_add(1, Ordering::AcqRel);
                listener.progress.backlog.inc();
                let _ = listener.tx.send(n);
            }
        }
    }

    /// Marks the listeners whose resync is due and schedules their next one; returns whether
    /// any is due (then the informer asks the DeltaFIFO for a resync).
    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let mut state = self.state.lock();
        let mut any = false;
        for l in &mut state.listeners {
            l.syncing = !l.resync.is_zero() && now >= l.next_resync;
            if l.syncing {
                any = true;
                l.next_resync = now + l.resync;
            }
        }
        any
    }

    /// How often the informer should call `should_resync` (`ZERO`: never).
    pub(crate) fn resync_check_period(&self) -> Duration {
        self.state.lock().resync_check_period
    }

    #[cfg(test)]
    pub(crate) fn resync_periods(&self) -> Vec<Duration> {
        self.state
            .lock()
            .listeners
            .iter()
            .map(|l| l.resync)
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        let state = self.state.lock();
        for l in &state.listeners {
            assert!(l.resync.is_zero() || l.resync >= state.resync_check_period);
            assert!(
                l.progress.enqueued.load(Ordering::Acquire)
                    >= l.progress.processed.load(Ordering::Acquire)
            );
            assert!(l.progress.backlog.get() >= 0, "a backlog below zero");
        }
    }

    fn spawn_listener(&self, listener: &mut Listener<K>) {
        if let Some((handler, rx)) = listener.pending_task.take() {
            let progress = Arc::clone(&listener.progress);
            let panics = Arc::clone(&self.panics);
            let task = run_listener(handler, rx, progress, panics);
            self.tasks.spawn(format!("handler #{}", listener.id), task);
        }
    }
}

/// A listener's task: deliver buffered notifications one by one until stopped.
async fn run_listener<K: Resource + Send + Sync + 'static>(
    handler: Arc<dyn EventHandler<K>>,
    mut rx: mpsc::UnboundedReceiver<Notification<K>>,
    progress: Arc<Progress>,
    panics: Arc<PanicCounters>,
) {
    while let Some(notification) = rx.recv().await {
        if progress.stopped.load(Ordering::Acquire) {
            break;
        }
        let delivered = match decoded(&notification) {
            Ok(decoded) => catch_unwind(AssertUnwindSafe(|| match decoded {
                Decoded::Add(obj, is_in_initial_list) => handler.on_add(&obj, is_in_initial_list),
                Decoded::Update(old, new, false) => handler.on_update(&old, &new),
                Decoded::Update(old, new, true) => handler.on_resync(&old, &new),
                Decoded::Delete(gone) => handler.on_delete(gone),
            })),
            Err(err) => {
                tracing::error!(error = %err, "cached object not decoded; the handler is not told about this change");
                Ok(())
            }
        };
        if let Err(panic) = delivered {
            panics.handler.inc();
            tracing::error!(
                key = %notification.key(),
                panic = panic_message(panic.as_ref()),
                "event handler panicked; the notification is dropped, the handler keeps running"
            );
        }
        progress.processed.fetch_add(1, Ordering::AcqRel);
        progress.backlog.dec();
    }
}

/// A notification's objects, decoded for the handler.
enum Decoded<'a, K> {
    Add(Arc<K>, bool),
    Update(Arc<K>, Arc<K>, bool),
    Delete(&'a DeletedObject<K>),
}

/// Decodes `notification`'s pending objects.
///
/// # Errors
/// [`Error::Undecodable`] naming the key of an entry that does not decode.
fn decoded<K: Resource>(notification: &Notification<K>) -> Result<Decoded<'_, K>, Error> {
    Ok(match notification {
        Notification::Add {
            obj,
            is_in_initial_list,
        } => Decoded::Add(obj.object()?, *is_in_initial_list),
        Notification::Update {
            old,
            new,
            is_resync,
        } => Decoded::Update(old.object()?, new.object()?, *is_resync),
        Notification::Delete(gone) => Decoded::Delete(gone),
    })
}

#[cfg(test)]
#[path = "processor_tests.rs"]
mod tests;
