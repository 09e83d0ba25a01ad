//! The peer: client-go v1.36's `SharedIndexInformer`, run as its own process (`cgbench`, built by
//! `../shared/realservers/client-go-bench/build.sh` from the same source tree as the v1.36 server).
//!
//! `cgbench` syncs one informer (or a metadata-only one) and prints one JSON line with its sync
//! time and its peak RSS (`VmHWM`, the whole process), then exits. Its CPU is not in that line:
//! the runner reads it the same way for every child (see [`crate::runner`]).
//!
//! # Streaming lists
//! client-go v1.36 streams its initial list (`WatchListClient` gate, on by default since 1.35)
//! and waits for the `k8s.io/initial-events-end` bookmark. A server before 1.27 ignores
//! `sendInitialEvents` and never sends that bookmark, so client-go's default never syncs there:
//! on such a server every client-go row runs with `KUBE_FEATURE_WatchListClient=false` and its
//! label says so ([`ClientGo::gate_off`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use tokio::process::Command;

use super::job::{Job, Role, check_count};
use crate::measure::Cost;

/// Where `build.sh` puts the binary.
pub const DEFAULT_BINARY: &str = "/opt/k8s136/bin/cgbench";

/// How the client-go children are run.
#[derive(Clone, Debug)]
pub struct ClientGo {
    /// The `cgbench` binary.
    pub binary: PathBuf,
    /// A kubeconfig for the server (for a test server, one written by the parent).
    pub kubeconfig: PathBuf,
    /// Run with `KUBE_FEATURE_WatchListClient=false` (the server predates streaming lists).
    pub gate_off: bool,
}

/// The one line `cgbench` prints.
#[derive(Deserialize)]
struct Report {
    objects: usize,
    sync_ms: f64,
    vmhwm_mib: f64,
}

/// Runs `cgbench` for `job`: JSON, protobuf or metadata-only per its role, streaming unless the
/// role or the server says otherwise.
///
/// # Errors
/// `cgbench` cannot be started, fails, prints no report, or syncs another number of objects.
pub async fn sync(job: &Job, client_go: &ClientGo) -> Result<Cost> {
    let mut command = Command::new(&client_go.binary);
    command
        .arg("-ns")
        .arg(&job.namespace)
        .arg("-kubeconfig")
        .arg(&client_go.kubeconfig)
        .arg("-kind")
        .arg(job.dataset.as_str());
    match job.role {
        Role::ClientGoProtobuf => {
            command.arg("-proto");
        }
        Role::ClientGoMetadata => {
            command.arg("-metadata");
        }
        _ => {}
    }
    if job.strip_managed_fields {
        command.arg("-strip");
    }
    if client_go.gate_off || !job.streaming_list {
        command.env("KUBE_FEATURE_WatchListClient", "false");
    }
    let started = Instant::now();
    let output = command
        .output()
        .await
        .with_context(|| format!("running {}", client_go.binary.display()))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !output.status.success() {
        bail!(
            "cgbench failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|line| line.starts_with('{'))
        .context("cgbench printed no report")?;
    let report: Report = serde_json::from_str(line).context("parsing cgbench's report")?;
    check_count(job.role, report.objects, job.expect)?;
    Ok(Cost {
        objects: report.objects as u64,
        // cgbench's own sync time when it has one; its process lifetime otherwise.
        wall_ms: if report.sync_ms > 0.0 {
            report.sync_ms
        } else {
            wall_ms
        },
        peak_rss_mib: report.vmhwm_mib,
        ..Cost::default()
    })
}

/// Writes a kubeconfig for a plain-HTTP test server at `url` (client-go needs one) into `dir`.
///
/// # Errors
/// The file cannot be written.
pub fn write_test_server_kubeconfig(dir: &Path, url: &str) -> Result<PathBuf> {
    let path = dir.join("client-go-bench.kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {url}\n\
         users:\n- name: test\n  user: {{}}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    \
         user: test\ncurrent-context: test\n"
    );
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Whether a server of this `/version` minor predates streaming lists (`sendInitialEvents`, 1.27).
pub fn predates_streaming(minor: u32) -> bool {
    minor < 27
}
