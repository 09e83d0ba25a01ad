//! [`NodeUsage`]: what the Pods placed on each Node ask of it, kept up to date from Pod events
//! instead of summed over every Pod for every scheduling decision. The part of kube-scheduler's
//! cache this scheduler needs (`pkg/scheduler/backend/cache/cache.go`: `AddPod`, `UpdatePod`,
//! `RemovePod`, `AssumePod`): a Pod the scheduler has just bound counts on its Node at once,
//! before the informer shows it bound.
//!
//! The maps hash with FNV rather than SipHash: the scheduler looks up hundreds of Nodes by name
//! for every Pod, and the names are the simulator's own, not input an attacker picks.

use fnv::FnvHashMap;

use crate::fit::Requests;

/// Requests per Node of the Pods placed there.
#[derive(Debug, Default)]
pub(crate) struct NodeUsage {
    /// Each placed Pod (`namespace/name`): its Node and its requests.
    by_pod: FnvHashMap<String, (String, Requests)>,
    /// Per Node. Invariant: the sum of the `by_pod` entries on that Node; no Node with nothing.
    by_node: FnvHashMap<String, Requests>,
}

impl NodeUsage {
    /// Places (or moves, or resizes) the Pod `key` on `node`.
    pub(crate) fn place(&mut self, key: &str, node: &str, requests: Requests) {
        self.remove(key);
        let sum = self.by_node.entry(node.to_string()).or_default();
        *sum = sum.plus(requests);
        self.by_pod
            .insert(key.to_string(), (node.to_string(), requests));
    }

    /// Forgets the Pod `key` (deleted, finished, or never bound after all).
    pub(crate) fn remove(&mut self, key: &str) {
        let Some((node, requests)) = self.by_pod.remove(key) else {
            return;
        };
        if let Some(sum) = self.by_node.get_mut(&node) {
            *sum = sum.minus(requests);
            if *sum == Requests::default() {
                self.by_node.remove(&node);
            }
        }
    }

    /// What the Pods on `node` ask of it.
    pub(crate) fn used(&self, node: &str) -> Requests {
        self.by_node.get(node).copied().unwrap_or_default()
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        let mut sums: FnvHashMap<&str, Requests> = FnvHashMap::default();
        for (node, requests) in self.by_pod.values() {
            let sum = sums.entry(node).or_default();
            *sum = sum.plus(*requests);
        }
        sums.retain(|_, sum| *sum != Requests::default());
        let actual: FnvHashMap<&str, Requests> =
            self.by_node.iter().map(|(n, r)| (n.as_str(), *r)).collect();
        assert_eq!(sums, actual);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(milli: i64) -> Requests {
        Requests {
            cpu: milli,
            memory: 0,
            pods: 1,
        }
    }

    #[test]
    fn placed_pods_add_up_per_node_and_leave_when_removed() {
        let mut usage = NodeUsage::default();
        usage.place("ns/a", "n1", cpu(100));
        usage.check_invariants();
        usage.place("ns/b", "n1", cpu(200));
        usage.check_invariants();
        usage.place("ns/c", "n2", cpu(50));
        usage.check_invariants();
        assert_eq!(
            usage.used("n1"),
            Requests {
                cpu: 300,
                memory: 0,
                pods: 2
            }
        );
        usage.remove("ns/a");
        usage.check_invariants();
        assert_eq!(usage.used("n1"), cpu(200));
        usage.remove("ns/missing");
        usage.check_invariants();
        assert_eq!(usage.used("n3"), Requests::default());
    }

    #[test]
    fn placing_a_pod_again_moves_it_instead_of_counting_it_twice() {
        let mut usage = NodeUsage::default();
        usage.place("ns/a", "n1", cpu(100));
        usage.place("ns/a", "n1", cpu(100));
        usage.check_invariants();
        assert_eq!(usage.used("n1"), cpu(100));
        usage.place("ns/a", "n2", cpu(100));
        usage.check_invariants();
        assert_eq!(usage.used("n1"), Requests::default());
        assert_eq!(usage.used("n2"), cpu(100));
    }
}
