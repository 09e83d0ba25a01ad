//! The controller's HTTP endpoints: `/healthz`, `/readyz` (kubelet probes) and `/metrics`
//! (Prometheus), served with hyper on the addresses given by `--health-addr` and `--metrics-addr`.
//!
//! # Probe semantics
//! - `/healthz` answers 200 while the process serves requests at all: the liveness probe restarts
//!   a wedged process, nothing more. It does not depend on the API server, so an API outage does
//!   not make kubelet kill every replica.
//! - `/readyz` answers 200 once the informer caches have synced and until shutdown begins. A
//!   standby replica (not leader) syncs its caches too, so it is ready and takes over quickly.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::metrics::Metrics;

/// Readiness shared between the controller (which sets it) and the `/readyz` endpoint.
#[derive(Clone, Debug, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
}

impl Health {
    /// Marks the controller ready (caches synced) or not (shutting down).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Whether `/readyz` currently answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }
}

/// What one listener serves: health endpoints, metrics, or both.
#[derive(Clone, Default)]
pub struct Endpoints {
    health: Option<Health>,
    metrics: Option<Metrics>,
}

impl Endpoints {
    /// Serves `/healthz` and `/readyz`.
    pub fn health(health: Health) -> Endpoints {
        Endpoints {
            health: Some(health),
            metrics: None,
        }
    }

    /// Serves `/metrics`.
    pub fn metrics(metrics: Metrics) -> Endpoints {
        Endpoints {
            health: None,
            metrics: Some(metrics),
        }
    }

    /// Answers one request path. Pure, so tests need no socket.
    pub fn respond(&self, path: &str) -> (StatusCode, String) {
        match (path, &self.health, &self.metrics) {
            ("/healthz" | "/livez", Some(_), _) => (StatusCode::OK, "ok\n".to_owned()),
            ("/readyz", Some(health), _) if health.is_ready() => {
                (StatusCode::OK, "ok\n".to_owned())
            }
            ("/readyz", Some(_), _) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "informer caches not synced (or shutting down)\n".to_owned(),
            ),
            ("/metrics", _, Some(metrics)) => (StatusCode::OK, metrics.render()),
            _ => (StatusCode::NOT_FOUND, "not found\n".to_owned()),
        }
    }

    /// Accepts connections on `listener` until the task is dropped or aborted. Each connection is
    /// served on its own task (HTTP/1.1; probes and scrapers do not need HTTP/2).
    pub async fn serve(self, listener: TcpListener) {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // EMFILE and friends: keep serving once the pressure is gone.
                    tracing::warn!(%error, "accepting an endpoint connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let endpoints = self.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let (status, body) = endpoints.respond(request.uri().path());
                    async move { Ok::<_, Infallible>(text_response(status, body)) }
                });
                if let Err(error) = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%error, "endpoint connection ended with an error");
                }
            });
        }
    }
}

fn text_response(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[test]
    fn readyz_follows_the_ready_flag_and_healthz_does_not() {
        let health = Health::default();
        let endpoints = Endpoints::health(health.clone());
        assert_eq!(endpoints.respond("/healthz").0, StatusCode::OK);
        assert_eq!(
            endpoints.respond("/readyz").0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        health.set_ready(true);
        assert_eq!(endpoints.respond("/readyz").0, StatusCode::OK);
        health.set_ready(false);
        assert_eq!(
            endpoints.respond("/readyz").0,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn each_listener_serves_only_what_it_was_given() {
        let health_only = Endpoints::health(Health::default());
        assert_eq!(health_only.respond("/metrics").0, StatusCode::NOT_FOUND);
        let metrics_only = Endpoints::metrics(Metrics::default());
        assert_eq!(metrics_only.respond("/healthz").0, StatusCode::NOT_FOUND);
        let (status, body) = metrics_only.respond("/metrics");
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("image_police_reconcile_total"));
    }

    #[tokio::test]
    async fn serves_probes_over_http() {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let health = Health::default();
        health.set_ready(true);
        let server = tokio::spawn(Endpoints::health(health).serve(listener));
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        stream
            .write_all(b"GET /readyz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut reply = String::new();
        stream
            .read_to_string(&mut reply)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        server.abort();
        assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
        assert!(reply.ends_with("ok\n"), "{reply}");
    }
}
