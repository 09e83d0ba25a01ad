//! A queue that can add a key later: the basis of retries with backoff and of periodic requeues.
//!
//! Mirrors client-go `util/workqueue/delaying_queue.go`: waiting keys sit in a min-heap ordered by
//! deadline, and one timer task sleeps until the earliest deadline, then adds every due key to the
//! underlying [`Queue`]. One task for any number of keys, instead of one timer per key.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::metrics::MetricsProvider;
use crate::queue::{Key, Queue};

/// Delays further than this are clamped, so a deadline never overflows `Instant`.
const MAX_DELAY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A [`Queue`] plus [`add_after`](DelayingQueue::add_after). Cheap to clone: clones share one queue.
///
/// # Guarantees
/// - A key given to `add_after(key, d)` is added to the queue no earlier than `d` from the call.
/// - A key scheduled twice keeps the earlier deadline; it is added once.
/// - A zero delay adds at once, without touching the timer.
/// - After shutdown, scheduled keys are discarded and the timer task ends. The task also ends when
///   the last handle is dropped.
///
/// # Panics
/// [`new`](DelayingQueue::new) spawns the timer task, so it must be called within a Tokio runtime.
pub struct DelayingQueue<K> {
    timer: Arc<Timer<K>>,
}

impl<K> std::fmt::Debug for DelayingQueue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheduled = self.timer.heap.lock().waiting.len();
        f.debug_struct("DelayingQueue")
            .field("queue", &self.timer.queue)
            .field("scheduled", &scheduled)
            .finish()
    }
}

impl<K> Clone for DelayingQueue<K> {
    fn clone(&self) -> Self {
        DelayingQueue {
            timer: Arc::clone(&self.timer),
        }
    }
}

/// State shared by the handles and (weakly) by the timer task.
struct Timer<K> {
    queue: Queue<K>,
    heap: Mutex<Schedule<K>>,
    /// Wakes the timer task: a new earliest deadline, shutdown, or the last handle dropped.
    wake: Arc<Notify>,
}

impl<K> Drop for Timer<K> {
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

/// The keys waiting for their deadline.
struct Schedule<K> {
    /// Min-heap of deadlines. May hold stale entries (superseded by an earlier deadline for the
    /// same key); an entry is live iff `waiting[key].seq == entry.seq`.
    heap: BinaryHeap<Entry<K>>,
    /// The live deadline of each scheduled key.
    /// Invariant: every key here has exactly one live entry in `heap`.
    waiting: HashMap<K, (Instant, u64)>,
    /// Sequence number of the next entry: makes entries unique and equal deadlines FIFO.
    next_seq: u64,
}

struct Entry<K> {
    ready_at: Instant,
    seq: u64,
    key: K,
}

impl<K> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}
impl<K> Eq for Entry<K> {}
impl<K> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K> Ord for Entry<K> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest deadline first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.ready_at, other.seq).cmp(&(self.ready_at, self.seq))
    }
}

impl<K: Key> DelayingQueue<K> {
    /// Creates an empty queue whose metrics are labelled `name`, and spawns its timer task.
    ///
    /// # Panics
    /// Outside a Tokio runtime (the timer task needs one).
    pub fn new(name: &str, metrics: Arc<dyn MetricsProvider>) -> Self {
        let timer = Arc::new(Timer {
            queue: Queue::new(name, metrics),
            heap: Mutex::new(Schedule {
                heap: BinaryHeap::new(),
                waiting: HashMap::new(),
                next_seq: 0,
            }),
            wake: Arc::new(Notify::new()),
        });
        tokio::spawn(run_timer(Arc::downgrade(&timer), Arc::clone(&timer.wake)));
        DelayingQueue { timer }
    }

    /// Adds `key` once `delay` has passed (at once for a zero delay). If the key is already
    /// scheduled, the earlier of the two deadlines wins. No-op after shutdown.
    ///
    /// Counts one retry in the queue's metrics, as client-go does for every delayed add.
    pub fn add_after(&self, key: K, delay: Duration) {
        let queue = &self.timer.queue;
        if queue.is_shutting_down() {
            return;
        }
        queue.record_retry();
        if delay.is_zero() {
            queue.add(key);
            return;
        }
        let ready_at = Instant::now() + delay.min(MAX_DELAY);
        let mut schedule = self.timer.heap.lock();
        // Checked again under the schedule lock: shutdown sets the flag before it clears the
        // schedule, so no key can slip in after the clearing.
        if queue.is_shutting_down() {
            return;
        }
        if let Some((existing, _)) = schedule.waiting.get(&key)
            && *existing <= ready_at
        {
            return;
        }
        let seq = schedule.next_seq;
        schedule.next_seq += 1;
        schedule.waiting.insert(key.clone(), (ready_at, seq));
        schedule.heap.push(Entry { ready_at, seq, key });
        let is_earliest = schedule.heap.peek().is_some_and(|top| top.seq == seq);
        drop(schedule);
        if is_earliest {
            self.timer.wake.notify_one();
        }
    }

