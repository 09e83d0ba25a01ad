//! What answers on a simulated Pod's ports: a simulated container has no network namespace, so a
//! forwarded connection reaches one of these in-process responders instead of a socket in the Pod
//! (a real kubelet's `PortForward` enters the Pod's network namespace and dials `localhost:port`,
//! `pkg/kubelet/cri/streaming/portforward` and containerd's `portForward`).
//!
//! By default every port echoes what it receives; a test can make ports answer HTTP with
//! [`NodeSimOptions::http_port`](crate::NodeSimOptions::http_port).

use std::collections::BTreeMap;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The responders of the Pods' ports: HTTP on the listed ports (with their body), echo on the
/// others.
#[derive(Clone, Debug, Default)]
pub(crate) struct Responder {
    /// Port → body of the `200 OK` every HTTP request gets.
    pub(crate) http: BTreeMap<u16, String>,
}

impl Responder {
    /// Serves one connection to `port` until the client ends its side.
    pub(crate) async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&self, port: u16, stream: S) {
        match self.http.get(&port) {
            Some(body) => http(body, stream).await,
            None => echo(stream).await,
        }
    }
}

/// Writes back every byte received.
async fn echo<S: AsyncRead + AsyncWrite + Unpin>(stream: S) {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let _ = tokio::io::copy(&mut reader, &mut writer).await;
    let _ = writer.shutdown().await;
}

/// Answers each HTTP/1.1 request (its head read, a `Content-Length` body skipped) with
/// `200 OK` and `body`, keeping the connection open between requests.
async fn http<S: AsyncRead + AsyncWrite + Unpin>(body: &str, stream: S) {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut reader = BufReader::new(reader);
    loop {
        let mut length = 0usize;
        let mut first = true;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() && !first {
                break;
            }
            first = false;
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut skipped = vec![0; length.min(1 << 20)];
        if reader.read_exact(&mut skipped).await.is_err() {
            return;
        }
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unlisted_port_echoes() {
        let (mut client, server) = tokio::io::duplex(64);
        let responder = Responder::default();
        let serving = tokio::spawn(async move { responder.serve(80, server).await });
        client.write_all(b"ping").await.unwrap();
        client.shutdown().await.unwrap();
        let mut back = Vec::new();
        client.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, b"ping");
        serving.await.unwrap();
    }

    #[tokio::test]
    async fn a_listed_port_answers_http_requests() {
        let (mut client, server) = tokio::io::duplex(1024);
        let responder = Responder {
            http: BTreeMap::from([(8080, "hello".to_owned())]),
        };
        tokio::spawn(async move { responder.serve(8080, server).await });
        client
            .write_all(
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
            )
            .await
            .unwrap();
        client.shutdown().await.unwrap();
        let mut back = String::new();
        client.read_to_string(&mut back).await.unwrap();
        let one = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(back, format!("{one}{one}"));
    }
}
