//! The kubeconfig file format, reading one file, and merging several.
//!
//! Mirrors client-go `tools/clientcmd/api/types.go` (the format) and `tools/clientcmd/loader.go`
//! (reading, `ResolveLocalPaths`, the merge of a `KUBECONFIG` list).
//!
//! # Merge rules (client-go's)
//! - Files are merged in list order; for clusters, users and contexts the **first** file that
//!   defines a name wins, later definitions of that name are ignored (not merged field by field).
//! - `current-context` comes from the first file that sets it.
//! - Relative paths inside a file (certificate files, `tokenFile`, an exec `command` containing a
//!   `/`) are resolved against that file's directory before merging, and every entry remembers
//!   the file it came from, so errors name the right file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::error::{Error, Result};

fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A parsed kubeconfig (one file, or several merged).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Kubeconfig {
    /// Named clusters (API server URL and TLS settings).
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named users (credentials). Called `users` in the file, `AuthInfos` in client-go.
    #[serde(default, rename = "users", deserialize_with = "null_as_default")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// Named contexts (cluster + user + namespace).
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// The context used when none is given explicitly.
    #[serde(default)]
    pub current_context: Option<String>,
    /// The file this configuration was read from (the first file, for a merged configuration).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// A cluster entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// The cluster settings.
    #[serde(default)]
    pub cluster: Cluster,
    /// The file this entry came from.
    #[serde(skip)]
    pub origin: PathBuf,
}

/// How to reach and trust one API server.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct Cluster {
    /// `https://host:port`, optionally with a path prefix.
    pub server: Option<String>,
    /// Path of a PEM CA bundle.
    pub certificate_authority: Option<PathBuf>,
    /// Base64 PEM CA bundle; wins over `certificate-authority`.
    pub certificate_authority_data: Option<String>,
    /// Skip server certificate verification. Never set this outside throwaway clusters.
    #[serde(default)]
    pub insecure_skip_tls_verify: bool,
    /// The name to verify the server certificate against instead of the URL's host.
    pub tls_server_name: Option<String>,
    /// An HTTP(S)/SOCKS proxy. Not supported: loading fails with a clear error.
    pub proxy_url: Option<String>,
    /// Named extensions. The one kubegen reads is `client.authentication.k8s.io/exec`
    /// ([`EXEC_EXTENSION`]): handed to an exec plugin as `spec.cluster.config`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub extensions: Vec<NamedExtension>,
}

/// The cluster extension whose value an exec plugin receives as `spec.cluster.config` (client-go
/// `clientcmd/api` `ExecConfig.Config`, filled from this extension).
pub const EXEC_EXTENSION: &str = "client.authentication.k8s.io/exec";

/// One `extensions` entry of a cluster: a name and an arbitrary value.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedExtension {
    /// The extension's name, e.g. [`EXEC_EXTENSION`].
    pub name: String,
    /// Its value, as written.
    #[serde(default)]
    pub extension: serde_json::Value,
}

/// A user entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// The credentials.
    #[serde(default)]
    pub user: AuthInfo,
    /// The file this entry came from.
    #[serde(skip)]
    pub origin: PathBuf,
}

/// Credentials. `Debug` redacts the token.
#[derive(Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub struct AuthInfo {
    /// Path of a PEM client certificate.
    pub client_certificate: Option<PathBuf>,
    /// Base64 PEM client certificate; wins over `client-certificate`.
    pub client_certificate_data: Option<String>,
    /// Path of the PEM private key of the client certificate.
    pub client_key: Option<PathBuf>,
    /// Base64 PEM private key; wins over `client-key`.
    pub client_key_data: Option<String>,
    /// A static bearer token.
    pub token: Option<String>,
    /// A file holding a bearer token, re-read periodically.
    #[serde(rename = "tokenFile")]
    pub token_file: Option<PathBuf>,
    /// An exec credential plugin.
    pub exec: Option<ExecConfig>,
    /// Legacy auth providers (gcp, oidc, azure): not supported, loading fails with a clear error.
    pub auth_provider: Option<serde_yaml::Value>,
}

/// The `exec` section of a kubeconfig user; `config/exec.rs` runs the plugin it names.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecConfig {
    /// `client.authentication.k8s.io/v1` or `/v1beta1`.
    pub api_version: Option<String>,
    /// The program; a relative path containing `/` is relative to the kubeconfig's directory.
    pub command: String,
    /// Arguments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default, deserialize_with = "null_as_default")]
    pub env: Vec<ExecEnvVar>,
    /// Pass the cluster (server, CA) to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// Printed when the command cannot be found.
    pub install_hint: Option<String>,
    /// `Never`, `IfAvailable` or `Always`; `Always` is rejected (no terminal here).
    pub interactive_mode: Option<String>,
}

/// One `env` entry of an exec plugin.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct ExecEnvVar {
    /// Variable name.
    pub name: String,
    /// Value.
    pub value: String,
}

impl std::fmt::Debug for AuthInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthInfo")
            .field("client_certificate", &self.client_certificate)
            .field(
                "client_certificate_data",
                &self.client_certificate_data.as_ref().map(|_| "<pem>"),
            )
            .field("client_key", &self.client_key)
            .field(
                "client_key_data",
                &self.client_key_data.as_ref().map(|_| "<redacted>"),
            )
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("token_file", &self.token_file)
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}

