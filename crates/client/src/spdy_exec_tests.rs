//! exec and attach over SPDY against a scripted peer that refuses WebSockets and plays a
//! kubelet's SPDY streams (`exec_test_peer.rs`), so every session here is the fallback.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::*;
use crate::client::Client;
use crate::config::Config;
use crate::exec_test_peer::{SpdyAnswer, SpdySeen, is_spdy_upgrade, serve_spdy};
use crate::remote_command::ExecOptions;

/// A refusal a WebSocket-blind proxy might send.
const NO_WEBSOCKETS: &str = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"websocket upgrades are not allowed here","reason":"BadRequest","code":400}"#;

/// Starts the peer: WebSockets refused with 400, SPDY answered with `answer`.
async fn peer(answer: SpdyAnswer) -> (Client, Arc<Mutex<SpdySeen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(SpdySeen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut tcp, _) = listener.accept().await.unwrap();
            if is_spdy_upgrade(&tcp).await {
                tokio::spawn(serve_spdy(tcp, answer, record.clone()));
                continue;
            }
            let mut head = vec![0; 8192];
            let _ = tcp.read(&mut head).await;
            let refusal = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{NO_WEBSOCKETS}",
                NO_WEBSOCKETS.len()
            );
            let _ = tcp.write_all(refusal.as_bytes()).await;
        }
    });
    let config = Config::new(format!("http://{address}").parse().unwrap());
    (Client::new(config).unwrap(), seen)
}

const V4: SpdyAnswer = SpdyAnswer::Accept("v4.channel.k8s.io");

fn streams(seen: &Mutex<SpdySeen>) -> Vec<(u32, String)> {
    seen.lock().streams.clone()
}

fn named(pairs: &[(u32, &str)]) -> Vec<(u32, String)> {
    pairs
        .iter()
        .map(|(id, kind)| (*id, (*kind).to_owned()))
        .collect()
}

#[tokio::test]
async fn stdin_stdout_and_stderr_are_separate_streams_and_stdin_ends_with_fin() {
    let (client, seen) = peer(V4).await;
    let opts = ExecOptions {
        stdin: true,
        ..ExecOptions::default()
    };
    let mut process = client
        .exec("ns1", "web", &["cat", "exit 0"], &opts)
        .await
        .unwrap();
    assert!(process.over_spdy());
    assert_eq!(process.protocol(), "v4.channel.k8s.io");
    let mut stdin = process.take_stdin().unwrap();
    let mut stdout = BufReader::new(process.take_stdout().unwrap());
    stdin.write_all(b"hello\n").await.unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).await.unwrap();
    assert_eq!(line, "hello\n");
    stdin.shutdown().await.unwrap();
    drop(stdin);
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, b"", "stdout ends with its stream's FIN");
    let mut stderr = Vec::new();
    let mut err_pipe = process.take_stderr().unwrap();
    err_pipe.read_to_end(&mut stderr).await.unwrap();
    assert_eq!(stderr, b"done\n");
    assert!(process.wait().await.unwrap().success());
    let seen = seen.lock();
    assert_eq!(
        seen.request_line,
        "POST /api/v1/namespaces/ns1/pods/web/exec?stdin=true&stdout=true&stderr=true&command=cat&command=exit%200 HTTP/1.1"
    );
    assert_eq!(
        seen.offered,
        [
            "v4.channel.k8s.io",
            "v3.channel.k8s.io",
            "v2.channel.k8s.io",
            "channel.k8s.io"
        ]
    );
    assert_eq!(
        seen.streams,
        named(&[(1, "error"), (3, "stdin"), (5, "stdout"), (7, "stderr")])
    );
    assert_eq!(seen.stdin, b"hello\n");
    assert!(seen.stdin_fin);
}

#[tokio::test]
async fn the_v4_error_stream_carries_the_exit_code() {
    let (client, seen) = peer(V4).await;
    let output = client
        .exec("ns1", "web", &["sh", "exit 3"], &ExecOptions::default())
        .await
        .unwrap()
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), 3);
    assert_eq!(output.stderr, b"done\n");
    assert_eq!(
        streams(&seen),
        named(&[(1, "error"), (3, "stdout"), (5, "stderr")])
    );
}

