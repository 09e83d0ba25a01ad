//! The queue between the reflector (producer) and the informer's process loop (consumer).
//!
//! Mirrors client-go `tools/cache/delta_fifo.go`.

use std::{
    collections::{VecDeque, hash_map::Entry},
    sync::Arc,
};

use kube_core::Resource;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tracing::trace;

use crate::{
    delta::{DeletedObject, Delta, Deltas},
    indexer::Indexer,
    key::{KeyHasher, KeyMap, KeySet, ObjectKey},
};

/// A queue of *changes* per object, between the reflector (producer) and the informer's
/// process loop (consumer).
///
/// # Why not a queue of objects?
/// A controller must learn what happened, not only the latest state: a delete must still be
/// delivered although the object is gone, and five updates that land while the consumer is busy
/// are still one unit of work. So per key we keep the ordered deltas since it was last popped.
///
/// # Guarantees
/// - Keys pop in the order first queued; a waiting key gains deltas but keeps its place.
/// - Deletes are not lost: a `replace` that lacks a key known to the indexer, or still queued,
///   queues `Deleted(Tombstone { .. })` for it.
/// - Two trailing `Deleted` deltas collapse into one, as client-go's `dedupDeltas` /
///   `isDeletionDup`: the older is kept, unless it is a tombstone, then the newer. So of two
///   real deletions the first (the watch's final state) wins, and a real object always wins
///   over a tombstone.
/// - Deleting a key that is neither queued nor in the indexer is a no-op.
/// - `resync` queues a `Sync` only for keys that have nothing queued (a queued key will reach
///   the handlers soon anyway).
/// - Over a byte-backed indexer, tombstones and resyncs carry the cached state decoded; an
///   entry that does not decode is logged and gets neither (it stays cached until the server
///   changes the object).
/// - `pop` runs its process function while holding the queue lock, so the indexer the function
///   updates and the queue never disagree while a concurrent `replace` computes tombstones.
///
/// # Differences from client-go
/// - No requeue of a failed pop: client-go removed it because it moves the informer back in time.
/// - `pop` on a closed queue returns `None` at once, even if keys are still queued: shutdown is
///   shutdown.
/// - The transform hook runs in the reflector, before objects become `Arc`s, not in the queue.
pub struct DeltaFifo<K> {
    state: Mutex<FifoState<K>>,
    /// Wakes the consumer when a key is queued or the queue is closed.
    ready: Notify,
    /// The informer's indexer: what is "known" for deletes, tombstones and resyncs.
    known: Indexer<K>,
}

struct FifoState<K> {
    /// Pending deltas per key. Invariant: never holds an empty list.
    items: KeyMap<Deltas<K>>,
    /// Pop order. Invariant: exactly the keys of `items`, each once.
    order: VecDeque<ObjectKey>,
    /// Whether anything (a `replace` or an add/update/delete) was ever queued.
    populated: bool,
    /// Keys of the first `replace` not yet popped. Invariant: `<= order.len()`.
    initial_population: usize,
    /// Set by `close`; `pop` returns `None` from then on.
    closed: bool,
    /// The informer's name, in the queue's trace events (empty for a queue of its own).
    name: String,
}

impl<K> FifoState<K> {
    /// Room kept for queued keys when the queue runs empty; more is given back.
    const IDLE_CAPACITY: usize = 64;

    /// Gives back the room a burst left behind once the queue is empty. A first list queues every
    /// object at once, and maps and deques never shrink on their own: without this, an informer
    /// of 60,000 objects keeps some 6 MiB of empty queue for its whole life (Go's maps never
    /// shrink either, so client-go's queue does keep it).
    fn release_idle_capacity(&mut self) {
        if self.order.is_empty() && self.items.capacity() > Self::IDLE_CAPACITY {
            self.items = KeyMap::default();
            self.order = VecDeque::new();
        }
    }
}

impl<K: Resource> DeltaFifo<K> {
    /// An empty queue whose "known objects" are those in `known` (the informer's indexer).
    pub fn new(known: Indexer<K>) -> Self {
        let state = FifoState {
            items: KeyMap::default(),
            order: VecDeque::new(),
            populated: false,
            initial_population: 0,
            closed: false,
            name: String::new(),
        };
        Self {
            state: Mutex::new(state),
            ready: Notify::new(),
            known,
        }
    }

    /// The same queue, naming `informer` in its trace events (so a reader of the trace can tell
    /// several informers' pipelines apart).
    pub(crate) fn named(mut self, informer: &str) -> Self {
        self.state.get_mut().name = informer.to_owned();
        self
    }

    /// Queues `Added(obj)`.
    pub fn add(&self, obj: Arc<K>) {
        self.queue_one(Delta::Added(obj));
    }

    /// Queues `Updated(obj)`.
    pub fn update(&self, obj: Arc<K>) {
        self.queue_one(Delta::Updated(obj));
    }

    /// Queues `Deleted(Known(obj))`, unless the key is neither queued nor in the indexer.
    pub fn delete(&self, obj: Arc<K>) {
        let key = ObjectKey::of(obj.as_ref());
        let mut state = self.state.lock();
        if !state.items.contains_key(&key) && !self.known.contains_key(key.as_str()) {
            return; // we never told anyone about it: nothing to retract
        }
        state.populated = true;
        state.queue(key, Delta::Deleted(DeletedObject::Known(obj)));
        drop(state);
        self.ready.notify_one();
    }

    fn queue_one(&self, delta: Delta<K>) {
        let key = ObjectKey::of(delta.object().as_ref());
        let mut state = self.state.lock();
        state.populated = true;
        state.queue(key, delta);
        drop(state);
        self.ready.notify_one();
    }

