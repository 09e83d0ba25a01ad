//! The parent's side of a group of replica processes: starting them, each behind its own
//! counting link, reading their reports, waiting until the group has settled, reading what each
//! one uses, and stopping (or killing) them.
//!
//! Each replica is a re-execution of the running binary with [`ReplicaArgs::to_args`], so its
//! CPU, its peak RSS and the bytes its link counts are its own; the server (in-process test
//! server or a real one) and the driver stay outside every replica.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::replica::{Endpoint, ReplicaArgs};
use super::steps::Reconciles;
use super::{Mode, Report, Stat, identity};
use crate::link::Link;
use crate::measure::{Proc, Usage};

/// Where the replicas' links forward to.
#[derive(Clone, Debug)]
pub enum Upstream {
    /// A plain-HTTP server URL (the test server).
    Url(String),
    /// A real server: its kubeconfig, and the server URL in it.
    Kubeconfig {
        /// The kubeconfig.
        path: PathBuf,
        /// Its cluster's server URL (`https://ip:port`).
        server: String,
    },
}

/// What every replica of a group runs with.
#[derive(Clone, Debug)]
pub struct GroupSpec {
    /// The binary to re-execute (the running `scale-out`).
    pub exe: PathBuf,
    /// The server.
    pub upstream: Upstream,
    /// The bench namespace.
    pub namespace: String,
    /// How the replicas split the work.
    pub mode: Mode,
    /// Workers per replica.
    pub workers: usize,
    /// Cost of one reconcile of a change.
    pub cost: Duration,
}

/// One replica's numbers at one moment.
#[derive(Clone, Debug)]
pub struct Reading {
    /// Its name.
    pub identity: String,
    /// Its last report.
    pub stat: Stat,
    /// Its process's memory and CPU, read from `/proc`.
    pub usage: Usage,
    /// Bytes its link relayed to it from the server so far.
    pub received: u64,
}

struct Member {
    identity: String,
    child: Child,
    /// Closing it stops the replica.
    stdin: Option<ChildStdin>,
    link: Link,
    stat: Arc<Mutex<Stat>>,
    reader: JoinHandle<()>,
}

/// A running group of replicas.
pub struct Group {
    mode: Mode,
    members: Vec<Member>,
    reconciles: Arc<Mutex<Reconciles>>,
}

impl Group {
    /// Starts `replicas` replicas `r0`, `r1`, ... of `spec`; changes stamped before `epoch_us`
    /// cost them nothing.
    ///
    /// # Errors
    /// A link could not be bound or a process not started.
    pub async fn start(spec: &GroupSpec, replicas: usize, epoch_us: u64) -> Result<Group> {
        let reconciles = Arc::new(Mutex::new(Reconciles::default()));
        let mut members = Vec::with_capacity(replicas);
        for index in 0..replicas {
            let identity = identity(index);
            let (link, endpoint) = match &spec.upstream {
                Upstream::Url(url) => {
                    let link = Link::counting(url).await?;
                    let endpoint = Endpoint::Url(link.url().to_owned());
                    (link, endpoint)
                }
                Upstream::Kubeconfig { path, server } => {
                    let link = Link::counting(server).await?;
                    let master = link.url().to_owned();
                    let path = path.clone();
                    (link, Endpoint::Kubeconfig { path, master })
                }
            };
            let args = ReplicaArgs {
                endpoint,
                namespace: spec.namespace.clone(),
                identity: identity.clone(),
                mode: spec.mode,
                workers: spec.workers,
                cost: spec.cost,
                epoch_us,
            };
            let mut child = Command::new(&spec.exe)
                .args(args.to_args())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .with_context(|| format!("starting replica {identity}"))?;
            let stdout = child.stdout.take().context("replica stdout")?;
            let stat = Arc::new(Mutex::new(Stat::default()));
            let reader = tokio::spawn(read_reports(
                stdout,
                Arc::clone(&stat),
                Arc::clone(&reconciles),
            ));
            members.push(Member {
                identity,
                stdin: child.stdin.take(),
                child,
                link,
                stat,
                reader,
            });
        }
        Ok(Group {
            mode: spec.mode,
            members,
            reconciles,
        })
    }

    /// Every reconcile the replicas reported so far.
    pub fn reconciles(&self) -> &Mutex<Reconciles> {
        &self.reconciles
    }

    /// Each replica's numbers now.
    pub fn read(&self) -> Vec<Reading> {
        self.members
            .iter()
            .map(|member| Reading {
                identity: member.identity.clone(),
                stat: *member.stat.lock(),
                usage: member
                    .child
                    .id()
                    .map_or_else(Usage::default, |pid| Usage::of(Proc::Pid(pid))),
                received: member.link.received(),
            })
            .collect()
    }

