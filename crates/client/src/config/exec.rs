//! Exec credential plugins (`users[].user.exec`): run a command, read an `ExecCredential` from its
//! stdout, use its token and/or client certificate until `expirationTimestamp`.
//!
//! Mirrors client-go `plugin/pkg/client/auth/exec/exec.go` for `client.authentication.k8s.io/v1`
//! and `v1beta1` (how `aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin` work).
//!
//! # Guarantees
//! - The plugin runs with the kubeconfig's `args` and `env` added to our environment, stdin closed,
//!   and `KUBERNETES_EXEC_INFO` set to an `ExecCredential` describing the request (with the
//!   cluster when `provideClusterInfo` is set; the cluster's `client.authentication.k8s.io/exec`
//!   extension, if any, as its `config`, which is how a ClusterProfile's access provider tells
//!   one plugin binary which cluster it is asked about).
//! - Its credential is cached until `expirationTimestamp` (forever if it has none), and dropped
//!   when the server answers 401. Concurrent requests wait for one plugin run, not one each.
//! - Failures name the command, its exit status and the start of its stderr, plus `installHint`
//!   when the command does not exist.
//! - A client certificate (`clientCertificateData` + `clientKeyData`, as Teleport or Pinniped hand
//!   out) goes to `ExecClientCert`, which new TLS connections present; a token, if any, is sent
//!   as a bearer token. A client certificate in the kubeconfig itself takes precedence.
//!
//! # Differences from client-go
//! Interactive plugins (reading a terminal) are not supported and fail with a clear error. When
//! the plugin's certificate changes, client-go closes the open connections; kubegen lets them
//! finish and uses the new certificate for new ones.

use std::time::Duration;

use base64::Engine;
use serde::Deserialize;

use std::sync::Arc;

use crate::config::kubeconfig::{Cluster, EXEC_EXTENSION, ExecConfig};
use crate::error::{Error, Result, excerpt};
use crate::secret_token::SecretToken;
use crate::tls::ExecClientCert;

/// A plugin that does not finish within this time is killed and reported.
const PLUGIN_TIMEOUT: Duration = Duration::from_secs(60);

