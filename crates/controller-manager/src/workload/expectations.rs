//! What a controller is still waiting to see in its informer after its own creates and deletes.
//!
//! Mirrors `ControllerExpectations` and `UIDTrackingControllerExpectations` of
//! `pkg/controller/controller_utils.go`.
//!
//! # Why
//! A ReplicaSet controller that creates 3 Pods and syncs again before the Pod informer has seen
//! them would count 0 Pods and create 3 more. So before creating it records "expect 3 adds"; the
//! Pod informer's add handler lowers the count; the sync manages replicas only once the count is
//! back to zero (or the record is older than five minutes, in case a watch event was lost).
//! Deletions are tracked by Pod key, so a Pod that is deleted twice is counted once.

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use parking_lot::Mutex;
use tokio::time::Instant;

/// After this long an unfulfilled expectation no longer blocks a sync (`ExpectationsTimeout`).
const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[derive(Debug)]
struct Record {
    /// Creates not yet observed. Invariant: may go negative (observed more than expected), as
    /// upstream; only `<= 0` matters.
    add: i64,
    /// Deletions not yet observed.
    del: i64,
    /// When the record was last set.
    timestamp: Instant,
}

/// Pending creates and deletions per controller key.
#[derive(Default)]
pub(crate) struct Expectations {
    records: Mutex<HashMap<String, Record>>,
    /// Keys of the Pods each controller expects to see deleted.
    deleting: Mutex<HashMap<String, HashSet<String>>>,
}

impl Expectations {
    /// Whether the controller `key` may act on what its informer shows
    /// (`SatisfiedExpectations`): nothing recorded, all observed, or the record expired.
    pub(crate) fn satisfied(&self, key: &str) -> bool {
        match self.records.lock().get(key) {
            None => true,
            Some(r) => (r.add <= 0 && r.del <= 0) || r.timestamp.elapsed() > EXPECTATIONS_TIMEOUT,
        }
    }

    /// Expects `adds` creates (`ExpectCreations`), replacing any earlier record.
    pub(crate) fn expect_creations(&self, key: &str, adds: usize) {
        self.set(key, adds, 0);
    }

    /// Expects the deletion of the Pods `pod_keys` (`ExpectDeletions`).
    pub(crate) fn expect_deletions(&self, key: &str, pod_keys: Vec<String>) {
        self.expect(key, 0, pod_keys);
    }

    /// Expects `adds` creates and the deletion of the Pods `pod_keys` at once
    /// (`SetExpectations`), replacing any earlier record.
    pub(crate) fn expect(&self, key: &str, adds: usize, pod_keys: Vec<String>) {
        let count = pod_keys.len();
        self.deleting
            .lock()
            .insert(key.to_owned(), pod_keys.into_iter().collect());
        self.set(key, adds, count);
    }

    /// One create was observed, or will never happen (`CreationObserved`).
    pub(crate) fn creation_observed(&self, key: &str) {
        if let Some(r) = self.records.lock().get_mut(key) {
            r.add -= 1;
        }
    }

    /// The Pod `pod_key` was deleted, or its deletion failed (`DeletionObserved`): counted once.
    pub(crate) fn deletion_observed(&self, key: &str, pod_key: &str) {
        let mut deleting = self.deleting.lock();
        let Some(pods) = deleting.get_mut(key) else {
            return;
        };
        if pods.remove(pod_key)
            && let Some(r) = self.records.lock().get_mut(key)
        {
            r.del -= 1;
        }
    }

    /// Forgets the controller `key` (it was deleted).
    pub(crate) fn delete(&self, key: &str) {
        self.records.lock().remove(key);
        self.deleting.lock().remove(key);
    }

    fn set(&self, key: &str, add: usize, del: usize) {
        let record = Record {
            add: i64::try_from(add).unwrap_or(i64::MAX),
            del: i64::try_from(del).unwrap_or(i64::MAX),
            timestamp: Instant::now(),
        };
        self.records.lock().insert(key.to_owned(), record);
    }
}

#[cfg(test)]
#[path = "expectations_tests.rs"]
mod tests;
