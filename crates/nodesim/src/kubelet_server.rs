//! The simulated kubelet's HTTPS API: the part an API server dials for `pods/log`, `pods/exec`,
//! `pods/attach` and `pods/portforward`. One server answers for every simulated Node (the path
//! names the Pod); the Nodes advertise its address and port in their status.
//!
//! Mirrors `pkg/kubelet/server/server.go` (`InstallDebuggingHandlers`: the `/containerLogs`,
//! `/exec`, `/attach` and `/portForward` routes and their 404s for an unknown pod or container)
//! with the streaming server of `k8s.io/cri-streaming` behind it, which a real kubelet reaches
//! through a redirect to the container runtime and serves here directly.
//!
//! # Why HTTPS
//! kube-apiserver dials kubelets with `https` (it does not verify the certificate unless given
//! `--kubelet-certificate-authority`), so the server answers TLS with a self-signed certificate
//! for `localhost` and `127.0.0.1`, made with rcgen (ring provider) at start.
//!
//! # Differences from the real kubelet
//! - No authentication or authorization of the caller (a real kubelet checks the API server's
//!   client certificate and asks `SubjectAccessReview` for `nodes/proxy`); it listens on loopback.
//! - Only the streaming routes; `/pods`, `/stats`, `/metrics`, `/run` and `/checkpoint` are 404.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use percent_encoding::percent_decode_str;
use rcgen::{CertificateParams, KeyPair};
use rustls::ServerConfig;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::error::{Error, Result};
use crate::streaming::{Body, Host, text};
use crate::{container_logs, port_forward, remote_command};

/// A bound, not yet serving, kubelet server.
pub(crate) struct KubeletServer {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    host: Arc<Host>,
}

impl KubeletServer {
    /// Binds `address` (port 0 for a free one) with a fresh self-signed certificate for it,
    /// `localhost` and `127.0.0.1`.
    ///
    /// # Errors
    /// [`Error::KubeletServerFailed`] when the port cannot be bound or the certificate made.
    pub(crate) async fn bind(
        (ip, port): (std::net::IpAddr, u16),
        host: Host,
    ) -> Result<KubeletServer> {
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            Error::KubeletServerFailed(format!("{what}: {e}"))
        };
        let listener = TcpListener::bind((ip, port))
            .await
            .map_err(|e| failed(&format!("bind {ip}:{port}"), &e))?;
        let acceptor =
            self_signed(&ip.to_string()).map_err(|e| failed("make a serving certificate", &e))?;
        Ok(KubeletServer {
            listener,
            acceptor,
            host: Arc::new(host),
        })
    }

    /// The bound address.
    ///
    /// # Errors
    /// [`Error::KubeletServerFailed`] when the socket cannot tell (it does not in practice).
    pub(crate) fn address(&self) -> Result<SocketAddr> {
        self.listener
            .local_addr()
            .map_err(|e| Error::KubeletServerFailed(format!("read the bound address: {e}")))
    }

    /// Serves connections until `stop` turns true.
    pub(crate) async fn serve(self, mut stop: watch::Receiver<bool>) {
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                _ = stop.wait_for(|stopped| *stopped) => return,
            };
            let Ok((stream, _)) = accepted else { continue };
            let _ = stream.set_nodelay(true);
            let (acceptor, host) = (self.acceptor.clone(), self.host.clone());
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |request: Request<Incoming>| {
                    let host = host.clone();
                    async move { Ok::<_, Infallible>(route(&host, request).await) }
                });
                let builder = auto::Builder::new(TokioExecutor::new());
                let connection =
                    builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "kubelet connection ended with an error");
                }
            });
        }
    }
}

/// Sends a request to its route, as the kubelet's go-restful container does.
async fn route(host: &Arc<Host>, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path().to_owned();
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let method = request.method().clone();
    let streaming = method == Method::GET || method == Method::POST;
    // Which protocol an API server chose to reach the kubelet with (WebSocket or SPDY, and the
    // offered subprotocols or stream protocols): `RUST_LOG=kubegen_nodesim=debug` shows it.
    let header = |name: &str| {
        let values = request.headers().get_all(name).iter();
        let values: Vec<&str> = values.filter_map(|v| v.to_str().ok()).collect();
        values.join(", ")
    };
    tracing::debug!(
        %method,
        %path,
        upgrade = %header("upgrade"),
        websocket_protocols = %header("sec-websocket-protocol"),
        stream_protocols = %header("x-stream-protocol-version"),
        "kubelet request"
    );
    match segments.as_slice() {
        ["containerLogs", namespace, pod, container] if method == Method::GET => {
            container_logs::serve(host, (namespace, pod, container), request.uri().query())
        }
        // `/exec/{ns}/{pod}/{container}` and `/exec/{ns}/{pod}/{uid}/{container}`.
        [kind @ ("exec" | "attach"), namespace, pod, .., container]
            if streaming && (4..=5).contains(&segments.len()) =>
        {
            let attach = *kind == "attach";
            remote_command::serve(host, (namespace, pod, container), attach, request)
        }
        ["portForward", namespace, pod] | ["portForward", namespace, pod, _] if streaming => {
            port_forward::serve(host, (namespace, pod), request)
        }
        _ => text(StatusCode::NOT_FOUND, "404 page not found\n"),
    }
}

/// A TLS acceptor over a new self-signed certificate for `localhost`, `127.0.0.1` and `ip`.
fn self_signed(ip: &str) -> std::result::Result<TlsAcceptor, String> {
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    if !names.iter().any(|n| n == ip) {
        names.push(ip.to_owned());
    }
    let params = CertificateParams::new(names).map_err(|e| e.to_string())?;
    let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key_der)
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
