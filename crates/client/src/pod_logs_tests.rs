use super::*;
use std::pin::Pin;
use std::sync::Arc;

use http::Response;
use http_body::Frame;
use http_body_util::StreamBody;
use parking_lot::Mutex;

use crate::body::BoxError;
use crate::transport::Transport;

/// Answers every request with one scripted response and records the URLs asked for.
struct OneAnswer {
    answer: Mutex<Option<Response<Body>>>,
    seen: Mutex<Vec<String>>,
}

impl Transport for OneAnswer {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        self.seen.lock().push(request.uri().to_string());
        let answer = self.answer.lock().take();
        Box::pin(async move { answer.ok_or_else(|| Error::BuildRequest("asked twice".to_owned())) })
    }
}

fn client_answering(code: u16, body: Body) -> (Client, Arc<OneAnswer>) {
    let mut response = Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(code).unwrap();
    let transport = Arc::new(OneAnswer {
        answer: Mutex::new(Some(response)),
        seen: Mutex::default(),
    });
    (
        Client::with_transport(transport.clone(), "default"),
        transport,
    )
}

/// A body delivered in the given chunks, then (optionally) a connection failure.
fn chunked(chunks: &[&str], fail_at_end: bool) -> Body {
    let mut frames: Vec<Result<Frame<Bytes>, BoxError>> = chunks
        .iter()
        .map(|c| Ok(Frame::data(Bytes::from(c.to_string()))))
        .collect();
    if fail_at_end {
        frames.push(Err("connection reset by peer".into()));
    }
    Body::new(StreamBody::new(futures_util::stream::iter(frames)))
}

#[test]
fn every_option_becomes_its_query_parameter() {
    let opts = LogOptions {
        container: Some("main".to_owned()),
        follow: true,
        previous: true,
        since_seconds: Some(30),
        since_time: Some("2026-01-02T03:04:05.678Z".parse().unwrap()),
        timestamps: true,
        tail_lines: Some(0),
        limit_bytes: Some(4096),
        insecure_skip_tls_verify_backend: true,
        stream: Some(LogStreamSelector::Stderr),
    };
    let request = log_request("ns1", "web-0", &opts).unwrap();
    assert_eq!(
        request.uri().to_string(),
        "/api/v1/namespaces/ns1/pods/web-0/log?container=main&follow=true&previous=true\
         &sinceSeconds=30&sinceTime=2026-01-02T03%3A04%3A05Z&timestamps=true&tailLines=0\
         &limitBytes=4096&insecureSkipTLSVerifyBackend=true&stream=Stderr"
    );
    assert_eq!(request.method(), http::Method::GET);
}

#[test]
fn default_options_send_no_query_and_each_stream_has_its_name() {
    let request = log_request("ns1", "web-0", &LogOptions::default()).unwrap();
    assert_eq!(
        request.uri().to_string(),
        "/api/v1/namespaces/ns1/pods/web-0/log"
    );
    let names: Vec<_> = [
        LogStreamSelector::Stdout,
        LogStreamSelector::Stderr,
        LogStreamSelector::All,
    ]
    .map(LogStreamSelector::as_str)
    .into();
    assert_eq!(names, ["Stdout", "Stderr", "All"]);
}

#[tokio::test]
async fn whole_log_is_read_and_an_unscheduled_pods_204_is_an_empty_log() {
    let (client, transport) = client_answering(200, chunked(&["a\nb", "\nc\n"], false));
    let log = client
        .pod_logs("ns1", "web", &LogOptions::default())
        .await
        .unwrap();
    assert_eq!(log, b"a\nb\nc\n");
    assert_eq!(
        *transport.seen.lock(),
        ["/api/v1/namespaces/ns1/pods/web/log"]
    );
    let (client, _) = client_answering(204, Body::empty());
    let log = client
        .pod_logs("ns1", "pending", &LogOptions::default())
        .await
        .unwrap();
    assert!(log.is_empty());
}

