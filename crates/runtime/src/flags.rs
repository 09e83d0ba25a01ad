//! The command-line flags every operator binary has, spelled as controller-runtime and
//! client-go spell them, so manifests, Helm charts and runbooks written for Go operators work
//! unchanged: `#[command(flatten)] manager: ManagerFlags` in the binary's clap `Parser`.
//!
//! | flag | default | meaning |
//! |---|---|---|
//! | `--kubeconfig`, `--context`, `--master` | | client-go's: which cluster (default: `$KUBECONFIG`, `~/.kube/config`, in-cluster) |
//! | `--metrics-bind-address` | `:8080` | where `/metrics` is served; `0` disables it |
//! | `--health-probe-bind-address` | `:8081` | where `/healthz` and `/readyz` are served; `0` disables them |
//! | `--leader-elect` | off | run the controllers only while holding a Lease |
//! | `--leader-elect-resource-namespace` | the pod's namespace | where the Lease lives |
//! | `--leader-elect-resource-name` | the operator's name | the Lease's name |
//! | `--leader-elect-lease-duration`, `-renew-deadline`, `-retry-period` | `15s`, `10s`, `2s` | component-base's timings |
//! | `--sharding-ring` | off | shard the controller's objects over this ring instead of electing a leader (not with `--leader-elect`); the shard Leases live in `--leader-elect-resource-namespace` and use the `--leader-elect-*` timings |
//! | `--sharding-selection` | `auto` | how a shard gets only its objects: `labels`, `shard-selector` (KEP-5866, where the server serves it) or `auto` (ask the server) |
//! | `--webhook-port` | `9443` | the webhook server's port (controller-runtime's `webhook.Options.Port`); `0` disables it |
//! | `--webhook-host` | every interface | the address it listens on (`webhook.Options.Host`), e.g. `127.0.0.1` for an API server on the same host |
//! | `--webhook-cert-path` (also `--webhook-cert-dir`) | `/tmp/k8s-webhook-server/serving-certs` | kubebuilder's: the directory of the serving certificate |
//! | `--webhook-cert-name`, `--webhook-cert-key` | `tls.crt`, `tls.key` | kubebuilder's: the file names in that directory |
//! | `--cache-store` | `decoded` | how the informers keep their objects: `decoded` (fastest reads) or `bytes` (the wire bytes, decoded on read: a fraction of the memory; `kubegen_cache::StoreMode`) |
//! | `--log-level` (also `--zap-log-level`) | `info` | `error`, `warn`, `info`, `debug`, `trace`; `RUST_LOG` overrides it |
//! | `--log-format` | `json` (`text` on a terminal) | JSON: one object per line, the message at the top level |
//!
//! Addresses are Go's: `:8080` listens on every interface, `127.0.0.1:8080` or `localhost:8080`
//! on loopback, `0` (or an empty value) disables the endpoint. Durations are Go's
//! `time.ParseDuration` spelling: `90s`, `1m30s`, `1h`, `500ms`, `1.5s`.

use std::io::IsTerminal as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use kubegen_cache::StoreMode;
use kubegen_client::{Client, Config, LoadOptions};
use kubegen_leaderelection::LeaderElectionConfig;
use kubegen_sharding::{ReplicaConfig, Ring, Selection};
use tracing_subscriber::EnvFilter;

use crate::error::Error;
use crate::manager::{ManagerOptions, default_identity};
use crate::webhook::WebhookOptions;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// JSON when stderr is not a terminal (in a pod), text when it is (a developer's shell).
    Auto,
    /// One JSON object per line (`{"timestamp":..,"level":"INFO","message":..,..}`).
    Json,
    /// Human-readable lines.
    Text,
}

/// How the informers keep their objects (`--cache-store`); see `kubegen_cache::StoreMode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CacheStore {
    /// Decoded objects: reads cost a lookup, memory is the decoded objects.
    #[default]
    Decoded,
    /// The objects' wire bytes, decoded on read (with a small cache of recent decodes).
    Bytes,
}

impl CacheStore {
    /// The informers' store mode.
    pub fn mode(self) -> StoreMode {
        match self {
            Self::Decoded => StoreMode::Decoded,
            Self::Bytes => StoreMode::bytes(),
        }
    }
}

