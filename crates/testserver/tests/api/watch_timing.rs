//! Time-driven watch behaviour (periodic bookmarks, `timeoutSeconds`) on virtual time, through the
//! in-process `ApiServer::handle` (a socket would need real sleeps).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use kubegen_testserver::{ApiServer, BoxBody, ServerOptions};
use serde_json::Value;

fn get(path: &str) -> http::Request<Bytes> {
    http::Request::builder()
        .uri(path)
        .body(Bytes::new())
        .unwrap()
}

async fn next_event(body: &mut BoxBody) -> Option<Value> {
    let frame = body.frame().await?.unwrap();
    let data = frame.into_data().unwrap();
    Some(serde_json::from_slice(&data).unwrap())
}

#[tokio::test(start_paused = true)]
async fn periodic_bookmarks_follow_the_configured_interval() {
    let mut options = ServerOptions::default();
    options.bookmark_interval = Duration::from_secs(60);
    let api = ApiServer::new(options);
    let rv = api.resource_version();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
    );
    let mut body = api.handle(get(&path)).await.into_body();
    let started = tokio::time::Instant::now();
    let event = next_event(&mut body).await.unwrap();
    assert_eq!(event["type"], "BOOKMARK");
    assert_eq!(started.elapsed(), Duration::from_secs(60));
    let event = next_event(&mut body).await.unwrap();
    assert_eq!(event["type"], "BOOKMARK");
    assert_eq!(started.elapsed(), Duration::from_secs(120));
}

#[tokio::test(start_paused = true)]
async fn timeout_seconds_ends_the_stream() {
    let api = ApiServer::new(ServerOptions::default());
    let path = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30&resourceVersion=1";
    let mut body = api.handle(get(path)).await.into_body();
    let started = tokio::time::Instant::now();
    assert!(next_event(&mut body).await.is_none());
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

fn post(path: &str, body: &str) -> http::Request<Bytes> {
    http::Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_bookmark_comes_two_seconds_before_the_timeout_once_the_resource_changed() {
    let api = ApiServer::new(ServerOptions::default());
    let rv = api.resource_version();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=30&resourceVersion={rv}"
    );
    let mut body = api.handle(get(&path)).await.into_body();
    let started = tokio::time::Instant::now();
    // A ConfigMap elsewhere: this watch sees no event for it, but the resource moved.
    let elsewhere = api
        .handle(post(
            "/api/v1/namespaces/kube-system/configmaps",
            r#"{"metadata":{"name":"c"}}"#,
        ))
        .await;
    assert_eq!(elsewhere.status(), 201);
    let event = next_event(&mut body).await.unwrap();
    assert_eq!(event["type"], "BOOKMARK");
    assert_eq!(started.elapsed(), Duration::from_secs(28));
    assert_eq!(
        event["object"]["metadata"]["resourceVersion"],
        api.resource_version().to_string()
    );
    assert!(next_event(&mut body).await.is_none());
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn no_pre_timeout_bookmark_when_only_other_kinds_changed() {
    let api = ApiServer::new(ServerOptions::default());
    let rv = api.resource_version();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=30&resourceVersion={rv}"
    );
    let mut body = api.handle(get(&path)).await.into_body();
    let started = tokio::time::Instant::now();
    // As on v1.36: a Secret moves the global resourceVersion, not the ConfigMap watch cache.
    let secret = api
        .handle(post(
            "/api/v1/namespaces/default/secrets",
            r#"{"metadata":{"name":"s"}}"#,
        ))
        .await;
    assert_eq!(secret.status(), 201);
    assert!(next_event(&mut body).await.is_none());
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}
