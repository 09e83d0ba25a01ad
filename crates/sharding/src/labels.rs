//! The label protocol, compatible with timebertt/kubernetes-controller-sharding so its tools
//! (`kubectl get -L`, its webhook and dashboards) can read a kubegen ring:
//!
//! - a shard Lease carries `alpha.sharding.timebertt.dev/controllerring=<ring>`;
//! - an object assigned to a shard carries `shard.alpha.sharding.timebertt.dev/<ring>=<shard>`;
//! - an object being moved carries `drain.alpha.sharding.timebertt.dev/<ring>` until its old
//!   shard has let go (removed both labels).
//!
//! kubegen adds two keys of its own on the shard Leases, read only by kubegen replicas:
//! - [`SELECTION_LABEL`]: which protocol the shard runs (`labels` or `shard-selector`, see
//!   [`crate::Selection`]); a Lease without it is a label-protocol shard (timebertt's, or an
//!   older kubegen);
//! - [`ACK_ANNOTATION`]: with `shardSelector`, the ring the shard has acknowledged, its members
//!   joined by commas (see `server_side.rs`).

use std::collections::BTreeMap;

/// The label on shard Leases naming their ring.
pub const RING_LABEL: &str = "alpha.sharding.timebertt.dev/controllerring";

/// The label on a kubegen shard Lease naming how the shard selects its objects.
pub const SELECTION_LABEL: &str = "sharding.kubegen.dev/selection";

/// The annotation on a shard Lease naming the ring its shard has acknowledged (`shardSelector`).
pub const ACK_ANNOTATION: &str = "sharding.kubegen.dev/acknowledged-ring";

/// A ring: the set of replicas of one controller that share its objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ring {
    /// The ring's name (a label value and part of label keys: at most 63 characters).
    pub name: String,
    /// Namespace of the shard Leases.
    pub lease_namespace: String,
}

impl Ring {
    /// The ring `name` with its Leases in `lease_namespace`.
    pub fn new(name: &str, lease_namespace: &str) -> Ring {
        Ring {
            name: name.to_owned(),
            lease_namespace: lease_namespace.to_owned(),
        }
    }

    /// `shard.alpha.sharding.timebertt.dev/<ring>`: which shard an object is assigned to.
    pub fn shard_label(&self) -> String {
        format!("shard.alpha.sharding.timebertt.dev/{}", self.name)
    }

    /// `drain.alpha.sharding.timebertt.dev/<ring>`: the object's shard must let it go.
    pub fn drain_label(&self) -> String {
        format!("drain.alpha.sharding.timebertt.dev/{}", self.name)
    }

    /// The labels of this ring's shard Leases.
    pub fn lease_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(RING_LABEL.to_owned(), self.name.clone())])
    }

    /// Selector of this ring's shard Leases.
    pub fn lease_selector(&self) -> String {
        format!("{RING_LABEL}={}", self.name)
    }

    /// Selector of the objects assigned to `shard`: what its informers list and watch.
    pub fn selector_for(&self, shard: &str) -> String {
        format!("{}={shard}", self.shard_label())
    }

    /// Selector of the objects no shard holds yet.
    pub fn unassigned_selector(&self) -> String {
        format!("!{}", self.shard_label())
    }

    /// A selector no object matches (the shard label both set and unset): what a shard that
    /// owns no arc of the ring lists and watches with `shardSelector`, which cannot say
    /// "nothing" itself.
    pub fn nothing_selector(&self) -> String {
        let label = self.shard_label();
        format!("{label},!{label}")
    }

    /// Selector of the objects held by a shard outside `members` (their shard left the ring).
    pub fn orphaned_selector(&self, members: &[&str]) -> String {
        let label = self.shard_label();
        if members.is_empty() {
            label
        } else {
            format!("{label},{label} notin ({})", members.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_timeberts_protocol() {
        let ring = Ring::new("image-police", "kube-system");
        assert_eq!(
            ring.shard_label(),
            "shard.alpha.sharding.timebertt.dev/image-police"
        );
        assert_eq!(
            ring.drain_label(),
            "drain.alpha.sharding.timebertt.dev/image-police"
        );
        assert_eq!(
            ring.lease_selector(),
            "alpha.sharding.timebertt.dev/controllerring=image-police"
        );
        assert_eq!(
            ring.selector_for("pod-a"),
            "shard.alpha.sharding.timebertt.dev/image-police=pod-a"
        );
        assert_eq!(
            ring.unassigned_selector(),
            "!shard.alpha.sharding.timebertt.dev/image-police"
        );
        assert_eq!(
            ring.nothing_selector(),
            "shard.alpha.sharding.timebertt.dev/image-police,!shard.alpha.sharding.timebertt.dev/image-police"
        );
        assert_eq!(
            ring.orphaned_selector(&["a", "b"]),
            "shard.alpha.sharding.timebertt.dev/image-police,shard.alpha.sharding.timebertt.dev/image-police notin (a,b)"
        );
    }
}