#[tokio::test]
async fn lines_are_split_across_chunks_and_the_last_unterminated_line_is_kept() {
    let (client, _) = client_answering(200, chunked(&["one\r\ntw", "o\n\nthr", "ee"], false));
    let opts = LogOptions {
        follow: true,
        ..LogOptions::default()
    };
    let mut stream = client.pod_log_stream("ns1", "web", &opts).await.unwrap();
    let mut lines = Vec::new();
    while let Some(line) = stream.next_line().await {
        lines.push(line.unwrap());
    }
    assert_eq!(lines, ["one", "two", "", "three"]);
    assert!(stream.next_line().await.is_none());
    assert!(stream.next_chunk().await.is_none());
}

#[tokio::test]
async fn chunks_after_a_line_return_the_buffered_rest_first() {
    let (client, _) = client_answering(200, chunked(&["first\nsec", "ond"], false));
    let mut stream = client
        .pod_log_stream("ns1", "web", &LogOptions::default())
        .await
        .unwrap();
    assert_eq!(stream.next_line().await.unwrap().unwrap(), "first");
    assert_eq!(stream.next_chunk().await.unwrap().unwrap(), "sec");
    assert_eq!(stream.read_to_end().await.unwrap(), b"ond");
}

#[tokio::test]
async fn a_broken_connection_ends_the_stream_with_log_stream_failed() {
    let (client, _) = client_answering(200, chunked(&["ok\n"], true));
    let mut stream = client
        .pod_log_stream("ns1", "web", &LogOptions::default())
        .await
        .unwrap();
    assert_eq!(stream.next_line().await.unwrap().unwrap(), "ok");
    let err = stream.next_line().await.unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::LogStreamFailed { url, message }
            if url == "/api/v1/namespaces/ns1/pods/web/log" && message.contains("connection reset")),
        "{err}"
    );
    assert!(stream.next_line().await.is_none());
}

/// What v1.15 and v1.36 answered to log requests (recorded with `kubectl get --raw -v=8`).
mod server_errors {
    use super::*;

    async fn error_for(code: u16, body: &str) -> Error {
        let (client, _) = client_answering(code, Body::from_bytes(body.to_owned()));
        client
            .pod_logs("podstream-a", "x", &LogOptions::default())
            .await
            .unwrap_err()
    }

    #[tokio::test]
    async fn a_missing_pod_is_not_found() {
        let err = error_for(404, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"pods"},"code":404}"#).await;
        assert!(err.is_not_found());
        assert_eq!(err.status().unwrap().message, r#"pods "missing" not found"#);
    }

    #[tokio::test]
    async fn container_errors_are_bad_requests() {
        let err = error_for(400, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"a container name must be specified for pod two, choose one of: [a b]","reason":"BadRequest","code":400}"#).await;
        assert!(err.is_bad_request() && !err.is_not_found());
        let err = error_for(400, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"container nope is not valid for pod one","reason":"BadRequest","code":400}"#).await;
        assert!(err.is_bad_request());
        assert_eq!(
            err.to_string(),
            "GET /api/v1/namespaces/podstream-a/pods/x/log: container nope is not valid for pod one (BadRequest, 400)"
        );
    }

    #[tokio::test]
    async fn invalid_options_are_invalid() {
        let err = error_for(422, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PodLogOptions \"one\" is invalid: stream: Forbidden: may not be specified","reason":"Invalid","details":{"name":"one","kind":"PodLogOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: may not be specified","field":"stream"}]},"code":422}"#).await;
        assert!(err.is_invalid() && !err.is_bad_request());
        let causes = &err.status().unwrap().details.as_ref().unwrap().causes;
        assert_eq!(causes[0].field, "stream");
    }

    #[tokio::test]
    async fn a_user_without_get_on_pods_log_is_forbidden() {
        let err = error_for(403, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"one\" is forbidden: User \"system:serviceaccount:image-police:image-police\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"podstream-a\"","reason":"Forbidden","details":{"name":"one","kind":"pods"},"code":403}"#).await;
        assert!(err.is_forbidden());
    }
}
