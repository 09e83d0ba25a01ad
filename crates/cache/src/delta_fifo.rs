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
    delta::{Deltas, Queued},
    indexer::Indexer,
    key::{KeyHasher, KeyMap, KeySet, ObjectKey},
    stored::{Arrived, Stored},
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
/// - Over a byte-backed indexer the queue holds bytes, not objects: each object is encoded
///   (with what the store reads without decoding it) as it is queued, and decoded again when
///   its key is popped. A first list of 60,000 objects then waits in the queue as bytes.
///   Tombstones and resyncs queue the cached entry as it is. [`pop`](Self::pop) leaves out (and
///   logs) an entry that does not decode.
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
    items: KeyMap<Vec<Queued<K>>>,
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

    /// Gives back the room a burst left behind as the queue drains. A first list queues every
    /// object at once, and maps and deques never shrink on their own (Go's neither, so
    /// client-go's queue keeps it): without this, an informer of 60,000 objects would keep some
    /// 6 MiB of empty queue for its whole life, and, worse, the full-sized queue would sit
    /// beside the full-sized indexer at the end of the first list, the cache's peak. So once
    /// the queue holds less than a quarter of its room it is shrunk to twice its length (each
    /// shrink moves the remaining keys; shrinking by half or more keeps the total work
    /// linear), and once empty it gives everything back.
    fn release_idle_capacity(&mut self) {
        let len = self.order.len();
        let idle = |capacity: usize| capacity > Self::IDLE_CAPACITY.max(4 * len);
        if len == 0 && idle(self.items.capacity()) {
            self.items = KeyMap::default();
            self.order = VecDeque::new();
            return;
        }
        if idle(self.items.capacity()) {
            self.items.shrink_to(2 * len);
        }
        if idle(self.order.capacity()) {
            self.order.shrink_to(2 * len);
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
        self.added(Arrived::Object(obj, None));
    }

    /// Queues `Updated(obj)`.
    pub fn update(&self, obj: Arc<K>) {
        self.updated(Arrived::Object(obj, None));
    }

    /// Queues `Deleted(Known(obj))`, unless the key is neither queued nor in the indexer.
    pub fn delete(&self, obj: Arc<K>) {
        self.deleted(Arrived::Object(obj, None));
    }

    /// [`add`](Self::add) of an object as it arrived (see [`entry`](Self::entry)).
    pub(crate) fn added(&self, arrived: Arrived<K>) {
        self.queue_one(arrived, Queued::Added);
    }

    /// [`update`](Self::update) of an object as it arrived.
    pub(crate) fn updated(&self, arrived: Arrived<K>) {
        self.queue_one(arrived, Queued::Updated);
    }

    /// [`delete`](Self::delete) of an object as it arrived.
    pub(crate) fn deleted(&self, arrived: Arrived<K>) {
        let key = arrived.key();
        let mut state = self.state.lock();
        if !state.items.contains_key(&key) && !self.known.contains_key(key.as_str()) {
            return; // we never told anyone about it: nothing to retract
        }
        let Some(last) = self.known.arriving(&key, arrived) else {
            return;
        };
        state.populated = true;
        state.queue(
            key,
            Queued::Deleted {
                last,
                tombstone: false,
            },
        );
        drop(state);
        self.ready.notify_one();
    }

    /// An arriving object as this queue holds it, with its key: see the type's guarantees; in
    /// a byte-backed queue its bytes (encoded when it arrived decoded without them). The
    /// reflector turns each listed object into this as it arrives and collects these for
    /// [`replace_entries`](Self::replace_entries). `None` (logged by the indexer) for an object
    /// that cannot be kept.
    pub(crate) fn entry(&self, arrived: Arrived<K>) -> Option<(ObjectKey, Stored<K>)> {
        let key = arrived.key();
        let entry = self.known.arriving(&key, arrived)?;
        Some((key, entry))
    }

    /// Whether this queue keeps bytes: the reflector then asks its list-watch for them.
    pub(crate) fn keeps_bytes(&self) -> bool {
        self.known.keeps_bytes()
    }

    /// Whether an arriving object must be decoded to be queued: the indexer has custom indexes,
    /// whose functions read the typed object.
    pub(crate) fn files_decoded(&self) -> bool {
        self.known.has_user_indexers()
    }

    fn queue_one(&self, arrived: Arrived<K>, delta: fn(Stored<K>) -> Queued<K>) {
        let Some((key, entry)) = self.entry(arrived) else {
            return;
        };
        let mut state = self.state.lock();
        state.populated = true;
        state.queue(key, delta(entry));
        drop(state);
        self.ready.notify_one();
    }

    /// Makes the queue reflect a full list: `Replaced` for each listed object, a tombstone for
    /// every queued or known key that is missing from the list. The first call fixes the
    /// initial population that [`has_synced`](Self::has_synced) waits for.
    pub fn replace(&self, list: Vec<Arc<K>>) {
        let entries = list
            .into_iter()
            .filter_map(|obj| self.entry(Arrived::Object(obj, None)))
            .collect();
        self.replace_entries(entries);
    }

    /// [`replace`](Self::replace) with objects already made [`entry`](Self::entry)s; `list` is
    /// consumed: its entries move into the queue, nothing is copied.
    pub(crate) fn replace_entries(&self, list: Vec<(ObjectKey, Stored<K>)>) {
        let mut state = self.state.lock();
        let mut listed = KeySet::with_capacity_and_hasher(list.len(), KeyHasher::default());
        for (key, entry) in list {
            listed.insert(key.clone());
            state.queue(key, Queued::Replaced(entry));
        }
        // Queued keys that vanished: the newest queued state is the best last-known state. Every
        // listed key is queued now, so when there are no more queued keys than listed ones (a
        // first list), none vanished.
        let queued_missing: Vec<(ObjectKey, Stored<K>)> = if state.items.len() == listed.len() {
            Vec::new()
        } else {
            state
                .items
                .iter()
                .filter(|(key, _)| !listed.contains(*key))
                .filter_map(|(key, deltas)| Some((key.clone(), deltas.last()?.entry().clone())))
                .collect()
        };
        // Known keys that vanished and have nothing queued: the cached state is the last known.
        let known_missing = self
            .known
            .entries_where(|key, _| !listed.contains(key) && !state.items.contains_key(key));
        for (key, last) in queued_missing.into_iter().chain(known_missing) {
            state.queue(
                key,
                Queued::Deleted {
                    last,
                    tombstone: true,
                },
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
        let any = !to_sync.is_empty();
        for (key, entry) in to_sync {
            state.queue(key, Queued::Sync(entry));
        }
        drop(state);
        if any {
            self.ready.notify_one();
        }
    }

    /// Waits for the oldest key, removes it and runs `process(key, deltas, is_in_initial_list)`
    /// under the queue lock. Returns `None` once the queue is closed.
    ///
    /// `is_in_initial_list` is true while the keys of the first `replace` are being popped. A
    /// byte-backed queue decodes each delta's object; one that does not decode is logged and
    /// left out (`deltas` may then be empty).
    pub async fn pop<R>(&self, process: impl FnOnce(ObjectKey, Deltas<K>, bool) -> R) -> Option<R> {
        self.pop_entries(|key, queued, initial| {
            let deltas = queued
                .into_iter()
                .filter_map(|delta| match self.known.decode(&key, delta.entry()) {
                    Ok(obj) => Some(delta.into_delta(key.clone(), obj)),
                    Err(err) => {
                        tracing::error!(error = %err, "queued object left out of a pop");
                        None
                    }
                })
                .collect();
            process(key, deltas, initial)
        })
        .await
    }
}

impl<K> DeltaFifo<K> {
    /// [`pop`](Self::pop) of the deltas as queued, not decoded: the informer stores their
    /// entries as they are and decodes only what its handlers receive.
    pub(crate) async fn pop_entries<R>(
        &self,
        process: impl FnOnce(ObjectKey, Vec<Queued<K>>, bool) -> R,
    ) -> Option<R> {
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
    fn queue(&mut self, key: ObjectKey, delta: Queued<K>) {
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
fn dedup_trailing_delete<K>(deltas: &mut Vec<Queued<K>>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    if let (older @ Queued::Deleted { .. }, Queued::Deleted { .. }) =
        (&deltas[n - 2], &deltas[n - 1])
    {
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
