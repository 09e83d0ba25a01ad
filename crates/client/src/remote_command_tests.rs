//! exec and attach against a scripted peer: a tokio WebSocket server on loopback playing the API
//! server's side of the channel protocol.
//!
//! The peer reads the command from the query and acts on it: `cat` echoes stdin to stdout until
//! stdin is closed (v5's close signal), `cat-once` echoes one stdin frame (v4 has no close
//! signal), `resize` reports each terminal size on stdout until stdin closes, `exit N` ends with
//! code N; every session writes `done` to stderr before its status, and then closes the socket
//! (or, with a `drop` argument, drops the connection without a close handshake). `fail` ends with a failure that
//! is not an exit code, `garbage` with an error channel that is not a `Status`. A SPDY upgrade
//! (the fallback) is refused as the WebSocket was, or, after a WebSocket 101 the client rejects,
//! accepted by `exec_test_peer.rs`'s SPDY side with `v4.channel.k8s.io`.

use super::*;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::Message;

use crate::channel;

use parking_lot::Mutex;
use tokio::io::AsyncBufReadExt;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

use crate::config::Config;
use crate::exec_test_peer::{
    SpdyAnswer, SpdySeen, commands, is_spdy_upgrade, serve_spdy, v4_status,
};

/// How the peer answers the upgrade.
#[derive(Clone, Copy)]
enum Handshake {
    /// 101 with this subprotocol.
    Accept(&'static str),
    /// This status and JSON body, no upgrade.
    Refuse(u16, &'static str),
}

/// What the peer saw: the request line and every binary frame the client sent.
#[derive(Default)]
struct Seen {
    uri: String,
    offered: String,
    frames: Vec<Vec<u8>>,
    /// WebSocket upgrades received.
    websockets: usize,
    /// What the SPDY side saw (the fallback).
    spdy: Arc<Mutex<SpdySeen>>,
}

// The callback's error type is tungstenite's, not ours to shrink.
#[allow(clippy::result_large_err)]
async fn peer(handshake: Handshake) -> (Client, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            if is_spdy_upgrade(&tcp).await {
                let answer = match handshake {
                    Handshake::Accept(_) => SpdyAnswer::Accept("v4.channel.k8s.io"),
                    Handshake::Refuse(code, body) => SpdyAnswer::Refuse(code, body),
                };
                let spdy = record.lock().spdy.clone();
                tokio::spawn(serve_spdy(tcp, answer, spdy));
                continue;
            }
            record.lock().websockets += 1;
            tokio::spawn(play_websocket(tcp, handshake, record.clone()));
        }
    });
    let config = Config::new(format!("http://{address}").parse().unwrap());
    (Client::new(config).unwrap(), seen)
}

// The callback's error type is tungstenite's, not ours to shrink.
#[allow(clippy::result_large_err)]
async fn play_websocket(
    tcp: tokio::net::TcpStream,
    handshake: Handshake,
    record: Arc<Mutex<Seen>>,
) {
    {
        let callback = |request: &Request, mut response: Response| {
            let mut seen = record.lock();
            seen.uri = request.uri().to_string();
            seen.offered = request
                .headers()
                .get("sec-websocket-protocol")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            match handshake {
                Handshake::Accept(protocol) => {
                    response
                        .headers_mut()
                        .insert("sec-websocket-protocol", protocol.parse().unwrap());
                    Ok(response)
                }
                Handshake::Refuse(code, body) => {
                    let mut refusal = ErrorResponse::new(Some(body.to_owned()));
                    *refusal.status_mut() = http::StatusCode::from_u16(code).unwrap();
                    refusal
                        .headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    Err(refusal)
                }
            }
        };
        let Ok(socket) = tokio_tungstenite::accept_hdr_async(tcp, callback).await else {
            return;
        };
        let command = commands(&record.lock().uri);
        play(socket, &command, &record).await;
    }
}

async fn play(
    mut socket: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    command: &[String],
    seen: &Mutex<Seen>,
) {
    let program = command.first().map_or("", String::as_str);
    if matches!(program, "cat" | "cat-once" | "resize") {
        echo_stdin(&mut socket, program, seen).await;
    }
    let stderr = channel::data_frame(channel::STDERR, b"done\n");
    socket.send(Message::Binary(stderr)).await.unwrap();
    let status = v4_status(command);
    let error = channel::data_frame(channel::ERROR, status.as_bytes());
    socket.send(Message::Binary(error)).await.unwrap();
    if command.iter().any(|arg| arg == "drop") {
        // Drops the connection without a close handshake.
        return;
    }
    socket.close(None).await.unwrap();
}

