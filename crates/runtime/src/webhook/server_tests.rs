use std::sync::Arc;

use http_body_util::BodyExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_rustls::client::TlsStream;

use super::*;
use crate::webhook::{Admission, Denial, Validator, Warnings};

const PATH: &str = "/validate-v1-configmap";

/// Allows a ConfigMap whose `data.ok` is `yes`, denies the others; a ConfigMap named `later`
/// cannot be judged (503); one named `slow` waits until the gate opens.
struct Judge {
    gate: watch::Receiver<bool>,
}

impl Validator<ConfigMap> for Judge {
    async fn validate(&self, request: &Admission<'_, ConfigMap>) -> Result<Warnings, Denial> {
        match request.name {
            "later" => return Err(Denial::unavailable("not synced")),
            "slow" => {
                let _ = self.gate.clone().wait_for(|open| *open).await;
            }
            _ => {}
        }
        let data = request.object.data.as_ref();
        match data.and_then(|d| d.get("ok")).map(String::as_str) {
            Some("yes") => Ok(Vec::new()),
            _ => Err(Denial::forbidden("not ok")),
        }
    }
}

/// A v1 review of creating ConfigMap `name` with `data`, as kube-apiserver sends it.
fn review(name: &str, data: Value) -> String {
    json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": format!("uid-{name}"),
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": name,
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data},
            "oldObject": null,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    })
    .to_string()
}

/// A server with [`Judge`] at [`PATH`], listening on loopback with a fresh self-signed
/// certificate; returns it with the CA, the gate's sender and what must outlive the test.
struct Running {
    server: WebhookServer,
    metrics: ProcessMetrics,
    addr: SocketAddr,
    ca: String,
    open: watch::Sender<bool>,
    task: JoinHandle<()>,
    _dir: tempfile::TempDir,
}

async fn running() -> Running {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bootstrap = SelfSigned {
        dns_names: vec!["localhost".to_owned()],
        ..SelfSigned::default()
    };
    let ca = bootstrap
        .files(dir.path())
        .unwrap_or_else(|e| panic!("{e}"));
    let metrics = ProcessMetrics::default();
    let mut server = WebhookServer::new(&metrics);
    let (open, gate) = watch::channel(false);
    server.add_validator::<ConfigMap>(PATH, Judge { gate });
    let options = WebhookOptions::default()
        .bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .cert_dir(dir.path());
    // Nothing to inject: the client is never called.
    let url = "https://127.0.0.1:1"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let client = Client::new(kubegen_client::Config::new(url)).unwrap_or_else(|e| panic!("{e}"));
    let (task, addr) = server
        .start(&client, &options)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    Running {
        server,
        metrics,
        addr,
        ca,
        open,
        task,
        _dir: dir,
    }
}

