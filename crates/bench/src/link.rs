//! A simulated network link between the measured clients and the test server.
//!
//! On loopback, moving a list page costs far less than decoding it, so "wall time vs raw
//! transfer" only measures decoding speed. Real clusters are the other way round: the list
//! crosses a network, and a client that decodes while the bytes arrive finishes about when the
//! last byte does, while one that buffers each page and decodes it afterwards pays transfer plus
//! decode. To show that difference the parent can put this TCP proxy in front of the server: bytes
//! from the server to a client are paced at a fixed bandwidth shared by every connection (one
//! link, like one NIC), and every response waits half a round trip before its first byte. Client
//! to server bytes pass unpaced (requests are tiny).

use std::net::SocketAddr;
use std::sync::Arc;
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
    mbit_per_s: f64,
    rtt_ms: u64,
    accept: JoinHandle<()>,
}

impl Link {
    /// Starts a proxy on 127.0.0.1 in front of `upstream` (`http://host:port`), pacing responses at
    /// `mbit_per_s` megabits per second after `rtt_ms / 2` of latency.
    pub async fn start(upstream: &str, mbit_per_s: f64, rtt_ms: u64) -> Result<Link> {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .with_context(|| format!("link: upstream {upstream} is not http://ip:port"))?;
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("link: binding")?;
        let url = format!("http://{}", listener.local_addr()?);
        let pacer = Arc::new(Pacer::new(mbit_per_s * 1e6 / 8.0));
        let one_way = Duration::from_millis(rtt_ms) / 2;
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let pacer = Arc::clone(&pacer);
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        relay(client, server, &pacer, one_way).await;
                    }
                });
            }
        });
        Ok(Link {
            url,
            mbit_per_s,
            rtt_ms,
            accept,
        })
    }

    /// The URL clients use instead of the server's.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// How the tables name the network: `1000 Mbit/s link, 2 ms RTT`.
impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} Mbit/s link, {} ms RTT", self.mbit_per_s, self.rtt_ms)
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

/// Copies both directions until either side closes; the server's bytes go through the pacer.
async fn relay(client: TcpStream, server: TcpStream, pacer: &Pacer, one_way: Duration) {
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
            let arrives = pacer.reserve(n).max(Instant::now() + one_way);
            if arrives > Instant::now() + Duration::from_millis(1) {
                tokio::time::sleep_until(arrives).await;
            }
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
}
