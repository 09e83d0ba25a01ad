//! TLS for the listener: a throw-away CA and a server certificate for `localhost` and `127.0.0.1`,
//! generated per server with rcgen (ring provider), so clients can verify the server for real
//! against the CA in the kubeconfig instead of skipping verification.

use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::Error;

/// The generated material and a ready acceptor.
pub(crate) struct Tls {
    /// The CA certificate, PEM.
    pub(crate) ca_pem: String,
    pub(crate) acceptor: TlsAcceptor,
}

fn failed(e: impl std::fmt::Display) -> Error {
    Error::TlsSetupFailed(e.to_string())
}

/// A server certificate signed by the CA kept in `data_dir` (`ca.crt`, `ca.key`: written on the
/// first start, so a kubeconfig stays valid across restarts) or, without one, by a new CA.
///
/// # Errors
/// `TlsSetupFailed` if key generation or signing fails (it does not in practice);
/// `DataDirFailed` when the kept CA cannot be read or written.
pub(crate) fn generate(data_dir: Option<&Path>) -> Result<Tls, Error> {
    let Some(dir) = data_dir else {
        return generate_with(KeyPair::generate().map_err(failed)?, None);
    };
    let (cert_path, key_path) = (dir.join("ca.crt"), dir.join("ca.key"));
    let dir_failed = |path: &Path, e: std::io::Error| Error::DataDirFailed {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    if key_path.exists() {
        let key_pem = std::fs::read_to_string(&key_path).map_err(|e| dir_failed(&key_path, e))?;
        let ca_pem = std::fs::read_to_string(&cert_path).map_err(|e| dir_failed(&cert_path, e))?;
        let key = KeyPair::from_pem(&key_pem).map_err(|e| Error::DataDirFailed {
            path: key_path.clone(),
            reason: e.to_string(),
        })?;
        return generate_with(key, Some(ca_pem));
    }
    let key = KeyPair::generate().map_err(failed)?;
    let key_pem = key.serialize_pem();
    let tls = generate_with(key, None)?;
    std::fs::create_dir_all(dir).map_err(|e| dir_failed(dir, e))?;
    std::fs::write(&key_path, key_pem).map_err(|e| dir_failed(&key_path, e))?;
    std::fs::write(&cert_path, &tls.ca_pem).map_err(|e| dir_failed(&cert_path, e))?;
    Ok(tls)
}

/// A CA over `ca_key` (the same subject every time, so a certificate it signs verifies against
/// `kept_ca_pem`, the CA certificate first made with that key) and a server certificate.
fn generate_with(ca_key: KeyPair, kept_ca_pem: Option<String>) -> Result<Tls, Error> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kubegen-testserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(failed)?;

    let server_key = KeyPair::generate().map_err(failed)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(failed)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&server_key, &ca).map_err(failed)?;

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(failed)?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone(), ca.der().clone()], key)
        .map_err(failed)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        ca_pem: kept_ca_pem.unwrap_or_else(|| ca.pem()),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kubeconfig written on the first start stays valid: the CA certificate is kept and the
    /// next server certificate is signed by the same key.
    #[test]
    fn a_data_directory_keeps_the_ca() {
        let dir = tempfile::tempdir().unwrap();
        let first = generate(Some(dir.path())).unwrap();
        let second = generate(Some(dir.path())).unwrap();
        assert_eq!(first.ca_pem, second.ca_pem);
        assert!(dir.path().join("ca.key").exists());
        assert_ne!(generate(None).unwrap().ca_pem, first.ca_pem);
    }
}
