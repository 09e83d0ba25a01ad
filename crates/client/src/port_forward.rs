//! Port-forward: a TCP connection to a port of a pod, carried over a WebSocket to the API server,
//! and [`LocalForwarder`], which binds local ports the way `kubectl port-forward` does.
//!
//! Mirrors client-go `tools/portforward/portforward.go` (`parsePorts`, `getListener`, one
//! stream pair per accepted connection) and kubectl's `pkg/cmd/portforward/portforward.go`; the
//! server side of the protocol spoken here is the kubelet's `cri-streaming/pkg/streaming/
//! portforward/websocket.go`.
//!
//! # The protocols
//! `GET .../pods/{name}/portforward?ports={port}` upgraded to a WebSocket offering, best first:
//! - `SPDY/3.1+portforward.k8s.io` (client-go 1.31+): the WebSocket carries SPDY/3.1 frames as a
//!   byte stream, which a 1.31+ API server (`PortForwardWebsockets`) passes to the kubelet's SPDY
//!   port-forward. Per connection an error stream and a data stream (`spdy_forward.rs`), with
//!   half-close.
//! - `v4.channel.k8s.io`: what an older API server gets, as it proxies the WebSocket to the
//!   kubelet's own WebSocket port-forward. Channel 0 carries the data both ways, channel 1 the
//!   server's error text; the server's first message on each channel is the port, two bytes
//!   little-endian; the client sends data only.
//!
//! When the WebSocket is refused (client-go's `FallbackDialer` with kubectl's rule, the same as
//! exec's: `fallback.rs`), the request is sent again as a `POST` upgraded to SPDY/3.1 offering
//! `portforward.k8s.io`, and the same SPDY streams flow on that connection. The API server
//! answers its errors before any upgrade (400 `pod one does not have a host assigned`, 404, and
//! 403 without `create` on `pods/portforward` from 1.35 on, as for exec), so a refused pod is
//! asked twice, once per protocol, as client-go asks; the SPDY attempt's error is returned.
//!
//! One WebSocket (or SPDY connection) carries one connection: [`LocalForwarder`] opens one per
//! accepted local connection (client-go opens one stream pair per connection on a shared one).
//!
//! # Differences from client-go
//! - `v4.channel.k8s.io` has no half-close: when the local side ends its writes, the WebSocket
//!   is closed, ending both directions. The SPDY tunnel half-closes as client-go does.
//! - The pod's phase is not checked before listening (kubectl refuses a pod that is not
//!   Running); a connection to a pod that cannot serve fails when it is made.
//!
//! # How it was checked
//! The SPDY side against Go's SPDY framer (`moby/spdystream/spdy`) byte for byte in both
//! directions, and against kubegen-nodesim's kubelet on both carriers.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::client::Client;
use crate::error::{Error, Result, error_chain};
use crate::fallback::should_fall_back;
use crate::request::ResourcePath;
use crate::spdy_forward::{self, Link};
use crate::spdy_upgrade;
use crate::websocket::{self, Socket};

/// The subprotocol of the kubelet's WebSocket port-forward.
const CHANNEL_PROTOCOL: &str = "v4.channel.k8s.io";
/// Channel of the forwarded bytes.
const DATA: u8 = 0;
/// Channel of the server's error text.
const ERROR: u8 = 1;
/// Capacity of the in-memory pipe of [`Client::port_forward`].
const PIPE_CAPACITY: usize = 64 * 1024;

/// A `LOCAL:REMOTE` pair of `kubectl port-forward`: `8080:80`, `:80` (any free local port) or
/// `80` (the same port on both sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortMapping {
    /// The local port; 0 picks a free one.
    pub local: u16,
    /// The pod's port (never 0).
    pub remote: u16,
}

impl FromStr for PortMapping {
    type Err = Error;

    /// Parses one port argument as client-go's `parsePorts` does.
    fn from_str(spec: &str) -> Result<PortMapping> {
        let invalid = |what: String| Error::BuildRequest(format!("port {spec:?}: {what}"));
        let (local, remote) = match spec.split(':').collect::<Vec<_>>()[..] {
            [both] => (both, both),
            ["", remote] => ("0", remote),
            [local, remote] => (local, remote),
            _ => return Err(invalid("invalid port format, want LOCAL:REMOTE".to_owned())),
        };
        let local = local
            .parse::<u16>()
            .map_err(|e| invalid(format!("error parsing local port {local:?}: {e}")))?;
        let remote = remote
            .parse::<u16>()
            .map_err(|e| invalid(format!("error parsing remote port {remote:?}: {e}")))?;
        if remote == 0 {
            return Err(invalid("remote port must be > 0".to_owned()));
        }
        Ok(PortMapping { local, remote })
    }
}

