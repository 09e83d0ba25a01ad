//! TLS against a real local TLS server with a throwaway CA (rcgen): the right CA connects (over
//! HTTP/2 via ALPN), a wrong CA fails, client certificates authenticate, `tls-server-name` and
//! `insecure-skip-tls-verify` behave as in client-go.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{Client, Config, GetOptions, Kubeconfig, LoadOptions, ResourceClient};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// ALPN offer of a server that speaks both HTTP versions.
const BOTH: &[&str] = &["h2", "http/1.1"];

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn ca(name: &str) -> Result<CertifiedIssuer<'static, KeyPair>, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate()?)
}

/// A certificate signed by `ca`, as (cert PEM, key PEM).
fn leaf(
    ca: &CertifiedIssuer<'static, KeyPair>,
    sans: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> Result<(String, String), rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params =
        CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
    params.distinguished_name.push(DnType::CommonName, "test");
    params.extended_key_usages = vec![usage];
    Ok((params.signed_by(&key, ca)?.pem(), key.serialize_pem()))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Starts a TLS server answering every GET with a ConfigMap whose data tells what it saw: the
/// HTTP version, the Authorization header and whether a client certificate was presented. `alpn`
/// lists the protocols the server offers.
async fn serve(
    cert_pem: &str,
    key_pem: &str,
    client_ca_pem: Option<&str>,
    alpn: &[&str],
) -> Result<SocketAddr, Box<dyn std::error::Error>> {
    let certs =
        CertificateDer::pem_slice_iter(cert_pem.as_bytes()).collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?;
    let builder = match client_ca_pem {
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(cert?)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider(),
            )
            .build()?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key)?;
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let client_cert = tls.get_ref().1.peer_certificates().is_some();
                let service = hyper::service::service_fn(
                    move |req: http::Request<hyper::body::Incoming>| {
                        let auth = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_owned();
                        let body = serde_json::json!({
                            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"},
                            "data": {"version": format!("{:?}", req.version()), "auth": auth, "clientCert": client_cert.to_string()},
                        });
                        async move {
                            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(
                                body.to_string(),
                            ))))
                        }
                    },
                );
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A kubeconfig for `server` with the given extra cluster and user fields.
fn config(
    server: &str,
    cluster_fields: &str,
    user_fields: &str,
) -> Result<Config, kubegen_client::Error> {
    let yaml = format!(
        "current-context: t\n\
         contexts: [{{name: t, context: {{cluster: c, user: u}}}}]\n\
         clusters: [{{name: c, cluster: {{server: '{server}'{cluster_fields}}}}}]\n\
         users: [{{name: u, user: {{token: tok{user_fields}}}}}]\n"
    );
    Config::from_kubeconfig(
        &Kubeconfig::parse(&yaml, Path::new("/test/kubeconfig"))?,
        &LoadOptions::default(),
    )
}

async fn fetch(
    config: Config,
) -> Result<std::collections::BTreeMap<String, String>, kubegen_client::Error> {
    let api = ResourceClient::<ConfigMap>::namespaced(Client::new(config)?, "default");
    Ok(api
        .get("seen", &GetOptions::default())
        .await?
        .data
        .unwrap_or_default())
}

#[tokio::test]
async fn right_ca_connects_over_http2_with_bearer_token() -> TestResult {
    let ca = ca("right")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, None, BOTH).await?;
    let ca_field = format!(", certificate-authority-data: {}", b64(&ca.pem()));
    let seen = fetch(config(&format!("https://{addr}"), &ca_field, "")?).await?;
    assert_eq!(seen["version"], "HTTP/2.0", "ALPN negotiated h2");
    assert_eq!(seen["auth"], "Bearer tok");
    assert_eq!(seen["clientCert"], "false");
    Ok(())
}

#[tokio::test]
async fn wrong_ca_fails_to_connect() -> TestResult {
    let (right, wrong) = (ca("right")?, ca("wrong")?);
    let (cert, key) = leaf(&right, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, None, BOTH).await?;
    let ca_field = format!(", certificate-authority-data: {}", b64(&wrong.pem()));
    let err = fetch(config(&format!("https://{addr}"), &ca_field, "")?)
        .await
        .expect_err("untrusted server");
    assert!(err.is_connect(), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    Ok(())
}

#[tokio::test]
async fn client_certificate_authenticates() -> TestResult {
    let ca = ca("ca")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, Some(&ca.pem()), BOTH).await?;
    let (client_cert, client_key) = leaf(&ca, &["client"], ExtendedKeyUsagePurpose::ClientAuth)?;
    let ca_field = format!(", certificate-authority-data: {}", b64(&ca.pem()));
    let user = format!(
        ", client-certificate-data: {}, client-key-data: {}",
        b64(&client_cert),
        b64(&client_key)
    );
    let seen = fetch(config(&format!("https://{addr}"), &ca_field, &user)?).await?;
    assert_eq!(seen["clientCert"], "true");

    let err = fetch(config(&format!("https://{addr}"), &ca_field, "")?)
        .await
        .expect_err("no client cert");
    assert!(
        err.is_connect() || matches!(err, kubegen_client::Error::RequestFailed { .. }),
        "{err:?}"
    );
    Ok(())
}