/// Plays the command's stdin side until the client closes stdin (or, for `cat-once`, after one
/// frame).
async fn echo_stdin(
    socket: &mut tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    program: &str,
    seen: &Mutex<Seen>,
) {
    loop {
        let Some(Ok(message)) = socket.next().await else {
            return;
        };
        let Message::Binary(frame) = message else {
            continue;
        };
        seen.lock().frames.push(frame.to_vec());
        match (frame[0], program) {
            (255, _) => break,
            (0, "cat" | "cat-once") => {
                let echo = channel::data_frame(channel::STDOUT, &frame[1..]);
                socket.send(Message::Binary(echo)).await.unwrap();
                if program == "cat-once" {
                    break;
                }
            }
            (4, "resize") => {
                let text = format!("size {}\n", String::from_utf8_lossy(&frame[1..]));
                let out = channel::data_frame(channel::STDOUT, text.as_bytes());
                socket.send(Message::Binary(out)).await.unwrap();
            }
            _ => {}
        }
    }
}

fn with_stdin() -> ExecOptions {
    ExecOptions {
        stdin: true,
        ..ExecOptions::default()
    }
}

#[test]
fn options_become_query_parameters_in_field_order() {
    let opts = ExecOptions {
        container: Some("db".to_owned()),
        stdin: true,
        stdout: true,
        stderr: false,
        tty: true,
    };
    let params = opts.params(&["sh", "-c", "echo hi"]);
    let pairs: Vec<_> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        pairs,
        [
            "stdin=true",
            "stdout=true",
            "tty=true",
            "container=db",
            "command=sh",
            "command=-c",
            "command=echo hi"
        ]
    );
    let default = ExecOptions::default().params(&[]);
    assert_eq!(
        default,
        [("stdout", "true".to_owned()), ("stderr", "true".to_owned())]
    );
}

#[tokio::test]
async fn exec_echoes_stdin_closes_it_with_v5_and_exits_zero() {
    let (client, seen) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let mut process = client
        .exec("ns1", "web", &["cat", "exit 0"], &with_stdin())
        .await
        .unwrap();
    assert_eq!(process.protocol(), "v5.channel.k8s.io");
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = tokio::io::BufReader::new(process.take_stdout().unwrap());
    stdin.write_all(b"hello\n").await.unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert_eq!(line, "hello\n");
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut stderr = Vec::new();
    process
        .take_stderr()
        .unwrap()
        .read_to_end(&mut stderr)
        .await
        .unwrap();
    assert_eq!(stderr, b"done\n");
    let status = process.wait().await.unwrap();
    assert!(status.success());
    assert_eq!(status.code(), 0);
    let seen = seen.lock();
    assert_eq!(
        seen.uri,
        "/api/v1/namespaces/ns1/pods/web/exec?stdin=true&stdout=true&stderr=true&command=cat&command=exit%200"
    );
    assert_eq!(seen.offered, "v5.channel.k8s.io, v4.channel.k8s.io");
    assert_eq!(seen.frames, [b"\x00hello\n".to_vec(), vec![255, 0]]);
}

#[tokio::test]
async fn a_non_zero_exit_code_is_the_exit_status_not_an_error() {
    let (client, _) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let output = client
        .exec("ns1", "web", &["sh", "exit 3"], &ExecOptions::default())
        .await
        .unwrap()
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), 3);
    assert!(!output.status.success());
    assert_eq!(output.stdout, b"");
    assert_eq!(output.stderr, b"done\n");
}

#[tokio::test]
async fn output_closes_stdin_so_a_reader_of_it_ends() {
    let (client, seen) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let process = client
        .exec("ns1", "web", &["cat", "exit 7"], &with_stdin())
        .await
        .unwrap();
    let output = process.output().await.unwrap();
    assert_eq!(output.status.code(), 7);
    assert_eq!(seen.lock().frames, [vec![255, 0]]);
}

#[tokio::test]
async fn v4_carries_exit_codes_but_sends_no_close_signal() {
    let (client, seen) = peer(Handshake::Accept("v4.channel.k8s.io")).await;
    let mut process = client
        .exec("ns1", "web", &["cat-once", "exit 2"], &with_stdin())
        .await
        .unwrap();
    assert_eq!(process.protocol(), "v4.channel.k8s.io");
    let mut stdin = process.take_stdin().unwrap();
    stdin.write_all(b"x").await.unwrap();
    drop(stdin);
    let output = process.output().await.unwrap();
    assert_eq!(output.stdout, b"x");
    assert_eq!(output.status.code(), 2);
    assert_eq!(seen.lock().frames, [b"\x00x".to_vec()]);
}