/// One listening local address and the pod port it forwards to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForwardedAddress {
    /// The bound local address (with the port picked for `:REMOTE`).
    pub local: SocketAddr,
    /// The pod's port.
    pub remote: u16,
}

impl fmt::Display for ForwardedAddress {
    /// kubectl's line: `Forwarding from 127.0.0.1:8080 -> 80`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Forwarding from {} -> {}", self.local, self.remote)
    }
}

/// A connection to a port of a pod ([`Client::port_forward`]).
#[derive(Debug)]
pub struct PortConnection {
    stream: Option<DuplexStream>,
    /// Path and query of the request, for errors.
    url: String,
    /// What the server chose to carry the connection.
    protocol: &'static str,
    driver: Option<JoinHandle<Result<()>>>,
}

impl PortConnection {
    /// What carries the connection: `SPDY/3.1+portforward.k8s.io` (SPDY in a WebSocket, 1.31+
    /// API servers), `v4.channel.k8s.io` (a WebSocket, older ones) or `portforward.k8s.io` (plain
    /// SPDY, when the server refused the WebSocket).
    pub fn protocol(&self) -> &'static str {
        self.protocol
    }

    /// The connection's bytes: what is written goes to the pod's port, what the pod sends is read
    /// here. Shutting it down closes the connection. Returned once.
    pub fn take_stream(&mut self) -> Option<DuplexStream> {
        self.stream.take()
    }

    /// Waits until the connection is closed.
    ///
    /// # Errors
    /// [`Error::PortForwardFailed`] with the server's text when the kubelet could not connect to
    /// the port (or lost the connection); [`Error::StreamFailed`] when the WebSocket broke.
    pub async fn wait(mut self) -> Result<()> {
        self.stream = None;
        let Some(driver) = self.driver.take() else {
            return Ok(());
        };
        driver.await.map_err(|e| Error::StreamFailed {
            url: self.url.clone(),
            message: format!("port-forward task ended abnormally: {e}"),
        })?
    }
}

impl Drop for PortConnection {
    fn drop(&mut self) {
        if let Some(driver) = &self.driver {
            driver.abort();
        }
    }
}

/// Local listeners forwarding each accepted connection to a pod's port, until dropped or
/// [`LocalForwarder::stop`]ped: what `kubectl port-forward` runs.
#[derive(Debug)]
pub struct LocalForwarder {
    addresses: Vec<ForwardedAddress>,
    listeners: Vec<JoinHandle<()>>,
}

impl LocalForwarder {
    /// The bound addresses, in the order of the mappings and then of the listen addresses.
    pub fn addresses(&self) -> &[ForwardedAddress] {
        &self.addresses
    }

    /// Stops listening. Connections already forwarded go on until either side closes them.
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for LocalForwarder {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.abort();
        }
    }
}

/// The addresses `kubectl port-forward` listens on by default (`--address localhost`).
pub const LOCALHOST: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::LOCALHOST),
    IpAddr::V6(Ipv6Addr::LOCALHOST),
];

impl Client {
    /// Opens one connection to port `port` of pod `pod`.
    ///
    /// # Errors
    /// The server's refusal as [`Error::Api`] (404 missing pod, 400 pod without a node, 403
    /// without `create` on `pods/portforward` on 1.35+); [`Error::UpgradeFailed`].
    pub async fn port_forward(
        &self,
        namespace: &str,
        pod: &str,
        port: u16,
    ) -> Result<PortConnection> {
        let tunnel = self.open_port(namespace, pod, port).await?;
        let url = tunnel.url.clone();
        let protocol = tunnel.carrier.protocol();
        let (caller, driver_end) = tokio::io::duplex(PIPE_CAPACITY);
        let driver = tokio::spawn(tunnel.forward(driver_end, port));
        Ok(PortConnection {
            stream: Some(caller),
            url,
            protocol,
            driver: Some(driver),
        })
    }