/// The flags of a manager: connection, endpoints, leader election, cache and logging.
#[derive(Args, Clone, Debug)]
pub struct ManagerFlags {
    /// Path to a kubeconfig. Default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use instead of the current one.
    #[arg(long)]
    pub context: Option<String>,

    /// The API server's URL; overrides the kubeconfig's.
    #[arg(long)]
    pub master: Option<String>,

    /// The address `/metrics` is served on (`:8080`, `127.0.0.1:8080`); `0` disables it.
    #[arg(long, default_value = ":8080", value_parser = parse_bind_address)]
    pub metrics_bind_address: BindAddress,

    /// The address `/healthz` and `/readyz` are served on; `0` disables them.
    #[arg(long, default_value = ":8081", value_parser = parse_bind_address)]
    pub health_probe_bind_address: BindAddress,

    /// Run the controllers only while holding the leader Lease (needed with more than one replica).
    #[arg(long)]
    pub leader_elect: bool,

    /// Shard the objects across the replicas over the ring of this name, every replica working at
    /// once on its share (kubegen-sharding), instead of electing a leader.
    #[arg(long, conflicts_with = "leader_elect")]
    pub sharding_ring: Option<String>,

    /// How each shard gets only its objects: labels, shard-selector (KEP-5866) or auto (ask the
    /// server, at start).
    #[arg(long, default_value = "auto", value_parser = parse_selection)]
    pub sharding_selection: Selection,

    /// The namespace of the leader Lease. Default: the namespace the process runs in.
    #[arg(long)]
    pub leader_elect_resource_namespace: Option<String>,

    /// The name of the leader Lease. Default: the operator's name.
    #[arg(long)]
    pub leader_elect_resource_name: Option<String>,

    /// How long standby replicas wait after the leader's last renewal they saw before taking over.
    #[arg(long, default_value = "15s", value_parser = parse_go_duration)]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader retries a failing renewal before it stops leading.
    #[arg(long, default_value = "10s", value_parser = parse_go_duration)]
    pub leader_elect_renew_deadline: Duration,

    /// The pause between attempts to acquire or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_go_duration)]
    pub leader_elect_retry_period: Duration,

    /// The port of the webhook server (only served when the operator registers webhooks); `0` disables it.
    #[arg(long, default_value_t = crate::webhook::DEFAULT_PORT)]
    pub webhook_port: u16,

    /// The address the webhook server listens on (every interface when not given).
    #[arg(long)]
    pub webhook_host: Option<IpAddr>,

    /// The directory holding the webhook server's certificate and key (re-read when they change).
    #[arg(long, alias = "webhook-cert-dir", default_value = crate::webhook::DEFAULT_CERT_DIR)]
    pub webhook_cert_path: PathBuf,

    /// The certificate file's name in --webhook-cert-path.
    #[arg(long, default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// The key file's name in --webhook-cert-path.
    #[arg(long, default_value = "tls.key")]
    pub webhook_cert_key: String,

    /// How the informers keep their objects: decoded (fastest reads) or bytes (decoded on read,
    /// a fraction of the memory).
    #[arg(long, value_enum, default_value_t = CacheStore::Decoded)]
    pub cache_store: CacheStore,

    /// The least severe level logged: error, warn, info, debug or trace. RUST_LOG, when set, wins.
    #[arg(long, visible_alias = "zap-log-level", default_value = "info")]
    pub log_level: String,

    /// The log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Auto)]
    pub log_format: LogFormat,
}

/// A parsed bind address: `None` when the endpoint is disabled (`0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindAddress(pub Option<SocketAddr>);

impl ManagerFlags {
    /// Installs the process's log subscriber as `--log-level` and `--log-format` say (see
    /// [`init_logging`]). Call it once, first thing in `main`.
    ///
    /// # Errors
    /// As [`init_logging`].
    pub fn init_logging(&self) -> Result<(), Error> {
        init_logging(&self.log_level, self.log_format)
    }

