//! Fuzz target for the HTTP surface of the embedded API server (`kubegen-testserver`): whatever a
//! client sends (any method, path, query, content type, accept header and body: invalid UTF-8,
//! over the 3 MiB limit, nested thousands deep, of the wrong type), the server answers, every
//! failure is a `Status` (or the real server's plain-text `404 page not found` outside the API),
//! no task of the server panics, the connection stays usable, and a normal request still works.
//!
//! # How a panic is noticed
//! hyper runs each connection in a tokio task, and tokio catches a panicking task: the client only
//! sees its connection close, and a panic in a task the handler spawned (a watch) is not visible at
//! all. So the server runs on its own runtime whose threads carry a known name, and a panic hook
//! counts panics on those threads; every case asserts the count did not move.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use kubegen_testserver::TestServer;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{Value, json};

/// Name of the server runtime's threads, which the panic hook watches.
const SERVER_THREADS: &str = "testserver-under-fuzz";

/// Panics seen on the server's threads since the process started.
static SERVER_PANICS: AtomicUsize = AtomicUsize::new(0);

/// Installs (once) a panic hook that counts panics on the server's threads, then defers to the
/// previous hook so the message is still printed.
fn count_server_panics() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(SERVER_THREADS) {
                SERVER_PANICS.fetch_add(1, Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

/// One request as the fuzzer builds it.
#[derive(Clone, Debug)]
struct Fuzzed {
    method: String,
    /// Path and query, already percent-encoded where needed.
    uri: String,
    content_type: Option<String>,
    accept: Option<String>,
    body: Body,
}

/// A request body. Large ones are described, not stored, so failing cases print readably.
#[derive(Clone, Debug)]
enum Body {
    Bytes(Vec<u8>),
    /// `levels` nested arrays or objects.
    Nested {
        levels: usize,
        objects: bool,
    },
    /// A JSON object padded past the 3 MiB limit by `extra` bytes.
    Huge {
        extra: usize,
    },
}

impl Body {
    fn bytes(&self) -> Bytes {
        match self {
            Body::Bytes(bytes) => Bytes::from(bytes.clone()),
            Body::Nested { levels, objects } => {
                let (open, close) = if *objects {
                    ("{\"a\":", "}")
                } else {
                    ("[", "]")
                };
                Bytes::from(format!(
                    "{}1{}",
                    open.repeat(*levels),
                    close.repeat(*levels)
                ))
            }
            Body::Huge { extra } => {
                let padding = "x".repeat(3 * 1024 * 1024 + extra);
                let object = json!({"metadata": {"name": "huge"}, "data": {"x": padding}});
                Bytes::from(object.to_string())
            }
        }
    }
}

/// Percent-encodes everything outside RFC 3986's unreserved characters.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["GET", "POST", "PUT", "PATCH", "DELETE"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["HEAD", "OPTIONS", "TRACE"]).prop_map(str::to_owned),
        1 => "[A-Z]{1,10}",
    ]
}

/// A path segment: one the router knows, or anything (encoded, or raw ASCII path characters,
/// including `%` not followed by hex digits).
fn segment() -> impl Strategy<Value = String> {
    let known = vec![
        "namespaces",
        "default",
        "kube-system",
        "configmaps",
        "secrets",
        "pods",
        "events",
        "services",
        "deployments",
        "leases",
        "customresourcedefinitions",
        "things",
        "status",
        "scale",
        "finalize",
        "watch",
        "v1",
        "v1beta1",
        "x",
        "",
        ".",
        "..",
    ];
    prop_oneof![
        6 => prop::sample::select(known).prop_map(str::to_owned),
        2 => any::<String>().prop_map(|s| encode(&s)),
        1 => "[A-Za-z0-9%:@!$&'()*+,;=._~-]{0,80}",
    ]
}