    /// Listens on each of `addresses` for each mapping, and forwards every accepted connection to
    /// the pod over a WebSocket of its own. A `:REMOTE` mapping gets one free port, the same on
    /// every address. Like kubectl, a mapping fails only when no address can be bound (`::1`
    /// where IPv6 is off is skipped). Connection errors are logged (`tracing`), as kubectl prints
    /// them, and do not stop the listeners.
    ///
    /// # Errors
    /// [`Error::ListenFailed`] when a mapping could be bound on none of the addresses.
    pub async fn forward_local_ports(
        &self,
        namespace: &str,
        pod: &str,
        mappings: &[PortMapping],
        addresses: &[IpAddr],
    ) -> Result<LocalForwarder> {
        let mut forwarder = LocalForwarder {
            addresses: Vec::new(),
            listeners: Vec::new(),
        };
        for mapping in mappings {
            let mut local_port = mapping.local;
            let mut failures = Vec::new();
            for address in addresses {
                match TcpListener::bind((*address, local_port)).await {
                    Ok(listener) => {
                        let local = listener.local_addr().map_err(|e| Error::ListenFailed {
                            port: local_port,
                            message: e.to_string(),
                        })?;
                        local_port = local.port();
                        let bound = ForwardedAddress {
                            local,
                            remote: mapping.remote,
                        };
                        tracing::info!("{bound}");
                        forwarder.addresses.push(bound);
                        let accept = self.accept_loop(listener, namespace, pod, mapping.remote);
                        forwarder.listeners.push(tokio::spawn(accept));
                    }
                    Err(e) => failures.push(format!("{address}: {e}")),
                }
            }
            if failures.len() == addresses.len() {
                return Err(Error::ListenFailed {
                    port: mapping.local,
                    message: failures.join("; "),
                });
            }
        }
        Ok(forwarder)
    }

    fn accept_loop(
        &self,
        listener: TcpListener,
        namespace: &str,
        pod: &str,
        remote: u16,
    ) -> impl Future<Output = ()> + Send + 'static {
        let (client, namespace, pod) = (self.clone(), namespace.to_owned(), pod.to_owned());
        async move {
            loop {
                let connection = match listener.accept().await {
                    Ok((connection, _)) => connection,
                    Err(e) => {
                        tracing::warn!(port = remote, "error accepting connection: {e}");
                        continue;
                    }
                };
                tracing::info!("Handling connection for {remote}");
                let (client, namespace, pod) = (client.clone(), namespace.clone(), pod.clone());
                tokio::spawn(async move {
                    if let Err(e) = client
                        .forward_connection(&namespace, &pod, remote, connection)
                        .await
                    {
                        tracing::warn!("an error occurred forwarding -> {remote}: {e}");
                    }
                });
            }
        }
    }

    async fn forward_connection(
        &self,
        namespace: &str,
        pod: &str,
        port: u16,
        connection: TcpStream,
    ) -> Result<()> {
        let tunnel = self.open_port(namespace, pod, port).await?;
        tunnel.forward(connection, port).await
    }

    async fn open_port(&self, namespace: &str, pod: &str, port: u16) -> Result<Tunnel> {
        if port == 0 {
            return Err(Error::BuildRequest(format!(
                "port-forward to pod {namespace}/{pod}: port must be > 0"
            )));
        }
        let params = [("ports", port.to_string())];
        let request = ResourcePath::new("", "v1", "pods", Some(namespace)).stream(
            pod,
            "portforward",
            &params,
        )?;
        let url = request.uri().to_string();
        let offered = [spdy_forward::PROTOCOL, CHANNEL_PROTOCOL];
        let refusal = match websocket::connect(self, request, &offered).await {
            Ok((socket, chosen)) if chosen == spdy_forward::PROTOCOL => {
                let carrier = Carrier::Spdy(Link::Tunnel(Box::new(socket)));
                return Ok(Tunnel { carrier, url });
            }
            Ok((socket, _)) => {
                let carrier = Carrier::Channels(Box::new(socket));
                return Ok(Tunnel { carrier, url });
            }
            Err(refusal) if should_fall_back(&refusal) => refusal,
            Err(other) => return Err(other),
        };
        tracing::debug!(error = %refusal, "WebSocket refused, retrying port-forward over SPDY");
        let request = ResourcePath::new("", "v1", "pods", Some(namespace)).stream(
            pod,
            "portforward",
            &params,
        )?;
        let offered = [spdy_forward::UPGRADE_PROTOCOL];
        let (connection, chosen) = spdy_upgrade::connect(self, request, &offered).await?;
        if chosen != spdy_forward::UPGRADE_PROTOCOL {
            return Err(Error::UpgradeFailed {
                url,
                message: format!("unexpected stream protocol {chosen:?}"),
            });
        }
        let carrier = Carrier::Spdy(Link::Upgraded(connection));
        Ok(Tunnel { carrier, url })
    }
}

/// One open connection to a pod's port.
struct Tunnel {
    carrier: Carrier,
    /// Path and query of the request, for errors.
    url: String,
}

/// What carries the connection.
enum Carrier {
    /// SPDY, in a WebSocket (1.31+ API servers) or on a plain SPDY upgrade (the fallback).
    Spdy(Link),
    /// The kubelet's channels on a WebSocket (`v4.channel.k8s.io`, older API servers); boxed
    /// like the tunnel's.
    Channels(Box<Socket>),
}

