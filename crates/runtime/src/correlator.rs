//! client-go's `EventCorrelator` (`tools/record/events_cache.go`): what happens to an Event
//! between "the controller recorded it" and "the API server stores it". Pure and synchronous,
//! with time passed in, so every rule is tested without a clock.
//!
//! Three steps, in client-go's order:
//! 1. **Aggregation.** Events that differ only in their message are *similar*: same source,
//!    involved object, type and reason. Each similar group remembers the distinct messages seen
//!    within [`AGGREGATE_INTERVAL`] of its last Event; from the [`AGGREGATE_MAX_EVENTS`]th distinct
//!    message on, the Event becomes one shared Event whose message is
//!    `(combined from similar events): <latest message>`, so a flood of slightly different
//!    messages becomes one object with a growing count.
//! 2. **Deduplication.** An Event identical to one already written (same key: every field for a
//!    plain Event, the similar-group for a combined one) is not created again: the existing
//!    object is patched with `count + 1`, the new `lastTimestamp` and message.
//! 3. **Spam filter.** Per source + involved object, a token bucket of [`SPAM_BURST`] tokens
//!    refilled one per [`SPAM_REFILL`]; an Event finding the bucket empty is dropped.
//!
//! # Differences from client-go
//! - client-go's caches are LRUs of 4096 entries; here each map is cut back to [`MAX_ENTRIES`]
//!   by dropping the entries seen longest ago, which is the same bound with a simpler structure.
//! - client-go records the written Event's state only after the API call succeeds; here the
//!   state is updated when the Event is correlated. A failed write then makes the next similar
//!   Event a patch of an object that does not exist; the recorder falls back to creating it.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Distinct messages of similar Events within the interval before they are combined.
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// How long a group of similar Events is remembered after its last Event.
pub const AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);
/// Tokens of each source + object bucket.
pub const SPAM_BURST: u32 = 25;
/// One token comes back per this much time.
pub const SPAM_REFILL: Duration = Duration::from_secs(300);
/// Entries kept per cache.
pub const MAX_ENTRIES: usize = 4096;
/// Prefix of a combined Event's message.
pub const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// What to write for one recorded Event.
#[derive(Clone, Debug, PartialEq)]
pub enum Correlated {
    /// A new Event object.
    Create(Event),
    /// An existing Event object, `name` in `namespace`, seen again.
    Patch {
        /// The existing object's namespace.
        namespace: String,
        /// The existing object's name.
        name: String,
        /// The full Event as it should now read (count, lastTimestamp, message).
        event: Event,
    },
    /// Dropped by the spam filter.
    Dropped,
}

/// A similar-group: the distinct messages seen and when the last one came.
struct Group {
    messages: BTreeSet<String>,
    last: Timestamp,
}

/// A token bucket.
struct Bucket {
    tokens: f64,
    last: Timestamp,
}

/// Remembers recent Events to aggregate, deduplicate and rate limit new ones.
#[derive(Default)]
pub struct Correlator {
    groups: HashMap<String, Group>,
    written: HashMap<String, (Event, Timestamp)>,
    buckets: HashMap<String, Bucket>,
}

impl std::fmt::Debug for Correlator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Correlator")
            .field("groups", &self.groups.len())
            .field("written", &self.written.len())
            .finish_non_exhaustive()
    }
}

fn source_and_object(event: &Event) -> String {
    let source = event.source.clone().unwrap_or_default();
    let object = &event.involved_object;
    [
        source.component.unwrap_or_default(),
        source.host.unwrap_or_default(),
        object.kind.clone().unwrap_or_default(),
        object.namespace.clone().unwrap_or_default(),
        object.name.clone().unwrap_or_default(),
        object.uid.clone().unwrap_or_default(),
        object.api_version.clone().unwrap_or_default(),
    ]
    .join("\u{0}")
}

fn similar_key(event: &Event) -> String {
    [
        source_and_object(event),
        event.type_.clone().unwrap_or_default(),
        event.reason.clone().unwrap_or_default(),
    ]
    .join("\u{0}")
}

fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Correlator {
    /// Correlates `event` (fresh from the builder: count 1, first = last timestamp) at `now`.
    pub fn correlate(&mut self, event: Event, now: Timestamp) -> Correlated {
        let spam_key = source_and_object(&event);
        let (event, key) = self.aggregate(event, now);
        let observed = self.observe(event, &key, now);
        if !self.allow(&spam_key, now) {
            return Correlated::Dropped;
        }
        observed
    }

    /// Step 1: the Event to write and its dedup key.
    fn aggregate(&mut self, event: Event, now: Timestamp) -> (Event, String) {
        let similar = similar_key(&event);
        let message = event.message.clone().unwrap_or_default();
        let full_key = format!("{similar}\u{0}{message}");
        let group = self.groups.entry(similar.clone()).or_insert(Group {
            messages: BTreeSet::new(),
            last: now,
        });
        if seconds(now.duration_since(group.last).unsigned_abs()) > seconds(AGGREGATE_INTERVAL) {
            group.messages.clear();
        }
        group.last = now;
        group.messages.insert(message.clone());
        if group.messages.len() < AGGREGATE_MAX_EVENTS {
            trim(&mut self.groups, |g| g.last);
            return (event, full_key);
        }
        // Keep the set bounded at the threshold: the group stays combined while it is active.
        group.messages.remove(&message);
        trim(&mut self.groups, |g| g.last);
        let combined = Event {
            message: Some(format!("{COMBINED_PREFIX}{message}")),
            ..event
        };
        (combined, similar)
    }

    /// Step 2: create, or patch the Event written before under `key`.
    fn observe(&mut self, event: Event, key: &str, now: Timestamp) -> Correlated {
        let previous = self.written.get(key).map(|(previous, _)| previous);
        let event = match previous {
            Some(previous) => Event {
                count: Some(previous.count.unwrap_or(1) + 1),
                first_timestamp: previous.first_timestamp.clone(),
                metadata: previous.metadata.clone(),
                last_timestamp: Some(Time(now)),
                ..event
            },
            None => event,
        };
        let patch = previous.is_some();
        self.written.insert(key.to_owned(), (event.clone(), now));
        trim(&mut self.written, |(_, seen)| *seen);
        if patch {
            Correlated::Patch {
                namespace: event.metadata.namespace.clone().unwrap_or_default(),
                name: event.metadata.name.clone().unwrap_or_default(),
                event,
            }
        } else {
            Correlated::Create(event)
        }
    }

    /// Step 3: takes a token of the source + object bucket `key`, if there is one.
    fn allow(&mut self, key: &str, now: Timestamp) -> bool {
        let bucket = self.buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: f64::from(SPAM_BURST),
            last: now,
        });
        let elapsed = seconds(now.duration_since(bucket.last).unsigned_abs());
        bucket.tokens = (bucket.tokens + elapsed / seconds(SPAM_REFILL)).min(f64::from(SPAM_BURST));
        bucket.last = now;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        trim(&mut self.buckets, |b| b.last);
        allowed
    }
}

/// Drops the entries seen longest ago until `map` holds at most [`MAX_ENTRIES`].
fn trim<V>(map: &mut HashMap<String, V>, seen: impl Fn(&V) -> Timestamp) {
    while map.len() > MAX_ENTRIES {
        let oldest = map
            .iter()
            .min_by_key(|(_, v)| seen(v))
            .map(|(k, _)| k.clone());
        match oldest {
            Some(key) => map.remove(&key),
            None => return,
        };
    }
}

#[cfg(test)]
#[path = "correlator_tests.rs"]
mod tests;
