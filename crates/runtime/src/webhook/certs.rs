//! The webhook server's certificate, read from `tls.crt` and `tls.key` in the certificate
//! directory and re-read when they change on disk, so a rotation (cert-manager renewing the
//! Secret, kubelet swapping the mounted files) takes effect without a restart. The counterpart
//! of controller-runtime's `pkg/certwatcher`.
//!
//! # How a change is noticed
//! [`CertWatcher`] is rustls's [`ResolvesServerCert`]: at every TLS handshake it compares the
//! files' modification time and length with those of the pair it serves (two `stat` calls; the
//! API server keeps its connections to a webhook open, so handshakes are rare) and loads the
//! new pair when they differ. No background task, no missed event: the first handshake after a
//! rotation sees it. A pair that does not load (cert written, key not yet; a key that does not
//! match the certificate) is logged and the previous pair kept; the next handshake tries again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::Error;

/// What identifies one version of the files: modification time and length of each.
type Stamp = [(Option<SystemTime>, u64); 2];

/// Serves the certificate pair at `cert` and `key`, reloading it when the files change.
#[derive(Debug)]
pub struct CertWatcher {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    /// The pair served and the stamp of the files it was loaded from.
    current: Mutex<(Arc<CertifiedKey>, Stamp)>,
}

impl CertWatcher {
    /// Loads the pair at `cert` (PEM chain, leaf first) and `key` (PEM private key).
    ///
    /// # Errors
    /// [`Error::CertificateUnreadable`] naming the file and the problem.
    pub fn new(cert: &Path, key: &Path) -> Result<CertWatcher, Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let stamp = stamp(cert, key);
        let loaded = load(cert, key, &provider)?;
        Ok(CertWatcher {
            cert: cert.to_owned(),
            key: key.to_owned(),
            provider,
            current: Mutex::new((Arc::new(loaded), stamp)),
        })
    }

    /// The pair to serve now: the files' if they changed and load, else the previous one.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let stamp = stamp(&self.cert, &self.key);
        let mut current = self.current.lock();
        if current.1 != stamp {
            match load(&self.cert, &self.key, &self.provider) {
                Ok(loaded) => {
                    tracing::info!(cert = %self.cert.display(), "webhook certificate reloaded");
                    *current = (Arc::new(loaded), stamp);
                }
                Err(error) => {
                    tracing::warn!(%error, "webhook certificate changed but does not load; serving the previous one");
                }
            }
        }
        Arc::clone(&current.0)
    }
}

impl ResolvesServerCert for CertWatcher {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn stamp(cert: &Path, key: &Path) -> Stamp {
    [cert, key].map(|path| match std::fs::metadata(path) {
        Ok(meta) => (meta.modified().ok(), meta.len()),
        Err(_) => (None, 0),
    })
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> Result<CertifiedKey, Error> {
    let unreadable = |file: &Path, reason: String| Error::CertificateUnreadable {
        file: file.to_owned(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| unreadable(cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| unreadable(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(unreadable(cert, "no CERTIFICATE block".to_owned()));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| unreadable(key, e.to_string()))?;
    CertifiedKey::from_der(chain, private, provider).map_err(|e| unreadable(key, e.to_string()))
}

#[cfg(test)]
#[path = "certs_tests.rs"]
mod tests;