impl Carrier {
    fn protocol(&self) -> &'static str {
        match self {
            Carrier::Spdy(Link::Tunnel(_)) => spdy_forward::PROTOCOL,
            Carrier::Spdy(Link::Upgraded(_)) => spdy_forward::UPGRADE_PROTOCOL,
            Carrier::Channels(_) => CHANNEL_PROTOCOL,
        }
    }
}

impl Tunnel {
    async fn forward<S>(self, local: S, port: u16) -> Result<()>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        match self.carrier {
            Carrier::Spdy(link) => spdy_forward::forward(link, local, port, self.url).await,
            Carrier::Channels(socket) => forward(*socket, local, port, self.url).await,
        }
    }
}

/// Moves bytes between `local` and the pod until the server closes the socket.
async fn forward<S>(mut socket: Socket, local: S, port: u16, url: String) -> Result<()>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (mut reader, mut writer) = tokio::io::split(local);
    let mut frames = Frames::new(port);
    let mut buffer = vec![0; 32 * 1024];
    let mut local_open = true;
    let failed = |message: String| Error::StreamFailed {
        url: url.clone(),
        message,
    };
    loop {
        tokio::select! {
            message = socket.next() => match message {
                None | Some(Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed)) => break,
                Some(Err(e)) => return Err(failed(error_chain(&e))),
                Some(Ok(Message::Binary(data))) => {
                    if let Some(bytes) = frames.receive(&data).map_err(failed)?
                        && writer.write_all(&bytes).await.is_err()
                    {
                        // The local side is gone: nothing more can be delivered.
                        let _ = socket.close(None).await;
                    }
                }
                Some(Ok(Message::Close(_))) => break,
                Some(Ok(_)) => {}
            },
            read = reader.read(&mut buffer), if local_open => match read {
                Ok(0) | Err(_) => {
                    local_open = false;
                    socket.close(None).await.map_err(|e| failed(error_chain(&e)))?;
                }
                Ok(n) => {
                    let frame = crate::channel::data_frame(DATA, &buffer[..n]);
                    socket.send(Message::Binary(frame)).await.map_err(|e| failed(error_chain(&e)))?;
                }
            },
        }
    }
    let _ = writer.shutdown().await;
    match frames.error_text() {
        Some(message) => Err(Error::PortForwardFailed { url, port, message }),
        None => Ok(()),
    }
}

/// The receiving half of the port-forward channel rules, without I/O.
///
/// # Invariants
/// `port_bytes_left[c]` counts the port-prefix bytes still expected on channel `c` (2, then 0).
#[derive(Debug)]
pub(crate) struct Frames {
    port: u16,
    /// Port bytes still expected on the data and error channels, and those seen so far.
    port_bytes_left: [usize; 2],
    port_bytes: [Vec<u8>; 2],
    /// The server's error text so far.
    error: Vec<u8>,
}

impl Frames {
    pub(crate) fn new(port: u16) -> Frames {
        Frames {
            port,
            port_bytes_left: [2, 2],
            port_bytes: [Vec::new(), Vec::new()],
            error: Vec::new(),
        }
    }

    /// Takes one message from the server; returns data for the local side, if any.
    ///
    /// # Errors
    /// A message on a channel other than 0 and 1, or a port prefix naming another port.
    pub(crate) fn receive(
        &mut self,
        message: &Bytes,
    ) -> std::result::Result<Option<Bytes>, String> {
        let Some((channel, mut payload)) = crate::channel::split_frame(message) else {
            return Ok(None);
        };
        let index = match channel {
            DATA | ERROR => usize::from(channel),
            other => return Err(format!("port-forward: data on unknown channel {other}")),
        };
        let take = self.port_bytes_left[index].min(payload.len());
        if take > 0 {
            self.port_bytes[index].extend_from_slice(&payload.split_to(take));
            self.port_bytes_left[index] -= take;
            if self.port_bytes_left[index] == 0 {
                let prefix = &self.port_bytes[index];
                let port = u16::from_le_bytes([prefix[0], prefix[1]]);
                if port != self.port {
                    return Err(format!(
                        "port-forward: channel {channel} is for port {port}, expected {}",
                        self.port
                    ));
                }
            }
        }
        if payload.is_empty() {
            return Ok(None);
        }
        if channel == ERROR {
            self.error.extend_from_slice(&payload);
            return Ok(None);
        }
        Ok(Some(payload))
    }

    /// What the server wrote on the error channel, if anything.
    pub(crate) fn error_text(&self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.error).trim().to_owned();
        (!text.is_empty()).then_some(text)
    }
}

#[cfg(test)]
#[path = "port_forward_tests.rs"]
mod tests;