    /// See [`Queue::add`].
    pub fn add(&self, key: K) {
        self.timer.queue.add(key);
    }

    /// See [`Queue::get`].
    pub async fn get(&self) -> Option<K> {
        self.timer.queue.get().await
    }

    /// See [`Queue::done`].
    pub fn done(&self, key: &K) {
        self.timer.queue.done(key);
    }

    /// See [`Queue::len`]. Keys waiting for their deadline are not counted.
    pub fn len(&self) -> usize {
        self.timer.queue.len()
    }

    /// See [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.timer.queue.is_empty()
    }

    /// See [`Queue::shut_down`]. Also discards every scheduled key and stops the timer task.
    pub fn shut_down(&self) {
        self.timer.queue.shut_down();
        self.discard_schedule();
    }

    /// See [`Queue::shut_down_with_drain`]. Scheduled keys are discarded like waiting ones. A
    /// [`shut_down`](DelayingQueue::shut_down) while this waits ends the wait at once.
    pub async fn shut_down_with_drain(&self, timeout: Duration) -> bool {
        // Not `self.shut_down()`: that would end a drain another caller is waiting on.
        self.timer.queue.start_drain();
        self.discard_schedule();
        self.timer.queue.wait_drained(timeout).await
    }

    /// See [`Queue::is_shutting_down`].
    pub fn is_shutting_down(&self) -> bool {
        self.timer.queue.is_shutting_down()
    }

    /// Whether `key` waits for a deadline.
    pub(crate) fn is_scheduled(&self, key: &K) -> bool {
        self.timer.heap.lock().waiting.contains_key(key)
    }

    /// The queue the timer feeds.
    pub(crate) fn queue(&self) -> &Queue<K> {
        &self.timer.queue
    }

    fn discard_schedule(&self) {
        let mut schedule = self.timer.heap.lock();
        schedule.heap.clear();
        schedule.waiting.clear();
        drop(schedule);
        self.timer.wake.notify_one();
    }

    /// Panics if a documented invariant of the schedule or the queue does not hold.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.timer.queue.check_invariants();
        let schedule = self.timer.heap.lock();
        for (key, (ready_at, seq)) in &schedule.waiting {
            let live = schedule
                .heap
                .iter()
                .filter(|e| e.seq == *seq && &e.key == key);
            let live: Vec<_> = live.collect();
            assert_eq!(
                live.len(),
                1,
                "a scheduled key has no single live heap entry"
            );
            assert_eq!(live[0].ready_at, *ready_at);
        }
    }
}

impl<K: Key> Timer<K> {
    /// Adds every key whose deadline is `now` or earlier; returns the next deadline, if any.
    fn fire_due(&self, now: Instant) -> Option<Instant> {
        let mut schedule = self.heap.lock();
        while let Some(top) = schedule.heap.peek() {
            if top.ready_at > now {
                return Some(top.ready_at);
            }
            let Some(entry) = schedule.heap.pop() else {
                break;
            };
            if schedule
                .waiting
                .get(&entry.key)
                .is_some_and(|(_, seq)| *seq == entry.seq)
            {
                schedule.waiting.remove(&entry.key);
                // Added under the schedule lock, so no observer sees the key in neither place.
                self.queue.add(entry.key);
            }
        }
        None
    }
}

/// The timer task: sleeps until the earliest deadline or a wake-up, then fires due keys.
///
/// Holds the shared state only weakly, and only while firing, so dropping every handle ends it.
async fn run_timer<K: Key>(timer: Weak<Timer<K>>, wake: Arc<Notify>) {
    loop {
        let mut woken = pin!(wake.notified());
        woken.as_mut().enable();
        let next = {
            let Some(timer) = timer.upgrade() else { return };
            if timer.queue.is_shutting_down() {
                return;
            }
            timer.fire_due(Instant::now())
        };
        match next {
            Some(deadline) => {
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = woken => {}
                }
            }
            None => woken.await,
        }
    }
}

#[cfg(test)]
#[path = "delaying_tests.rs"]
mod tests;