/// A context entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct NamedContext {
    /// The name `current-context` and `--context` refer to.
    pub name: String,
    /// The context.
    #[serde(default)]
    pub context: Context,
    /// The file this entry came from.
    #[serde(skip)]
    pub origin: PathBuf,
}

/// A (cluster, user, namespace) triple.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[non_exhaustive]
pub struct Context {
    /// Name of a cluster entry.
    #[serde(default)]
    pub cluster: String,
    /// Name of a user entry; empty for no credentials.
    #[serde(default)]
    pub user: String,
    /// Default namespace; `default` when unset.
    pub namespace: Option<String>,
}

impl Kubeconfig {
    /// Reads and parses one kubeconfig file, resolving its relative paths against its directory.
    ///
    /// # Errors
    /// [`Error::Kubeconfig`] naming the file when it cannot be read or parsed.
    pub fn read(path: &Path) -> Result<Kubeconfig> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Kubeconfig {
            path: path.to_owned(),
            message: format!("cannot read: {e}"),
        })?;
        Kubeconfig::parse(&text, path)
    }

    /// Parses kubeconfig YAML that came from `path` (used for relative paths and error messages).
    ///
    /// # Errors
    /// [`Error::Kubeconfig`] with serde_yaml's line/column when the YAML is malformed.
    pub fn parse(yaml: &str, path: &Path) -> Result<Kubeconfig> {
        let mut config: Kubeconfig = if yaml.trim().is_empty() {
            Kubeconfig::default()
        } else {
            serde_yaml::from_str(yaml).map_err(|e| Error::Kubeconfig {
                path: path.to_owned(),
                message: format!("invalid YAML: {e}"),
            })?
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        config.resolve_paths(dir, path);
        config.source = Some(path.to_owned());
        Ok(config)
    }

    /// Makes relative paths absolute (relative to `dir`) and stamps each entry's origin.
    fn resolve_paths(&mut self, dir: &Path, origin: &Path) {
        let resolve = |p: &mut Option<PathBuf>| {
            if let Some(path) = p.as_mut()
                && path.is_relative()
                && !path.as_os_str().is_empty()
            {
                *path = dir.join(&*path);
            }
        };
        for cluster in &mut self.clusters {
            resolve(&mut cluster.cluster.certificate_authority);
            cluster.origin = origin.to_owned();
        }
        for user in &mut self.auth_infos {
            let info = &mut user.user;
            resolve(&mut info.client_certificate);
            resolve(&mut info.client_key);
            resolve(&mut info.token_file);
            if let Some(exec) = &mut info.exec
                && exec.command.contains('/')
                && Path::new(&exec.command).is_relative()
            {
                exec.command = dir.join(&exec.command).to_string_lossy().into_owned();
            }
            user.origin = origin.to_owned();
        }
        for context in &mut self.contexts {
            context.origin = origin.to_owned();
        }
    }

    /// Merges `later` into `self`, where `self` takes precedence (client-go's first-wins rule).
    pub fn merge(mut self, later: Kubeconfig) -> Kubeconfig {
        for cluster in later.clusters {
            if !self.clusters.iter().any(|c| c.name == cluster.name) {
                self.clusters.push(cluster);
            }
        }
        for user in later.auth_infos {
            if !self.auth_infos.iter().any(|u| u.name == user.name) {
                self.auth_infos.push(user);
            }
        }
        for context in later.contexts {
            if !self.contexts.iter().any(|c| c.name == context.name) {
                self.contexts.push(context);
            }
        }
        if self.current_context.as_deref().is_none_or(str::is_empty) {
            self.current_context = later.current_context;
        }
        if self.source.is_none() {
            self.source = later.source;
        }
        self
    }

    /// Reads every existing file of a `KUBECONFIG`-style list and merges them in order.
    ///
    /// Missing files and empty entries are skipped (as client-go does for the list); a file listed
    /// twice is read once. Returns `None` when no file exists.
    ///
    /// # Errors
    /// [`Error::Kubeconfig`] when an existing file cannot be read or parsed.
    pub fn read_merged(paths: &[PathBuf]) -> Result<Option<Kubeconfig>> {
        let mut merged: Option<Kubeconfig> = None;
        let mut seen: Vec<&PathBuf> = Vec::new();
        for path in paths {
            if path.as_os_str().is_empty() || seen.contains(&path) || !path.exists() {
                continue;
            }
            seen.push(path);
            let config = Kubeconfig::read(path)?;
            merged = Some(match merged {
                Some(earlier) => earlier.merge(config),
                None => config,
            });
        }
        Ok(merged)
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&NamedContext> {
        self.contexts.iter().find(|c| c.name == name)
    }

    /// The cluster named `name`.
    pub fn cluster(&self, name: &str) -> Option<&NamedCluster> {
        self.clusters.iter().find(|c| c.name == name)
    }

    /// The user named `name`.
    pub fn auth_info(&self, name: &str) -> Option<&NamedAuthInfo> {
        self.auth_infos.iter().find(|u| u.name == name)
    }
}

#[cfg(test)]
#[path = "kubeconfig_tests.rs"]
mod tests;
