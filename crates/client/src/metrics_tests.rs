use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::{Request, Response};

use super::*;
use crate::body::Body;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::transport::Transport;

/// One scripted answer: after `delay`, a response with this status, or no response at all.
struct Answer {
    delay: Duration,
    status: Option<u16>,
    headers: &'static [(&'static str, &'static str)],
}

fn status(code: u16) -> Answer {
    Answer {
        delay: Duration::ZERO,
        status: Some(code),
        headers: &[],
    }
}

/// Answers from a script; an exhausted script refuses the connection.
struct ScriptedTransport(parking_lot::Mutex<VecDeque<Answer>>);

impl Transport for ScriptedTransport {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<crate::body::Body>>> + Send + '_>> {
        let answer = self.0.lock().pop_front();
        let url = request.uri().to_string();
        Box::pin(async move {
            let Some(answer) = answer else {
                return Err(Error::Connect {
                    url,
                    message: "connection refused".into(),
                });
            };
            tokio::time::sleep(answer.delay).await;
            let Some(code) = answer.status else {
                return std::future::pending().await;
            };
            let mut builder = Response::builder().status(code);
            for (name, value) in answer.headers {
                builder = builder.header(*name, *value);
            }
            Ok(builder
                .body(Body::from_bytes("{}"))
                .expect("valid response"))
        })
    }
}

fn client(script: Vec<Answer>) -> Client {
    Client::with_transport(
        Arc::new(ScriptedTransport(parking_lot::Mutex::new(script.into()))),
        "ns",
    )
}

fn request(method: Method) -> Request<Bytes> {
    Request::builder()
        .method(method)
        .uri("/api/v1/namespaces/ns/configmaps")
        .body(Bytes::new())
        .expect("valid request")
}

