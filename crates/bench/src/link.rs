//! A simulated network link between the measured clients and the test server, and a byte
//! counter on a client's connection.
//!
//! On loopback, moving a list page costs far less than decoding it, so "wall time vs raw
//! transfer" only measures decoding speed. Real clusters are the other way round: the list
//! crosses a network, and a client that decodes while the bytes arrive finishes about when the
//! last byte does, while one that buffers each page and decodes it afterwards pays transfer plus
//! decode. To show that difference the parent can put this TCP proxy in front of the server: bytes
//! from the server to a client are paced at a fixed bandwidth shared by every connection (one
//! link, like one NIC), and every response waits half a round trip before its first byte. Client
//! to server bytes pass unpaced (requests are tiny).
//!
//! Every link counts the bytes it carries from the server to its clients. Unpaced
//! ([`Link::counting`]) that is all it does: the scale-out benchmark gives each replica its own,
//! so "bytes a replica received" is measured on the wire, TLS and HTTP/2 framing included, the
//! way a pod's network counters would see them, without a hook in the client.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Bytes handed to the pacer at once: small enough that pacing is smooth at tens of Mbit/s.
const CHUNK: usize = 16 * 1024;

/// A running proxy; stops accepting when dropped.
pub struct Link {
    url: String,
    /// Bandwidth and round trip, when paced.
    pacing: Option<(f64, u64)>,
    /// Bytes relayed from the server to the clients so far.
    received: Arc<AtomicU64>,
    accept: JoinHandle<()>,
}

impl Link {
    /// Starts a proxy on 127.0.0.1 in front of `upstream` (`http://host:port`), pacing responses at
    /// `mbit_per_s` megabits per second after `rtt_ms / 2` of latency.
    pub async fn start(upstream: &str, mbit_per_s: f64, rtt_ms: u64) -> Result<Link> {
        let pacer = Pacer::new(mbit_per_s * 1e6 / 8.0);
        let one_way = Duration::from_millis(rtt_ms) / 2;
        let mut link = Link::listen(upstream, Some(pacer), one_way).await?;
        link.pacing = Some((mbit_per_s, rtt_ms));
        Ok(link)
    }

    /// Starts an unpaced proxy on 127.0.0.1 in front of `upstream` (`http://` or `https://`
    /// `ip:port`; TLS passes through untouched) that only counts ([`Link::received`]).
    pub async fn counting(upstream: &str) -> Result<Link> {
        Link::listen(upstream, None, Duration::ZERO).await
    }

    async fn listen(upstream: &str, pacer: Option<Pacer>, one_way: Duration) -> Result<Link> {
        let (scheme, address) = upstream
            .trim_end_matches('/')
            .split_once("://")
            .with_context(|| format!("link: upstream {upstream} is not scheme://ip:port"))?;
        let upstream: SocketAddr = address
            .parse()
            .with_context(|| format!("link: upstream {upstream} is not scheme://ip:port"))?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("link: binding")?;
        let url = format!("{scheme}://{}", listener.local_addr()?);
        let pacer = pacer.map(Arc::new);
        let received = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&received);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let pacer = pacer.clone();
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        relay(client, server, pacer.as_deref(), one_way, &counter).await;
                    }
                });
            }
        });
        Ok(Link {
            url,
            pacing: None,
            received,
            accept,
        })
    }

    /// The URL clients use instead of the server's.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Bytes relayed from the server to this link's clients so far.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// How the tables name the network: `1000 Mbit/s link, 2 ms RTT`.
impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pacing {
            Some((mbit_per_s, rtt_ms)) => {
                write!(f, "{mbit_per_s} Mbit/s link, {rtt_ms} ms RTT")
            }
            None => write!(f, "unpaced link"),
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// One shared link: hands out transmission slots in order, at a fixed byte rate.
struct Pacer {
    bytes_per_s: f64,
    /// When the link is free again.
    free_at: Mutex<Instant>,
}

impl Pacer {
    fn new(bytes_per_s: f64) -> Pacer {
        Pacer {
            bytes_per_s,
            free_at: Mutex::new(Instant::now()),
        }
    }

    /// Reserves the link for `bytes` and returns when their last bit has "arrived".
    fn reserve(&self, bytes: usize) -> Instant {
        let duration = Duration::from_secs_f64(bytes as f64 / self.bytes_per_s);
        let mut free_at = self.free_at.lock();
        let start = (*free_at).max(Instant::now());
        *free_at = start + duration;
        *free_at
    }
}

/// Copies both directions until either side closes; the server's bytes are counted and, on a
/// paced link, go through the pacer.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    pacer: Option<&Pacer>,
    one_way: Duration,
    received: &AtomicU64,
) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upstream = tokio::io::copy(&mut client_read, &mut server_write);
    let downstream = async {
        let mut buffer = vec![0u8; CHUNK];
        loop {
            let n = match server_read.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            // Latency: a burst's first byte is late by one way; pacing covers the rest. Timers
            // have millisecond resolution, so a chunk due within a millisecond goes now; the link's
            // reservations are cumulative, so a later chunk waits for it.
            if let Some(pacer) = pacer {
                let arrives = pacer.reserve(n).max(Instant::now() + one_way);
                if arrives > Instant::now() + Duration::from_millis(1) {
                    tokio::time::sleep_until(arrives).await;
                }
            }
            received.fetch_add(n as u64, Ordering::Relaxed);
            if client_write.write_all(&buffer[..n]).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    };
    tokio::select! {
        _ = upstream => {}
        () = downstream => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pacer_serialises_reservations_at_its_rate() {
        let pacer = Pacer::new(1_000_000.0);
        let start = Instant::now();
        let first = pacer.reserve(500_000);
        let second = pacer.reserve(500_000);
        assert_eq!(first - start, Duration::from_millis(500));
        assert_eq!(second - start, Duration::from_secs(1));
    }

    #[tokio::test]
    async fn relays_both_directions() -> Result<()> {
        let echo = TcpListener::bind("127.0.0.1:0").await?;
        let upstream = format!("http://{}", echo.local_addr()?);
        tokio::spawn(async move {
            if let Ok((mut socket, _)) = echo.accept().await {
                let mut buffer = [0u8; 5];
                if socket.read_exact(&mut buffer).await.is_ok() {
                    let _ = socket.write_all(&buffer).await;
                }
            }
        });
        let link = Link::start(&upstream, 100.0, 2).await?;
        let mut client = TcpStream::connect(link.url().trim_start_matches("http://")).await?;
        client.write_all(b"hello").await?;
        let mut reply = [0u8; 5];
        client.read_exact(&mut reply).await?;
        assert_eq!(&reply, b"hello");
        Ok(())
    }

    #[tokio::test]
    async fn counting_link_counts_the_servers_bytes_only() -> Result<()> {
        let server = TcpListener::bind("127.0.0.1:0").await?;
        let upstream = format!("https://{}", server.local_addr()?);
        tokio::spawn(async move {
            if let Ok((mut socket, _)) = server.accept().await {
                let mut request = [0u8; 3];
                if socket.read_exact(&mut request).await.is_ok() {
                    let _ = socket.write_all(&[7u8; 1000]).await;
                }
            }
        });
        let link = Link::counting(&upstream).await?;
        assert!(link.url().starts_with("https://127.0.0.1:"));
        let mut client = TcpStream::connect(link.url().trim_start_matches("https://")).await?;
        client.write_all(b"GET").await?;
        let mut reply = vec![0u8; 1000];
        client.read_exact(&mut reply).await?;
        assert_eq!(link.received(), 1000);
        Ok(())
    }
}
