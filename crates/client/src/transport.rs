//! [`Transport`], the seam below [`Client`](crate::Client), and [`HttpTransport`], the real one:
//! HTTP(S) to an API server over a pooled hyper client.
//!
//! Mirrors client-go `rest/transport.go` + `transport/` (TLS, bearer round tripper) on hyper 1,
//! hyper-util's pooled legacy client and hyper-rustls with the ring provider.
//!
//! # Guarantees
//! - HTTP/2 when the server offers it through ALPN, HTTP/1.1 otherwise. HTTP/2 connections send
//!   keepalive pings (also while idle), so a watch on a dead connection fails instead of hanging.
//! - Connect attempts time out after `Config::connect_timeout`.
//! - The bearer token is added per request from [`Auth`]; a 401 answer invalidates cached
//!   credentials (exec plugin output, token file) so the next request fetches fresh ones.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, Uri};
use http_body_util::Full;
use hyper_rustls::{FixedServerNameResolver, HttpsConnector};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::ServerName;

use crate::auth::Auth;
use crate::body::Body;
use crate::config::Config;
use crate::error::{Error, Result, error_chain};
use crate::tls;

/// The one seam below [`Client`](crate::Client): sends one request, returns the response with a
/// streaming body.
///
/// The real implementation speaks HTTP(S) to an API server; a fake clientset or a test plugs in an
/// in-process server here. The request URI is relative (path and query).
///
/// # Errors
/// Only failures to get a response at all ([`Error::Connect`], [`Error::RequestFailed`]); HTTP
/// error statuses are returned as responses and mapped to errors by the `Client`.
pub trait Transport: Send + Sync + 'static {
    /// Sends `request` and resolves once the response headers have arrived.
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>>;

    /// Sends an HTTP/1.1 `Upgrade` request (a WebSocket handshake for exec, attach and
    /// port-forward) and resolves with the response. A `101 Switching Protocols` response carries
    /// the upgraded connection as hyper's `OnUpgrade` in its extensions (`hyper::upgrade::on`
    /// takes it from there); any other status is an answer whose body explains the refusal.
    ///
    /// The default refuses: a transport that cannot hand over its connection (a fake that only
    /// answers requests) need not implement it.
    ///
    /// # Errors
    /// [`Error::UpgradeFailed`] from the default; otherwise as [`Transport::send`].
    fn upgrade(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        let url = request.uri().to_string();
        Box::pin(async move {
            Err(Error::UpgradeFailed {
                url,
                message: "this transport cannot upgrade connections".to_owned(),
            })
        })
    }
}

/// HTTP/2 keepalive ping timeout: a connection whose ping is not answered this fast is closed.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// Sends requests to one API server.
pub(crate) struct HttpTransport {
    client: HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// HTTP/1.1 only (ALPN offers only `http/1.1`), for upgrades: the API server upgrades exec,
    /// attach and port-forward connections to WebSockets only over HTTP/1.1, as client-go's
    /// dialers for them do too. Upgraded connections never return to its pool.
    upgrade_client: HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// Scheme, authority and path prefix of the server (e.g. a proxy's `/k8s/clusters/c-1`).
    /// Invariant: the path has no trailing slash.
    base: Uri,
    auth: Auth,
}

impl HttpTransport {
    /// Builds the connection pool for `config`. No connection is opened yet.
    ///
    /// # Errors
    /// [`Error::Tls`] for unusable TLS material.
    pub(crate) fn new(config: &Config) -> Result<HttpTransport> {
        let base = config.cluster_url().clone();
        let tls_config = if base.scheme_str() == Some("https") {
            let exec_cert = match &config.auth {
                Auth::Exec(exec) => Some(exec.client_cert()),
                _ => None,
            };
            tls::client_config(&config.tls, exec_cert)?
        } else {
            // Plain http: no TLS handshake will happen; an empty trust store is never consulted.
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
        };
        let client = HyperClient::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .http2_keep_alive_interval(config.keepalive_interval)
            .http2_keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .http2_keep_alive_while_idle(true)
            .build(connector(config, tls_config.clone(), true)?);
        let upgrade_client = HyperClient::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector(config, tls_config, false)?);
        Ok(HttpTransport {
            client,
            upgrade_client,
            base,
            auth: config.auth.clone(),
        })
    }

    /// Joins the request's path and query onto the server URL.
    fn absolute(&self, relative: &Uri) -> Result<Uri> {
        let prefix = self.base.path().trim_end_matches('/');
        let path_and_query = relative.path_and_query().map_or("/", |p| p.as_str());
        let mut parts = self.base.clone().into_parts();
        parts.path_and_query = Some(
            format!("{prefix}{path_and_query}")
                .parse()
                .map_err(|e| Error::BuildRequest(format!("{path_and_query}: {e}")))?,
        );
        Uri::from_parts(parts).map_err(|e| Error::BuildRequest(format!("{path_and_query}: {e}")))
    }

    async fn send_one(
        &self,
        request: Request<Bytes>,
        client: &HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>,
    ) -> Result<Response<Body>> {
        let verb = request.method().to_string();
        let (mut parts, body) = request.into_parts();
        parts.uri = self.absolute(&parts.uri)?;
        let url = parts.uri.to_string();
        if let Some(header) = self.auth.header().await? {
            parts.headers.insert(http::header::AUTHORIZATION, header);
        }
        let response = client
            .request(Request::from_parts(parts, Full::new(body)))
            .await
            .map_err(|e| {
                let message = error_chain(&e);
                if e.is_connect() {
                    Error::Connect {
                        url: url.clone(),
                        message,
                    }
                } else {
                    Error::RequestFailed {
                        verb: verb.clone(),
                        url: url.clone(),
                        message,
                    }
                }
            })?;
        if response.status() == http::StatusCode::UNAUTHORIZED {
            self.auth.invalidate();
        }
        Ok(response.map(Body::new))
    }
}

impl Transport for HttpTransport {
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        Box::pin(self.send_one(request, &self.client))
    }

    fn upgrade(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>>> + Send + '_>> {
        Box::pin(self.send_one(request, &self.upgrade_client))
    }
}

/// The TCP + TLS connector of `config`'s server; `http2` lets ALPN offer `h2` besides
/// `http/1.1`.
fn connector(
    config: &Config,
    tls_config: rustls::ClientConfig,
    http2: bool,
) -> Result<HttpsConnector<HttpConnector>> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(config.connect_timeout));
    http.set_nodelay(true);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config)
        .https_or_http();
    let builder = match &config.tls.server_name {
        Some(name) => {
            let name = ServerName::try_from(name.clone())
                .map_err(|e| Error::Tls(format!("tls-server-name {name:?}: {e}")))?;
            builder.with_server_name_resolver(FixedServerNameResolver::new(name))
        }
        None => builder,
    };
    let builder = builder.enable_http1();
    Ok(if http2 {
        builder.enable_http2().wrap_connector(http)
    } else {
        builder.wrap_connector(http)
    })
}
