//! The scale-out benchmark's harness (`scale-out`): one controller run as 1, 2, 3, 5 replicas,
//! each its own process, with a reconcile of known cost, under a rising rate of object changes.
//!
//! # What it answers
//! Issue 25 asks whether sharding makes a kubegen controller scale out: at N replicas, at least
//! 0.8×N the changes per second one replica sustains (at a p99 wait under 1 s), each replica
//! holding about 1/N of the cache and receiving about 1/N of the watch traffic. Leader election
//! (one active replica, every replica caching everything) is the baseline it is compared with.
//!
//! # The pieces
//! - [`replica`]: the child process, a [`kubegen_runtime::Manager`] over the bench namespace's
//!   ConfigMaps whose reconcile sleeps a fixed time; it reports each reconcile and, twice a
//!   second, what it holds ([`Report`]) on stdout. [`Mode`] says how the replicas split the
//!   work: not at all (leader election), by labels, or by the server's `shardSelector`.
//! - [`group`]: the parent's view of N such children, each behind its own counting
//!   [`crate::link::Link`], so the bytes each one receives are measured on the wire.
//! - [`placement`]: labels the objects with their shards before a labelled group starts, as
//!   timebertt's sharder webhook does when an object is created.
//! - [`driver`]: the load, merge patches at a paced rate that stamp the time they were sent
//!   ([`SENT_AT`]) into the object.
//! - [`steps`]: the search for the highest rate the group sustains at a p99 wait under 1 s.
//! - [`results`]: the tables, every ratio to the same mode's single replica.
//!
//! # What "wait" is here
//! From the driver stamping the change to the reconcile of that change starting: the server's
//! write, the watch, the informer, the workqueue. The same span timebertt's evaluation bounds
//! (its queue SLI is the workqueue part of it); reading it from the object rather than from the
//! `workqueue_queue_duration_seconds` histogram keeps one clock (this machine's) and no buckets.

pub mod driver;
pub mod group;
pub mod placement;
pub mod replica;
pub mod results;
pub mod steps;

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};

/// The annotation the driver stamps into each change: microseconds since the Unix epoch.
pub const SENT_AT: &str = "bench.kubegen.dev/sent-at";

/// The label selector of the benchmark's objects (every `kubegen_bench::data::config_map` carries
/// `app=bench`): the replicas watch, and the placement labels, only these, not the
/// `kube-root-ca.crt` a real cluster's controller-manager puts in every namespace.
pub const SELECTOR: &str = "app=bench";

/// The shard ring's (and the leader Lease's) name.
pub const RING: &str = "scale-bench";

/// The controller's name (its workqueue's `name` label).
pub const CONTROLLER: &str = "scale";

/// Microseconds since the Unix epoch, the clock every timestamp of the benchmark is read from.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The name of the `index`-th replica of a group: `r0`, `r1`, ...
pub fn identity(index: usize) -> String {
    format!("r{index}")
}

/// How the replicas split the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Leader election: one replica reconciles, every replica lists, watches and caches all.
    Unsharded,
    /// kubegen-sharding's label protocol: each replica watches the objects labelled with its
    /// shard.
    Labels,
    /// KEP-5866's `shardSelector`: the server sends each replica only its arcs of the ring over
    /// the hash of the objects' UIDs; nothing is written on the objects.
    ShardSelector,
}

impl Mode {
    /// Every mode, in table order.
    pub const ALL: [Mode; 3] = [Mode::Unsharded, Mode::Labels, Mode::ShardSelector];

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Unsharded => "unsharded",
            Mode::Labels => "labels",
            Mode::ShardSelector => "shard-selector",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = anyhow::Error;

    fn from_str(value: &str) -> Result<Mode> {
        match Mode::ALL.into_iter().find(|mode| mode.as_str() == value) {
            Some(mode) => Ok(mode),
            None => bail!("unknown mode {value:?} (unsharded, labels, shard-selector)"),
        }
    }
}

/// What a replica holds and does, as it reports it twice a second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stat {
    /// Objects in its informer's cache.
    pub objects: usize,
    /// Whether it may reconcile: it leads (unsharded) or holds its shard Lease (sharded).
    pub active: bool,
    /// Live shards in the ring as it computes it (0 when unsharded).
    pub members: usize,
    /// Keys waiting in its workqueue.
    pub depth: usize,
    /// Heap bytes allocated and not freed (the counting allocator's), of the whole process.
    pub live_bytes: u64,
}

/// One line of a replica's stdout.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// A reconcile of a stamped change started: `R <name> <sent_us> <start_us>`.
    Reconcile {
        /// The object's name.
        name: String,
        /// Its [`SENT_AT`] stamp.
        sent_us: u64,
        /// When the reconcile started.
        start_us: u64,
    },
    /// `S <objects> <active 0|1> <members> <depth> <live bytes>`.
    Stat(Stat),
}

impl Report {
    /// The line (without newline) a replica prints.
    pub fn line(&self) -> String {
        match self {
            Report::Reconcile {
                name,
                sent_us,
                start_us,
            } => format!("R {name} {sent_us} {start_us}"),
            Report::Stat(s) => format!(
                "S {} {} {} {} {}",
                s.objects,
                u8::from(s.active),
                s.members,
                s.depth,
                s.live_bytes
            ),
        }
    }

    /// Parses a line a replica printed; `None` for any other output (logs).
    pub fn parse(line: &str) -> Option<Report> {
        let mut fields = line.split_whitespace();
        match fields.next()? {
            "R" => {
                let name = fields.next()?.to_owned();
                let sent_us = fields.next()?.parse().ok()?;
                let start_us = fields.next()?.parse().ok()?;
                Some(Report::Reconcile {
                    name,
                    sent_us,
                    start_us,
                })
            }
            "S" => {
                let mut number = || fields.next()?.parse::<u64>().ok();
                let objects = usize::try_from(number()?).ok()?;
                let active = number()? == 1;
                let members = usize::try_from(number()?).ok()?;
                let depth = usize::try_from(number()?).ok()?;
                let live_bytes = number()?;
                Some(Report::Stat(Stat {
                    objects,
                    active,
                    members,
                    depth,
                    live_bytes,
                }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_through_their_lines() {
        let reports = [
            Report::Reconcile {
                name: "cm-000042".to_owned(),
                sent_us: 1_700_000_000_000_000,
                start_us: 1_700_000_000_012_345,
            },
            Report::Stat(Stat {
                objects: 2_000,
                active: true,
                members: 5,
                depth: 3,
                live_bytes: 12_345_678,
            }),
        ];
        for report in reports {
            assert_eq!(Report::parse(&report.line()), Some(report));
        }
    }

    #[test]
    fn other_output_and_truncated_lines_are_not_reports() {
        assert_eq!(
            Report::parse("2026-11-26T00:00:00Z INFO caches synced"),
            None
        );
        assert_eq!(Report::parse("R cm-1 12"), None);
        assert_eq!(Report::parse("S 1 1 1"), None);
        assert_eq!(Report::parse(""), None);
    }

    #[test]
    fn modes_parse_from_their_names() -> Result<()> {
        for mode in Mode::ALL {
            assert_eq!(mode.as_str().parse::<Mode>()?, mode);
        }
        assert!("sharded".parse::<Mode>().is_err());
        Ok(())
    }
}
