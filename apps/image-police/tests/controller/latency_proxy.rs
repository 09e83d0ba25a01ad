//! A TCP proxy in front of the e2e target that delays every request byte by a settable latency:
//! the way to catch a reconcile in flight on any server, real or not.
//!
//! It works below TLS (bytes are forwarded as they are, encrypted or not), so it needs no
//! certificate of its own; a controller reaches it through `--master=<scheme>://127.0.0.1:<port>`,
//! which keeps the kubeconfig's credentials and CA. The server's certificate must therefore be
//! valid for 127.0.0.1, as it is for local clusters (kind, the kubegen test server, a
//! kube-apiserver on this machine).
//!
//! It is a delay line, not a sleep per read: each chunk is forwarded `latency` after it arrived,
//! so many small writes (HTTP/2 frames, window updates) do not pile up into ever longer delays.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

/// A running proxy; stops (with every connection) when dropped.
pub struct LatencyProxy {
    addr: SocketAddr,
    /// Delay of client-to-server bytes, in microseconds.
    latency_micros: Arc<AtomicU64>,
    accept: JoinHandle<()>,
}

impl LatencyProxy {
    /// Listens on 127.0.0.1 and forwards every connection to `target` (`host:port`).
    pub async fn start(target: String) -> LatencyProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("proxy listen: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("proxy address: {e}"));
        let latency_micros = Arc::new(AtomicU64::new(0));
        let latency = Arc::clone(&latency_micros);
        let accept = tokio::spawn(async move {
            // Owned here: aborting the accept loop drops the set, which aborts every connection.
            let mut connections = JoinSet::new();
            while let Ok((client, _)) = listener.accept().await {
                let (target, latency) = (target.clone(), Arc::clone(&latency));
                connections.spawn(forward(client, target, latency));
            }
        });
        LatencyProxy {
            addr,
            latency_micros,
            accept,
        }
    }

    /// `127.0.0.1:<port>` the proxy listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Delays every request byte sent from now on by `latency` (zero: none).
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_micros.store(micros, Ordering::Relaxed);
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Joins `client` to a new connection to `target`: requests through the delay line, responses
/// straight back. Ends when either side closes.
async fn forward(client: TcpStream, target: String, latency: Arc<AtomicU64>) {
    let Ok(server) = TcpStream::connect(&target).await else {
        return; // the client sees the connection close, as if the server refused it
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::select! {
        () = delayed(client_read, server_write, latency) => {}
        () = copy(server_read, client_write) => {}
    }
}

/// Copies `from` to `to` until either ends.
async fn copy(mut from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let _ = tokio::io::copy(&mut from, &mut to).await;
}

/// Copies `from` to `to`, each chunk `latency` after it was read.
async fn delayed(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    latency: Arc<AtomicU64>,
) {
    let mut line: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut buffer = vec![0; 16 * 1024];
    let mut open = true;
    while open || !line.is_empty() {
        let due = line.front().map(|(due, _)| *due);
        tokio::select! {
            read = from.read(&mut buffer), if open => match read {
                Ok(read @ 1..) => {
                    let delay = Duration::from_micros(latency.load(Ordering::Relaxed));
                    line.push_back((Instant::now() + delay, buffer[..read].to_vec()));
                }
                Ok(0) | Err(_) => open = false,
            },
            () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                let Some((_, chunk)) = line.pop_front() else { continue };
                if to.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        }
    }
}