    /// A client for the cluster `--kubeconfig`, `--context` and `--master` select (client-go's
    /// precedence when none is given: `$KUBECONFIG`, `~/.kube/config`, in-cluster).
    ///
    /// # Errors
    /// [`Error::ConfigLoadFailed`] naming what could not be read, [`Error::ClientBuildFailed`].
    pub async fn client(&self) -> Result<Client, Error> {
        let mut load = LoadOptions::default();
        load.kubeconfig_path = self.kubeconfig.clone();
        load.context = self.context.clone();
        load.master_url = self.master.clone();
        let config = Config::load(&load)
            .await
            .map_err(|source| Error::ConfigLoadFailed { source })?;
        Client::new(config).map_err(|source| Error::ClientBuildFailed { source })
    }

    /// The webhook server options `--webhook-*` describe; `None` with `--webhook-port=0`.
    pub fn webhook_options(&self) -> Option<WebhookOptions> {
        (self.webhook_port != 0).then(|| {
            WebhookOptions::default()
                .bind_address(SocketAddr::from((
                    self.webhook_host
                        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
                    self.webhook_port,
                )))
                .cert_dir(self.webhook_cert_path.clone())
                .cert_names(&self.webhook_cert_name, &self.webhook_cert_key)
        })
    }

    /// The manager options these flags describe, for the operator `name` (the default Lease
    /// name); the Lease's namespace defaults to `client`'s namespace (in a pod: its own).
    /// `--cache-store` is in their factory options: a later [`ManagerOptions::factory`]
    /// replaces them, so set [`ManagerOptions::store_mode`] again after it.
    ///
    /// # Errors
    /// [`Error::InvalidFlag`] when the leader election timings contradict each other.
    pub fn options(&self, client: &Client, name: &str) -> Result<ManagerOptions, Error> {
        let election = if self.leader_elect {
            let lease = self.leader_elect_resource_name.as_deref().unwrap_or(name);
            // The manager competes as its own identity (`ManagerOptions::identity`), whatever
            // this one says.
            let mut election =
                self.lease_config(self.lease_namespace(client), lease, &default_identity())?;
            election.release_on_cancel = true;
            Some(election)
        } else {
            None
        };
        Ok(ManagerOptions::default()
            .webhook(self.webhook_options())
            .leader_election(election)
            .metrics_bind_address(self.metrics_bind_address.0)
            .health_probe_bind_address(self.health_probe_bind_address.0)
            .store_mode(self.cache_store.mode()))
    }
}

impl ManagerFlags {
    /// The namespace of the leader or shard Leases: `--leader-elect-resource-namespace`, else
    /// `client`'s namespace (in a pod: its own).
    fn lease_namespace<'a>(&'a self, client: &'a Client) -> &'a str {
        self.leader_elect_resource_namespace
            .as_deref()
            .unwrap_or_else(|| client.default_namespace())
    }

    /// A Lease `namespace/lease` held by `identity` with the `--leader-elect-*` timings.
    fn lease_config(
        &self,
        namespace: &str,
        lease: &str,
        identity: &str,
    ) -> Result<LeaderElectionConfig, Error> {
        let mut config = LeaderElectionConfig::new(namespace, lease, identity);
        config.lease_duration = self.leader_elect_lease_duration;
        config.renew_deadline = self.leader_elect_renew_deadline;
        config.retry_period = self.leader_elect_retry_period;
        config.validate().map_err(|error| Error::InvalidFlag {
            flag: "--leader-elect-*",
            reason: error.to_string(),
        })?;
        Ok(config)
    }

