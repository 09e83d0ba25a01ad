//! Webhooks on loopback: an operator's webhook configuration names an in-cluster Service
//! (`clientConfig.service`), and there is no Service in a process. So each webhook's
//! `clientConfig` is rewritten to `url: https://127.0.0.1:<port><its service path>`, on a port
//! the operator's webhook server then listens on (with a self-signed certificate whose CA its
//! bootstrap writes into the configuration, as in a cluster). The server then calls the
//! operator at admission exactly as a real one calls it through the Service.

use std::path::{Path, PathBuf};

use kubegen_runtime::manifests;
use serde_json::{Value, json};

use crate::error::Error;
use crate::manifest::Manifest;

/// Where the operator's webhook server must listen for the installed configuration to reach
/// it, and where its self-signed certificate goes (removed when the [`crate::Embedded`] drops).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopbackWebhook {
    /// The port on 127.0.0.1 every webhook of the configuration calls.
    pub port: u16,
    /// A fresh directory for the webhook server's certificate.
    pub cert_dir: PathBuf,
}

/// A port on 127.0.0.1 nothing listens on now (the webhook server binds it moments later).
pub(crate) fn free_port() -> Result<u16, Error> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(Error::NoWebhookPort)
}

/// The webhook configuration in `path` (its first document) with every webhook's
/// `clientConfig` calling `https://127.0.0.1:<port><its path>` instead of its Service.
pub(crate) fn configuration(manifest: &Manifest, port: u16) -> Result<Value, Error> {
    let invalid = |reason: String| Error::WebhookConfigurationInvalid {
        manifest: manifest.source.to_string(),
        reason,
    };
    let mut configuration =
        manifests::documents(Path::new(manifest.source.as_ref()), &manifest.yaml)
            .map_err(|e| invalid(e.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| invalid("no document".into()))?;
    let webhooks = configuration
        .get_mut("webhooks")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| invalid("no webhooks".into()))?;
    for webhook in webhooks {
        let service_path = webhook
            .pointer("/clientConfig/service/path")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("a webhook without clientConfig.service.path".into()))?
            .to_owned();
        webhook["clientConfig"] = json!({"url": format!("https://127.0.0.1:{port}{service_path}")});
    }
    Ok(configuration)
}

#[cfg(test)]
#[path = "loopback_tests.rs"]
mod tests;
