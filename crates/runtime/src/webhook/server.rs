//! The HTTPS server of a process's webhooks: one port, one certificate ([`CertWatcher`]), a
//! path per admission handler and `/convert` for CRD conversion. The counterpart of
//! controller-runtime's `webhook.Server` (`pkg/webhook/server.go`): served with hyper and
//! tokio-rustls (ring provider), as the client is; HTTP/1.1 and HTTP/2 (the API server speaks
//! HTTP/2 to webhooks).
//!
//! # Answers
//! - `POST <path>` with a review: HTTP 200 and the review's answer (allowed, denied, or a 400
//!   answer naming what could not be decoded); HTTP 503 when a handler answers
//!   [`Denial::unavailable`](super::Denial::unavailable), so the configuration's `failurePolicy`
//!   decides.
//! - Another method: 405. An unknown path: 404. A body over 7 MiB (controller-runtime's limit,
//!   above the API server's 3 MiB object limit): 413. A body that cannot be read otherwise
//!   (the connection broke mid-body, a malformed chunk): 400.
//!
//! # Readiness
//! [`WebhookServer::is_started`] is true from the moment the port is bound with a certificate
//! that loaded until the serving task ends; the manager's `/readyz` consults it. controller-runtime's
//! `StartedChecker` instead dials the server over TLS at every probe. Here that dial would prove
//! little more: the listener is bound before the flag is set (connections queue until
//! accepted), the certificate is loaded before binding, and a later rotation that does not load
//! keeps the previous pair ([`CertWatcher`]), so a handshake cannot fail for a reason the flag
//! misses, short of the accept loop itself wedging. It would also make a synchronous probe
//! answer wait on a network round trip.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use kubegen_client::Client;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use super::admission::{Admissible, Handler, Mutating, Mutator, Typed, Validating, Validator};
use super::bootstrap::{CERT_FILE, KEY_FILE, SelfSigned};
use super::certs::CertWatcher;
use super::conversion::{Conversions, Convert};
use super::hub::HubConversion;
use super::metrics::WebhookMetrics;
use crate::error::Error;
use crate::metrics::ProcessMetrics;

/// Where CRD conversion reviews are served (controller-runtime's path).
pub const CONVERT_PATH: &str = "/convert";
/// controller-runtime's default certificate directory.
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";
/// controller-runtime's default port.
pub const DEFAULT_PORT: u16 = 9443;
/// The largest review body read (controller-runtime's `maxRequestSize`).
const MAX_BODY: usize = 7 * 1024 * 1024;

/// Where and with which certificate the webhook server listens. Built with methods:
/// `WebhookOptions::default().port(9443).cert_dir("/certs")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookOptions {
    bind_address: SocketAddr,
    cert_dir: PathBuf,
    cert_name: String,
    key_name: String,
    self_signed: Option<SelfSigned>,
}

impl Default for WebhookOptions {
    /// controller-runtime's: every interface, port 9443, `tls.crt` and `tls.key` in
    /// `/tmp/k8s-webhook-server/serving-certs`, no self-signed bootstrap.
    fn default() -> Self {
        WebhookOptions {
            bind_address: SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
            cert_dir: PathBuf::from(DEFAULT_CERT_DIR),
            cert_name: CERT_FILE.to_owned(),
            key_name: KEY_FILE.to_owned(),
            self_signed: None,
        }
    }
}

impl WebhookOptions {
    /// Listens on `addr` (port 0 picks a free one).
    pub fn bind_address(mut self, addr: SocketAddr) -> Self {
        self.bind_address = addr;
        self
    }

    /// Reads the certificate pair from `dir` (re-read when the files change).
    pub fn cert_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cert_dir = dir.into();
        self
    }

    /// The file names of the certificate chain and key in the directory (default `tls.crt`,
    /// `tls.key`: what a `kubernetes.io/tls` Secret mounts).
    pub fn cert_names(mut self, cert: &str, key: &str) -> Self {
        cert.clone_into(&mut self.cert_name);
        key.clone_into(&mut self.key_name);
        self
    }

    /// Generates a self-signed certificate into the directory when it holds none, and writes its
    /// CA into the listed configurations (see [`SelfSigned`]). `None` (the default): the files
    /// come from elsewhere (cert-manager, a mounted Secret).
    pub fn self_signed(mut self, bootstrap: Option<SelfSigned>) -> Self {
        self.self_signed = bootstrap;
        self
    }
}

/// The webhooks of one process and their server. A [`crate::Manager`] owns one
/// ([`crate::Manager::webhook_server`]) and serves it when
/// [`crate::ManagerOptions::webhook`] is set.
pub struct WebhookServer {
    routes: HashMap<String, Arc<dyn Handler>>,
    conversions: Conversions,
    metrics: WebhookMetrics,
    started: Arc<AtomicBool>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut paths: Vec<&String> = self.routes.keys().collect();
        paths.sort();
        f.debug_struct("WebhookServer")
            .field("paths", &paths)
            .field("conversions", &!self.conversions.is_empty())
            .field("started", &self.is_started())
            .finish()
    }
}

