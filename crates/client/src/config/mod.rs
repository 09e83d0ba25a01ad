//! [`Config`]: everything a [`Client`](crate::Client) needs to reach one API server, and where it
//! comes from.
//!
//! Mirrors client-go `rest.Config` plus `tools/clientcmd` (`BuildConfigFromFlags`, the default
//! loading rules, `DirectClientConfig`).
//!
//! # Precedence (client-go's)
//! 1. [`LoadOptions::kubeconfig_path`] (the `--kubeconfig` flag): exactly that file, which must
//!    exist.
//! 2. `KUBECONFIG`: a `:`-separated list, merged first-wins (see [`Kubeconfig::merge`]); missing
//!    files in the list are skipped.
//! 3. `~/.kube/config`, if it exists.
//! 4. In-cluster service account ([`InClusterPaths`]).
//!
//! Within a kubeconfig, [`LoadOptions::context`] overrides `current-context`, and
//! [`LoadOptions::master_url`] overrides the cluster's `server`. A `master_url` with no kubeconfig
//! at all gives an unauthenticated config for that URL (client-go warns and does the same).

pub mod exec;
pub mod incluster;
pub mod kubeconfig;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;

use crate::auth::{Auth, TokenFile};
use crate::error::{Error, Result};
use crate::metrics::ClientMetrics;
use crate::protobuf::WireFormat;
use crate::rate_limit::RateLimit;
use crate::secret_token::SecretToken;
use crate::tls::TlsSettings;
use exec::ExecAuth;
use incluster::InClusterPaths;
use kubeconfig::{Cluster, Kubeconfig};

/// How to reach and authenticate to one API server, plus request policies.
///
/// Build it with [`Config::load`] (the usual way), [`Config::from_kubeconfig`], or [`Config::new`]
/// (a URL without credentials, e.g. an in-process test server), then adjust the public fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    cluster_url: http::Uri,
    pub(crate) default_namespace: String,
    pub(crate) tls: TlsSettings,
    pub(crate) auth: Auth,
    /// Limit on one request (list/get/create...) from sending to the last body byte; for watches,
    /// only until the response headers. Default 295 s.
    pub timeout: Option<Duration>,
    /// Limit on establishing a TCP connection. Default 10 s.
    pub connect_timeout: Duration,
    /// HTTP/2 keepalive ping interval (`None`: no pings). Default 30 s.
    pub keepalive_interval: Option<Duration>,
    /// Client-side QPS/burst limit. Default `None`: the server's priority and fairness decides.
    pub rate_limit: Option<RateLimit>,
    /// Where the client's `rest_client_*` series go. Default: a fresh set nobody has registered;
    /// give every client of a process the same registered [`ClientMetrics`] to export them.
    pub metrics: ClientMetrics,
    /// What `get`, `list` and `watch` of built-in kinds ask for. Default
    /// [`WireFormat::Protobuf`] (JSON for custom resources and servers that answer JSON).
    pub wire_format: WireFormat,
}

impl Config {
    /// A config for `cluster_url` with namespace `default`, no TLS material and no credentials.
    pub fn new(cluster_url: http::Uri) -> Config {
        Config {
            cluster_url,
            default_namespace: "default".to_owned(),
            tls: TlsSettings::default(),
            auth: Auth::None,
            timeout: Some(Duration::from_secs(295)),
            connect_timeout: Duration::from_secs(10),
            keepalive_interval: Some(Duration::from_secs(30)),
            rate_limit: None,
            metrics: ClientMetrics::default(),
            wire_format: WireFormat::default(),
        }
    }

    /// Loads the configuration with client-go's precedence (see the module docs).
    ///
    /// # Errors
    /// [`Error::Kubeconfig`] naming the file and field for a bad kubeconfig, unknown context or
    /// unreadable certificate; [`Error::InCluster`] when nothing is configured at all.
    pub async fn load(opts: &LoadOptions) -> Result<Config> {
        let env = Environment::from_process();
        load_with_env(opts, &env)
    }

