//! A small raw-HTTP client for the integration tests: the server is checked through its wire
//! protocol only, never through kubegen's client.
#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kubegen_testserver::{ServerOptions, TestServer};
use serde_json::{Value, json};

/// How long a test waits for something that should happen promptly before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A started server plus a client for it.
pub struct Harness {
    pub server: TestServer,
    pub http: Http,
}

pub async fn start() -> Harness {
    start_with(ServerOptions::default()).await
}

/// A server without the controller-manager: for tests of the API itself on kinds a controller
/// would write to meanwhile (a Deployment's status, a new resourceVersion under a test's feet).
pub async fn start_without_controllers() -> Harness {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    start_with(options).await
}

pub async fn start_with(options: ServerOptions) -> Harness {
    let server = TestServer::start_with(options).await;
    let http = Http::new(&server.url());
    Harness { server, http }
}

/// A response: status code and parsed JSON body (Null when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub code: u16,
    pub body: Value,
    pub headers: http::HeaderMap,
    /// The body as text (lossy UTF-8), for answers that are not JSON.
    pub text: String,
}

pub struct Http {
    base: String,
    client: Client<HttpConnector, Full<Bytes>>,
    pub token: Option<String>,
}

impl Http {
    pub fn new(base: &str) -> Http {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Http {
            base: base.to_string(),
            client,
            token: None,
        }
    }

    async fn raw(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Bytes,
    ) -> http::Response<Incoming> {
        self.raw_with(method, path, content_type, body, &[]).await
    }

    async fn raw_with(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Bytes,
        headers: &[(&str, &str)],
    ) -> http::Response<Incoming> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if !body.is_empty() {
            request = request.header("content-type", content_type);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(Full::new(body)).unwrap();
        tokio::time::timeout(PATIENCE, self.client.request(request))
            .await
            .expect("response in time")
            .expect("request sent")
    }

    pub async fn send(&self, method: &str, path: &str, content_type: &str, body: Bytes) -> Reply {
        self.send_with(method, path, content_type, body, &[]).await
    }

    /// Like [`Http::send`], with extra request headers (e.g. `Accept`).
    pub async fn send_with(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Bytes,
        headers: &[(&str, &str)],
    ) -> Reply {
        let response = self
            .raw_with(method, path, content_type, body, headers)
            .await;
        let code = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply {
            code,
            body,
            headers,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, "", Bytes::new()).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(
            "POST",
            path,
            "application/json",
            Bytes::from(body.to_string()),
        )
        .await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(
            "PUT",
            path,
            "application/json",
            Bytes::from(body.to_string()),
        )
        .await
    }

    pub async fn patch(&self, path: &str, content_type: &str, body: Value) -> Reply {
        self.send("PATCH", path, content_type, Bytes::from(body.to_string()))
            .await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send("DELETE", path, "", Bytes::new()).await
    }

    /// A DELETE with a `DeleteOptions` body.
    pub async fn delete_with(&self, path: &str, options: Value) -> Reply {
        let body = Bytes::from(options.to_string());
        self.send("DELETE", path, "application/json", body).await
    }

    /// A GET with this `Accept` header.
    pub async fn get_accept(&self, path: &str, accept: &str) -> Reply {
        self.send_with("GET", path, "", Bytes::new(), &[("accept", accept)])
            .await
    }

    /// Opens a watch and returns a reader of its events.
    pub async fn watch(&self, path: &str) -> Watch {
        self.watch_accept(path, "application/json").await
    }

    /// Opens a watch with this `Accept` header.
    pub async fn watch_accept(&self, path: &str, accept: &str) -> Watch {
        let response = self
            .raw_with("GET", path, "", Bytes::new(), &[("accept", accept)])
            .await;
        assert_eq!(response.status().as_u16(), 200, "watch {path}");
        Watch {
            body: response.into_body(),
            buffer: Vec::new(),
        }
    }
}

/// An open watch stream.
pub struct Watch {
    body: Incoming,
    buffer: Vec<u8>,
}

impl Watch {
    /// The next event, or None when the server ended the stream. Panics after `PATIENCE`.
    pub async fn next(&mut self) -> Option<Value> {
        self.next_within(PATIENCE)
            .await
            .expect("a watch event in time")
    }

    /// Err(()) when nothing arrives within `wait`; Ok(None) at the end of the stream.
    pub async fn next_within(&mut self, wait: Duration) -> Result<Option<Value>, ()> {
        loop {
            if let Some(pos) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=pos).collect();
                return Ok(Some(serde_json::from_slice(&line).unwrap()));
            }
            let frame = match tokio::time::timeout(wait, self.body.frame()).await {
                Err(_) => return Err(()),
                Ok(None) => return Ok(None),
                Ok(Some(frame)) => frame.unwrap(),
            };
            if let Ok(data) = frame.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
    }

    /// Asserts that nothing arrives for `wait`.
    pub async fn assert_quiet(&mut self, wait: Duration) {
        if let Ok(event) = self.next_within(wait).await {
            panic!("expected no event, got {event:?}");
        }
    }
}

/// `(type, metadata.name)` of an event.
pub fn summary(event: &Value) -> (String, String) {
    (
        event["type"].as_str().unwrap_or("").to_string(),
        event["object"]["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

pub fn configmap(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

pub fn rv(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts the body is a Failure Status with this code and reason, shaped like the real server's.
pub fn assert_status(reply: &Reply, code: u16, reason: &str) {
    let body = &reply.body;
    assert_eq!(reply.code, code, "{body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1");
    assert!(body["metadata"].is_object());
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], code);
    assert_eq!(body["reason"].as_str().unwrap_or(""), reason, "{body}");
    assert!(body["message"].is_string());
}

pub const CM: &str = "/api/v1/namespaces/default/configmaps";
