//! A scripted API server for the exec and attach tests, shared by `remote_command_tests.rs` and
//! `spdy_exec_tests.rs`: it tells WebSocket upgrades from SPDY ones, and plays a kubelet's SPDY
//! side (`v4.channel.k8s.io` down to `channel.k8s.io`) with its own minimal SPDY reader, so the
//! client's frames are checked by code that does not share the client's parser.
//!
//! The command comes from the query, as for the WebSocket peer: `cat` echoes stdin to stdout
//! until stdin's FIN, `resize` reports each resize line on stdout until stdin's FIN, `ping` pings the client and reports its echo, `echo ARGS`
//! writes ARGS; `exit N` (anywhere in the command) ends with code N, `fail` with a failure that
//! is not an exit code. Every session writes `done` on stderr (when asked for), ends stdout and
//! stderr, then writes its status on the error stream (a `Status` on v4, text on older versions,
//! only for a failure) and closes the connection.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::spdy;

/// The `command` query parameters of a URI, decoded.
pub(crate) fn commands(uri: &str) -> Vec<String> {
    let query = uri.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("command="))
        .map(|arg| arg.replace("%20", " "))
        .collect()
}

/// The v4 `Status` a kubelet writes for `command` (`garbage`: text that is not a `Status`).
pub(crate) fn v4_status(command: &[String]) -> String {
    let program = command.first().map_or("", String::as_str);
    match command.iter().find_map(|arg| arg.strip_prefix("exit ")) {
        Some("0") | None if program != "fail" && program != "garbage" => {
            r#"{"metadata":{},"status":"Success"}"#.to_owned()
        }
        Some(code) => format!(
            r#"{{"metadata":{{}},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit {code}], message: \"\"","reason":"NonZeroExitCode","details":{{"causes":[{{"reason":"ExitCode","message":"{code}"}}]}}}}"#
        ),
        None if program == "fail" => r#"{"metadata":{},"status":"Failure","message":"Internal error occurred: error executing command in container: exec: \"fail\": executable file not found in $PATH","reason":"InternalError","code":500}"#.to_owned(),
        None => "garbage".to_owned(),
    }
}

/// Waits for a request's head and tells whether it asks for a SPDY upgrade, without consuming
/// it (the WebSocket side hands the stream to tungstenite, which reads the head itself).
pub(crate) async fn is_spdy_upgrade(tcp: &TcpStream) -> bool {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let n = tcp.peek(&mut buffer).await.unwrap_or(0);
        let head = String::from_utf8_lossy(&buffer[..n]).to_ascii_lowercase();
        if head.contains("\r\n\r\n") || n == 0 {
            return head.contains("upgrade: spdy/3.1");
        }
        tokio::task::yield_now().await;
    }
}

