//! Zones and the pace of `NoExecute` tainting in each: a Node's zone key
//! (`component-helpers/node/topology.GetZoneKey`), a zone's state from its Nodes' Ready
//! conditions (`ComputeZoneState`), the eviction rate each state allows (`setLimiterInZone`,
//! `ReducedQPSFunc`), and the per-zone queue of Nodes waiting for their taint, drained no faster
//! than that rate (`pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go`, a token bucket
//! of burst 1 as `flowcontrol.NewTokenBucketRateLimiter`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Node;

/// The state of a zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZoneState {
    /// Just seen.
    Initial,
    /// Few Nodes are not Ready.
    Normal,
    /// More than 2 Nodes and at least the unhealthy threshold's share are not Ready.
    PartialDisruption,
    /// No Node is Ready.
    FullDisruption,
}

/// The zone key of a Node: `region:\0:zone` from the topology labels (the deprecated
/// `failure-domain.beta` ones first), empty when it has neither.
pub(crate) fn zone_key(node: &Node) -> String {
    let Some(labels) = node.metadata.labels.as_ref() else {
        return String::new();
    };
    let pick = |beta: &str, ga: &str| {
        labels
            .get(beta)
            .or_else(|| labels.get(ga))
            .cloned()
            .unwrap_or_default()
    };
    let zone = pick(
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    );
    let region = pick(
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/region",
    );
    if region.is_empty() && zone.is_empty() {
        return String::new();
    }
    format!("{region}:\0:{zone}")
}

/// The state of a zone whose Nodes' Ready statuses are `ready` (`None`: no Ready condition),
/// and how many are not Ready.
pub(crate) fn zone_state(ready: &[Option<bool>], unhealthy_threshold: f32) -> (usize, ZoneState) {
    let ready_nodes = ready.iter().filter(|r| **r == Some(true)).count();
    let not_ready = ready.len() - ready_nodes;
    let state = if ready_nodes == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && not_ready as f32 / ready.len() as f32 >= unhealthy_threshold {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    };
    (not_ready, state)
}

/// The eviction rate of a zone of `size` Nodes entering `state` (`setLimiterInZone`): the
/// normal rate, or in a partial disruption the secondary rate in a large zone and none in a
/// small one. Full disruption of one zone keeps its normal rate (all zones fully disrupted
/// stop tainting everywhere, which the controller decides).
pub(crate) fn zone_rate(
    state: ZoneState,
    size: usize,
    rates: (f32, f32),
    large_cluster_size_threshold: usize,
) -> f32 {
    let (normal, secondary) = rates;
    match state {
        ZoneState::PartialDisruption if size > large_cluster_size_threshold => secondary,
        ZoneState::PartialDisruption => 0.0,
        ZoneState::Initial | ZoneState::Normal | ZoneState::FullDisruption => normal,
    }
}

/// A token bucket of burst 1 (`TryAccept`); a rate of 0 or less accepts nothing.
#[derive(Debug)]
struct Bucket {
    rate: f32,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: f32, now: Instant) -> Bucket {
        Bucket {
            rate,
            tokens: 1.0,
            last: now,
        }
    }

    fn try_accept(&mut self, now: Instant) -> bool {
        if self.rate <= 0.0 {
            return false;
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * f64::from(self.rate)).min(1.0);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// One Node waiting in a zone's queue.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Waiting {
    pub(crate) name: String,
    pub(crate) uid: String,
    process_at: Instant,
}

/// A zone's queue of Nodes to taint, each at most once (`RateLimitedTimedQueue`).
#[derive(Debug)]
pub(crate) struct RateLimitedQueue {
    queue: VecDeque<Waiting>,
    bucket: Bucket,
}

impl RateLimitedQueue {
    /// An empty queue draining at `rate` Nodes a second.
    pub(crate) fn new(rate: f32, now: Instant) -> RateLimitedQueue {
        RateLimitedQueue {
            queue: VecDeque::new(),
            bucket: Bucket::new(rate, now),
        }
    }

    /// Adds a Node unless it waits already; whether it was added.
    pub(crate) fn add(&mut self, name: &str, uid: &str, now: Instant) -> bool {
        if self.queue.iter().any(|w| w.name == name) {
            return false;
        }
        self.queue.push_back(Waiting {
            name: name.into(),
            uid: uid.into(),
            process_at: now,
        });
        true
    }

    /// Takes a Node out; whether it was waiting.
    pub(crate) fn remove(&mut self, name: &str) -> bool {
        let before = self.queue.len();
        self.queue.retain(|w| w.name != name);
        self.queue.len() != before
    }

    /// Changes the rate (`SwapLimiter`); a new bucket starts full, as client-go's.
    pub(crate) fn set_rate(&mut self, rate: f32, now: Instant) {
        if self.bucket.rate != rate {
            self.bucket = Bucket::new(rate, now);
        }
    }

    /// The Nodes due now, in order, as long as the rate allows (`Try` takes them one by one;
    /// the caller hands back with [`retry`](Self::retry) those whose taint failed).
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<Waiting> {
        let mut due = Vec::new();
        while let Some(front) = self.queue.front() {
            if front.process_at > now || !self.bucket.try_accept(now) {
                break;
            }
            due.extend(self.queue.pop_front());
        }
        due
    }

    /// Puts back a Node whose taint failed, to be tried after `wait`.
    pub(crate) fn retry(&mut self, mut waiting: Waiting, wait: Duration, now: Instant) {
        if self.queue.iter().any(|w| w.name == waiting.name) {
            return;
        }
        waiting.process_at = now + wait;
        let at = self
            .queue
            .iter()
            .position(|w| w.process_at > waiting.process_at)
            .unwrap_or(self.queue.len());
        self.queue.insert(at, waiting);
    }
}

#[cfg(test)]
#[path = "zones_tests.rs"]
mod tests;