    /// Makes the queue reflect a full list: `Replaced` for each listed object, a tombstone for
    /// every queued or known key that is missing from the list. The first call fixes the
    /// initial population that [`has_synced`](Self::has_synced) waits for.
    ///
    /// `list` is consumed: its `Arc`s move into the queue, nothing is copied.
    pub fn replace(&self, list: Vec<Arc<K>>) {
        let mut state = self.state.lock();
        let mut listed = KeySet::with_capacity_and_hasher(list.len(), KeyHasher::default());
        for obj in list {
            let key = ObjectKey::of(obj.as_ref());
            listed.insert(key.clone());
            state.queue(key, Delta::Replaced(obj));
        }
        // Queued keys that vanished: the newest queued state is the best last-known state. Every
        // listed key is queued now, so when there are no more queued keys than listed ones (a
        // first list), none vanished.
        let queued_missing: Vec<(ObjectKey, Arc<K>)> = if state.items.len() == listed.len() {
            Vec::new()
        } else {
            state
                .items
                .iter()
                .filter(|(key, _)| !listed.contains(*key))
                .filter_map(|(key, deltas)| {
                    Some((key.clone(), Arc::clone(deltas.last()?.object())))
                })
                .collect()
        };
        for (key, last_known) in queued_missing {
            state.queue(
                key.clone(),
                Delta::Deleted(DeletedObject::Tombstone { key, last_known }),
            );
        }
        // Known keys that vanished and have nothing queued: the cached state is the last known.
        let known_missing = self
            .known
            .entries_where(|key, _| !listed.contains(key) && !state.items.contains_key(key));
        let known_missing = self.known.keyed_objects(known_missing);
        for (key, last_known) in known_missing {
            state.queue(
                key.clone(),
                Delta::Deleted(DeletedObject::Tombstone { key, last_known }),
            );
        }
        if !state.populated {
            state.populated = true;
            state.initial_population = state.order.len();
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Queues `Sync(cached object)` for every key in the indexer that has nothing queued.
    ///
    /// A resync replays the local cache so that handlers get a periodic chance to re-check the
    /// world (e.g. an external system a controller mirrors). It is not a relist: nothing is
    /// fetched from the API server.
    pub fn resync(&self) {
        let mut state = self.state.lock();
        let to_sync = self
            .known
            .entries_where(|key, _| !state.items.contains_key(key));
        let to_sync = self.known.keyed_objects(to_sync);
        let any = !to_sync.is_empty();
        for (key, obj) in to_sync {
            state.queue(key, Delta::Sync(obj));
        }
        drop(state);
        if any {
            self.ready.notify_one();
        }
    }
}

impl<K> DeltaFifo<K> {
    /// Waits for the oldest key, removes it and runs `process(key, deltas, is_in_initial_list)`
    /// under the queue lock. Returns `None` once the queue is closed.
    ///
    /// `is_in_initial_list` is true while the keys of the first `replace` are being popped.
    pub async fn pop<R>(&self, process: impl FnOnce(ObjectKey, Deltas<K>, bool) -> R) -> Option<R> {
        loop {
            let ready = self.ready.notified();
            {
                let mut state = self.state.lock();
                if state.closed {
                    return None;
                }
                if let Some(key) = state.order.pop_front() {
                    let deltas = state.items.remove(&key).unwrap_or_default();
                    let in_initial_list = state.initial_population > 0;
                    state.initial_population = state.initial_population.saturating_sub(1);
                    state.release_idle_capacity();
                    return Some(process(key, deltas, in_initial_list));
                }
            }
            ready.await;
        }
    }

    /// Whether the first `replace` (or any earlier add/update/delete) was queued and every key
    /// it queued has been popped.
    pub fn has_synced(&self) -> bool {
        let state = self.state.lock();
        state.populated && state.initial_population == 0
    }

    /// Closes the queue: a blocked `pop` returns `None`, and so will every later one.
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_waiters();
        self.ready.notify_one();
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Number of queued keys.
    pub fn len(&self) -> usize {
        self.state.lock().order.len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        let state = self.state.lock();
        assert_eq!(
            state.items.len(),
            state.order.len(),
            "order and items disagree"
        );
        for key in &state.order {
            assert!(
                state.items.get(key).is_some_and(|d| !d.is_empty()),
                "{key} queued without deltas"
            );
        }
        assert!(state.initial_population <= state.order.len());
    }
}

impl<K> FifoState<K> {
    /// Appends `delta` to `key`'s deltas, queueing the key if new; collapses a trailing pair of
    /// deletes.
    fn queue(&mut self, key: ObjectKey, delta: Delta<K>) {
        // The DeltaFIFO step of one object's trip (docs/informer-internals.md, step 3); the
        // network-controller example prints it.
        trace!(informer = %self.name, %key, delta = delta.type_name(), "delta queued");
        match self.items.entry(key) {
            Entry::Occupied(mut entry) => {
                let deltas = entry.get_mut();
                deltas.push(delta);
                dedup_trailing_delete(deltas);
            }
            Entry::Vacant(entry) => {
                self.order.push_back(entry.key().clone());
                entry.insert(vec![delta]);
            }
        }
    }
}

/// If the last two deltas are both deletes, keeps one: the older, unless the older is a
/// tombstone (a relist's guess), then the newer (client-go's `isDeletionDup`).
fn dedup_trailing_delete<K>(deltas: &mut Deltas<K>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    if let (Delta::Deleted(older), Delta::Deleted(_)) = (&deltas[n - 2], &deltas[n - 1]) {
        if older.is_tombstone() {
            deltas.remove(n - 2);
        } else {
            deltas.pop();
        }
    }
}

#[cfg(test)]
#[path = "delta_fifo_tests.rs"]
mod tests;
