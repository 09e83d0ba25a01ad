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
//! - ALPN offers `h2` and `http/1.1` (set by the connector in `transport.rs`), so HTTP/2 is used
//!   when the server supports it.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
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

/// Builds the rustls config for `settings`.
///
/// # Errors
/// [`Error::Tls`] when the CA bundle holds no usable certificate, the client key is unreadable,
/// or no CA is configured for an https server whose verification is not skipped.
pub(crate) fn client_config(settings: &TlsSettings) -> Result<ClientConfig> {
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
    let config = match &settings.client_cert_pem {
        Some((cert, key)) => {
            let chain = certificates(cert, "client-certificate")?;
            let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
                Error::Tls(format!("client-key: no usable private key in PEM: {e}"))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Tls(format!("client certificate/key pair: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    // ALPN (`h2`, `http/1.1`) is set by hyper-rustls from the enabled HTTP versions.
    Ok(config)
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