/// The plugin's answer (`ExecCredential`), only the fields we use.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    api_version: Option<String>,
    kind: Option<String>,
    status: Option<CredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CredentialStatus {
    token: Option<String>,
    expiration_timestamp: Option<jiff::Timestamp>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// What the plugin handed out and when it stops being valid. Its certificate, if any, lives in
/// the [`ExecClientCert`] slot.
#[derive(Debug)]
struct Credential {
    token: Option<SecretToken>,
    /// `None`: valid until the server rejects it.
    expires: Option<jiff::Timestamp>,
}

/// Runs an exec plugin on demand and caches its credential.
#[derive(Debug)]
pub(crate) struct ExecAuth {
    config: ExecConfig,
    /// The `spec.cluster` object sent to the plugin when `provideClusterInfo` is set.
    cluster: Option<serde_json::Value>,
    /// The last credential. Invariant: never holds an expired credential after `token()` returns.
    cached: tokio::sync::Mutex<Option<Credential>>,
    /// Where the plugin's client certificate goes; the TLS config reads it.
    client_cert: Arc<ExecClientCert>,
}

impl ExecAuth {
    /// Validates the plugin configuration; the plugin itself first runs on the first request.
    ///
    /// # Errors
    /// [`Error::ExecPlugin`] for an unsupported `apiVersion` or `interactiveMode: Always`.
    pub(crate) fn new(
        config: ExecConfig,
        cluster: &Cluster,
        ca_pem: Option<&[u8]>,
    ) -> Result<ExecAuth> {
        let fail = |message: String| Error::ExecPlugin {
            command: config.command.clone(),
            message,
        };
        match config.api_version.as_deref() {
            Some("client.authentication.k8s.io/v1" | "client.authentication.k8s.io/v1beta1") => {}
            other => {
                return Err(fail(format!(
                    "unsupported exec apiVersion {other:?} (use client.authentication.k8s.io/v1 or v1beta1)"
                )));
            }
        }
        if config.interactive_mode.as_deref() == Some("Always") {
            return Err(fail(
                "interactiveMode: Always needs a terminal, which this client never has".into(),
            ));
        }
        let cluster = config.provide_cluster_info.then(|| {
            let mut info = serde_json::json!({
                "server": cluster.server,
                "insecure-skip-tls-verify": cluster.insecure_skip_tls_verify,
            });
            if let Some(pem) = ca_pem {
                info["certificate-authority-data"] =
                    base64::engine::general_purpose::STANDARD.encode(pem).into();
            }
            if let Some(name) = &cluster.tls_server_name {
                info["tls-server-name"] = name.clone().into();
            }
            let extension = cluster.extensions.iter().find(|e| e.name == EXEC_EXTENSION);
            if let Some(extension) = extension {
                info["config"] = extension.extension.clone();
            }
            info
        });
        Ok(ExecAuth {
            config,
            cluster,
            cached: tokio::sync::Mutex::new(None),
            client_cert: Arc::default(),
        })
    }

    /// The slot the plugin's client certificates go to, for the TLS config.
    pub(crate) fn client_cert(&self) -> Arc<ExecClientCert> {
        Arc::clone(&self.client_cert)
    }

    /// The current token (`None` from a plugin that returns only a client certificate), running
    /// the plugin if there is no credential or it expired.
    pub(crate) async fn token(&self) -> Result<Option<SecretToken>> {
        let mut cached = self.cached.lock().await;
        if let Some(credential) = cached.as_ref()
            && credential
                .expires
                .is_none_or(|at| at > jiff::Timestamp::now())
        {
            return Ok(credential.token.clone());
        }
        let credential = self.run().await?;
        let token = credential.token.clone();
        *cached = Some(credential);
        Ok(token)
    }

    /// Forgets the cached credential (after a 401). If a refresh is running, it wins anyway.
    pub(crate) fn invalidate(&self) {
        if let Ok(mut cached) = self.cached.try_lock() {
            *cached = None;
        }
    }

    fn fail(&self, message: impl Into<String>) -> Error {
        Error::ExecPlugin {
            command: self.config.command.clone(),
            message: message.into(),
        }
    }

    fn exec_info(&self) -> String {
        let api_version = self.config.api_version.as_deref().unwrap_or_default();
        let mut spec = serde_json::json!({"interactive": false});
        if let Some(cluster) = &self.cluster {
            spec["cluster"] = cluster.clone();
        }
        serde_json::json!({"apiVersion": api_version, "kind": "ExecCredential", "spec": spec})
            .to_string()
    }

    async fn run(&self) -> Result<Credential> {
        let mut command = tokio::process::Command::new(&self.config.command);
        command
            .args(&self.config.args)
            .envs(self.config.env.iter().map(|v| (&v.name, &v.value)))
            .env("KUBERNETES_EXEC_INFO", self.exec_info())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let output = match tokio::time::timeout(PLUGIN_TIMEOUT, command.output()).await {
            Err(_) => return Err(self.fail(format!("did not finish within {PLUGIN_TIMEOUT:?}"))),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                let hint = self
                    .config
                    .install_hint
                    .as_deref()
                    .unwrap_or("check the command in the kubeconfig");
                return Err(self.fail(format!("command not found ({hint})")));
            }
            Ok(Err(e)) => return Err(self.fail(format!("cannot start: {e}"))),
            Ok(Ok(output)) => output,
        };
        if !output.status.success() {
            return Err(self.fail(format!(
                "{}; stderr: {}",
                output.status,
                excerpt(&output.stderr)
            )));
        }
        self.parse(&output.stdout)
    }

    fn parse(&self, stdout: &[u8]) -> Result<Credential> {
        let credential: ExecCredential = serde_json::from_slice(stdout).map_err(|e| {
            self.fail(format!(
                "stdout is not an ExecCredential: {e} (stdout: {})",
                excerpt(stdout)
            ))
        })?;
        if credential.kind.as_deref() != Some("ExecCredential") {
            return Err(self.fail(format!(
                "stdout has kind {:?}, expected ExecCredential",
                credential.kind
            )));
        }
        if credential.api_version != self.config.api_version {
            return Err(self.fail(format!(
                "plugin answered apiVersion {:?}, the kubeconfig asked for {:?}",
                credential.api_version, self.config.api_version
            )));
        }
        let status = credential
            .status
            .ok_or_else(|| self.fail("ExecCredential has no status"))?;
        let token = status.token.filter(|t| !t.is_empty()).map(SecretToken::new);
        let certificate = match (status.client_certificate_data, status.client_key_data) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(
                    self.fail("ExecCredential has clientCertificateData but no clientKeyData")
                );
            }
            (None, Some(_)) => {
                return Err(
                    self.fail("ExecCredential has clientKeyData but no clientCertificateData")
                );
            }
        };
        if token.is_none() && certificate.is_none() {
            return Err(
                self.fail("ExecCredential status has neither a token nor a client certificate")
            );
        }
        if let Some((cert, key)) = certificate {
            self.client_cert
                .set(cert.as_bytes(), key.as_bytes())
                .map_err(|e| self.fail(e.to_string()))?;
        }
        Ok(Credential {
            token,
            expires: status.expiration_timestamp,
        })
    }
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
