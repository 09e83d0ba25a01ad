//! In-cluster configuration: the pod's service account, found through the environment and files
//! the kubelet provides.
//!
//! Mirrors client-go `rest.InClusterConfig` (`rest/config.go`).
//!
//! # Guarantees
//! - The server is `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT` (IPv6 hosts are
//!   bracketed).
//! - The token file is read once at load (so a missing token fails early) and then re-read every
//!   [`InClusterPaths::token_reread`] (bound service-account tokens are rotated by the kubelet).
//! - All paths are overridable, so tests need no real pod.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::TokenFile;
use crate::error::{Error, Result};

/// Where the service-account files live.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InClusterPaths {
    /// The bearer token (`.../serviceaccount/token`).
    pub token: PathBuf,
    /// The cluster CA (`.../serviceaccount/ca.crt`).
    pub ca: PathBuf,
    /// The pod's namespace (`.../serviceaccount/namespace`).
    pub namespace: PathBuf,
    /// How often the token file is re-read. client-go uses one minute.
    pub token_reread: Duration,
}

const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

impl Default for InClusterPaths {
    fn default() -> Self {
        InClusterPaths::in_dir(PathBuf::from(SERVICE_ACCOUNT_DIR))
    }
}

impl InClusterPaths {
    /// The standard file names (`token`, `ca.crt`, `namespace`) inside `dir`.
    pub fn in_dir(dir: PathBuf) -> InClusterPaths {
        InClusterPaths {
            token: dir.join("token"),
            ca: dir.join("ca.crt"),
            namespace: dir.join("namespace"),
            token_reread: Duration::from_secs(60),
        }
    }
}

/// What a pod finds about its cluster: the parts of its in-cluster [`Config`](super::Config), which
/// `Config::load` builds from them.
#[derive(Debug)]
pub(crate) struct InCluster {
    /// `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`.
    pub(crate) url: http::Uri,
    /// The pod's namespace, `default` when the file is missing or empty.
    pub(crate) namespace: String,
    /// The cluster CA, PEM.
    pub(crate) ca: Vec<u8>,
    /// The service-account token, re-read every [`InClusterPaths::token_reread`].
    pub(crate) token: Arc<TokenFile>,
}

/// Finds the in-cluster settings from the service host/port (from the environment) and `paths`.
///
/// # Errors
/// [`Error::InCluster`] when the environment variables are unset or a file is unreadable; the
/// message names the variable or file.
pub(crate) fn load(
    host: Option<&str>,
    port: Option<&str>,
    paths: &InClusterPaths,
) -> Result<InCluster> {
    let (Some(host), Some(port)) = (
        host.filter(|h| !h.is_empty()),
        port.filter(|p| !p.is_empty()),
    ) else {
        return Err(Error::InCluster(
            "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set".into(),
        ));
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let url: http::Uri = format!("https://{host}:{port}").parse().map_err(|e| {
        Error::InCluster(format!(
            "KUBERNETES_SERVICE_HOST/PORT do not form a URL: {e}"
        ))
    })?;
    let read = |path: &PathBuf, what: &str| {
        std::fs::read(path).map_err(|e| Error::InCluster(format!("{what} {}: {e}", path.display())))
    };
    let ca = read(&paths.ca, "CA file")?;
    let token = Arc::new(TokenFile::new(paths.token.clone(), paths.token_reread));
    token.token().map_err(|e| Error::InCluster(e.to_string()))?;
    let namespace = match std::fs::read_to_string(&paths.namespace) {
        Ok(ns) if !ns.trim().is_empty() => ns.trim().to_owned(),
        _ => "default".to_owned(),
    };
    Ok(InCluster {
        url,
        namespace,
        ca,
        token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).expect("write test file");
    }

    #[test]
    fn loads_server_ca_namespace_and_token_from_paths() -> Result<()> {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "token", "tok\n");
        write(dir.path(), "ca.crt", "PEM");
        write(dir.path(), "namespace", "prod\n");
        let found = load(
            Some("10.0.0.1"),
            Some("443"),
            &InClusterPaths::in_dir(dir.path().into()),
        )?;
        assert_eq!(found.url.to_string(), "https://10.0.0.1:443/");
        assert_eq!(found.namespace, "prod");
        assert_eq!(found.ca, b"PEM");
        assert_eq!(found.token.token()?.expose(), "tok");
        Ok(())
    }

    #[test]
    fn ipv6_service_host_is_bracketed() -> Result<()> {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "token", "tok");
        write(dir.path(), "ca.crt", "PEM");
        let found = load(
            Some("fd00::1"),
            Some("6443"),
            &InClusterPaths::in_dir(dir.path().into()),
        )?;
        assert_eq!(found.url.to_string(), "https://[fd00::1]:6443/");
        assert_eq!(found.namespace, "default", "missing namespace file");
        Ok(())
    }

    #[test]
    fn missing_env_or_files_are_named_in_the_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = InClusterPaths::in_dir(dir.path().into());
        let err = load(None, Some("443"), &paths).expect_err("no host");
        assert!(err.to_string().contains("KUBERNETES_SERVICE_HOST"), "{err}");
        let err = load(Some("h"), Some("443"), &paths).expect_err("no CA");
        assert!(err.to_string().contains("ca.crt"), "{err}");
        write(dir.path(), "ca.crt", "PEM");
        let err = load(Some("h"), Some("443"), &paths).expect_err("no token");
        assert!(err.to_string().contains("token"), "{err}");
    }
}