/// How the SPDY side answers the upgrade.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SpdyAnswer {
    /// 101 naming this stream protocol (empty: names none).
    Accept(&'static str),
    /// This status and JSON body.
    Refuse(u16, &'static str),
}

/// What the SPDY side saw.
#[derive(Debug, Default)]
pub(crate) struct SpdySeen {
    /// The request line, e.g. `POST /api/v1/... HTTP/1.1`.
    pub(crate) request_line: String,
    /// The `X-Stream-Protocol-Version` values, in order.
    pub(crate) offered: Vec<String>,
    /// Each opened stream's id and `streamtype`, in order.
    pub(crate) streams: Vec<(u32, String)>,
    /// Data received on stdin, and whether stdin's FIN arrived.
    pub(crate) stdin: Vec<u8>,
    pub(crate) stdin_fin: bool,
    /// Data received on the resize stream.
    pub(crate) resize: String,
}

/// A frame as the peer reads it: control frames with their type and body, data frames with
/// their stream, flags and payload.
enum RawFrame {
    Control { kind: u16, body: Bytes },
    Data { stream: u32, fin: bool, data: Bytes },
}

/// The peer's side of the connection: a byte buffer and a frame splitter.
struct Conn {
    tcp: TcpStream,
    buffer: BytesMut,
}

impl Conn {
    async fn next(&mut self) -> Option<RawFrame> {
        loop {
            if self.buffer.len() >= 8 {
                let length = u32::from_be_bytes([0, self.buffer[5], self.buffer[6], self.buffer[7]])
                    as usize;
                if self.buffer.len() >= 8 + length {
                    let frame = self.buffer.split_to(8 + length).freeze();
                    let first = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
                    let fin = frame[4] & 1 != 0;
                    let body = frame.slice(8..);
                    return Some(if first & 0x8000_0000 != 0 {
                        RawFrame::Control {
                            kind: (first & 0xffff) as u16,
                            body,
                        }
                    } else {
                        RawFrame::Data {
                            stream: first,
                            fin,
                            data: body,
                        }
                    });
                }
            }
            let mut chunk = [0; 8192];
            let n = self.tcp.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }

    async fn send(&mut self, frame: &[u8]) {
        // The client may have gone; a script has nothing to do about it.
        let _ = self.tcp.write_all(frame).await;
    }
}

/// The `streamtype` of a `SYN_STREAM` body whose header block is stored (uncompressed) deflate,
/// as the client writes it.
fn stream_type(body: &[u8]) -> String {
    let mut block = &body[10..];
    if block.starts_with(&[0x78, 0x01]) {
        block = &block[2..];
    }
    let mut plain = Vec::new();
    while block.len() >= 5 {
        let len = usize::from(u16::from_le_bytes([block[1], block[2]]));
        plain.extend_from_slice(&block[5..5 + len]);
        block = &block[5 + len..];
    }
    let read_u32 = |at: usize| {
        u32::from_be_bytes([plain[at], plain[at + 1], plain[at + 2], plain[at + 3]]) as usize
    };
    let count = read_u32(0);
    let mut at = 4;
    for _ in 0..count {
        let name_len = read_u32(at);
        let name = String::from_utf8_lossy(&plain[at + 4..at + 4 + name_len]).into_owned();
        at += 4 + name_len;
        let value_len = read_u32(at);
        let value = String::from_utf8_lossy(&plain[at + 4..at + 4 + value_len]).into_owned();
        at += 4 + value_len;
        if name == "streamtype" {
            return value;
        }
    }
    String::new()
}

/// Answers one SPDY upgrade on `tcp` and, if accepted, plays the command of its query.
pub(crate) async fn serve_spdy(mut tcp: TcpStream, answer: SpdyAnswer, seen: Arc<Mutex<SpdySeen>>) {
    let head = read_head(&mut tcp).await;
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default().to_owned();
    let uri = request_line
        .split(' ')
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let offered: Vec<String> = lines
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| name.eq_ignore_ascii_case("x-stream-protocol-version"))
        .map(|(_, value)| value.trim().to_owned())
        .collect();
    {
        let mut seen = seen.lock();
        seen.request_line = request_line;
        seen.offered = offered;
    }
    let protocol = match answer {
        SpdyAnswer::Refuse(code, body) => {
            let refusal = format!(
                "HTTP/1.1 {code} Refused\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = tcp.write_all(refusal.as_bytes()).await;
            return;
        }
        SpdyAnswer::Accept(protocol) => protocol,
    };
    let version = if protocol.is_empty() {
        String::new()
    } else {
        format!("X-Stream-Protocol-Version: {protocol}\r\n")
    };
    let upgrade = format!(
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n{version}\r\n"
    );
    let _ = tcp.write_all(upgrade.as_bytes()).await;
    let query = uri.split_once('?').map_or("", |(_, q)| q).to_owned();
    let wants = |key: &str| query.split('&').any(|pair| pair == format!("{key}=true"));
    let tty = wants("tty");
    let mut expected = 1 + usize::from(wants("stdin")) + usize::from(wants("stdout"));
    expected += usize::from(wants("stderr") && !tty);
    expected += usize::from(tty && matches!(protocol, "v4.channel.k8s.io" | "v3.channel.k8s.io"));
    let mut conn = Conn {
        tcp,
        buffer: BytesMut::new(),
    };
    // As the kubelet: every expected stream must arrive before the command starts, each
    // accepted with an empty header block in the server's own zlib stream.
    let mut replies = spdy::Writer::default();
    while seen.lock().streams.len() < expected {
        let Some(frame) = conn.next().await else {
            return;
        };
        if let RawFrame::Control { kind: 1, body } = frame {
            let id = u32::from_be_bytes([body[0], body[1], body[2], body[3]]) & 0x7fff_ffff;
            seen.lock().streams.push((id, stream_type(&body)));
            conn.send(&replies.syn_reply(id, &[], false)).await;
        }
    }
    let id_of = |kind: &str| {
        seen.lock()
            .streams
            .iter()
            .find(|(_, k)| k == kind)
            .map(|(id, _)| *id)
    };
    let (stdin, stdout, stderr, error, resize) = (
        id_of("stdin"),
        id_of("stdout"),
        id_of("stderr"),
        id_of("error"),
        id_of("resize"),
    );
    let command = commands(&uri);
    let program = command.first().map_or("", String::as_str);
    if program == "echo"
        && let Some(out) = stdout
    {
        let text = format!("{}\n", command[1..].join(" "));
        conn.send(&spdy::data_frame(out, false, text.as_bytes()))
            .await;
    }
    if program == "ping" {
        // A server ping (even id): the client must echo it.
        conn.send(&spdy::ping_frame(2)).await;
        while let Some(frame) = conn.next().await {
            if let RawFrame::Control { kind: 6, body } = frame
                && body[..] == 2u32.to_be_bytes()
                && let Some(out) = stdout
            {
                conn.send(&spdy::data_frame(out, false, b"pong 2\n")).await;
                break;
            }
        }
    }
    if matches!(program, "cat" | "resize") && stdin.is_some() {
        while let Some(frame) = conn.next().await {
            match frame {
                RawFrame::Data { stream, fin, data } if Some(stream) == stdin => {
                    seen.lock().stdin.extend_from_slice(&data);
                    if program == "cat"
                        && let Some(out) = stdout
                    {
                        conn.send(&spdy::data_frame(out, false, &data)).await;
                    }
                    if fin {
                        seen.lock().stdin_fin = true;
                        break;
                    }
                }
                RawFrame::Data { stream, data, .. } if Some(stream) == resize => {
                    let text = String::from_utf8_lossy(&data).into_owned();
                    seen.lock().resize.push_str(&text);
                    if let Some(out) = stdout {
                        conn.send(&spdy::data_frame(
                            out,
                            false,
                            format!("size {text}").as_bytes(),
                        ))
                        .await;
                    }
                }
                // The client's pings: echo them.
                RawFrame::Control { kind: 6, body } => {
                    let id = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                    conn.send(&spdy::ping_frame(id)).await;
                }
                _ => {}
            }
        }
    }
    if let Some(err) = stderr {
        conn.send(&spdy::data_frame(err, false, b"done\n")).await;
        conn.send(&spdy::data_frame(err, true, b"")).await;
    }
    if let Some(out) = stdout {
        conn.send(&spdy::data_frame(out, true, b"")).await;
    }
    if let Some(error) = error {
        let text = if protocol == "v4.channel.k8s.io" {
            v4_status(&command)
        } else if program == "fail"
            || command
                .iter()
                .any(|a| a.starts_with("exit ") && a != "exit 0")
        {
            format!("command {} failed", command.join(" "))
        } else {
            String::new()
        };
        conn.send(&spdy::data_frame(error, true, text.as_bytes()))
            .await;
    }
    let _ = conn.tcp.shutdown().await;
}

/// Reads an HTTP request head (through the blank line) byte by byte, so nothing after it is
/// consumed.
async fn read_head(tcp: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tcp.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}