fn path() -> impl Strategy<Value = String> {
    let prefixes = vec![
        "",
        "/api",
        "/api/v1",
        "/api/v1/namespaces/default",
        "/apis",
        "/apis/apps/v1",
        "/apis/apps/v1/namespaces/default",
        "/apis/apiextensions.k8s.io/v1",
        "/apis/coordination.k8s.io/v1",
        "/apis/example.com/v1",
        "/apis/example.com/v1/namespaces/default",
        "/apis/nope",
        "/version",
        "/healthz",
        "/openapi/v2",
    ];
    (
        prop::sample::select(prefixes),
        prop::collection::vec(segment(), 0..5),
        any::<bool>(),
    )
        .prop_map(|(prefix, segments, trailing)| {
            let mut path = prefix.to_owned();
            for segment in segments {
                path.push('/');
                path.push_str(&segment);
            }
            if trailing || path.is_empty() {
                path.push('/');
            }
            path
        })
}

fn query_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "", "0", "1", "-1", "true", "false", "All", "Exact", "NotOlderThan", "abc",
            "18446744073709551615", "9223372036854775807", "-9223372036854775808",
            "99999999999999999999", "app=web", "app in (a,b)", "!app", "a b", "((", "x=",
            "metadata.name=x", "spec.nope=1", "metadata.name==%", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYVx1MDAwMCJ9",
            "Foreground", "Orphan",
        ]).prop_map(encode),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        2 => any::<String>().prop_map(|s| encode(&s)),
        1 => "[A-Za-z0-9%+=&]{0,20}",
    ]
}

fn query() -> impl Strategy<Value = String> {
    let keys = vec![
        "watch",
        "limit",
        "continue",
        "resourceVersion",
        "resourceVersionMatch",
        "labelSelector",
        "fieldSelector",
        "timeoutSeconds",
        "allowWatchBookmarks",
        "sendInitialEvents",
        "dryRun",
        "propagationPolicy",
        "gracePeriodSeconds",
        "fieldManager",
        "force",
        "pretty",
        "x",
    ];
    prop::collection::vec((prop::sample::select(keys), query_value()), 0..5).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

fn media_type() -> impl Strategy<Value = Option<String>> {
    let known = vec![
        "application/json",
        "application/json; charset=utf-8",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        "text/plain",
        "*/*",
        "text/html",
        ";;;",
    ];
    prop_oneof![
        2 => Just(None),
        6 => prop::sample::select(known).prop_map(|m| Some(m.to_owned())),
        1 => "[ -~]{0,40}".prop_map(Some),
    ]
}

/// A JSON value of any shape, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Names and `generateName` prefixes: valid, invalid, long, the CRD's name, and multibyte
/// characters around byte 58, where the server cuts a generated name's prefix (54 ASCII bytes and
/// a 2-4 byte character cross it almost half of the time).
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9-]{0,20}",
        2 => (54usize..58, prop::sample::select(vec!["é", "€", "😀", "ß"]), "[a-z-]{0,4}")
            .prop_map(|(n, c, tail)| format!("{}{c}{tail}", "a".repeat(n))),
        1 => Just("things.example.com".to_owned()),
        1 => any::<String>(),
        1 => "[a-z]{250,300}",
    ]
}

/// An object body: plausible metadata (names, generateName, labels, finalizers,
/// resourceVersion) and plausible or odd content, e.g. CRD specs with odd schemas.
fn object() -> impl Strategy<Value = Value> {
    let metadata = (
        prop::option::weighted(0.3, name()),
        prop::option::weighted(0.7, name()),
        prop::option::of(prop::collection::btree_map(name(), name(), 0..3)),
        prop::option::of(prop::sample::select(vec![
            "",
            "1",
            "abc",
            "-1",
            "99999999999999999999",
        ])),
        prop::option::of(prop::collection::vec(name(), 0..3)),
    )
        .prop_map(|(name, generate_name, labels, rv, finalizers)| {
            let mut meta = serde_json::Map::new();
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(value) = value {
                    meta.insert(key.to_owned(), value);
                }
            };
            put("name", name.map(Value::from));
            put("generateName", generate_name.map(Value::from));
            put("labels", labels.map(|l| json!(l)));
            put("resourceVersion", rv.map(Value::from));
            put("finalizers", finalizers.map(|f| json!(f)));
            Value::Object(meta)
        });
    let content = prop_oneof![
        Just(json!({"data": {"k": "v"}})),
        Just(
            json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
        ),
        json_value().prop_map(|spec| json!({"spec": spec})),
        json_value().prop_map(|status| json!({"status": status})),
    ];
    (
        metadata,
        content,
        prop::option::of(prop::sample::select(vec![
            "v1",
            "apps/v1",
            "apiextensions.k8s.io/v1",
            "x",
        ])),
        prop::option::of(prop::sample::select(vec![
            "ConfigMap",
            "Deployment",
            "CustomResourceDefinition",
            "Namespace",
            "x",
        ])),
    )
        .prop_map(|(metadata, content, api_version, kind)| {
            let mut object = content;
            object["metadata"] = metadata;
            if let Some(api_version) = api_version {
                object["apiVersion"] = api_version.into();
            }
            if let Some(kind) = kind {
                object["kind"] = kind.into();
            }
            object
        })
}

