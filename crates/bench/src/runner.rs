//! Runs each measured client in its own process, so that its peak RSS and CPU are its own.
//!
//! The bench binary re-executes itself with `--role <role> --url <url> ...`; the child measures one
//! [`Job`] and prints a single `BENCH-RESULT <json>` line on stdout, which the parent parses. The
//! test server stays in the parent, so the server's CPU and memory never count against a client.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tokio::process::Command;

use crate::measure::Cost;
use crate::roles::Job;

/// Prefix of the one line a child prints with its result.
pub const RESULT_PREFIX: &str = "BENCH-RESULT ";

/// Spawns children of the current executable.
pub struct Runner {
    exe: PathBuf,
}

impl Runner {
    /// A runner that re-executes the current binary.
    pub fn current() -> Result<Runner> {
        let exe = std::env::current_exe().context("locating the bench binary")?;
        Ok(Runner { exe })
    }

    /// Runs `job` in a child process and returns its reported cost.
    pub async fn run(&self, job: &Job) -> Result<Cost> {
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
