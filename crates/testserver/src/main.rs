//! `kubegen-testserver`: the test API server as a stand-alone local cluster, for any client
//! (kubectl, client-go, kube-rs, curl).
//!
//! It runs until Ctrl-C or SIGTERM. stdout carries only the server's URL (scripts read it), logs
//! go to stderr (and audit events, with `--audit-log-path -`, to stdout after the URL). The
//! flags follow kube-apiserver's where one exists (`--token-auth-file`,
//! `--authorization-mode=RBAC` as `--rbac`, `--audit-policy-file`, `--audit-log-path`) and
//! kube-controller-manager's `--controllers` idea as one switch.
//!
//! `kubegen-testserver nodes --kubeconfig FILE` runs only the simulated Nodes, scheduler and
//! kubelet (`kubegen-nodesim`) against the cluster of FILE, as kwok runs beside a real
//! kube-apiserver.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use kubegen_testserver::{ServerOptions, TestServer, UserInfo};

/// A Kubernetes API server (kubegen's test double) with its controller-manager, on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "kubegen-testserver", version)]
struct Args {
    /// Without a command: serve. `nodes`: simulate Nodes for another API server.
    #[command(subcommand)]
    command: Option<Command>,
    /// Port on 127.0.0.1 (0: ephemeral).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write a kubeconfig for an administrator of the server to this file.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Serve HTTPS with a generated CA (its data goes into the kubeconfig).
    #[arg(long)]
    tls: bool,
    /// Require this bearer token; it authenticates as an administrator (`system:masters`) and the
    /// kubeconfig uses it. With --tls and no --token, one is generated (and kept in --data-dir):
    /// kubectl asks for a user name on an HTTPS server whose kubeconfig has no credentials.
    #[arg(long)]
    token: Option<String>,
    /// More tokens, in kube-apiserver's `--token-auth-file` format: one `token,user,uid` line per
    /// token, optionally followed by a quoted, comma-separated group list
    /// (`s3cr3t,alice,alice-uid,"dev,ops"`).
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// Authorize requests with RBAC over the stored Roles and bindings (kube-apiserver's
    /// `--authorization-mode=RBAC`), with the bootstrap roles a real server creates.
    #[arg(long)]
    rbac: bool,
    /// Run the in-process controller-manager (namespace lifecycle, garbage collector,
    /// ServiceAccounts and tokens, Deployments and ReplicaSets); `false` answers as a
    /// kube-apiserver without kube-controller-manager.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    controller_manager: bool,
    /// How many simulated Nodes to run beside the server (`kubegen-nodesim`: Nodes with Lease
    /// heartbeats, a default-scheduler and a kubelet that runs and readies bound Pods, as kwok
    /// does); 0 runs none, so Pods stay Pending as on a cluster without nodes.
    #[arg(long, default_value_t = 3, value_name = "COUNT")]
    simulated_nodes: usize,
    /// YAML manifests (files, or directories of `*.yaml`) whose objects are created at start-up,
    /// in order; CustomResourceDefinitions are waited for until established.
    #[arg(long = "preload", value_name = "PATH")]
    preload: Vec<PathBuf>,
    /// Keep objects (and the CA with --tls, and the key ServiceAccount tokens are signed with) in
    /// this directory so they survive a restart; use a fixed --port too, so a written kubeconfig
    /// stays valid.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// An audit policy (`audit.k8s.io/v1` Policy): the requests it selects are written to
    /// --audit-log-path as audit events, one JSON object per line, as kube-apiserver does.
    #[arg(long, value_name = "FILE")]
    audit_policy_file: Option<PathBuf>,
    /// The file audit events are appended to; `-` writes them to stdout (after the URL).
    #[arg(long, value_name = "FILE")]
    audit_log_path: Option<PathBuf>,
}

/// What to run instead of the server.
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Simulated Nodes, a default-scheduler and a kubelet (with its streaming API on loopback)
    /// against the API server of a kubeconfig, until Ctrl-C or SIGTERM.
    Nodes {
        /// The kubeconfig of the cluster (an administrator's: the simulator writes Nodes,
        /// Leases, bindings, Pod statuses and Events).
        #[arg(long)]
        kubeconfig: PathBuf,
        /// How many Nodes.
        #[arg(long, default_value_t = 3)]
        count: usize,
        /// The prefix of the Nodes' names (`<prefix>0`, `<prefix>1`, ...).
        #[arg(long, default_value = "nodesim-")]
        name_prefix: String,
        /// The loopback address the kubelet serves on and the Nodes advertise as InternalIP.
        #[arg(long, default_value = "127.0.0.1")]
        kubelet_address: std::net::IpAddr,
        /// The kubelet's port (0: a free one).
        #[arg(long, default_value_t = 0)]
        kubelet_port: u16,
        /// Bind Pods of `--scheduler-name` (switch off beside a real kube-scheduler).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        scheduler: bool,
        /// The `spec.schedulerName` of the Pods to bind: another name than `default-scheduler`
        /// keeps the simulator to its own Pods on a shared cluster.
        #[arg(long, default_value = "default-scheduler")]
        scheduler_name: String,
    },
}

