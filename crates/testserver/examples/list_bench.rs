//! Measures how fast the server lists many ConfigMaps over HTTP (full list and 500-item pages).
//!
//! `cargo run -p kubegen-testserver --release --example list_bench -- 100000`

use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use kubegen_testserver::TestServer;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let server = TestServer::start().await;
    let api = server.api();
    let started = Instant::now();
    for i in 0..count {
        let body = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:06}"), "labels": {"app": "bench", "shard": (i % 10).to_string()}},
            "data": {"key": "x".repeat(64)},
        });
        let request = http::Request::post("/api/v1/namespaces/default/configmaps")
            .header("content-type", "application/json")
            .body(Bytes::from(body.to_string()))?;
        let response = api.handle(request).await;
        anyhow::ensure!(
            response.status() == 201,
            "create failed: {}",
            response.status()
        );
    }
    println!(
        "created {count} configmaps in-process in {:?}",
        started.elapsed()
    );

    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let base = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    for round in 0..3 {
        let started = Instant::now();
        let response = client.get(base.parse()?).await?;
        let bytes = response.into_body().collect().await?.to_bytes();
        println!(
            "round {round}: full list: {} bytes in {:?}",
            bytes.len(),
            started.elapsed()
        );
    }
    let started = Instant::now();
    let (mut pages, mut total, mut token) = (0, 0usize, None::<String>);
    loop {
        let uri = match &token {
            Some(t) => format!("{base}?limit=500&continue={t}"),
            None => format!("{base}?limit=500"),
        };
        let response = client.get(uri.parse()?).await?;
        let bytes = response.into_body().collect().await?.to_bytes();
        let page: serde_json::Value = serde_json::from_slice(&bytes)?;
        pages += 1;
        total += page["items"].as_array().map_or(0, Vec::len);
        token = page["metadata"]["continue"].as_str().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    println!(
        "paged list (500/page, client decodes each page): {total} items in {pages} pages in {:?}",
        started.elapsed()
    );
    Ok(())
}