/// A JSON patch: operations with plausible and odd paths.
fn json_patch() -> impl Strategy<Value = Value> {
    let pointer = prop_oneof![
        prop::sample::select(vec![
            "",
            "/",
            "/metadata",
            "/metadata/name",
            "/metadata/labels/a",
            "/data",
            "/data/k",
            "/spec",
            "/spec/versions/0",
            "/spec/versions/-",
            "/status",
            "/a/b/c",
            "/-",
            "/0",
            "/data/~1",
            "/data/~2",
            "/metadata/finalizers/99999999999999999999",
        ])
        .prop_map(str::to_owned),
        "(/[a-z0-9~-]{0,4}){0,4}",
    ];
    let op = (
        prop::sample::select(vec![
            "add", "remove", "replace", "move", "copy", "test", "nope",
        ]),
        pointer.clone(),
        pointer,
        json_value(),
    )
        .prop_map(
            |(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}),
        );
    prop::collection::vec(op, 0..8).prop_map(Value::Array)
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        2 => Just(Body::Bytes(Vec::new())),
        4 => object().prop_map(|o| Body::Bytes(o.to_string().into_bytes())),
        2 => json_patch().prop_map(|p| Body::Bytes(p.to_string().into_bytes())),
        1 => json_value().prop_map(|v| Body::Bytes(v.to_string().into_bytes())),
        1 => prop::collection::vec(any::<u8>(), 0..200).prop_map(Body::Bytes),
        1 => any::<String>().prop_map(|s| Body::Bytes(s.into_bytes())),
        1 => (1usize..3000, any::<bool>()).prop_map(|(levels, objects)| Body::Nested { levels, objects }),
        1 => (1usize..4096).prop_map(|extra| Body::Huge { extra }),
    ]
}

fn request() -> impl Strategy<Value = Fuzzed> {
    (
        method(),
        path(),
        query(),
        media_type(),
        media_type(),
        body(),
    )
        .prop_map(|(method, path, query, content_type, accept, body)| {
            let uri = if query.is_empty() {
                path
            } else {
                format!("{path}?{query}")
            };
            Fuzzed {
                method,
                uri,
                content_type,
                accept,
                body,
            }
        })
}

