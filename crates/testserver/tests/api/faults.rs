//! Fault injection, authentication, TLS and shutdown through raw HTTP.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use kubegen_testserver::{Failure, RequestMatch, ServerOptions, TestServer};
use serde_json::json;

#[tokio::test]
async fn fail_next_returns_429_with_retry_after_then_recovers() {
    let h = start().await;
    let faults = h.server.faults();
    faults.fail_next(
        2,
        RequestMatch::any().verb("list").resource("configmaps"),
        Failure::TooManyRequests {
            retry_after_seconds: 3,
        },
    );
    assert_eq!(
        h.http.get("/api/v1/namespaces/default/secrets").await.code,
        200,
        "other resources unaffected"
    );
    for _ in 0..2 {
        let reply = h.http.get(CM).await;
        assert_status(&reply, 429, "TooManyRequests");
        assert_eq!(reply.headers["retry-after"], "3");
        assert_eq!(reply.body["details"]["retryAfterSeconds"], 3);
    }
    assert_eq!(h.http.get(CM).await.code, 200);
}

#[tokio::test]
async fn fail_next_can_return_500_and_503() {
    // No controller-manager: a fault matching any request could hit one of its requests.
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    h.server
        .faults()
        .fail_next(1, RequestMatch::any(), Failure::InternalError);
    h.server.faults().fail_next(
        1,
        RequestMatch::any().verb("create"),
        Failure::ServiceUnavailable,
    );
    assert_status(&h.http.get(CM).await, 500, "InternalError");
    assert_status(
        &h.http.post(CM, configmap("a", json!({}))).await,
        503,
        "ServiceUnavailable",
    );
    assert_eq!(h.http.post(CM, configmap("a", json!({}))).await.code, 201);
}

#[tokio::test]
async fn latency_delays_every_request() {
    let h = start().await;
    h.server.faults().set_latency(Duration::from_millis(200));
    let started = Instant::now();
    h.http.get(CM).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    h.server.faults().clear();
}

#[tokio::test]
async fn expire_history_makes_older_watches_gone() {
    let h = start().await;
    let a = h.http.post(CM, configmap("a", json!({}))).await.body;
    h.http.post(CM, configmap("b", json!({}))).await;
    h.server.faults().expire_history();
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion={}", rv(&a)))
        .await;
    assert_eq!(watch.next().await.unwrap()["object"]["code"], 410);
}

#[tokio::test]
async fn bearer_token_is_required_when_configured() {
    let mut options = ServerOptions::default();
    options.bearer_token = Some("s3cret".into());
    let mut h = start_with(options).await;
    let reply = h.http.get("/api/v1/namespaces").await;
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );
    h.http.token = Some("wrong".into());
    assert_eq!(h.http.get("/version").await.code, 401);
    h.http.token = Some("s3cret".into());
    assert_eq!(h.http.get("/api/v1/namespaces").await.code, 200);
    assert!(h.server.kubeconfig_yaml().contains("token: s3cret"));
}

#[tokio::test]
async fn tls_mode_serves_https_verifiable_with_the_generated_ca() {
    let mut options = ServerOptions::default();
    options.tls = true;
    let server = TestServer::start_with(options).await;
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let pem = server.ca_pem().unwrap();
    assert!(
        server
            .kubeconfig_yaml()
            .contains("certificate-authority-data")
    );
    let mut roots = rustls::RootCertStore::empty();
    let der = rustls_pki_types::pem::PemObject::from_pem_slice(pem.as_bytes()).unwrap();
    roots.add(der).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let tcp = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let tls = connector
        .connect(name, tcp)
        .await
        .expect("certificate verifies against the CA");
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(conn);
    let request = http::Request::get("/version")
        .header("host", "localhost")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("gitVersion"));
}

#[tokio::test]
async fn dropping_the_server_closes_the_listener_and_open_watches() {
    let h = start().await;
    let url = h.server.url();
    let mut watch = h
        .http
        .watch(&format!("{CM}?watch=1&resourceVersion=1"))
        .await;
    drop(h.server);
    assert_eq!(
        watch.next_within(PATIENCE).await,
        Ok(None),
        "the watch ends cleanly"
    );
    let port = url.rsplit(':').next().unwrap();
    let refused = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}")).await;
    assert!(refused.is_err(), "listener closed");
}

#[tokio::test]
async fn http2_over_tls_serves_requests_and_streams_watches() {
    let mut options = ServerOptions::default();
    options.tls = true;
    let server = TestServer::start_with(options).await;
    let mut roots = rustls::RootCertStore::empty();
    let der = rustls_pki_types::pem::PemObject::from_pem_slice(server.ca_pem().unwrap().as_bytes())
        .unwrap();
    roots.add(der).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let tcp = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tls),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let uri = format!("{}{CM}?watch=1", server.url());
    let watch = http::Request::get(&uri)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(watch).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let create = http::Request::post(format!("{}{CM}", server.url()))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            configmap("h2", json!({})).to_string(),
        )))
        .unwrap();
    assert_eq!(sender.send_request(create).await.unwrap().status(), 201);
    let frame = tokio::time::timeout(PATIENCE, body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let event: serde_json::Value = serde_json::from_slice(&frame.into_data().unwrap()).unwrap();
    assert_eq!(summary(&event), ("ADDED".into(), "h2".into()));
}