    /// Builds the config of one context of a parsed kubeconfig.
    ///
    /// # Errors
    /// [`Error::Kubeconfig`] naming the file and the missing or invalid field.
    pub fn from_kubeconfig(kubeconfig: &Kubeconfig, opts: &LoadOptions) -> Result<Config> {
        let source = kubeconfig
            .source
            .clone()
            .unwrap_or_else(|| PathBuf::from("<kubeconfig>"));
        let context_name = opts
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone().filter(|c| !c.is_empty()))
            .ok_or_else(|| {
                fail(
                    &source,
                    "no current-context set and no context given".into(),
                )
            })?;
        let context = kubeconfig
            .context(&context_name)
            .ok_or_else(|| fail(&source, format!("context {context_name:?} not found")))?;
        let ctx = &context.context;
        let cluster = kubeconfig.cluster(&ctx.cluster).ok_or_else(|| {
            let message = format!(
                "context {context_name:?}: cluster {:?} not found",
                ctx.cluster
            );
            fail(&context.origin, message)
        })?;
        let mut config = cluster_config(cluster, opts.master_url.as_deref())?;
        config.default_namespace = ctx
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into());
        if !ctx.user.is_empty() {
            let user = kubeconfig.auth_info(&ctx.user).ok_or_else(|| {
                let message = format!("context {context_name:?}: user {:?} not found", ctx.user);
                fail(&context.origin, message)
            })?;
            let ca_pem = config.tls.ca_pem.clone();
            apply_user(&mut config, user, &cluster.cluster, ca_pem.as_deref())?;
        }
        Ok(config)
    }

    /// The namespace of the selected context (`default` when unset).
    pub fn default_namespace(&self) -> &str {
        &self.default_namespace
    }

    /// The API server URL.
    pub fn cluster_url(&self) -> &http::Uri {
        &self.cluster_url
    }

    /// Sets a static bearer token (e.g. for a test server with authentication).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Config {
        self.auth = Auth::Token(SecretToken::new(token));
        self
    }

    /// Trusts exactly the CA(s) in `pem` (e.g. a test server's generated CA).
    pub fn root_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Config {
        self.tls.ca_pem = Some(pem.into());
        self
    }
}

fn fail(path: &Path, message: String) -> Error {
    Error::Kubeconfig {
        path: path.to_owned(),
        message,
    }
}

/// Server URL and TLS settings of a kubeconfig cluster (`master_url` overrides `server`).
fn cluster_config(cluster: &kubeconfig::NamedCluster, master_url: Option<&str>) -> Result<Config> {
    let at = |field: &str| format!("clusters[{}].cluster.{field}", cluster.name);
    let (c, origin) = (&cluster.cluster, &cluster.origin);
    if let Some(proxy) = &c.proxy_url {
        let message = format!("{}: {proxy:?}: proxies are not supported", at("proxy-url"));
        return Err(fail(origin, message));
    }
    let server = master_url
        .map(str::to_owned)
        .or_else(|| c.server.clone())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| fail(origin, format!("{} is not set", at("server"))))?;
    let url: http::Uri = server
        .parse()
        .map_err(|e| fail(origin, format!("{} {server:?}: {e}", at("server"))))?;
    if url.scheme().is_none() || url.host().is_none() {
        let message = format!("{} {server:?}: needs scheme and host", at("server"));
        return Err(fail(origin, message));
    }
    let ca_pem = pem_from(
        origin,
        &at("certificate-authority"),
        c.certificate_authority_data.as_deref(),
        c.certificate_authority.as_deref(),
    )?;
    let mut config = Config::new(url);
    config.tls = TlsSettings {
        ca_pem,
        client_cert_pem: None,
        insecure_skip_verify: c.insecure_skip_tls_verify,
        server_name: c.tls_server_name.clone(),
    };
    Ok(config)
}

/// Credentials of a kubeconfig user: client certificate, then token > tokenFile > exec.
fn apply_user(
    config: &mut Config,
    user: &kubeconfig::NamedAuthInfo,
    cluster: &Cluster,
    ca_pem: Option<&[u8]>,
) -> Result<()> {
    let origin = &user.origin;
    let at = |field: &str| format!("users[{}].user.{field}", user.name);
    let u = &user.user;
    if u.auth_provider.is_some() {
        let message = format!(
            "{}: legacy auth providers are not supported; use an exec plugin",
            at("auth-provider")
        );
        return Err(Error::Kubeconfig {
            path: origin.clone(),
            message,
        });
    }
    let cert = pem_from(
        origin,
        &at("client-certificate"),
        u.client_certificate_data.as_deref(),
        u.client_certificate.as_deref(),
    )?;
    let key = pem_from(
        origin,
        &at("client-key"),
        u.client_key_data.as_deref(),
        u.client_key.as_deref(),
    )?;
    config.tls.client_cert_pem = match (cert, key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => {
            let message = format!(
                "{}: client-certificate and client-key must be set together",
                at("client-*")
            );
            return Err(Error::Kubeconfig {
                path: origin.clone(),
                message,
            });
        }
    };
    config.auth = if let Some(token) = u.token.as_ref().filter(|t| !t.is_empty()) {
        Auth::Token(SecretToken::new(token.clone()))
    } else if let Some(path) = &u.token_file {
        Auth::TokenFile(std::sync::Arc::new(TokenFile::new(
            path.clone(),
            Duration::from_secs(60),
        )))
    } else if let Some(exec) = &u.exec {
        Auth::Exec(std::sync::Arc::new(ExecAuth::new(
            exec.clone(),
            cluster,
            ca_pem,
        )?))
    } else {
        Auth::None
    };
    Ok(())
}

