//! Command-line flags of `image-police`, parsed with clap.
//!
//! The manager's flags are controller-runtime's and client-go's, from
//! [`kubegen_runtime::ManagerFlags`] (`--kubeconfig`, `--metrics-bind-address`,
//! `--health-probe-bind-address`, `--leader-elect`, `--leader-elect-resource-namespace`,
//! `--leader-elect-resource-name`, `--log-level`, `--log-format`, ...), so manifests written for
//! Go operators read the same here. The rest are image-police's own. Three take their value from
//! the environment too, because that is how a pod learns them (the downward API in
//! deploy/deployment.yaml): `--own-namespace` from `POD_NAMESPACE`, `--leader-elect-identity`
//! from `POD_NAME`, and `--namespace` from `IMAGE_POLICE_NAMESPACE`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use kubegen_runtime::ManagerFlags;
use kubegen_runtime::flags::parse_go_duration;

/// Flags of the `image-police` binary.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "image-police",
    version,
    about = "Deletes Deployments whose images are not on their namespace's WhiteList"
)]
pub struct Flags {
    /// The manager's flags: connection, endpoints, leader election, logging.
    #[command(flatten)]
    pub manager: ManagerFlags,

    /// Watch WhiteLists and Deployments in this namespace only. Default: all namespaces.
    #[arg(long, env = "IMAGE_POLICE_NAMESPACE")]
    pub namespace: Option<String>,

    /// The namespace the controller itself runs in: protected, and home of the leader Lease
    /// unless `--leader-elect-resource-namespace` says otherwise. Default: the kubeconfig's
    /// namespace (in-cluster: the service account's).
    #[arg(long, env = "POD_NAMESPACE")]
    pub own_namespace: Option<String>,

    /// Also act in the controller's own namespace and in kube-system (the controller may then
    /// delete itself).
    #[arg(long)]
    pub allow_protected_namespaces: bool,

    /// This replica's identity in the leader Lease and in Events. Default: the host name (in a
    /// pod, its name) plus a per-process suffix.
    #[arg(long, env = "POD_NAME")]
    pub leader_elect_identity: Option<String>,

    /// Number of namespaces reconciled concurrently (controller-runtime's
    /// `MaxConcurrentReconciles`).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,

    /// Generate a self-signed webhook certificate into --webhook-cert-path when it holds none, and
    /// write its CA into the ValidatingWebhookConfiguration --webhook-configuration (needs RBAC to
    /// update it). Without it the certificate comes from elsewhere (cert-manager).
    #[arg(long)]
    pub webhook_self_signed: bool,

    /// The ValidatingWebhookConfiguration whose caBundle --webhook-self-signed fills in.
    #[arg(long, default_value = "image-police")]
    pub webhook_configuration: String,

    /// The Service in front of the webhook server: the self-signed certificate is for
    /// `<service>.<own namespace>.svc` (and localhost, 127.0.0.1).
    #[arg(long, default_value = "image-police-webhook")]
    pub webhook_service: String,

    /// Start an in-process API server with the CRDs and deploy/samples/ loaded, and run against it.
    /// Needs the `embedded` cargo feature (default; the in-cluster image is built without it).
    #[arg(long)]
    pub embedded: bool,

    /// Read `--embedded`'s manifests (crd.yaml, samples/, sa.yaml, rbac.yaml, webhook.yaml) from
    /// this deploy/ directory instead of the copies compiled into the binary.
    #[arg(long)]
    pub deploy_dir: Option<PathBuf>,

    /// How long to wait for the informer caches to fill before giving up (Go duration: `60s`, `2m`).
    #[arg(long, default_value = "60s", value_parser = parse_go_duration)]
    pub cache_sync_timeout: Duration,

    /// How long SIGTERM waits for in-flight reconciles before exiting anyway (Go duration).
    #[arg(long, default_value = "30s", value_parser = parse_go_duration)]
    pub shutdown_timeout: Duration,
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_parse_from(std::iter::once("image-police").chain(args.iter().copied()))
    }

    fn addr(text: &str) -> Option<SocketAddr> {
        text.parse().ok()
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let flags = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.workers, 2);
        assert!(
            !flags.manager.leader_elect && !flags.embedded && !flags.allow_protected_namespaces
        );
        assert_eq!(flags.cache_sync_timeout, Duration::from_secs(60));
        assert_eq!(flags.shutdown_timeout, Duration::from_secs(30));
        assert_eq!(flags.manager.metrics_bind_address.0, addr("0.0.0.0:8080"));
        assert_eq!(
            flags.manager.health_probe_bind_address.0,
            addr("0.0.0.0:8081")
        );
    }

    #[test]
    fn controller_runtimes_spellings_parse() {
        let flags = parse(&[
            "--kubeconfig=/k",
            "--master=https://x:6443",
            "--context=c",
            "--namespace=team",
            "--workers=4",
            "--leader-elect",
            "--leader-elect-resource-namespace=ops",
            "--leader-elect-resource-name=police-lock",
            "--metrics-bind-address=:9090",
            "--health-probe-bind-address=0",
            "--log-level=debug",
            "--log-format=json",
            "--embedded",
            "--cache-sync-timeout=1m30s",
            "--allow-protected-namespaces",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.manager.kubeconfig, Some(PathBuf::from("/k")));
        assert_eq!(flags.manager.master.as_deref(), Some("https://x:6443"));
        assert_eq!(flags.workers, 4);
        assert_eq!(flags.manager.metrics_bind_address.0, addr("0.0.0.0:9090"));
        assert_eq!(flags.manager.health_probe_bind_address.0, None);
        assert_eq!(
            flags.manager.leader_elect_resource_name.as_deref(),
            Some("police-lock")
        );
        assert_eq!(flags.cache_sync_timeout, Duration::from_secs(90));
        assert!(flags.manager.leader_elect && flags.embedded && flags.allow_protected_namespaces);
    }

    #[test]
    fn the_old_spellings_are_gone() {
        for old in [
            "--metrics-addr=:8080",
            "--health-addr=:8081",
            "--leader-elect-namespace=x",
        ] {
            assert!(parse(&[old]).is_err(), "{old} accepted");
        }
    }

    #[test]
    fn zero_workers_is_rejected() {
        assert!(parse(&["--workers=0"]).is_err());
    }
}