impl Running {
    /// A TLS connection trusting only the server's CA, verifying the name `localhost`.
    async fn connect(&self) -> TlsStream<TcpStream> {
        let mut roots = rustls::RootCertStore::empty();
        let ca =
            CertificateDer::from_pem_slice(self.ca.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        roots.add(ca).unwrap_or_else(|e| panic!("{e}"));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|e| panic!("{e}"))
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = TcpStream::connect(self.addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let name = ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Sends one request over HTTP/1.1 and returns the status and body.
    async fn send(&self, method: http::Method, path: &str, body: String) -> (u16, String) {
        let io = TokioIo::new(self.connect().await);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(connection);
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_else(|e| panic!("{e}"));
        let response = sender
            .send_request(request)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// The value of the sample `line_start` (`name{labels}`) in the registry's encoding.
    fn sample(&self, line_start: &str) -> Option<f64> {
        let text = self.metrics.encode();
        text.lines()
            .find_map(|line| line.strip_prefix(line_start)?.trim().parse().ok())
    }
}

#[tokio::test]
async fn reviews_are_answered_and_counted_by_path_and_code() {
    let running = running().await;
    let ok = running
        .send(http::Method::POST, PATH, review("a", json!({"ok": "yes"})))
        .await;
    assert_eq!(ok.0, 200);
    let ok: Value = serde_json::from_str(&ok.1).unwrap_or(Value::Null);
    assert_eq!(ok["response"]["allowed"], true, "{ok}");
    let denied = running
        .send(http::Method::POST, PATH, review("b", json!({"ok": "no"})))
        .await;
    assert_eq!(denied.0, 200, "a denial is a successful call");
    let denied: Value = serde_json::from_str(&denied.1).unwrap_or(Value::Null);
    assert_eq!(denied["response"]["status"]["message"], "not ok");
    assert_eq!(
        running
            .send(http::Method::POST, PATH, review("later", json!({})))
            .await,
        (503, "not synced".to_owned())
    );
    // Neither a wrong method nor an unknown path reaches a webhook, so neither is counted.
    assert_eq!(
        running.send(http::Method::GET, PATH, String::new()).await,
        (405, "webhooks take POST".to_owned())
    );
    assert_eq!(
        running
            .send(http::Method::POST, "/nothing", String::new())
            .await,
        (404, "no webhook at /nothing".to_owned())
    );

    let series =
        |family: &str, code: &str| format!("{family}{{webhook=\"{PATH}\",code=\"{code}\"}}");
    let requests = "controller_runtime_webhook_requests_total";
    assert_eq!(running.sample(&series(requests, "200")), Some(2.0));
    assert_eq!(running.sample(&series(requests, "503")), Some(1.0));
    assert_eq!(running.sample(&series(requests, "405")), None);
    assert_eq!(running.metrics.encode().matches("/nothing").count(), 0);
    let by_path = |family: &str| format!("{family}{{webhook=\"{PATH}\"}}");
    assert_eq!(
        running.sample(&by_path("controller_runtime_webhook_latency_seconds_count")),
        Some(3.0)
    );
    assert_eq!(
        running.sample(&by_path("controller_runtime_webhook_requests_in_flight")),
        Some(0.0)
    );
    running.task.abort();
}

#[tokio::test]
async fn a_request_in_flight_is_counted_until_answered() {
    let running = Arc::new(running().await);
    let in_flight =
        "controller_runtime_webhook_requests_in_flight{webhook=\"/validate-v1-configmap\"}";
    let sending = Arc::clone(&running);
    let slow = tokio::spawn(async move {
        sending
            .send(
                http::Method::POST,
                PATH,
                review("slow", json!({"ok": "yes"})),
            )
            .await
    });
    while running.sample(in_flight) != Some(1.0) {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    running.open.send_replace(true);
    let answered = slow.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answered.0, 200);
    assert_eq!(running.sample(in_flight), Some(0.0));
    running.task.abort();
}

/// Writes `head` and `body` on a raw TLS connection (closing the writing side after, when
/// `close` is set) and returns the status line of the answer.
async fn raw(running: &Running, head: String, body: Vec<u8>, close: bool) -> String {
    let (mut read, mut write) = tokio::io::split(running.connect().await);
    // Write on a task: the server may answer (and stop reading) before the body is through.
    let writer = tokio::spawn(async move {
        let _ = write.write_all(head.as_bytes()).await;
        let _ = write.write_all(&body).await;
        if close {
            let _ = write.shutdown().await;
        }
        write
    });
    let mut answer = Vec::new();
    let _ = read.read_to_end(&mut answer).await;
    writer.abort();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_and_a_broken_body_400() {
    let running = running().await;
    let size = MAX_BODY + 1;
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nhost: localhost\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n"
    );
    assert_eq!(
        raw(&running, head, vec![b' '; size], false).await,
        "HTTP/1.1 413 Payload Too Large"
    );
    // The client promises 100 bytes, sends 10 and closes: the body cannot be read.
    let head = format!("POST {PATH} HTTP/1.1\r\nhost: localhost\r\ncontent-length: 100\r\n\r\n");
    assert_eq!(
        raw(&running, head, b"{\"kind\":\"A".to_vec(), true).await,
        "HTTP/1.1 400 Bad Request"
    );
    let requests = "controller_runtime_webhook_requests_total";
    for code in ["413", "400"] {
        let series = format!("{requests}{{webhook=\"{PATH}\",code=\"{code}\"}}");
        assert_eq!(running.sample(&series), Some(1.0), "{code}");
    }
    running.task.abort();
}

#[tokio::test]
async fn the_started_flag_follows_the_serving_task() {
    let running = running().await;
    assert!(running.server.is_started());
    let task = running.task;
    task.abort();
    let _ = task.await;
    assert!(!running.server.is_started());
}
