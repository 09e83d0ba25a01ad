use super::*;
use std::collections::VecDeque;
use std::pin::Pin;

use k8s_openapi::api::core::v1::ConfigMap;
use kube_core::WatchEvent;
use parking_lot::Mutex;

use crate::options::{DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions};
use crate::resource_client::ResourceClient;

/// One scripted answer of [`FakeTransport`].
enum Reply {
    Respond(Response<Body>),
    /// Never answers (a hung server).
    Hang,
    /// Fails before a response (connection refused).
    Refuse,
}

/// Records every request and answers from a script.
#[derive(Default)]
struct FakeTransport {
    seen: Mutex<Vec<(String, String, Bytes)>>,
    replies: Mutex<VecDeque<Reply>>,
}

impl FakeTransport {
    fn with(replies: Vec<Reply>) -> Arc<FakeTransport> {
        Arc::new(FakeTransport {
            seen: Mutex::default(),
            replies: Mutex::new(replies.into()),
        })
    }

    fn requests(&self) -> Vec<String> {
        self.seen
            .lock()
            .iter()
            .map(|(m, u, _)| format!("{m} {u}"))
            .collect()
    }
}

impl Transport for FakeTransport {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        let uri = request.uri().to_string();
        self.seen.lock().push((
            request.method().to_string(),
            uri.clone(),
            request.body().clone(),
        ));
        let reply = self.replies.lock().pop_front();
        Box::pin(async move {
            match reply {
                Some(Reply::Respond(response)) => Ok(response),
                Some(Reply::Hang) => std::future::pending().await,
                Some(Reply::Refuse) | None => Err(Error::Connect {
                    url: uri,
                    message: "connection refused".into(),
                }),
            }
        })
    }
}

/// A body yielding the given chunks one by one.
struct Chunks(VecDeque<Bytes>);

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<Bytes>, Self::Error>>> {
        std::task::Poll::Ready(self.0.pop_front().map(|b| Ok(http_body::Frame::data(b))))
    }
}

fn reply(code: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Reply {
    let mut builder = Response::builder().status(code);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    Reply::Respond(
        builder
            .body(Body::from_bytes(body))
            .expect("valid response"),
    )
}

fn chunked(code: u16, chunks: &[&str]) -> Reply {
    let chunks = chunks
        .iter()
        .map(|c| Bytes::copy_from_slice(c.as_bytes()))
        .collect();
    Reply::Respond(
        Response::builder()
            .status(code)
            .body(Body::new(Chunks(chunks)))
            .expect("valid response"),
    )
}

fn cm_json(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"ns"}}}}"#
    )
}

fn configmaps(transport: &Arc<FakeTransport>) -> ResourceClient<ConfigMap> {
    ResourceClient::namespaced(Client::with_transport(transport.clone(), "ns"), "ns")
}

fn named(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

#[tokio::test]
async fn every_verb_sends_the_expected_request() -> Result<()> {
    let ok = || reply(200, &[], cm_json("a"));
    let transport = FakeTransport::with(vec![ok(), ok(), ok(), ok(), ok(), ok(), ok(), ok()]);
    let api = configmaps(&transport);
    api.get("a", &GetOptions::default()).await?;
    api.create(&named("a"), &Default::default()).await?;
    api.update(&named("a"), &UpdateOptions::default()).await?;
    api.update_status(&named("a"), &UpdateOptions::default())
        .await?;
    api.patch(
        "a",
        &Patch::Merge(serde_json::json!({})),
        &PatchOptions::default(),
    )
    .await?;
    api.patch_status(
        "a",
        &Patch::Merge(serde_json::json!({})),
        &PatchOptions::default(),
    )
    .await?;
    api.delete("a", &DeleteOptions::default()).await?;
    api.delete_collection(
        &DeleteOptions::default(),
        &ListOptions::default().labels("x=y"),
    )
    .await?;
    assert_eq!(
        transport.requests(),
        [
            "GET /api/v1/namespaces/ns/configmaps/a",
            "POST /api/v1/namespaces/ns/configmaps",
            "PUT /api/v1/namespaces/ns/configmaps/a",
            "PUT /api/v1/namespaces/ns/configmaps/a/status",
            "PATCH /api/v1/namespaces/ns/configmaps/a",
            "PATCH /api/v1/namespaces/ns/configmaps/a/status",
            "DELETE /api/v1/namespaces/ns/configmaps/a",
            "DELETE /api/v1/namespaces/ns/configmaps?labelSelector=x%3Dy",
        ]
    );
    Ok(())
}

#[tokio::test]
async fn list_decodes_a_chunked_body() -> Result<()> {
    let body = format!(
        r#"{{"kind":"ConfigMapList","metadata":{{"resourceVersion":"5"}},"items":[{},{}]}}"#,
        cm_json("a"),
        cm_json("b")
    );
    let (x, y) = body.split_at(body.len() / 3);
    let transport = FakeTransport::with(vec![chunked(200, &[x, y])]);
    let list = configmaps(&transport)
        .list(&ListOptions::default().limit(2))
        .await?;
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.metadata.resource_version.as_deref(), Some("5"));
    assert_eq!(
        transport.requests(),
        ["GET /api/v1/namespaces/ns/configmaps?limit=2"]
    );
    Ok(())
}