/// PEM bytes from a `*-data` field (base64, preferred) or a file field; errors name the field.
fn pem_from(
    origin: &Path,
    field: &str,
    data: Option<&str>,
    file: Option<&Path>,
) -> Result<Option<Vec<u8>>> {
    if let Some(data) = data.filter(|d| !d.is_empty()) {
        let compact: String = data.split_whitespace().collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|e| Error::Kubeconfig {
                path: origin.to_owned(),
                message: format!("{field}-data: invalid base64: {e}"),
            })?;
        return Ok(Some(bytes));
    }
    let Some(file) = file else {
        return Ok(None);
    };
    std::fs::read(file)
        .map(Some)
        .map_err(|e| Error::Kubeconfig {
            path: origin.to_owned(),
            message: format!("{field}: cannot read {}: {e}", file.display()),
        })
}

/// Where [`Config::load`] looks; `Default` is "the standard places".
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// `--kubeconfig`: use exactly this file.
    pub kubeconfig_path: Option<PathBuf>,
    /// `--context`: use this context instead of `current-context`.
    pub context: Option<String>,
    /// `--master`: use this server URL instead of the cluster's.
    pub master_url: Option<String>,
    /// Service-account file locations for in-cluster config.
    pub in_cluster: InClusterPaths,
}

impl LoadOptions {
    /// Sets `kubeconfig_path`.
    pub fn kubeconfig_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.kubeconfig_path = Some(path.into());
        self
    }
    /// Sets `context`.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }
    /// Sets `master_url`.
    pub fn master_url(mut self, url: impl Into<String>) -> Self {
        self.master_url = Some(url.into());
        self
    }
    /// Sets the in-cluster file locations.
    pub fn in_cluster(mut self, paths: InClusterPaths) -> Self {
        self.in_cluster = paths;
        self
    }
}

/// The process environment that config loading reads, captured once so tests can supply their
/// own without mutating the real environment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Environment {
    pub(crate) kubeconfig: Option<OsString>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) service_host: Option<String>,
    pub(crate) service_port: Option<String>,
}

impl Environment {
    fn from_process() -> Environment {
        Environment {
            kubeconfig: std::env::var_os("KUBECONFIG"),
            home: home::home_dir(),
            service_host: std::env::var("KUBERNETES_SERVICE_HOST").ok(),
            service_port: std::env::var("KUBERNETES_SERVICE_PORT").ok(),
        }
    }
}

/// [`Config::load`] against an explicit environment.
pub(crate) fn load_with_env(opts: &LoadOptions, env: &Environment) -> Result<Config> {
    if let Some(path) = &opts.kubeconfig_path {
        return Config::from_kubeconfig(&Kubeconfig::read(path)?, opts);
    }
    let listed: Vec<PathBuf> = env
        .kubeconfig
        .as_ref()
        .filter(|v| !v.is_empty())
        .map(|v| std::env::split_paths(v).collect())
        .unwrap_or_default();
    let files = if listed.is_empty() {
        env.home
            .iter()
            .map(|h| h.join(".kube").join("config"))
            .collect()
    } else {
        listed
    };
    if let Some(kubeconfig) = Kubeconfig::read_merged(&files)? {
        return Config::from_kubeconfig(&kubeconfig, opts);
    }
    if let Some(url) = &opts.master_url {
        let uri = url
            .parse()
            .map_err(|e| Error::BuildRequest(format!("master URL {url:?}: {e}")))?;
        return Ok(Config::new(uri));
    }
    incluster::load(
        env.service_host.as_deref(),
        env.service_port.as_deref(),
        &opts.in_cluster,
    )
    .map(|found| {
        let mut config = Config::new(found.url);
        config.default_namespace = found.namespace;
        config.tls = TlsSettings {
            ca_pem: Some(found.ca),
            ..TlsSettings::default()
        };
        config.auth = Auth::TokenFile(found.token);
        config
    })
    .map_err(|e| match e {
        Error::InCluster(why) => Error::InCluster(format!(
            "no kubeconfig found (tried {}), and {why}",
            describe(&files)
        )),
        other => other,
    })
}

fn describe(files: &[PathBuf]) -> String {
    if files.is_empty() {
        return "no KUBECONFIG and no home directory".into();
    }
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