impl WebhookServer {
    /// A server without handlers whose series go into `metrics`.
    pub fn new(metrics: &ProcessMetrics) -> WebhookServer {
        WebhookServer {
            routes: HashMap::new(),
            conversions: Conversions::default(),
            metrics: WebhookMetrics::new(metrics),
            started: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Serves `validator` for kind `K` at `path` (kubebuilder's `/validate-<group>-<version>-<kind>`).
    pub fn add_validator<K: Admissible>(
        &mut self,
        path: &str,
        validator: impl Validator<K>,
    ) -> &mut Self {
        let handler: Typed<K, _> = Typed::new(Validating(validator));
        self.routes.insert(path.to_owned(), Arc::new(handler));
        self
    }

    /// Serves `mutator` for kind `K` at `path` (kubebuilder's `/mutate-<group>-<version>-<kind>`).
    pub fn add_mutator<K: Admissible>(
        &mut self,
        path: &str,
        mutator: impl Mutator<K>,
    ) -> &mut Self {
        let handler: Typed<K, _> = Typed::new(Mutating(mutator));
        self.routes.insert(path.to_owned(), Arc::new(handler));
        self
    }

    /// Converts objects of `group`'s `kind` with `convert`, at [`CONVERT_PATH`].
    pub fn add_converter(&mut self, group: &str, kind: &str, convert: impl Convert) -> &mut Self {
        self.conversions.add(group, kind, convert);
        let conversions = self.conversions.clone();
        self.routes
            .insert(CONVERT_PATH.to_owned(), Arc::new(conversions));
        self
    }

    /// Serves kubegen's generated conversions of `H`'s kind through its storage version `H`, at
    /// [`CONVERT_PATH`]: `add_converter` with the kind's group and name.
    pub fn add_conversion<H>(&mut self, conversion: HubConversion<H>) -> &mut Self
    where
        H: k8s_openapi::Resource
            + serde::Serialize
            + serde::de::DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        self.add_converter(H::GROUP, H::KIND, conversion)
    }

    /// Whether any handler was added.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// Whether the server is listening (controller-runtime's `StartedChecker`): the manager's
    /// `/readyz` fails until it is.
    pub fn is_started(&self) -> bool {
        self.started.load(Ordering::Relaxed)
    }

    /// A check of [`WebhookServer::is_started`] that outlives `self`.
    pub(crate) fn started_checker(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.started)
    }

    /// Prepares the certificate (bootstrap if asked), binds, and serves on a task until it is
    /// aborted; returns the task and the bound address.
    ///
    /// # Errors
    /// [`Error::CertificateUnreadable`], [`Error::CaBundleInjectionFailed`] or
    /// [`Error::BindFailed`].
    pub async fn start(
        &self,
        client: &Client,
        options: &WebhookOptions,
    ) -> Result<(JoinHandle<()>, SocketAddr), Error> {
        if let Some(bootstrap) = &options.self_signed {
            bootstrap.ensure(client, &options.cert_dir).await?;
        }
        let watcher = CertWatcher::new(
            &options.cert_dir.join(&options.cert_name),
            &options.cert_dir.join(&options.key_name),
        )?;
        let acceptor = acceptor(watcher)?;
        let addr = options.bind_address;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::BindFailed { addr, source })?;
        let bound = listener.local_addr().unwrap_or(addr);
        tracing::info!(addr = %bound, paths = ?self.routes.keys().collect::<Vec<_>>(), "serving webhooks");
        let routes = Arc::new(Routes {
            handlers: self.routes.clone(),
            metrics: self.metrics.clone(),
        });
        self.started.store(true, Ordering::Relaxed);
        let serving = Serving(Arc::clone(&self.started));
        let task = tokio::spawn(async move {
            let _serving = serving;
            serve(listener, acceptor, routes).await;
        });
        Ok((task, bound))
    }
}

/// Clears the "started" flag when the serving task ends or is aborted.
struct Serving(Arc<AtomicBool>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

fn acceptor(watcher: CertWatcher) -> Result<TlsAcceptor, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::CertificateUnreadable {
            file: PathBuf::new(),
            reason: e.to_string(),
        })?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(watcher));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// What every connection shares.
struct Routes {
    handlers: HashMap<String, Arc<dyn Handler>>,
    metrics: WebhookMetrics,
}

async fn serve(listener: TcpListener, acceptor: TlsAcceptor, routes: Arc<Routes>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accepting a webhook connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let (acceptor, routes) = (acceptor.clone(), Arc::clone(&routes));
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(error) => return tracing::debug!(%error, "webhook TLS handshake failed"),
            };
            let service = service_fn(move |request: Request<Incoming>| {
                let routes = Arc::clone(&routes);
                async move { Ok::<_, Infallible>(routes.answer(request).await) }
            });
            let builder = auto::Builder::new(TokioExecutor::new());
            if let Err(error) = builder.serve_connection(TokioIo::new(tls), service).await {
                tracing::debug!(%error, "webhook connection ended with an error");
            }
        });
    }
}

impl Routes {
    async fn answer(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let path = request.uri().path().to_owned();
        let Some(handler) = self.handlers.get(&path) else {
            return text(StatusCode::NOT_FOUND, format!("no webhook at {path}"));
        };
        if request.method() != http::Method::POST {
            return text(
                StatusCode::METHOD_NOT_ALLOWED,
                "webhooks take POST".to_owned(),
            );
        }
        let started = Instant::now();
        self.metrics.started(&path);
        let response = match Limited::new(request.into_body(), MAX_BODY).collect().await {
            Ok(body) => {
                let answer = handler.handle(&body.to_bytes()).await;
                let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
                let mut response = Response::new(Full::new(Bytes::from(answer.body)));
                *response.status_mut() = status;
                let content_type = if status == StatusCode::OK {
                    "application/json"
                } else {
                    "text/plain; charset=utf-8"
                };
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static(content_type),
                );
                response
            }
            Err(error) if error.is::<LengthLimitError>() => text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is larger than {MAX_BODY} bytes"),
            ),
            // The client went away or broke the framing mid-body.
            Err(error) => text(
                StatusCode::BAD_REQUEST,
                format!("reading the body failed: {error}"),
            ),
        };
        self.metrics
            .finished(&path, response.status().as_u16(), started.elapsed());
        response
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