    /// Waits until the group has settled ([`settled`]) for a second in a row; returns how long
    /// it took, that second included.
    ///
    /// # Errors
    /// A replica exited, or the group did not settle within `timeout`.
    pub async fn settle(&mut self, population: usize, timeout: Duration) -> Result<Duration> {
        let started = tokio::time::Instant::now();
        let mut calm_since = None;
        loop {
            for member in &mut self.members {
                if let Some(status) = member.child.try_wait()? {
                    bail!(
                        "replica {} exited while settling: {status}",
                        member.identity
                    );
                }
            }
            let stats: Vec<Stat> = self.members.iter().map(|m| *m.stat.lock()).collect();
            let now = tokio::time::Instant::now();
            if settled(self.mode, population, &stats) {
                let since = *calm_since.get_or_insert(now);
                if now.duration_since(since) >= Duration::from_secs(1) {
                    return Ok(now.duration_since(started));
                }
            } else {
                calm_since = None;
            }
            if now.duration_since(started) > timeout {
                bail!(
                    "{} replicas ({}) did not settle within {timeout:?}: {stats:?}",
                    self.members.len(),
                    self.mode
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Kills every replica at once (SIGKILL), as a crash or a node loss would. Their Leases
    /// stay held until they expire, so replicas started right after under the same names take
    /// their own Leases over at once and find the ring complete from their first pass: a warm
    /// restart of a running ring.
    pub async fn kill(mut self) {
        for member in &mut self.members {
            let _ = member.child.kill().await;
            member.reader.abort();
        }
    }

    /// Stops every replica (closes its stdin: it drains and releases its Lease) and waits for
    /// them, killing one that takes longer than 30 s.
    pub async fn stop(mut self) {
        for member in &mut self.members {
            member.stdin.take();
        }
        for member in &mut self.members {
            let exited = tokio::time::timeout(Duration::from_secs(30), member.child.wait()).await;
            if !matches!(exited, Ok(Ok(status)) if status.success()) {
                eprintln!(
                    "replica {} did not stop cleanly: {exited:?}",
                    member.identity
                );
                let _ = member.child.kill().await;
            }
            member.reader.abort();
        }
    }
}

/// Whether a group of replicas reporting `stats` has settled over `population` objects: each
/// object cached where it will be reconciled, the ring (or the leader) agreed, no queue at an
/// active replica.
///
/// - Unsharded: every replica caches every object, exactly one leads.
/// - Sharded: every replica holds its shard Lease and sees all of them in the ring, and the
///   shards' caches add up to the population (each object in one shard).
pub fn settled(mode: Mode, population: usize, stats: &[Stat]) -> bool {
    // A standby (unsharded, not leading) queues every event but runs no workers.
    let idle = stats.iter().filter(|s| s.active).all(|s| s.depth == 0);
    let placed = match mode {
        Mode::Unsharded => {
            stats.iter().all(|s| s.objects == population)
                && stats.iter().filter(|s| s.active).count() == 1
        }
        Mode::Labels | Mode::ShardSelector => {
            stats.iter().all(|s| s.active && s.members == stats.len())
                && stats.iter().map(|s| s.objects).sum::<usize>() == population
        }
    };
    !stats.is_empty() && idle && placed
}

/// Reads a replica's stdout until it ends, keeping its last [`Stat`] and recording its
/// reconciles.
async fn read_reports(
    stdout: ChildStdout,
    stat: Arc<Mutex<Stat>>,
    reconciles: Arc<Mutex<Reconciles>>,
) {
    let mut lines = BufReader::new(stdout).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        match Report::parse(&line) {
            Some(Report::Stat(now)) => *stat.lock() = now,
            Some(Report::Reconcile {
                name,
                sent_us,
                start_us,
            }) => reconciles.lock().record(name, sent_us, start_us),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(objects: usize, active: bool, members: usize) -> Stat {
        Stat {
            objects,
            active,
            members,
            ..Stat::default()
        }
    }

    #[test]
    fn unsharded_settles_with_full_caches_and_one_leader() {
        let mut full = [stat(10, true, 0), stat(10, false, 0)];
        full[1].depth = 10;
        assert!(settled(Mode::Unsharded, 10, &full));
        full[0].depth = 1;
        assert!(!settled(Mode::Unsharded, 10, &full));
        let no_leader = [stat(10, false, 0), stat(10, false, 0)];
        assert!(!settled(Mode::Unsharded, 10, &no_leader));
        let two_leaders = [stat(10, true, 0), stat(10, true, 0)];
        assert!(!settled(Mode::Unsharded, 10, &two_leaders));
        let filling = [stat(10, true, 0), stat(9, false, 0)];
        assert!(!settled(Mode::Unsharded, 10, &filling));
    }

    #[test]
    fn labels_settle_when_the_shards_agree_and_split_the_population() {
        let split = [stat(6, true, 2), stat(4, true, 2)];
        assert!(settled(Mode::Labels, 10, &split));
        let joining = [stat(10, true, 1), stat(0, true, 2)];
        assert!(!settled(Mode::Labels, 10, &joining));
        let handing_over = [stat(6, true, 2), stat(5, true, 2)];
        assert!(!settled(Mode::Labels, 10, &handing_over));
        let mut busy = split;
        busy[0].depth = 1;
        assert!(!settled(Mode::Labels, 10, &busy));
        assert!(!settled(Mode::Labels, 0, &[]));
    }
}
