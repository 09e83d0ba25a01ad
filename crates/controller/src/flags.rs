//! Command-line flags of `image-police`, parsed with clap.
//!
//! The names follow client-go controllers (`--kubeconfig`, `--master`, `--leader-elect`, ...), so
//! manifests written for sample-controller style binaries read the same here. Every flag can also
//! be set through an `IMAGE_POLICE_*` environment variable, which is how deploy/deployment.yaml
//! passes the pod's own namespace (downward API).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Flags of the `image-police` binary.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "image-police",
    version,
    about = "Deletes Deployments whose images are not on their namespace's WhiteList"
)]
#[non_exhaustive]
pub struct Flags {
    /// Path to a kubeconfig. Default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
    #[arg(long, env = "IMAGE_POLICE_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,

    /// API server URL; overrides the server of the kubeconfig.
    #[arg(long, env = "IMAGE_POLICE_MASTER")]
    pub master: Option<String>,

    /// kubeconfig context to use instead of the current one.
    #[arg(long, env = "IMAGE_POLICE_CONTEXT")]
    pub context: Option<String>,

    /// Watch WhiteLists and Deployments in this namespace only. Default: all namespaces.
    #[arg(long, env = "IMAGE_POLICE_NAMESPACE")]
    pub namespace: Option<String>,

    /// The namespace the controller itself runs in: protected, and home of the leader Lease.
    /// Default: the kubeconfig's namespace (in-cluster: the service account's).
    #[arg(long, env = "POD_NAMESPACE")]
    pub own_namespace: Option<String>,

    /// Also act in the controller's own namespace and in kube-system (the controller may then
    /// delete itself).
    #[arg(long, env = "IMAGE_POLICE_ALLOW_PROTECTED_NAMESPACES")]
    pub allow_protected_namespaces: bool,

    /// Number of WhiteLists reconciled concurrently.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,

    /// Run only while holding the leader Lease (needed with more than one replica).
    #[arg(long, env = "IMAGE_POLICE_LEADER_ELECT")]
    pub leader_elect: bool,

    /// Namespace of the leader Lease. Default: the controller's own namespace.
    #[arg(long)]
    pub leader_elect_namespace: Option<String>,

    /// Name of the leader Lease.
    #[arg(long, default_value = "image-police")]
    pub leader_elect_lease_name: String,

    /// Identity written into the Lease. Default: the host name plus a random suffix.
    #[arg(long, env = "POD_NAME")]
    pub leader_elect_identity: Option<String>,

    /// How long standby replicas wait, after the leader's last renewal they observed, before
    /// taking the Lease over.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader keeps retrying a failing renewal before it stops working.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub leader_elect_renew_deadline: Duration,

    /// Pause between attempts to acquire or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub leader_elect_retry_period: Duration,

    /// Address of the Prometheus endpoint (`/metrics`); empty disables it.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_addr: String,

    /// Address of the health endpoints (`/healthz`, `/readyz`); empty disables them.
    #[arg(long, default_value = "0.0.0.0:8081")]
    pub health_addr: String,

    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Start an in-process API server with the CRDs and deploy/samples/ loaded, and run against it.
    /// Needs the `embedded` cargo feature (default; the in-cluster image is built without it).
    #[arg(long)]
    pub embedded: bool,

    /// Directory of deploy/ manifests for `--embedded` (crd.yaml and samples/).
    #[arg(long, default_value = "deploy")]
    pub deploy_dir: PathBuf,

    /// How long to wait for the informer caches to fill before giving up, e.g. `60s`, `2m`.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub cache_sync_timeout: Duration,

    /// How long SIGTERM waits for in-flight reconciles before exiting anyway.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,
}

impl Flags {
    /// The metrics address, or `None` when disabled with an empty value.
    ///
    /// # Errors
    /// The address does not parse as `ip:port`.
    pub fn metrics_socket(&self) -> Result<Option<SocketAddr>, std::net::AddrParseError> {
        optional_addr(&self.metrics_addr)
    }

    /// The health address, or `None` when disabled with an empty value.
    ///
    /// # Errors
    /// The address does not parse as `ip:port`.
    pub fn health_socket(&self) -> Result<Option<SocketAddr>, std::net::AddrParseError> {
        optional_addr(&self.health_addr)
    }
}

fn optional_addr(value: &str) -> Result<Option<SocketAddr>, std::net::AddrParseError> {
    if value.is_empty() {
        Ok(None)
    } else {
        value.parse().map(Some)
    }
}

/// Parses `90s`, `2m`, `1h`, `500ms` or a bare number of seconds.
fn parse_duration(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{value:?} is not a duration like 30s, 2m or 500ms"))?;
    let duration = match unit {
        "" | "s" => Duration::from_secs(number),
        "ms" => Duration::from_millis(number),
        "m" => Duration::from_secs(number.saturating_mul(60)),
        "h" => Duration::from_secs(number.saturating_mul(3600)),
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (use ms, s, m or h)"
            ));
        }
    };
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_parse_from(std::iter::once("image-police").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let flags = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.workers, 2);
        assert!(!flags.leader_elect && !flags.embedded && !flags.allow_protected_namespaces);
        assert_eq!(flags.cache_sync_timeout, Duration::from_secs(60));
        assert_eq!(flags.log_format, LogFormat::Text);
        assert_eq!(
            flags.metrics_socket().ok().flatten(),
            "0.0.0.0:8080".parse().ok()
        );
        assert_eq!(flags.leader_elect_lease_name, "image-police");
        assert_eq!(flags.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(flags.leader_elect_renew_deadline, Duration::from_secs(10));
        assert_eq!(flags.leader_elect_retry_period, Duration::from_secs(2));
    }

    #[test]
    fn every_documented_flag_parses() {
        let flags = parse(&[
            "--kubeconfig=/k",
            "--master=https://x:6443",
            "--context=c",
            "--namespace=team",
            "--workers=4",
            "--leader-elect",
            "--leader-elect-namespace=ops",
            "--metrics-addr=",
            "--health-addr=127.0.0.1:9",
            "--log-format=json",
            "--embedded",
            "--cache-sync-timeout=2m",
            "--allow-protected-namespaces",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.kubeconfig, Some(PathBuf::from("/k")));
        assert_eq!(flags.master.as_deref(), Some("https://x:6443"));
        assert_eq!(flags.workers, 4);
        assert_eq!(flags.log_format, LogFormat::Json);
        assert_eq!(flags.metrics_socket(), Ok(None));
        assert_eq!(
            flags.health_socket().ok().flatten(),
            "127.0.0.1:9".parse().ok()
        );
        assert_eq!(flags.cache_sync_timeout, Duration::from_secs(120));
        assert!(flags.leader_elect && flags.embedded && flags.allow_protected_namespaces);
    }

    #[test]
    fn zero_workers_is_rejected() {
        assert!(parse(&["--workers=0"]).is_err());
    }

    #[test]
    fn durations_accept_units_and_reject_garbage() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("5 minutes").is_err());
        assert!(parse_duration("s").is_err());
    }
}