#[tokio::test]
async fn a_v4_failure_that_is_not_an_exit_code_is_remote_command_failed() {
    let (client, _) = peer(V4).await;
    let err = client
        .exec("ns1", "web", &["fail"], &ExecOptions::default())
        .await
        .unwrap()
        .wait()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::RemoteCommandFailed { status, .. } if status.reason == "InternalError"),
        "{err}"
    );
}

#[tokio::test]
async fn a_tty_on_v4_opens_a_resize_stream_without_stderr_and_sends_json_lines() {
    let (client, seen) = peer(V4).await;
    let opts = ExecOptions {
        stdin: true,
        stderr: false,
        tty: true,
        ..ExecOptions::default()
    };
    let mut process = client.exec("ns1", "web", &["resize"], &opts).await.unwrap();
    let resizer = process.resizer().unwrap();
    let mut stdout = BufReader::new(process.take_stdout().unwrap());
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
    assert_eq!(
        streams(&seen),
        named(&[(1, "error"), (3, "stdin"), (5, "stdout"), (7, "resize")])
    );
}

#[tokio::test]
async fn v2_has_no_resize_stream_and_reports_failures_as_text() {
    let (client, seen) = peer(SpdyAnswer::Accept("v2.channel.k8s.io")).await;
    let opts = ExecOptions {
        stderr: false,
        tty: true,
        ..ExecOptions::default()
    };
    let process = client
        .exec("ns1", "web", &["sh", "exit 9"], &opts)
        .await
        .unwrap();
    assert_eq!(process.protocol(), "v2.channel.k8s.io");
    let resizer = process.resizer().unwrap();
    // Nowhere to send it, as in client-go: dropped, not an error.
    resizer
        .resize(TerminalSize {
            width: 80,
            height: 24,
        })
        .await
        .unwrap();
    let err = process.wait().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "/api/v1/namespaces/ns1/pods/web/exec?stdout=true&tty=true&command=sh&command=exit%209: error executing remote command: command sh exit 9 failed"
    );
    assert_eq!(streams(&seen), named(&[(1, "error"), (3, "stdout")]));
}

#[tokio::test]
async fn a_server_that_names_no_protocol_speaks_v1_and_success_is_exit_code_zero() {
    let (client, _) = peer(SpdyAnswer::Accept("")).await;
    let process = client
        .exec("ns1", "web", &["echo", "hi"], &ExecOptions::default())
        .await
        .unwrap();
    assert_eq!(process.protocol(), "channel.k8s.io");
    let output = process.output().await.unwrap();
    assert_eq!(output.stdout, b"hi\n");
    assert!(output.status.success());
}

#[tokio::test]
async fn the_servers_pings_are_answered() {
    let (client, _) = peer(V4).await;
    let output = client
        .exec("ns1", "web", &["ping"], &ExecOptions::default())
        .await
        .unwrap()
        .output()
        .await
        .unwrap();
    assert_eq!(output.stdout, b"pong 2\n");
}

#[tokio::test]
async fn attach_falls_back_too() {
    let (client, seen) = peer(V4).await;
    let process = client
        .attach("ns1", "web", &ExecOptions::default())
        .await
        .unwrap();
    assert!(process.over_spdy());
    assert!(process.output().await.unwrap().status.success());
    assert_eq!(
        seen.lock().request_line,
        "POST /api/v1/namespaces/ns1/pods/web/attach?stdout=true&stderr=true HTTP/1.1"
    );
}

#[test]
fn protocol_names_round_trip_and_none_named_is_v1() {
    for protocol in SpdyProtocol::OFFERED {
        assert_eq!(SpdyProtocol::from_name(protocol.name()), Some(protocol));
    }
    assert_eq!(SpdyProtocol::from_name(""), Some(SpdyProtocol::V1));
    assert_eq!(SpdyProtocol::from_name("v5.channel.k8s.io"), None);
}