#[tokio::test]
async fn resize_sends_go_field_names_on_channel_four() {
    let (client, seen) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let opts = ExecOptions {
        stdin: true,
        stderr: false,
        tty: true,
        ..ExecOptions::default()
    };
    let mut process = client.exec("ns1", "web", &["resize"], &opts).await.unwrap();
    assert!(process.take_stderr().is_none(), "a TTY has no stderr");
    let resizer = process.resizer().unwrap();
    let mut stdout = tokio::io::BufReader::new(process.take_stdout().unwrap());
    resizer
        .resize(TerminalSize {
            width: 120,
            height: 40,
        })
        .await
        .unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert_eq!(line, "size {\"Width\":120,\"Height\":40}\n");
    drop(process.take_stdin());
    drop(stdout);
    assert!(process.wait().await.unwrap().success());
    assert!(
        seen.lock()
            .uri
            .ends_with("?stdin=true&stdout=true&tty=true&command=resize")
    );
}

#[tokio::test]
async fn attach_uses_the_attach_subresource_without_a_command() {
    let (client, seen) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let opts = ExecOptions {
        container: Some("main".to_owned()),
        ..ExecOptions::default()
    };
    let output = client
        .attach("ns1", "web", &opts)
        .await
        .unwrap()
        .output()
        .await
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        seen.lock().uri,
        "/api/v1/namespaces/ns1/pods/web/attach?stdout=true&stderr=true&container=main"
    );
}

#[tokio::test]
async fn a_failure_that_is_not_an_exit_code_is_remote_command_failed() {
    let (client, _) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let process = client
        .exec("ns1", "web", &["fail"], &ExecOptions::default())
        .await
        .unwrap();
    let err = process.wait().await.unwrap_err();
    let Error::RemoteCommandFailed { status, url } = &err else {
        panic!("expected RemoteCommandFailed, got {err}");
    };
    assert_eq!(status.reason, "InternalError");
    assert_eq!(
        url,
        "/api/v1/namespaces/ns1/pods/web/exec?stdout=true&stderr=true&command=fail"
    );
}

#[tokio::test]
async fn an_error_channel_that_is_not_a_status_is_a_stream_failure() {
    let (client, _) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let process = client
        .exec("ns1", "web", &["garbage"], &ExecOptions::default())
        .await
        .unwrap();
    let err = process.wait().await.unwrap_err();
    assert!(
        matches!(&err, Error::StreamFailed { message, .. } if message.contains("error channel protocol error")),
        "{err}"
    );
}

#[tokio::test]
async fn a_subprotocol_that_was_not_offered_is_an_upgrade_failure_that_falls_back_to_spdy() {
    let (client, seen) = peer(Handshake::Accept("channel.k8s.io")).await;
    let process = client
        .exec("ns1", "web", &["sh", "exit 5"], &ExecOptions::default())
        .await
        .unwrap();
    assert!(process.over_spdy());
    assert_eq!(process.protocol(), "v4.channel.k8s.io");
    let output = process.output().await.unwrap();
    assert_eq!(output.status.code(), 5);
    assert_eq!(output.stderr, b"done\n");
    let seen = seen.lock();
    assert_eq!(seen.websockets, 1);
    assert!(
        seen.spdy
            .lock()
            .request_line
            .starts_with("POST /api/v1/namespaces/ns1/pods/web/exec?")
    );
}