/// Runs the simulated Nodes of `command` against its cluster until a signal.
async fn run_nodes(command: Command) -> anyhow::Result<()> {
    let Command::Nodes {
        kubeconfig,
        count,
        name_prefix,
        kubelet_address,
        kubelet_port,
        scheduler,
        scheduler_name,
    } = command;
    let load = kubegen_client::LoadOptions::default().kubeconfig_path(&kubeconfig);
    let config = kubegen_client::Config::load(&load)
        .await
        .with_context(|| format!("loading {}", kubeconfig.display()))?;
    let client = kubegen_client::Client::new(config).context("building the client")?;
    let options = kubegen_nodesim::NodeSimOptions::default()
        .nodes(count)
        .name_prefix(name_prefix)
        .kubelet_address(kubelet_address)
        .kubelet_port(kubelet_port)
        .scheduler(scheduler)
        .scheduler_name(scheduler_name);
    kubegen_nodesim::NodeSimulator::new(client, options)
        .run(async {
            if let Err(e) = wait_for_signal().await {
                tracing::warn!(error = %e, "waiting for a signal failed; stopping");
            }
        })
        .await
        .context("running the simulated nodes")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr so stdout carries only the URL.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let mut args = Args::parse();
    if let Some(command) = args.command.take() {
        return run_nodes(command).await;
    }
    let server = TestServer::try_start(options(&args)?)
        .await
        .context("starting the server")?;
    if !args.preload.is_empty() {
        let created =
            kubegen_runtime::manifests::create_from_paths(&server.client(), &args.preload)
                .await
                .context("creating the preloaded manifests")?;
        tracing::info!(objects = created.len(), "manifests preloaded");
    }
    if let Some(path) = &args.kubeconfig_out {
        server
            .write_kubeconfig(path)
            .with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(path = %path.display(), "kubeconfig written");
    }
    println!("{}", server.url());
    wait_for_signal().await?;
    tracing::info!("shutting down");
    server.stop().await;
    Ok(())
}

/// The server's options from the flags.
fn options(args: &Args) -> anyhow::Result<ServerOptions> {
    let mut options = ServerOptions::default();
    options.port = args.port;
    options.tls = args.tls;
    options.bearer_token = admin_token(args)?;
    options.rbac = args.rbac;
    options.controller_manager = args.controller_manager;
    options.simulated_nodes = (args.simulated_nodes > 0)
        .then(|| kubegen_nodesim::NodeSimOptions::default().nodes(args.simulated_nodes));
    options.data_dir = args.data_dir.clone();
    if let Some(path) = &args.audit_policy_file {
        options.audit_policy = Some(kubegen_testserver::AuditPolicy::from_file(path)?);
        options.audit_log_path = args.audit_log_path.clone();
    }
    if let Some(path) = &args.token_auth_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --token-auth-file {}", path.display()))?;
        options.tokens = parse_token_auth_file(path, &text)?;
    }
    Ok(options)
}

/// The administrator's token: `--token`, or with `--tls` a generated one (the same after a
/// restart with `--data-dir`, so a written kubeconfig stays valid).
fn admin_token(args: &Args) -> anyhow::Result<Option<String>> {
    if args.token.is_some() || !args.tls {
        return Ok(args.token.clone());
    }
    let generated = || uuid::Uuid::new_v4().simple().to_string();
    let Some(dir) = &args.data_dir else {
        return Ok(Some(generated()));
    };
    let path = dir.join("admin-token");
    if let Ok(token) = std::fs::read_to_string(&path) {
        return Ok(Some(token.trim().to_string()));
    }
    let token = generated();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(&path, &token).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(token))
}

/// kube-apiserver's static token file: `token,user,uid[,"group1,group2,..."]` per line, as CSV
/// (blank lines and `#` comments skipped).
fn parse_token_auth_file(path: &Path, text: &str) -> anyhow::Result<Vec<(String, UserInfo)>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let mut tokens = Vec::new();
    for record in reader.records() {
        let record = record.with_context(|| format!("{}: not CSV", path.display()))?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |i: usize| record.get(i).map(str::trim).unwrap_or_default();
        if field(0).is_empty() || field(1).is_empty() {
            anyhow::bail!(
                "{}:{line}: a line needs at least a token and a user name (token,user,uid)",
                path.display()
            );
        }
        let groups: Vec<&str> = field(3)
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .collect();
        let mut user = UserInfo::new(field(1), field(2), &groups);
        user.groups.push("system:authenticated".into());
        tokens.push((field(0).to_string(), user));
    }
    Ok(tokens)
}

/// Ctrl-C, or SIGTERM (how containers and process supervisors stop a program).
async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_lines_become_users_with_their_groups() {
        let text = "# comment\nt1,alice,a-uid,\"dev,ops\"\nt2,bob,b-uid\n";
        let tokens = parse_token_auth_file(Path::new("tokens.csv"), text).unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].0, "t1");
        assert_eq!(tokens[0].1.name, "alice");
        assert_eq!(tokens[0].1.uid, "a-uid");
        assert_eq!(
            tokens[0].1.groups,
            vec!["dev", "ops", "system:authenticated"]
        );
        assert_eq!(tokens[1].1.groups, vec!["system:authenticated"]);
    }

    #[test]
    fn a_token_file_line_without_a_user_is_an_error_naming_the_line() {
        let err = parse_token_auth_file(Path::new("tokens.csv"), "t1,alice\nt2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "tokens.csv:2: a line needs at least a token and a user name (token,user,uid)"
        );
    }
}
