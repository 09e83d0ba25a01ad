//! The basic work queue: deduplicating, fair, and safe for many concurrent workers.
//!
//! Sits between an informer's event handlers (which [`Queue::add`] object keys) and a controller's
//! workers (which [`Queue::get`], reconcile, then [`Queue::done`]). Mirrors client-go
//! `util/workqueue/queue.go`.
//!
//! # Why not a channel?
//! A controller is level-triggered: it needs to know *that* an object changed, not how often. Ten
//! events for one Deployment that arrive while its key waits must be one reconcile, and two workers
//! must never reconcile the same object at once (they would race on its writes). A channel gives
//! neither; this queue gives both, through two sets:
//! - *dirty*: keys that need processing. Adding a dirty key is a no-op (deduplication).
//! - *processing*: keys a worker holds. A key added while it is processing stays dirty but is not
//!   handed out; [`Queue::done`] puts it back in line, so the change is processed after the current
//!   run, by one worker.
//!
//! Both sets live in one map from key to [`KeyState`], so each operation costs one hash lookup
//! (two for a `done` that finishes a key).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics::{MetricsProvider, QueueMetrics};

/// What a queue key must be: cheap to compare, hash and clone, and shareable across tasks.
///
/// Controllers use `String` ("namespace/name") or a small struct; any type with these bounds works
/// (blanket implementation).
pub trait Key: Hash + Eq + Clone + Send + Sync + 'static {}

impl<K: Hash + Eq + Clone + Send + Sync + 'static> Key for K {}

/// A deduplicating work queue: each key is processed by at most one worker at a time, and every
/// add is followed by a processing run that starts after it.
///
/// Cheap to clone: clones share one queue.
///
/// # Guarantees
/// - A key that is waiting is stored once; adding it again changes nothing (not even its place).
/// - Keys are handed out in the order they became ready (a key added while processing becomes
///   ready at its `done`).
/// - A key is never returned by [`get`](Queue::get) while another worker holds it (between its
///   `get` and `done`).
/// - A key added while it is processing is handed out again after [`done`](Queue::done).
/// - After [`shut_down`](Queue::shut_down), every pending and future `get` returns `None`.
/// - [`shut_down`](Queue::shut_down) ends a waiting
///   [`shut_down_with_drain`](Queue::shut_down_with_drain) at once (see below).
///
/// # Shutdown and still-queued keys
/// Shutdown *discards* keys that are waiting: `get` returns `None` from the moment shutdown begins,
/// even if keys were queued, and later adds are ignored. Keys being processed stay with their workers
/// until `done`. Why: a controller's keys are level-triggered, and on the next start the informer's
/// initial list enqueues every object again, so a discarded key loses no work; draining a backlog
/// instead could make shutdown last arbitrarily long (a pod has a 30 s grace period).
///
/// # Forcing a drain to end (the second SIGTERM)
/// A process that drains on the first SIGTERM and must stop *now* on the second calls
/// [`shut_down`](Queue::shut_down) while [`shut_down_with_drain`](Queue::shut_down_with_drain) waits:
/// the drain returns `false` at once, whatever its timeout, and in-flight keys stay with their
/// workers. A drain started *after* that `shut_down` waits again. Same as client-go (its
/// `TestForceQueueShutdownUsingShutDown`).
///
/// # Differences from client-go
/// client-go's docs and code disagree: `ShutDown` is documented to make workers exit at once, yet
/// its `Get` keeps handing out queued items until the queue is empty; `ShutDownWithDrain` is
/// documented to wait until `Done` was called on all items in the queue, yet it waits only while
/// some item is being processed (so it can return with items still queued), and without a
/// timeout. Here both shutdowns discard waiting keys at once, and
/// [`shut_down_with_drain`](Queue::shut_down_with_drain) waits for in-flight keys only, for at most
/// its timeout.
pub struct Queue<K> {
    shared: Arc<Shared<K>>,
}