#[tokio::test]
async fn exec_plugin_client_certificate_authenticates() -> TestResult {
    let ca = ca("ca")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, Some(&ca.pem()), BOTH).await?;
    let (client_cert, client_key) = leaf(&ca, &["client"], ExtendedKeyUsagePurpose::ClientAuth)?;
    // A certificate-only plugin, as Teleport's and Pinniped's are: no token at all.
    let dir = tempfile::tempdir()?;
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
        "status": {"clientCertificateData": client_cert, "clientKeyData": client_key},
    });
    std::fs::write(dir.path().join("credential.json"), credential.to_string())?;
    let script = dir.path().join("plugin.sh");
    std::fs::write(
        &script,
        format!("cat '{}'", dir.path().join("credential.json").display()),
    )?;
    let yaml = format!(
        "current-context: t\n\
         contexts: [{{name: t, context: {{cluster: c, user: u}}}}]\n\
         clusters: [{{name: c, cluster: {{server: 'https://{addr}', certificate-authority-data: {}}}}}]\n\
         users: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ['{}']}}}}}}]\n",
        b64(&ca.pem()),
        script.display()
    );
    let config = Config::from_kubeconfig(
        &Kubeconfig::parse(&yaml, Path::new("/test/kubeconfig"))?,
        &LoadOptions::default(),
    )?;
    let seen = fetch(config).await?;
    assert_eq!(seen["clientCert"], "true");
    assert_eq!(
        seen["auth"], "",
        "no bearer token from a certificate-only plugin"
    );
    Ok(())
}

#[tokio::test]
async fn tls_server_name_is_verified_instead_of_the_host() -> TestResult {
    let ca = ca("ca")?;
    let (cert, key) = leaf(
        &ca,
        &["kubernetes.internal"],
        ExtendedKeyUsagePurpose::ServerAuth,
    )?;
    let addr = serve(&cert, &key, None, BOTH).await?;
    let ca_field = format!(", certificate-authority-data: {}", b64(&ca.pem()));
    let err = fetch(config(&format!("https://{addr}"), &ca_field, "")?)
        .await
        .expect_err("name mismatch");
    assert!(
        err.to_string()
            .contains("certificate not valid for name \"127.0.0.1\""),
        "{err}"
    );
    let named = format!("{ca_field}, tls-server-name: kubernetes.internal");
    assert_eq!(
        fetch(config(&format!("https://{addr}"), &named, "")?).await?["version"],
        "HTTP/2.0"
    );
    Ok(())
}

#[tokio::test]
async fn insecure_skip_tls_verify_accepts_an_unknown_ca() -> TestResult {
    let ca = ca("unknown")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, None, BOTH).await?;
    let seen = fetch(config(
        &format!("https://{addr}"),
        ", insecure-skip-tls-verify: true",
        "",
    )?)
    .await?;
    assert_eq!(seen["auth"], "Bearer tok");
    Ok(())
}

#[tokio::test]
async fn https_without_a_ca_trusts_the_system_roots_only() -> TestResult {
    // Like client-go, no certificate-authority means the platform's trust store; a throwaway CA
    // is not in it. On a machine without any system roots, the client says so up front instead.
    let ca = ca("not-a-system-root")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, None, BOTH).await?;
    let err = fetch(config(&format!("https://{addr}"), "", "")?)
        .await
        .expect_err("a server outside the system roots");
    let message = err.to_string();
    assert!(
        message.contains("UnknownIssuer") || message.contains("no system root certificates found"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn falls_back_to_http1_when_the_server_offers_no_h2() -> TestResult {
    let ca = ca("ca")?;
    let (cert, key) = leaf(&ca, &["127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth)?;
    let addr = serve(&cert, &key, None, &["http/1.1"]).await?;
    let ca_field = format!(", certificate-authority-data: {}", b64(&ca.pem()));
    let seen = fetch(config(&format!("https://{addr}"), &ca_field, "")?).await?;
    assert_eq!(seen["version"], "HTTP/1.1");
    assert_eq!(seen["auth"], "Bearer tok");
    Ok(())
}