    /// The ring `--sharding-ring` names, for [`ManagerOptions::sharding`]: its shard Leases in
    /// `--leader-elect-resource-namespace` (default: the client's namespace) with the
    /// `--leader-elect-*` timings, selecting as `--sharding-selection` says; `None` without the
    /// flag. The caller scopes it ([`ReplicaConfig::namespace`], [`ReplicaConfig::selector`])
    /// to the objects its controller owns; the manager names the shard after itself.
    ///
    /// # Errors
    /// [`Error::InvalidFlag`] for a ring name that cannot be a label value, or timings that
    /// contradict each other.
    pub fn ring(&self, client: &Client) -> Result<Option<ReplicaConfig>, Error> {
        let Some(name) = &self.sharding_ring else {
            return Ok(None);
        };
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        let edges = name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name.ends_with(|c: char| c.is_ascii_alphanumeric());
        if name.len() > 63 || !edges || !name.chars().all(valid) {
            return Err(Error::InvalidFlag {
                flag: "--sharding-ring",
                reason: format!(
                    "{name:?} is not a label value (1 to 63 of [A-Za-z0-9_.-], alphanumeric at both ends)"
                ),
            });
        }
        let namespace = self.lease_namespace(client);
        let timings = self.lease_config(namespace, name, name)?;
        let mut config = ReplicaConfig::new(Ring::new(name, namespace), "");
        config.lease_duration = timings.lease_duration;
        config.renew_deadline = timings.renew_deadline;
        config.retry_period = timings.retry_period;
        config.selection = self.sharding_selection;
        Ok(Some(config))
    }
}

/// Installs the process's log subscriber, writing to stderr: the least severe `level` logged
/// (`error`, `warn`, `info`, `debug`, `trace`, or a `RUST_LOG`-style filter; `RUST_LOG`, when
/// set, wins), in `format`. JSON lines carry the message at the top level
/// (`{"timestamp":..,"level":"INFO","message":"answered","target":..,<fields>}`), as zap's do.
///
/// # Errors
/// [`Error::InvalidFlag`] for a level that does not parse; [`Error::LoggingFailed`] when a
/// subscriber is already installed.
pub fn init_logging(level: &str, format: LogFormat) -> Result<(), Error> {
    let filter = match EnvFilter::try_from_default_env() {
        Ok(filter) => filter,
        Err(_) => EnvFilter::try_new(level).map_err(|error| Error::InvalidFlag {
            flag: "--log-level",
            reason: error.to_string(),
        })?,
    };
    let json = match format {
        LogFormat::Json => true,
        LogFormat::Text => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        // Colours only for a person's terminal, never into a file or a collector.
        builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init()
    };
    installed.map_err(|error| Error::LoggingFailed {
        reason: error.to_string(),
    })
}

/// `--sharding-selection`: `auto`, `labels` or `shard-selector`.
fn parse_selection(value: &str) -> Result<Selection, String> {
    match value {
        "auto" => Ok(Selection::Auto),
        "labels" => Ok(Selection::Labels),
        "shard-selector" => Ok(Selection::ShardSelector),
        other => Err(format!("{other:?} is none of auto, labels, shard-selector")),
    }
}

/// Parses a Go listen address: `0` or empty disables; `:8080` is every interface; a host may be
/// an IP address or `localhost`.
///
/// # Errors
/// A message saying what is wrong with `value`.
pub fn parse_bind_address(value: &str) -> Result<BindAddress, String> {
    let value = value.trim();
    if value.is_empty() || value == "0" {
        return Ok(BindAddress(None));
    }
    let bad = || format!("{value:?} is not an address like :8080, 127.0.0.1:8080 or 0");
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Ok(BindAddress(Some(addr)));
    }
    let (host, port) = value.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    let ip = match host {
        "" => Ipv4Addr::UNSPECIFIED,
        "localhost" => Ipv4Addr::LOCALHOST,
        _ => return Err(bad()),
    };
    Ok(BindAddress(Some(SocketAddr::from((ip, port)))))
}

