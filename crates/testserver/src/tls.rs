//! TLS for the listener: a throw-away CA and a server certificate for `localhost` and `127.0.0.1`,
//! generated per server with rcgen (ring provider), so clients can verify the server for real
//! against the CA in the kubeconfig instead of skipping verification.

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

/// Generates a CA and a server certificate signed by it.
///
/// # Errors
/// `TlsSetupFailed` if key generation or signing fails (it does not in practice).
pub(crate) fn generate() -> Result<Tls, Error> {
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
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(failed)?)
        .map_err(failed)?;

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
        ca_pem: ca.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}
