use std::sync::Arc;

use rustls_pki_types::ServerName;
use tokio::net::TcpStream;

use super::*;
use crate::webhook::SelfSigned;

/// Generates a fresh CA + serving certificate into `dir` (replacing what is there).
fn fresh(dir: &Path) -> String {
    for file in ["tls.crt", "tls.key", "ca.crt"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let bootstrap = SelfSigned {
        dns_names: vec!["localhost".to_owned()],
        ..SelfSigned::default()
    };
    bootstrap.files(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// Connects with a rustls client trusting `ca` and returns the leaf certificate served.
async fn served_leaf(addr: std::net::SocketAddr, ca: &str) -> Vec<u8> {
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_slice(ca.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    roots.add(ca).unwrap_or_else(|e| panic!("{e}"));
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap_or_else(|e| panic!("{e}"))
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let name = ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
    let tls = connector
        .connect(name, tcp)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, session) = tls.get_ref();
    let chain = session
        .peer_certificates()
        .unwrap_or_else(|| panic!("no peer certificate"));
    chain[0].to_vec()
}

#[tokio::test]
async fn replacing_the_files_changes_the_served_certificate_without_a_restart() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let first_ca = fresh(dir.path());
    let metrics = crate::ProcessMetrics::default();
    let server = crate::webhook::WebhookServer::new(&metrics);
    let options = crate::webhook::WebhookOptions::default()
        .bind_address(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .cert_dir(dir.path());
    let client = kubegen_client::Client::new(kubegen_client::Config::new(
        "https://127.0.0.1:1"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let (task, addr) = server
        .start(&client, &options)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(server.is_started());
    let first = served_leaf(addr, &first_ca).await;
    let on_disk = |dir: &Path| {
        CertificateDer::pem_file_iter(dir.join("tls.crt"))
            .unwrap_or_else(|e| panic!("{e}"))
            .next()
            .unwrap_or_else(|| panic!("empty"))
            .unwrap_or_else(|e| panic!("{e}"))
            .to_vec()
    };
    assert_eq!(first, on_disk(dir.path()));

    let second_ca = fresh(dir.path());
    let second = served_leaf(addr, &second_ca).await;
    assert_ne!(first, second);
    assert_eq!(second, on_disk(dir.path()));

    // A half-written rotation (key missing) keeps serving the last good pair.
    std::fs::remove_file(dir.path().join("tls.key")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served_leaf(addr, &second_ca).await, second);
    task.abort();
}