/// Parses a duration as Go's `time.ParseDuration` does: a sequence of decimal numbers, each
/// with a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`), such as `1m30s`, `1.5h` or `500ms`; `0`
/// alone is zero. Negative durations are refused (no flag here means one).
///
/// # Errors
/// A message naming the value and the expected spelling.
pub fn parse_go_duration(value: &str) -> Result<Duration, String> {
    let bad = || format!("{value:?} is not a duration like 30s, 1m30s or 500ms");
    let mut rest = value.trim();
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() || rest.starts_with('-') {
        return Err(bad());
    }
    rest = rest.strip_prefix('+').unwrap_or(rest);
    let mut total = 0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (number, tail) = rest.split_at(number_end);
        let number: f64 = number.parse().map_err(|_| bad())?;
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let seconds = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = tail;
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Binary {
        #[command(flatten)]
        manager: ManagerFlags,
    }

    fn parse(args: &[&str]) -> Result<ManagerFlags, clap::Error> {
        let args = std::iter::once("operator").chain(args.iter().copied());
        Binary::try_parse_from(args).map(|binary| binary.manager)
    }

    fn addr(text: &str) -> Option<SocketAddr> {
        text.parse().ok()
    }

    /// A client whose namespace is `default`; never connected.
    fn client() -> Client {
        let url = "https://127.0.0.1:6443"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        Client::new(Config::new(url)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn defaults_are_controller_runtimes() {
        let flags = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.metrics_bind_address.0, addr("0.0.0.0:8080"));
        assert_eq!(flags.health_probe_bind_address.0, addr("0.0.0.0:8081"));
        assert!(!flags.leader_elect);
        assert_eq!(flags.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(flags.leader_elect_renew_deadline, Duration::from_secs(10));
        assert_eq!(flags.leader_elect_retry_period, Duration::from_secs(2));
        assert_eq!(flags.log_level, "info");
        assert_eq!(flags.log_format, LogFormat::Auto);
        assert_eq!(flags.webhook_port, 9443);
        assert_eq!(
            flags.webhook_cert_path,
            PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
        );
        let options = flags
            .options(&client(), "op")
            .unwrap_or_else(|e| panic!("{e}"));
        let webhook = WebhookOptions::default();
        assert!(
            format!("{options:?}").contains(&format!("{webhook:?}")),
            "{options:?}"
        );
    }

    #[test]
    fn the_cache_store_flag_picks_the_informers_store_mode() {
        let default = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(default.cache_store, CacheStore::Decoded);
        assert_eq!(default.cache_store.mode(), StoreMode::Decoded);
        let bytes = parse(&["--cache-store=bytes"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bytes.cache_store.mode(), StoreMode::bytes());
        assert!(parse(&["--cache-store=lazy"]).is_err());
    }

    #[test]
    fn kubebuilders_webhook_flags_parse() {
        let flags = parse(&[
            "--webhook-port=0",
            "--webhook-cert-dir=/certs",
            "--webhook-cert-name=c.pem",
            "--webhook-cert-key=k.pem",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.webhook_port, 0);
        assert_eq!(flags.webhook_cert_path, PathBuf::from("/certs"));
        let local = parse(&["--webhook-host=127.0.0.1", "--webhook-port=19443"])
            .unwrap_or_else(|e| panic!("{e}"));
        let expected =
            WebhookOptions::default().bind_address(SocketAddr::from(([127, 0, 0, 1], 19443)));
        assert_eq!(local.webhook_options(), Some(expected));
        assert_eq!(
            (
                flags.webhook_cert_name.as_str(),
                flags.webhook_cert_key.as_str()
            ),
            ("c.pem", "k.pem")
        );
        let options = flags
            .options(&client(), "op")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            format!("{options:?}").contains("webhook: None"),
            "{options:?}"
        );
        let flags = parse(&["--webhook-cert-path=/certs"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.webhook_cert_path, PathBuf::from("/certs"));
    }

    #[test]
    fn controller_runtime_spellings_parse() {
        let flags = parse(&[
            "--metrics-bind-address=0",
            "--health-probe-bind-address",
            "127.0.0.1:9443",
            "--leader-elect",
            "--leader-elect-resource-namespace=ops",
            "--leader-elect-resource-name=shop-lock",
            "--leader-elect-lease-duration=1m30s",
            "--zap-log-level=debug",
            "--log-format=json",
            "--kubeconfig=/k",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flags.metrics_bind_address.0, None);
        assert_eq!(flags.health_probe_bind_address.0, addr("127.0.0.1:9443"));
        assert!(flags.leader_elect);
        assert_eq!(
            flags.leader_elect_resource_namespace.as_deref(),
            Some("ops")
        );
        assert_eq!(
            flags.leader_elect_resource_name.as_deref(),
            Some("shop-lock")
        );
        assert_eq!(flags.leader_elect_lease_duration, Duration::from_secs(90));
        assert_eq!(flags.log_level, "debug");
        assert_eq!(flags.log_format, LogFormat::Json);
        assert_eq!(flags.kubeconfig, Some(PathBuf::from("/k")));
    }

    #[test]
    fn bind_addresses_are_gos() {
        let parsed = |v| parse_bind_address(v).map(|a| a.0);
        assert_eq!(parsed(":8080"), Ok(addr("0.0.0.0:8080")));
        assert_eq!(parsed("localhost:9"), Ok(addr("127.0.0.1:9")));
        assert_eq!(parsed("[::1]:9"), Ok(addr("[::1]:9")));
        assert_eq!(parsed("0"), Ok(None));
        assert_eq!(parsed(""), Ok(None));
        let error = parsed("example.com:80").err().unwrap_or_default();
        assert!(error.contains("\"example.com:80\""), "{error}");
        assert!(parsed(":http").is_err());
        assert!(parsed("8080").is_err());
    }

    #[test]
    fn durations_are_gos() {
        let cases = [
            ("90s", Duration::from_secs(90)),
            ("1m30s", Duration::from_secs(90)),
            ("1h", Duration::from_secs(3600)),
            ("1.5s", Duration::from_millis(1500)),
            ("500ms", Duration::from_millis(500)),
            ("2h45m", Duration::from_secs(2 * 3600 + 45 * 60)),
            ("10us", Duration::from_micros(10)),
            ("0", Duration::ZERO),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_go_duration(text), Ok(expected), "{text}");
        }
        for bad in ["", "45", "5 minutes", "s", "-1s", "1d", "1.2.3s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn inconsistent_lease_timings_are_an_error_naming_the_flags() {
        let flags = parse(&["--leader-elect", "--leader-elect-renew-deadline=20s"])
            .unwrap_or_else(|e| panic!("{e}"));
        let error = flags
            .options(&client(), "shop")
            .err()
            .map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("--leader-elect-*")),
            "{error:?}"
        );
    }

    #[test]
    fn options_name_the_lease_after_the_operator_in_the_configs_namespace() {
        let flags = parse(&["--leader-elect"]).unwrap_or_else(|e| panic!("{e}"));
        let options = flags
            .options(&client(), "shop")
            .unwrap_or_else(|e| panic!("{e}"));
        let text = format!("{options:?}");
        assert!(text.contains("lock_name: \"shop\""), "{text}");
        assert!(text.contains("lock_namespace: \"default\""), "{text}");
    }

    #[test]
    fn sharding_ring_excludes_leader_election_and_takes_the_lease_flags() {
        let both = parse(&["--leader-elect", "--sharding-ring=shop"]);
        assert_eq!(
            both.err().map(|e| e.kind()),
            Some(clap::error::ErrorKind::ArgumentConflict)
        );
        let flags = parse(&[
            "--sharding-ring=shop",
            "--leader-elect-resource-namespace=ops",
            "--leader-elect-lease-duration=20s",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let ring = flags
            .ring(&client())
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("no ring"));
        assert_eq!(ring.ring, Ring::new("shop", "ops"));
        assert_eq!(ring.selection, Selection::Auto);
        assert_eq!(ring.lease_duration, Duration::from_secs(20));
        assert_eq!(ring.renew_deadline, Duration::from_secs(10));
        let none = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(none.ring(&client()).is_ok_and(|r| r.is_none()));
        let server_side = parse(&[
            "--sharding-ring=shop",
            "--sharding-selection=shard-selector",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let ring = server_side
            .ring(&client())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ring.map(|r| r.selection), Some(Selection::ShardSelector));
        let unknown = parse(&["--sharding-ring=shop", "--sharding-selection=hash"]);
        assert_eq!(
            unknown.err().map(|e| e.kind()),
            Some(clap::error::ErrorKind::ValueValidation)
        );
        for bad in ["-shop", "sh op", &"r".repeat(64)] {
            let arg = format!("--sharding-ring={bad}");
            let flags = parse(&[arg.as_str()]).unwrap_or_else(|e| panic!("{e}"));
            let error = flags.ring(&client()).err().map(|e| e.to_string());
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("--sharding-ring: ")),
                "{bad:?}: {error:?}"
            );
        }
    }
}
