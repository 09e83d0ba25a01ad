//! Runs each measured client in its own process, so that its peak RSS and CPU are its own.
//!
//! The bench binary re-executes itself with `--role <role> --url <url> ...`; the child measures one
//! [`Job`] and prints a single `BENCH-RESULT <json>` line on stdout, which the parent parses. The
//! test server stays in the parent, so the server's CPU and memory never count against a client.
//! client-go's roles run `cgbench` instead ([`crate::roles::client_go`]). Every child's whole-process
//! CPU is read by the parent the same way ([`children_cpu`] around it: one child at a time), so
//! the kubegen, kube-rs and client-go processes are measured alike.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tokio::process::Command;

use crate::measure::{Cost, RESULT_PREFIX, children_cpu};
use crate::roles::Job;
use crate::roles::client_go::{self, ClientGo};

/// Spawns children of the current executable.
pub struct Runner {
    exe: PathBuf,
    client_go: Option<ClientGo>,
}

impl Runner {
    /// A runner that re-executes the current binary, and runs client-go's roles with `client_go`
    /// (`None`: those roles fail, saying why).
    pub fn current(client_go: Option<ClientGo>) -> Result<Runner> {
        let exe = std::env::current_exe().context("locating the bench binary")?;
        Ok(Runner { exe, client_go })
    }

    /// Runs `job` in a child process and returns its cost, with the child's whole-process CPU.
    pub async fn run(&self, job: &Job) -> Result<Cost> {
        let before = children_cpu();
        let mut cost = if job.role.is_client_go() {
            let client_go = self.client_go.as_ref().context(
                "no cgbench: build it with ../shared/realservers/client-go-bench/build.sh",
            )?;
            client_go::sync(job, client_go).await?
        } else {
            self.run_child(job).await?
        };
        cost.process_cpu_ms = children_cpu().saturating_sub(before).as_secs_f64() * 1000.0;
        Ok(cost)
    }

    /// Runs `job` in a re-executed child and parses its result line.
    async fn run_child(&self, job: &Job) -> Result<Cost> {
        let mut command = Command::new(&self.exe);
        command
            .arg("--role")
            .arg(job.role.as_str())
            .arg("--url")
            .arg(&job.url)
            .arg("--dataset")
            .arg(job.dataset.as_str())
            .arg("--namespace")
            .arg(&job.namespace)
            .arg("--n")
            .arg(job.expect.to_string());
        if let Some(kubeconfig) = &job.kubeconfig {
            command.arg("--kubeconfig").arg(kubeconfig);
        }
        if job.strip_managed_fields {
            command.arg("--strip-managed-fields");
        }
        if !job.streaming_list {
            command.arg("--no-streaming-list");
        }
        if job.byte_store {
            command.arg("--byte-store");
        }
        let output = command
            .output()
            .await
            .with_context(|| format!("running the {} child", job.role.as_str()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            bail!(
                "{} child failed ({}): {}",
                job.role.as_str(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let line = stdout
            .lines()
            .find_map(|line| line.strip_prefix(RESULT_PREFIX))
            .with_context(|| format!("{} child printed no result", job.role.as_str()))?;
        serde_json::from_str(line).context("parsing the child's result")
    }
}

/// Child side: runs `job` on a fresh multi-threaded runtime and prints its result line.
pub fn child_main(job: &Job) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the child runtime")?;
    let cost = runtime.block_on(crate::roles::run(job))?;
    println!("{RESULT_PREFIX}{}", serde_json::to_string(&cost)?);
    Ok(())
}
