use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use prometheus_parse::{HistogramCount, Scrape, Value};

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

/// Registers `metrics` in a fresh registry and parses what a scrape of it returns.
fn scrape(metrics: &ClientMetrics) -> Scrape {
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .unwrap_or_else(|e| panic!("encoding: {e}"));
    Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
        .unwrap_or_else(|e| panic!("parsing: {e}\n{text}"))
}

/// The value of the one sample of `metric` whose labels are exactly `labels`.
fn sample(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<Value> {
    let mut found = scrape.samples.iter().filter(|s| {
        s.metric == metric
            && s.labels.len() == labels.len()
            && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
    });
    let value = found.next().map(|s| s.value.clone());
    assert!(found.next().is_none(), "{metric} {labels:?} twice");
    value
}

fn requests(scrape: &Scrape, host: &str, method: &str, code: &str) -> Option<Value> {
    let labels = [("code", code), ("host", host), ("method", method)];
    sample(scrape, "rest_client_requests_total", &labels)
}

fn duration_sum(scrape: &Scrape, verb: &str) -> Option<Value> {
    let labels = [("host", ""), ("verb", verb)];
    sample(scrape, "rest_client_request_duration_seconds_sum", &labels)
}

#[tokio::test]
async fn attempts_are_counted_by_method_and_status_code() {
    let client = client(vec![status(200), status(404), status(201), status(200)]);
    let _ = client.send(request(Method::GET)).await;
    let _ = client.send(request(Method::GET)).await;
    let _ = client.send(request(Method::POST)).await;
    // A clone shares the series.
    let _ = client.clone().send(request(Method::GET)).await;
    let scrape = scrape(&client.metrics());
    assert_eq!(
        requests(&scrape, "", "GET", "200"),
        Some(Value::Untyped(2.0))
    );
    assert_eq!(
        requests(&scrape, "", "GET", "404"),
        Some(Value::Untyped(1.0))
    );
    assert_eq!(
        requests(&scrape, "", "POST", "201"),
        Some(Value::Untyped(1.0))
    );
    assert_eq!(requests(&scrape, "", "POST", "200"), None);
    let count = [("host", ""), ("verb", "GET")];
    assert_eq!(
        sample(
            &scrape,
            "rest_client_request_duration_seconds_count",
            &count
        ),
        Some(Value::Untyped(3.0))
    );
}

#[tokio::test]
async fn refused_connection_is_counted_as_error() {
    let client = client(vec![]);
    let result = client.send(request(Method::DELETE)).await;
    assert!(result.is_err_and(|e| e.is_connect()));
    let scrape = scrape(&client.metrics());
    assert_eq!(
        requests(&scrape, "", "DELETE", NO_RESPONSE_CODE),
        Some(Value::Untyped(1.0))
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
    let scrape = scrape(&client.metrics());
    assert_eq!(
        requests(&scrape, "", "GET", NO_RESPONSE_CODE),
        Some(Value::Untyped(1.0))
    );
    assert_eq!(duration_sum(&scrape, "GET"), Some(Value::Untyped(295.0)));
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
    let scrape = scrape(&client.metrics());
    assert_eq!(
        requests(&scrape, "", "GET", "429"),
        Some(Value::Untyped(1.0))
    );
    assert_eq!(
        requests(&scrape, "", "GET", "200"),
        Some(Value::Untyped(1.0))
    );
    // One duration for the whole call, including the one-second Retry-After wait.
    assert_eq!(duration_sum(&scrape, "GET"), Some(Value::Untyped(1.0)));
}

/// Cumulative bucket counts, `+Inf` last, as a scrape reports them.
fn buckets(cumulative: [f64; 13]) -> Value {
    let bounds = DURATION_BUCKETS.iter().copied().chain([f64::INFINITY]);
    Value::Histogram(
        bounds
            .zip(cumulative)
            .map(|(less_than, count)| HistogramCount { less_than, count })
            .collect(),
    )
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
    let scrape = scrape(&client.metrics());
    let family = "rest_client_request_duration_seconds";
    let labels = [("host", ""), ("verb", "GET")];
    let expected = [0., 0., 0., 0., 1., 1., 1., 1., 1., 1., 1., 1., 1.];
    assert_eq!(sample(&scrape, family, &labels), Some(buckets(expected)));
    assert_eq!(duration_sum(&scrape, "GET"), Some(Value::Untyped(0.3)));
}

#[test]
fn a_family_appears_in_the_scrape_once_it_has_a_series() {
    let metrics = ClientMetrics::default();
    let empty = scrape(&metrics);
    assert!(
        empty.docs.is_empty() && empty.samples.is_empty(),
        "{empty:?}"
    );
    metrics.count_attempt("h:1", &Method::GET, Some(StatusCode::OK));
    metrics.observe_duration("h:1", &Method::GET, Duration::from_millis(1));
    metrics.observe_rate_limiter("h:1", &Method::GET, Duration::ZERO);
    let mut declared: Vec<String> = scrape(&metrics).docs.into_keys().collect();
    declared.sort_unstable();
    assert_eq!(
        declared,
        [
            "rest_client_rate_limiter_duration_seconds",
            "rest_client_request_duration_seconds",
            "rest_client_requests",
        ]
    );
}

#[test]
fn rate_limiter_waits_are_bucketed_by_host_and_verb() {
    let metrics = ClientMetrics::default();
    metrics.observe_rate_limiter("10.0.0.1:6443", &Method::PUT, Duration::from_millis(20));
    metrics.observe_rate_limiter("10.0.0.1:6443", &Method::PUT, Duration::from_secs(90));
    let scrape = scrape(&metrics);
    let labels = [("host", "10.0.0.1:6443"), ("verb", "PUT")];
    let expected = [0., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 2.];
    assert_eq!(
        sample(
            &scrape,
            "rest_client_rate_limiter_duration_seconds",
            &labels
        ),
        Some(buckets(expected))
    );
}

#[tokio::test]
async fn a_client_records_into_its_config_metrics_under_the_server_host() {
    let metrics = ClientMetrics::default();
    // Nothing listens on port 1: the request is refused without a response.
    let mut config = crate::Config::new(
        "http://127.0.0.1:1"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    config.metrics = metrics.clone();
    let client = Client::new(config).unwrap_or_else(|e| panic!("{e}"));
    assert!(client.send(request(Method::GET)).await.is_err());
    let scrape = scrape(&metrics);
    assert_eq!(
        requests(&scrape, "127.0.0.1:1", "GET", NO_RESPONSE_CODE),
        Some(Value::Untyped(1.0))
    );
}