#[tokio::test]
async fn requests_that_cannot_work_fail_before_connecting() {
    let client = Client::new(Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap();
    let err = client
        .exec("ns1", "web", &[], &ExecOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("the command is empty"), "{err}");
    let none = ExecOptions {
        stdout: false,
        stderr: false,
        ..ExecOptions::default()
    };
    let err = client.attach("ns1", "web", &none).await.unwrap_err();
    assert!(err.to_string().contains("at least one of stdin"), "{err}");
}

/// Refusals before the upgrade, with the bodies v1.15 and v1.36 sent (recorded with curl).
mod refusals {
    use super::*;

    /// The error of an exec that both the WebSocket and the SPDY retry were refused with.
    async fn refused(code: u16, body: &'static str) -> Error {
        let (client, seen) = peer(Handshake::Refuse(code, body)).await;
        let err = client
            .exec("podstream-a", "one", &["echo"], &ExecOptions::default())
            .await
            .unwrap_err();
        let seen = seen.lock();
        assert_eq!(seen.websockets, 1);
        assert_eq!(
            seen.spdy.lock().offered,
            [
                "v4.channel.k8s.io",
                "v3.channel.k8s.io",
                "v2.channel.k8s.io",
                "channel.k8s.io"
            ]
        );
        err
    }

    #[tokio::test]
    async fn v1_36_without_create_on_pods_exec_is_forbidden() {
        let err = refused(403, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"one\" is forbidden: ","reason":"Forbidden","details":{"name":"one","kind":"pods"},"code":403}"#).await;
        assert!(err.is_forbidden());
        assert_eq!(
            err.status().unwrap().message,
            r#"pods "one" is forbidden: "#
        );
    }

    #[tokio::test]
    async fn v1_15_without_get_on_pods_exec_is_forbidden() {
        let err = refused(403, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"one\" is forbidden: User \"system:serviceaccount:image-police:image-police\" cannot get resource \"pods/exec\" in API group \"\" in the namespace \"podstream-a\"","reason":"Forbidden","details":{"name":"one","kind":"pods"},"code":403}"#).await;
        assert!(err.is_forbidden());
    }

    #[tokio::test]
    async fn a_missing_pod_is_not_found() {
        let err = refused(404, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"pods"},"code":404}"#).await;
        assert!(err.is_not_found());
        assert_eq!(
            err.to_string(),
            "POST /api/v1/namespaces/podstream-a/pods/one/exec?stdout=true&stderr=true&command=echo: pods \"missing\" not found (NotFound, 404)"
        );
    }

    #[tokio::test]
    async fn a_pod_without_a_node_is_a_bad_request() {
        let err = refused(400, r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pod one does not have a host assigned","reason":"BadRequest","code":400}"#).await;
        assert!(err.is_bad_request());
        assert_eq!(
            err.status().unwrap().message,
            "pod one does not have a host assigned"
        );
    }
}

#[tokio::test]
async fn a_server_that_answers_200_instead_of_upgrading_fails_the_upgrade() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // Answers the WebSocket and the SPDY retry alike.
    tokio::spawn(async move {
        loop {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut request = vec![0; 4096];
            let _ = tcp.read(&mut request).await.unwrap();
            let answer =
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
            tcp.write_all(answer.as_bytes()).await.unwrap();
        }
    });
    let client = Client::new(Config::new(format!("http://{address}").parse().unwrap())).unwrap();
    let err = client
        .exec("ns1", "web", &["true"], &ExecOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::UpgradeFailed { message, .. }
            if message == "the server answered 200 OK instead of 101 Switching Protocols"),
        "{err}"
    );
}

#[tokio::test]
async fn a_transport_that_cannot_upgrade_says_so() {
    struct AnswersOnly;
    impl crate::transport::Transport for AnswersOnly {
        fn send(
            &self,
            _: http::Request<Bytes>,
        ) -> std::pin::Pin<Box<dyn Future<Output = Result<http::Response<crate::Body>>> + Send + '_>>
        {
            Box::pin(async { Ok(http::Response::new(crate::Body::empty())) })
        }
    }
    let client = Client::with_transport(Arc::new(AnswersOnly), "default");
    let err = client
        .exec("ns1", "web", &["true"], &ExecOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "upgrading /api/v1/namespaces/ns1/pods/web/exec?stdout=true&stderr=true&command=true: this transport cannot upgrade connections"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_the_upgrade_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // Accepts the connection and keeps it open without a word.
    let silent = tokio::spawn(async move { listener.accept().await });
    let mut config = Config::new(format!("http://{address}").parse().unwrap());
    config.timeout = Some(Duration::from_secs(5));
    let client = Client::new(config).unwrap();
    let err = client
        .exec("ns1", "web", &["true"], &ExecOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    silent.abort();
}

#[tokio::test]
async fn a_connection_dropped_after_the_status_still_yields_the_exit_code() {
    let (client, _) = peer(Handshake::Accept("v5.channel.k8s.io")).await;
    let output = client
        .exec(
            "ns1",
            "web",
            &["sh", "exit 4", "drop"],
            &ExecOptions::default(),
        )
        .await
        .unwrap()
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), 4);
    assert_eq!(output.stderr, b"done\n");
}

// The callback's error type is tungstenite's, not ours to shrink.
#[allow(clippy::result_large_err)]
#[tokio::test]
async fn a_connection_dropped_before_any_status_is_a_stream_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let callback = |_: &Request, mut response: Response| {
            let protocol = "v5.channel.k8s.io".parse().unwrap();
            response
                .headers_mut()
                .insert("sec-websocket-protocol", protocol);
            Ok(response)
        };
        let socket = tokio_tungstenite::accept_hdr_async(tcp, callback)
            .await
            .unwrap();
        drop(socket);
    });
    let client = Client::new(Config::new(format!("http://{address}").parse().unwrap())).unwrap();
    let err = client
        .exec("ns1", "web", &["true"], &ExecOptions::default())
        .await
        .unwrap()
        .wait()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::StreamFailed { .. }), "{err}");
}
