//! rustls client configuration from a kubeconfig's TLS settings (ring provider, never aws-lc-rs).
//!
//! Mirrors client-go `transport/transport.go` (`TLSConfigFor`).
//!
//! # Guarantees
//! - When the config names a CA, only that CA is trusted (like client-go: the cluster CA replaces
//!   the system roots, it does not extend them). When it names none, the platform's trust store is
//!   used (`/etc/ssl/certs` and friends, `SSL_CERT_FILE`/`SSL_CERT_DIR`), as in client-go: clusters
//!   behind a publicly trusted certificate (proxies, managed endpoints) need no CA in the
//!   kubeconfig.
//! - Certificate verification is skipped only when the kubeconfig says
//!   `insecure-skip-tls-verify: true`; then any certificate is accepted and a warning is logged.
//! - A client certificate comes from the kubeconfig, or else from an exec credential plugin
//!   ([`ExecClientCert`]): the plugin may hand out a new one whenever it runs, and every new
//!   connection presents the latest (client-go rotates exec certificates per connection too).
//! - ALPN offers `h2` and `http/1.1` (set by the connector in `transport.rs`), so HTTP/2 is used
//!   when the server supports it.

use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::{Error, Result};

/// TLS material and switches of one cluster/user pair.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    /// PEM bundle of the CA(s) to trust. `None`: no CA configured.
    pub(crate) ca_pem: Option<Vec<u8>>,
    /// Client certificate chain and key (PEM), for certificate authentication.
    pub(crate) client_cert_pem: Option<(Vec<u8>, Vec<u8>)>,
    /// `insecure-skip-tls-verify` from the kubeconfig.
    pub(crate) insecure_skip_verify: bool,
    /// `tls-server-name`: the name to verify instead of the URL's host.
    pub(crate) server_name: Option<String>,
}

impl std::fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSettings")
            .field("ca", &self.ca_pem.as_ref().map(|_| "<pem>"))
            .field(
                "client_cert",
                &self.client_cert_pem.as_ref().map(|_| "<pem>"),
            )
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .field("server_name", &self.server_name)
            .finish()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the rustls config for `settings`; `exec_cert` is the certificate slot of the user's exec
/// plugin, used when the kubeconfig names no client certificate of its own.
///
/// # Errors
/// [`Error::Tls`] when the CA bundle holds no usable certificate, the client key is unreadable,
/// or no CA is configured for an https server whose verification is not skipped.
pub(crate) fn client_config(
    settings: &TlsSettings,
    exec_cert: Option<Arc<ExecClientCert>>,
) -> Result<ClientConfig> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(format!("protocol versions: {e}")))?;
    let builder = if settings.insecure_skip_verify {
        tracing::warn!("insecure-skip-tls-verify is set: the server certificate is not verified");
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else {
        builder.with_root_certificates(root_store(settings.ca_pem.as_deref())?)
    };
    let config = match (&settings.client_cert_pem, exec_cert) {
        (Some((cert, key)), _) => {
            let chain = certificates(cert, "client-certificate")?;
            let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
                Error::Tls(format!("client-key: no usable private key in PEM: {e}"))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Tls(format!("client certificate/key pair: {e}")))?
        }
        (None, Some(exec_cert)) => builder.with_client_cert_resolver(exec_cert),
        (None, None) => builder.with_no_client_auth(),
    };
    // ALPN (`h2`, `http/1.1`) is set by hyper-rustls from the enabled HTTP versions.
    Ok(config)
}

/// The client certificate an exec credential plugin returned last (`clientCertificateData` and
/// `clientKeyData`). The plugin runs before a request is sent, so the slot is filled before the
/// first handshake; a later run with a new certificate replaces it for new connections.
#[derive(Debug, Default)]
pub(crate) struct ExecClientCert {
    current: parking_lot::RwLock<Option<InstalledCert>>,
}

/// A certificate in the slot, with the PEM pair it was built from (to skip rebuilding an unchanged
/// one when the plugin runs again).
#[derive(Debug)]
struct InstalledCert {
    cert_pem: Vec<u8>,
    key_pem: Vec<u8>,
    key: Arc<CertifiedKey>,
}