#[tokio::test]
async fn attempts_are_counted_by_method_and_status_code() {
    let client = client(vec![status(200), status(404), status(201), status(200)]);
    let _ = client.send(request(Method::GET)).await;
    let _ = client.send(request(Method::GET)).await;
    let _ = client.send(request(Method::POST)).await;
    // A clone shares the series.
    let _ = client.clone().send(request(Method::GET)).await;
    let metrics = client.metrics();
    metrics.check_invariants();
    assert_eq!(metrics.requests_total("GET", "200"), 2);
    assert_eq!(metrics.requests_total("GET", "404"), 1);
    assert_eq!(metrics.requests_total("POST", "201"), 1);
    assert_eq!(metrics.requests_total("POST", "200"), 0);
    let text = metrics.render();
    assert!(
        text.contains("rest_client_requests_total{code=\"200\",host=\"\",method=\"GET\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("rest_client_request_duration_seconds_count{host=\"\",verb=\"GET\"} 3\n"),
        "{text}"
    );
}

#[tokio::test]
async fn refused_connection_is_counted_as_error() {
    let client = client(vec![]);
    let result = client.send(request(Method::DELETE)).await;
    assert!(result.is_err_and(|e| e.is_connect()));
    let metrics = client.metrics();
    assert_eq!(metrics.requests_total("DELETE", NO_RESPONSE_CODE), 1);
    assert!(
        metrics.render().contains(
            "rest_client_requests_total{code=\"<error>\",host=\"\",method=\"DELETE\"} 1\n"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn request_abandoned_by_the_timeout_is_counted_as_error() {
    let hang = Answer {
        delay: Duration::ZERO,
        status: None,
        headers: &[],
    };
    let client = client(vec![hang]);
    let result = client
        .with_timeout("GET", "/x", client.send(request(Method::GET)))
        .await;
    assert!(result.is_err_and(|e| e.is_timeout()));
    let metrics = client.metrics();
    metrics.check_invariants();
    assert_eq!(metrics.requests_total("GET", NO_RESPONSE_CODE), 1);
    assert!(
        metrics
            .render()
            .contains("rest_client_request_duration_seconds_sum{host=\"\",verb=\"GET\"} 295\n")
    );
}

#[tokio::test(start_paused = true)]
async fn each_attempt_of_a_retried_429_is_counted() {
    let throttled = Answer {
        delay: Duration::ZERO,
        status: Some(429),
        headers: &[("retry-after", "1")],
    };
    let client = client(vec![throttled, status(200)]);
    assert!(client.send(request(Method::GET)).await.is_ok());
    let metrics = client.metrics();
    assert_eq!(metrics.requests_total("GET", "429"), 1);
    assert_eq!(metrics.requests_total("GET", "200"), 1);
    // One duration for the whole call, including the one-second Retry-After wait.
    assert!(
        metrics
            .render()
            .contains("rest_client_request_duration_seconds_sum{host=\"\",verb=\"GET\"} 1\n")
    );
}

#[tokio::test(start_paused = true)]
async fn duration_is_bucketed_until_the_headers_arrive() {
    let slow = Answer {
        delay: Duration::from_millis(300),
        status: Some(200),
        headers: &[],
    };
    let client = client(vec![slow]);
    let response = client.send(request(Method::GET)).await;
    // The body has not been read: the duration is already recorded (as for a watch).
    assert!(response.is_ok());
    let text = client.metrics().render();
    let family = "rest_client_request_duration_seconds";
    let labels = "host=\"\",verb=\"GET\"";
    let expected = format!(
        "# HELP {family} Request latency in seconds, until the response headers. Broken down by verb and host.\n\
         # TYPE {family} histogram\n\
         {family}_bucket{{{labels},le=\"0.005\"}} 0\n\
         {family}_bucket{{{labels},le=\"0.025\"}} 0\n\
         {family}_bucket{{{labels},le=\"0.1\"}} 0\n\
         {family}_bucket{{{labels},le=\"0.25\"}} 0\n\
         {family}_bucket{{{labels},le=\"0.5\"}} 1\n\
         {family}_bucket{{{labels},le=\"1\"}} 1\n\
         {family}_bucket{{{labels},le=\"2\"}} 1\n\
         {family}_bucket{{{labels},le=\"4\"}} 1\n\
         {family}_bucket{{{labels},le=\"8\"}} 1\n\
         {family}_bucket{{{labels},le=\"15\"}} 1\n\
         {family}_bucket{{{labels},le=\"30\"}} 1\n\
         {family}_bucket{{{labels},le=\"60\"}} 1\n\
         {family}_bucket{{{labels},le=\"+Inf\"}} 1\n\
         {family}_sum{{{labels}}} 0.3\n\
         {family}_count{{{labels}}} 1\n"
    );
    assert!(text.contains(&expected), "{text}");
}

#[test]
fn empty_metrics_render_every_family_header() {
    let text = ClientMetrics::new("10.0.0.1:6443").render();
    for (name, kind) in [
        ("rest_client_requests_total", "counter"),
        ("rest_client_request_duration_seconds", "histogram"),
        ("rest_client_rate_limiter_duration_seconds", "histogram"),
    ] {
        assert!(text.contains(&format!("# HELP {name} ")), "{text}");
        assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{text}");
    }
    assert_eq!(text.lines().count(), 6, "{text}");
}

#[test]
fn rate_limiter_waits_render_with_the_host_label() {
    let metrics = ClientMetrics::new("10.0.0.1:6443");
    metrics.observe_rate_limiter(&Method::PUT, Duration::from_millis(20));
    metrics.observe_rate_limiter(&Method::PUT, Duration::from_secs(90));
    metrics.check_invariants();
    let text = metrics.render();
    let labels = "host=\"10.0.0.1:6443\",verb=\"PUT\"";
    for line in [
        format!("rest_client_rate_limiter_duration_seconds_bucket{{{labels},le=\"0.005\"}} 0"),
        format!("rest_client_rate_limiter_duration_seconds_bucket{{{labels},le=\"0.025\"}} 1"),
        format!("rest_client_rate_limiter_duration_seconds_bucket{{{labels},le=\"60\"}} 1"),
        format!("rest_client_rate_limiter_duration_seconds_bucket{{{labels},le=\"+Inf\"}} 2"),
        format!("rest_client_rate_limiter_duration_seconds_count{{{labels}}} 2"),
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
    }
}

#[test]
fn label_values_are_escaped() {
    assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}