/// Writes with objects to the endpoints that take them: the part of the surface where most
/// validation happens (names, generateName, type meta, CRDs, patches).
fn write() -> impl Strategy<Value = Fuzzed> {
    let collections = vec![
        "/api/v1/namespaces/default/configmaps",
        "/api/v1/namespaces",
        "/api/v1/namespaces/default/events",
        "/api/v1/namespaces/default/services",
        "/apis/apps/v1/namespaces/default/deployments",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/apis/example.com/v1/namespaces/default/things",
    ];
    let patch_types = vec![
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
    ];
    (
        prop::sample::select(collections),
        prop_oneof![2 => Just("POST"), 1 => Just("PUT"), 1 => Just("PATCH")],
        prop::sample::select(vec!["a", "things.example.com", "default"]),
        prop::sample::select(patch_types),
        object(),
        json_patch(),
        prop::option::of(Just("dryRun=All")),
    )
        .prop_map(
            |(collection, method, name, patch_type, object, patch, dry_run)| {
                let (path, content_type, body) = match method {
                    "POST" => (collection.to_owned(), "application/json", object),
                    "PUT" => (format!("{collection}/{name}"), "application/json", object),
                    _ if patch_type == "application/json-patch+json" => {
                        (format!("{collection}/{name}"), patch_type, patch)
                    }
                    _ => (format!("{collection}/{name}"), patch_type, object),
                };
                let uri = match dry_run {
                    Some(query) => format!("{path}?{query}"),
                    None => path,
                };
                Fuzzed {
                    method: method.to_owned(),
                    uri,
                    content_type: Some(content_type.to_owned()),
                    accept: None,
                    body: Body::Bytes(body.to_string().into_bytes()),
                }
            },
        )
}

/// What came back: the status, content type and, unless the body was still streaming (a watch)
/// when the client stopped waiting, the whole body.
struct Answer {
    code: u16,
    content_type: String,
    body: Option<Bytes>,
}

/// One HTTP/1.1 connection to the server.
struct Connection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Connection {
    async fn open(address: SocketAddr) -> Result<Connection, String> {
        let stream = tokio::net::TcpStream::connect(address)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(connection);
        Ok(Connection { sender })
    }

    /// Sends `request`; waits for the body up to `patience` (long enough for any answer that is
    /// not a stream).
    async fn send(
        &mut self,
        request: http::Request<Full<Bytes>>,
        patience: Duration,
    ) -> Result<Answer, String> {
        let response =
            tokio::time::timeout(Duration::from_secs(10), self.sender.send_request(request))
                .await
                .map_err(|_| "no answer within 10 s".to_owned())?
                .map_err(|e| format!("the connection failed instead of answering: {e}"))?;
        let code = response.status().as_u16();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = match tokio::time::timeout(patience, response.into_body().collect()).await {
            Ok(Ok(collected)) => Some(collected.to_bytes()),
            Ok(Err(e)) => return Err(format!("the body broke off: {e}")),
            Err(_) => None,
        };
        Ok(Answer {
            code,
            content_type,
            body,
        })
    }
}