impl<K> std::fmt::Debug for Queue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("name", &self.shared.name)
            .field("ready", &state.ready.len())
            .field("processing", &state.processing)
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<K> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Queue {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<K> {
    /// The queue's name, as given to its metrics; shown by `Debug`.
    name: String,
    state: Mutex<State<K>>,
    /// Woken (one waiter) when a key becomes ready, and (all waiters) on shutdown.
    ready: Notify,
    /// Woken (all waiters) when the processing set becomes empty during shutdown.
    idle: Notify,
    metrics: Arc<dyn QueueMetrics>,
    /// Whether `metrics` needs timestamps; see [`Shared::now`].
    timed: bool,
    /// The instant the queue was created: what [`Shared::now`] returns when `timed` is false.
    created: Instant,
}

impl<K> Shared<K> {
    /// The current instant, or a fixed one when the metrics sink ignores time: reading the clock
    /// would be more than a third of the cost of a queue operation.
    fn now(&self) -> Instant {
        if self.timed {
            Instant::now()
        } else {
            self.created
        }
    }
}

struct State<K> {
    /// Keys that `get` may hand out, oldest first.
    /// Invariant: each key at most once, and exactly the keys that are dirty and not processing.
    ready: VecDeque<K>,
    /// Every key that is dirty, processing, or both. Invariant: no entry is neither.
    keys: HashMap<K, KeyState>,
    /// Number of processing keys. Invariant: equals the entries of `keys` with `processing_since`.
    processing: usize,
    /// Set once by shutdown, never cleared. Invariant: when set, no key is dirty and `ready` is
    /// empty.
    shutting_down: bool,
    /// Set when a drain starts, cleared by [`Queue::shut_down`]: a drain waits only while it is
    /// set (client-go's `drain` flag). Invariant: set only while `shutting_down`.
    draining: bool,
}

/// Where one key stands.
#[derive(Clone, Copy)]
struct KeyState {
    /// Set while the key needs processing ("dirty"): when it was added, for queue latency.
    dirty_since: Option<Instant>,
    /// Set while a worker holds the key ("processing"): when its work started.
    processing_since: Option<Instant>,
}

impl<K: Key> Queue<K> {
    /// Creates an empty queue whose metrics are labelled `name`.
    pub fn new(name: &str, metrics: Arc<dyn MetricsProvider>) -> Self {
        let metrics = metrics.queue_metrics(name);
        Queue {
            shared: Arc::new(Shared {
                name: name.to_string(),
                state: Mutex::new(State {
                    ready: VecDeque::new(),
                    keys: HashMap::new(),
                    processing: 0,
                    shutting_down: false,
                    draining: false,
                }),
                ready: Notify::new(),
                idle: Notify::new(),
                timed: metrics.needs_time(),
                created: Instant::now(),
                metrics,
            }),
        }
    }

    /// Marks `key` as needing processing.
    ///
    /// No-op if the key is already waiting or the queue is shutting down. If a worker holds the key,
    /// it is handed out again after that worker's [`done`](Queue::done).
    pub fn add(&self, key: K) {
        let mut guard = self.shared.state.lock();
        let state = &mut *guard;
        if state.shutting_down {
            return;
        }
        match state.keys.entry(key) {
            Entry::Occupied(mut entry) => {
                let key_state = entry.get_mut();
                if key_state.dirty_since.is_none() {
                    // Processing: the key goes back in line when its worker calls `done`.
                    key_state.dirty_since = Some(self.shared.now());
                    self.shared.metrics.added();
                }
                return;
            }
            Entry::Vacant(entry) => {
                state.ready.push_back(entry.key().clone());
                let dirty_since = Some(self.shared.now());
                entry.insert(KeyState {
                    dirty_since,
                    processing_since: None,
                });
                self.shared.metrics.added();
            }
        }
        drop(guard);
        self.shared.ready.notify_one();
    }

    /// Waits for the next key and hands it to the caller, who must call [`done`](Queue::done) with
    /// it when finished. Returns `None` once the queue is shutting down.
    ///
    /// Cancel-safe: dropping the future before it completes loses no key.
    pub async fn get(&self) -> Option<K> {
        loop {
            // Register interest before looking, so an add between the look and the await wakes us.
            let mut notified = pin!(self.shared.ready.notified());
            notified.as_mut().enable();
            {
                let mut guard = self.shared.state.lock();
                let state = &mut *guard;
                if let Some(key) = state.ready.pop_front() {
                    let now = self.shared.now();
                    let processing_since = Some(now);
                    let dirty_since = match state.keys.get_mut(&key) {
                        Some(key_state) => {
                            key_state.processing_since = processing_since;
                            key_state.dirty_since.take()
                        }
                        None => {
                            // Unreachable while the invariants hold; stay consistent anyway.
                            let key_state = KeyState {
                                dirty_since: None,
                                processing_since,
                            };
                            state.keys.insert(key.clone(), key_state);
                            None
                        }
                    };
                    state.processing += 1;
                    self.shared
                        .metrics
                        .started(now - dirty_since.unwrap_or(now), now);
                    return Some(key);
                }
                if state.shutting_down {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Tells the queue that processing of `key` (returned by [`get`](Queue::get)) has finished.
    ///
    /// If the key was added again meanwhile, it goes back in line now. No-op for a key that is not
    /// being processed.
    pub fn done(&self, key: &K) {
        let mut guard = self.shared.state.lock();
        let state = &mut *guard;
        let Some(key_state) = state.keys.get_mut(key) else {
            tracing::debug!("workqueue: done() for a key that is not being processed");
            return;
        };
        let Some(started) = key_state.processing_since.take() else {
            tracing::debug!("workqueue: done() for a key that is not being processed");
            return;
        };
        state.processing -= 1;
        let worked = self.shared.now() - started;
        self.shared.metrics.finished(started, worked);
        if key_state.dirty_since.is_some() {
            state.ready.push_back(key.clone());
            drop(guard);
            self.shared.ready.notify_one();
            return;
        }
        state.keys.remove(key);
        if state.shutting_down && state.processing == 0 {
            drop(guard);
            self.shared.idle.notify_waiters();
        }
    }

    /// The number of keys ready to be handed out now. Keys that were added while being processed
    /// are not counted until their current run is done (as in client-go).
    pub fn len(&self) -> usize {
        self.shared.state.lock().ready.len()
    }

    /// Whether no key is ready to be handed out now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Starts shutdown: discards waiting keys, ignores later adds, and makes every pending and
    /// future [`get`](Queue::get) return `None`. Workers holding keys may still call `done`.
    /// Idempotent.
    ///
    /// Also ends every [`shut_down_with_drain`](Queue::shut_down_with_drain) that is waiting, at
    /// once: see [forcing a drain to end](Queue#forcing-a-drain-to-end-the-second-sigterm).
    pub fn shut_down(&self) {
        self.begin_shut_down(false);
        self.shared.idle.notify_waiters();
    }

    /// Shutdown common to both ways: sets `draining` to `drain`, and on the first call discards
    /// waiting keys. Wakes every getter.
    fn begin_shut_down(&self, drain: bool) {
        let mut state = self.shared.state.lock();
        state.draining = drain;
        if !state.shutting_down {
            state.shutting_down = true;
            let mut discarded = 0;
            state.keys.retain(|_, key_state| {
                discarded += usize::from(key_state.dirty_since.take().is_some());
                key_state.processing_since.is_some()
            });
            state.ready.clear();
            if discarded > 0 {
                tracing::debug!(discarded, "workqueue: shutdown discarded waiting keys");
                self.shared.metrics.discarded(discarded);
            }
        }
        drop(state);
        self.shared.ready.notify_waiters();
    }

    /// Shuts down like [`shut_down`](Queue::shut_down), then waits until every key handed out has
    /// been `done`, for at most `timeout`.
    ///
    /// Returns `true` if all in-flight keys were done in time, `false` on timeout (the workers keep
    /// their keys; the queue stays shut down). Keys that were waiting, not in flight, are discarded
    /// at once and never processed: see [the type docs](Queue#shutdown-and-still-queued-keys).
    ///
    /// A [`shut_down`](Queue::shut_down) while this waits ends the wait at once with `false`.
    pub async fn shut_down_with_drain(&self, timeout: Duration) -> bool {
        self.start_drain();
        self.wait_drained(timeout).await
    }

    /// The synchronous half of [`shut_down_with_drain`](Queue::shut_down_with_drain): shuts down
    /// and marks a drain as under way, so a later `shut_down` can end it.
    pub(crate) fn start_drain(&self) {
        self.begin_shut_down(true);
    }

    /// The waiting half of [`shut_down_with_drain`](Queue::shut_down_with_drain): `true` once
    /// nothing is in flight, `false` on timeout or when `shut_down` ended the drain.
    pub(crate) async fn wait_drained(&self, timeout: Duration) -> bool {
        let drained = async {
            loop {
                let mut notified = pin!(self.shared.idle.notified());
                notified.as_mut().enable();
                {
                    let state = self.shared.state.lock();
                    if state.processing == 0 {
                        return true;
                    }
                    if !state.draining {
                        tracing::info!(
                            in_flight = state.processing,
                            "workqueue: drain ended by shut_down"
                        );
                        return false;
                    }
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, drained)
            .await
            .unwrap_or(false)
    }

    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }

    /// Whether `key` is waiting to be handed out (including a key added while it is processing).
    pub(crate) fn is_waiting(&self, key: &K) -> bool {
        let state = self.shared.state.lock();
        state
            .keys
            .get(key)
            .is_some_and(|key_state| key_state.dirty_since.is_some())
    }

    /// Reports a scheduled retry to this queue's metrics.
    pub(crate) fn record_retry(&self) {
        self.shared.metrics.retried();
    }

    /// Panics if a documented invariant of the queue's state does not hold.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        let state = self.shared.state.lock();
        let mut seen = std::collections::HashSet::new();
        for key in &state.ready {
            assert!(seen.insert(key), "a key is in the ready list twice");
            let key_state = state.keys.get(key).expect("a ready key has no state");
            assert!(key_state.dirty_since.is_some(), "a ready key is not dirty");
            assert!(
                key_state.processing_since.is_none(),
                "a ready key is being processed"
            );
        }
        let states = state.keys.values();
        assert!(
            states
                .clone()
                .all(|s| s.dirty_since.is_some() || s.processing_since.is_some())
        );
        let dirty_idle = states
            .clone()
            .filter(|s| s.dirty_since.is_some() && s.processing_since.is_none());
        assert_eq!(
            dirty_idle.count(),
            state.ready.len(),
            "a dirty, idle key is not ready"
        );
        let processing = states
            .clone()
            .filter(|s| s.processing_since.is_some())
            .count();
        assert_eq!(processing, state.processing, "processing count is off");
        assert!(
            state.shutting_down || !state.draining,
            "draining without shutdown"
        );
        if state.shutting_down {
            assert!(state.ready.is_empty(), "keys ready after shutdown");
            assert!(
                states.clone().all(|s| s.dirty_since.is_none()),
                "keys dirty after shutdown"
            );
        }
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