#[tokio::test]
async fn watch_yields_events_across_chunks() -> Result<()> {
    let line = |t: &str, n: &str| format!(r#"{{"type":"{t}","object":{}}}"#, cm_json(n)) + "\n";
    let body = line("ADDED", "a") + &line("DELETED", "a");
    let (x, y) = body.split_at(10);
    let transport = FakeTransport::with(vec![chunked(200, &[x, y])]);
    let all = ResourceClient::<ConfigMap>::all_namespaces(Client::with_transport(
        transport.clone(),
        "ns",
    ));
    let mut stream = all
        .watch(
            &ListOptions::default()
                .resource_version("3")
                .timeout_seconds(400),
        )
        .await?;
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Deleted(_)))
    ));
    assert!(stream.next().await.is_none());
    assert_eq!(
        transport.requests(),
        ["GET /api/v1/configmaps?watch=true&resourceVersion=3&timeoutSeconds=400"]
    );
    Ok(())
}

#[tokio::test]
async fn error_status_from_the_server_maps_to_predicates() {
    let status = r#"{"kind":"Status","code":409,"reason":"Conflict","message":"the object has been modified"}"#;
    let transport = FakeTransport::with(vec![
        reply(409, &[], status),
        reply(502, &[], "<html>bad gateway</html>"),
    ]);
    let api = configmaps(&transport);
    let err = api
        .update(&named("a"), &UpdateOptions::default())
        .await
        .expect_err("409");
    assert!(err.is_conflict());
    let err = api.get("a", &GetOptions::default()).await.expect_err("502");
    assert_eq!(
        err.to_string(),
        "GET /api/v1/namespaces/ns/configmaps/a: HTTP 502: <html>bad gateway</html>"
    );
}

#[tokio::test]
async fn garbage_success_body_is_a_decode_error() {
    let transport = FakeTransport::with(vec![reply(200, &[], "not json")]);
    let err = configmaps(&transport)
        .get("a", &GetOptions::default())
        .await
        .expect_err("garbage");
    assert!(
        err.to_string()
            .starts_with("decoding response of GET /api/v1/namespaces/ns/configmaps/a"),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn get_is_retried_after_429_with_retry_after() -> Result<()> {
    let transport = FakeTransport::with(vec![
        reply(429, &[("retry-after", "2")], ""),
        reply(429, &[("retry-after", "3")], ""),
        reply(200, &[], cm_json("a")),
    ]);
    let started = tokio::time::Instant::now();
    configmaps(&transport)
        .get("a", &GetOptions::default())
        .await?;
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(transport.requests().len(), 3);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn create_is_not_retried_after_429() {
    let transport = FakeTransport::with(vec![
        reply(429, &[("retry-after", "1")], ""),
        reply(201, &[], cm_json("a")),
    ]);
    let err = configmaps(&transport)
        .create(&named("a"), &Default::default())
        .await
        .expect_err("429");
    assert!(err.is_too_many_requests());
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!(transport.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn retries_stop_after_the_limit() {
    let replies = (0..10)
        .map(|_| reply(429, &[("retry-after", "1")], ""))
        .collect();
    let transport = FakeTransport::with(replies);
    let err = configmaps(&transport)
        .get("a", &GetOptions::default())
        .await
        .expect_err("still 429");
    assert!(err.is_too_many_requests());
    assert_eq!(
        transport.requests().len(),
        Policies::default().max_429_retries as usize + 1
    );
}

#[tokio::test(start_paused = true)]
async fn hung_request_hits_the_request_timeout() {
    let transport = FakeTransport::with(vec![Reply::Hang]);
    let err = configmaps(&transport)
        .get("a", &GetOptions::default())
        .await
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        matches!(err, Error::Timeout { after, .. } if Some(after) == Policies::default().timeout)
    );
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    let transport = FakeTransport::with(vec![Reply::Refuse]);
    let err = configmaps(&transport)
        .list(&ListOptions::default())
        .await
        .expect_err("refused");
    assert!(err.is_connect());
}

#[tokio::test]
async fn update_without_a_name_is_rejected_before_sending() {
    let transport = FakeTransport::with(vec![]);
    let err = configmaps(&transport)
        .update(&ConfigMap::default(), &UpdateOptions::default())
        .await
        .expect_err("no name");
    assert!(matches!(err, Error::BuildRequest(_)));
    assert!(transport.requests().is_empty());
}

#[tokio::test]
async fn cluster_scoped_client_has_no_namespace_in_paths() -> Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    let transport = FakeTransport::with(vec![reply(200, &[], r#"{"metadata":{"name":"x"}}"#)]);
    let api = ResourceClient::<Namespace>::cluster(Client::with_transport(transport.clone(), "ns"));
    api.get("x", &GetOptions::default()).await?;
    assert_eq!(transport.requests(), ["GET /api/v1/namespaces/x"]);
    Ok(())
}
