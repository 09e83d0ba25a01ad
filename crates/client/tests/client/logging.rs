//! Every request gets a `tracing` span with verb, path, status and latency, and the bearer token
//! never shows up in logs, even at TRACE level.

use std::io::Write;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_client::{Client, Config, GetOptions, ListOptions, ResourceClient};
use kubegen_testserver::{ServerOptions, TestServer};
use tracing_subscriber::fmt::format::FmtSpan;

/// A log sink shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        self.0
            .lock()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn requests_are_traced_without_the_token() -> Result<(), Box<dyn std::error::Error>> {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut opts = ServerOptions::default();
    opts.bearer_token = Some("very-secret-token".into());
    let server = TestServer::start_with(opts).await;
    let config = Config::new(server.url().parse()?).bearer_token("very-secret-token");
    assert!(!format!("{config:?}").contains("very-secret-token"));
    let client = Client::new(config)?;
    assert!(!format!("{client:?}").contains("very-secret-token"));
    let api = ResourceClient::<ConfigMap>::namespaced(client, "default");
    api.list(&ListOptions::default()).await?;
    let err = api
        .get("missing", &GetOptions::default())
        .await
        .expect_err("404");
    assert!(!format!("{err:?}").contains("very-secret-token"));

    let text = logs.text();
    assert!(
        text.contains("verb=GET path=/api/v1/namespaces/default/configmaps status=200"),
        "{text}"
    );
    assert!(
        text.contains("path=/api/v1/namespaces/default/configmaps/missing status=404"),
        "{text}"
    );
    assert!(text.contains("latency_ms="), "{text}");
    assert!(
        !text.contains("very-secret-token"),
        "token leaked into logs:\n{text}"
    );
    Ok(())
}