impl ExecClientCert {
    /// Installs a certificate chain and key (PEM) for the next handshakes.
    ///
    /// # Errors
    /// [`Error::Tls`] when either PEM is unusable or the key does not belong to the certificate.
    pub(crate) fn set(&self, cert_pem: &[u8], key_pem: &[u8]) -> Result<()> {
        if let Some(installed) = self.current.read().as_ref()
            && installed.cert_pem == cert_pem
            && installed.key_pem == key_pem
        {
            return Ok(());
        }
        let chain = certificates(cert_pem, "clientCertificateData")?;
        let key = PrivateKeyDer::from_pem_slice(key_pem)
            .map_err(|e| Error::Tls(format!("clientKeyData: no usable private key in PEM: {e}")))?;
        let signing_key = provider()
            .key_provider
            .load_private_key(key)
            .map_err(|e| Error::Tls(format!("clientKeyData: {e}")))?;
        let certified = CertifiedKey::new(chain, signing_key);
        certified
            .keys_match()
            .map_err(|e| Error::Tls(format!("clientCertificateData/clientKeyData: {e}")))?;
        *self.current.write() = Some(InstalledCert {
            cert_pem: cert_pem.to_vec(),
            key_pem: key_pem.to_vec(),
            key: Arc::new(certified),
        });
        Ok(())
    }
}

impl ResolvesClientCert for ExecClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.current
            .read()
            .as_ref()
            .map(|installed| Arc::clone(&installed.key))
    }

    fn has_certs(&self) -> bool {
        self.current.read().is_some()
    }
}

fn certificates(pem: &[u8], field: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Tls(format!("{field}: invalid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Tls(format!("{field}: no CERTIFICATE block in PEM")));
    }
    Ok(certs)
}

fn root_store(ca_pem: Option<&[u8]>) -> Result<RootCertStore> {
    let Some(pem) = ca_pem else {
        let found = rustls_native_certs::load_native_certs();
        let errors = found.errors.iter().map(ToString::to_string).collect();
        return system_roots(found.certs, errors);
    };
    let mut store = RootCertStore::empty();
    for cert in certificates(pem, "certificate-authority")? {
        store
            .add(cert)
            .map_err(|e| Error::Tls(format!("certificate-authority: unusable certificate: {e}")))?;
    }
    Ok(store)
}

/// The platform's roots, for a cluster without a configured CA. Unparsable entries are skipped (a
/// trust store often holds a few); finding none at all is an error that says where we looked.
fn system_roots(certs: Vec<CertificateDer<'static>>, errors: Vec<String>) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    let (added, skipped) = store.add_parsable_certificates(certs);
    if added == 0 {
        let problems = if errors.is_empty() {
            String::new()
        } else {
            format!(" ({})", errors.join("; "))
        };
        return Err(Error::Tls(format!(
            "no certificate-authority configured for an https server and no system root \
             certificates found{problems}; set certificate-authority(-data), or \
             insecure-skip-tls-verify, or SSL_CERT_FILE"
        )));
    }
    tracing::debug!(
        added,
        skipped,
        ?errors,
        "no certificate-authority configured: using the system roots"
    );
    Ok(store)
}

/// Accepts any server certificate; used only for `insecure-skip-tls-verify: true`. Signatures are
/// still checked so the handshake itself is sound.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throwaway_ca() -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
        let mut params =
            rcgen::CertificateParams::new(Vec::new()).unwrap_or_else(|e| panic!("{e}"));
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap_or_else(|e| panic!("{e}"));
        cert.der().clone()
    }

    #[test]
    fn system_roots_skip_unparsable_entries() -> Result<()> {
        let garbage = CertificateDer::from(vec![0x30, 0x03, 0x01, 0x01, 0x00]);
        let store = system_roots(vec![garbage, throwaway_ca()], Vec::new())?;
        assert_eq!(store.len(), 1);
        Ok(())
    }

    #[test]
    fn no_system_roots_is_an_error_that_says_what_was_tried() {
        let err = system_roots(Vec::new(), vec!["/etc/ssl/certs: not found".to_owned()])
            .expect_err("no roots");
        let message = err.to_string();
        assert!(
            message.contains("no system root certificates found"),
            "{message}"
        );
        assert!(message.contains("/etc/ssl/certs: not found"), "{message}");
        assert!(message.contains("certificate-authority"), "{message}");
    }
}
