//! Per-key failure counts, the memory of the per-key limiters ([`ItemExponentialBackoff`] and
//! [`ItemFastSlow`]), written once. client-go keeps the same map in each of its limiters.
//!
//! [`ItemExponentialBackoff`]: super::ItemExponentialBackoff
//! [`ItemFastSlow`]: super::ItemFastSlow

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::queue::Key;

/// Failures per key since its last [`forget`](Self::forget).
#[derive(Debug)]
pub(crate) struct Failures<K> {
    /// Invariant: no entry is 0.
    counts: Mutex<HashMap<K, u32>>,
}

impl<K> Default for Failures<K> {
    fn default() -> Self {
        Failures {
            counts: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Key> Failures<K> {
    /// Counts one more failure of `key` and returns how many it had before (saturating).
    pub(crate) fn record(&self, key: &K) -> u32 {
        let mut counts = self.counts.lock();
        let count = counts.entry(key.clone()).or_insert(0);
        let before = *count;
        *count = count.saturating_add(1);
        before
    }

    /// Forgets every failure of `key`.
    pub(crate) fn forget(&self, key: &K) {
        self.counts.lock().remove(key);
    }

    /// The failures of `key` since its last `forget`.
    pub(crate) fn get(&self, key: &K) -> u32 {
        self.counts.lock().get(key).copied().unwrap_or(0)
    }
}