/// The failure answer is what the real server sends: a `Status` object (JSON, or protobuf when
/// protobuf was negotiated), its plain-text 404 for paths outside the API or 400 for a malformed
/// `%` escape, or the empty 406 of the OpenAPI endpoints (v1.36 answers
/// `GET /openapi/v2` with `Accept: application/merge-patch+json` so).
fn check_failure_body(request: &Fuzzed, answer: &Answer) -> Result<(), TestCaseError> {
    let Some(body) = &answer.body else {
        return Err(TestCaseError::fail(format!(
            "{} {}: {} with a body that never ended",
            request.method, request.uri, answer.code
        )));
    };
    if request.method == "HEAD" {
        return Ok(());
    }
    if answer.content_type.starts_with("text/plain") {
        match answer.code {
            404 => prop_assert_eq!(&body[..], b"404 page not found\n"),
            400 => prop_assert_eq!(&body[..], b"400 Bad Request"),
            code => prop_assert!(
                false,
                "{} {}: plain-text {code}",
                request.method,
                request.uri
            ),
        }
        return Ok(());
    }
    if answer.code == 406 && body.is_empty() && request.uri.starts_with("/openapi/") {
        return Ok(());
    }
    let decoded = if answer
        .content_type
        .starts_with(kubegen_codec::PROTOBUF_MEDIA_TYPE)
    {
        kubegen_codec::decode_object(body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    };
    let status: Value = decoded.map_err(|e| {
        TestCaseError::fail(format!(
            "{} {}: {} with a body that is not JSON ({e}): {:?}",
            request.method,
            request.uri,
            answer.code,
            String::from_utf8_lossy(body)
        ))
    })?;
    prop_assert!(
        status["kind"] == "Status"
            && status["code"] == answer.code
            && status["status"] == "Failure",
        "{} {}: {} with {}",
        request.method,
        request.uri,
        answer.code,
        status
    );
    Ok(())
}

/// Runs `request` against the server and checks everything the module docs promise.
async fn exchange(address: SocketAddr, request: &Fuzzed) -> Result<(), TestCaseError> {
    let panics_before = SERVER_PANICS.load(Ordering::SeqCst);
    let mut builder = http::Request::builder()
        .method(request.method.as_str())
        .uri(format!("http://{address}{}", request.uri))
        .header(http::header::HOST, address.to_string());
    if let Some(content_type) = &request.content_type {
        builder = builder.header(http::header::CONTENT_TYPE, content_type);
    }
    if let Some(accept) = &request.accept {
        builder = builder.header(http::header::ACCEPT, accept);
    }
    // Not every fuzzed method or URI is valid HTTP; those never reach the server.
    let Ok(http_request) = builder.body(Full::new(request.body.bytes())) else {
        return Ok(());
    };
    let mut connection = Connection::open(address)
        .await
        .map_err(TestCaseError::fail)?;
    let answer = connection
        .send(http_request, Duration::from_millis(300))
        .await
        .map_err(|e| TestCaseError::fail(format!("{} {}: {e}", request.method, request.uri)))?;
    if !(200..300).contains(&answer.code) {
        check_failure_body(request, &answer)?;
    }
    // The same connection still serves, unless the answer was a stream still running.
    if answer.body.is_none() {
        connection = Connection::open(address)
            .await
            .map_err(TestCaseError::fail)?;
    }
    let normal = http::Request::get(format!(
        "http://{address}/api/v1/namespaces/default/configmaps"
    ))
    .header(http::header::HOST, address.to_string())
    .body(Full::new(Bytes::new()))
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let after = connection
        .send(normal, Duration::from_secs(10))
        .await
        .map_err(|e| {
            TestCaseError::fail(format!("after {} {}: {e}", request.method, request.uri))
        })?;
    prop_assert_eq!(
        after.code,
        200,
        "a normal list after {} {}",
        request.method,
        request.uri
    );
    // Give tasks the request spawned (a watch) a moment to run into trouble.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let panics = SERVER_PANICS.load(Ordering::SeqCst) - panics_before;
    prop_assert_eq!(
        panics,
        0,
        "the server panicked on {} {}",
        request.method,
        request.uri
    );
    Ok(())
}

/// Runs `cases` requests from `strategy` (None: proptest's default, `PROPTEST_CASES`) through
/// `exchange` against one server on its own runtime.
fn fuzz_server(strategy: impl Strategy<Value = Fuzzed>, cases: Option<u32>) {
    count_server_panics();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(SERVER_THREADS)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestServer::start());
    let url = server.url();
    let address: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    // The client runs on this thread's own runtime, so its panics are not counted as the server's.
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let defaults = ProptestConfig::default();
    let config = ProptestConfig {
        source_file: Some(file!()),
        cases: cases.unwrap_or(defaults.cases),
        ..defaults
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |request| {
        client.block_on(exchange(address, &request))
    });
    drop(server);
    if let Err(failure) = result {
        panic!("{failure}");
    }
}

#[test]
fn any_request_gets_an_answer_and_no_task_panics() {
    fuzz_server(request(), None);
}

#[test]
fn any_write_gets_an_answer_and_no_task_panics() {
    fuzz_server(write(), None);
}

/// The first finding: the server cut `generateName` at byte 58 with a string slice, which panicked
/// inside a multibyte character.
#[test]
fn generate_name_cut_inside_a_character_is_answered() {
    let body = json!({"metadata": {"generateName": format!("{}é", "a".repeat(57))}});
    let request = Fuzzed {
        method: "POST".to_owned(),
        uri: "/api/v1/namespaces/default/configmaps".to_owned(),
        content_type: Some("application/json".to_owned()),
        accept: None,
        body: Body::Bytes(body.to_string().into_bytes()),
    };
    fuzz_server(Just(request), Some(1));
}
