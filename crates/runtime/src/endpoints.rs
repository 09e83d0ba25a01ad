//! The controller's HTTP endpoints: `/healthz`, `/readyz` (kubelet probes) and `/metrics`
//! (Prometheus), served with hyper by the [`crate::Manager`] on the addresses given by
//! `--health-probe-bind-address` and `--metrics-bind-address` (controller-runtime's flags).
//!
//! # Probe semantics
//! - `/healthz` answers 200 while the process serves requests at all: the liveness probe restarts
//!   a wedged process, nothing more. It does not depend on the API server, so an API outage does
//!   not make kubelet kill every replica. The one exception, as with client-go's
//!   `leaderelection.HealthzAdaptor`: with `--leader-elect`, a replica that believes it leads but
//!   has not renewed its Lease for longer than the lease duration plus a tolerance answers 500.
//!   Another replica may already lead, so this one must not keep acting; a restart makes it a
//!   fresh candidate. Followers, and an outage that also stops every other replica, are healthy.
//! - `/readyz` answers 200 once the informer caches have synced and until shutdown begins, and
//!   (with webhooks) while the webhook server is serving: the webhook Service routes the API
//!   server's calls only to ready pods. A standby replica (not leader) syncs its caches and
//!   serves webhooks too, so it is ready and takes over quickly.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::TcpListener;

use crate::metrics::{CONTENT_TYPE as METRICS_CONTENT_TYPE, ProcessMetrics};

/// How much longer than the lease duration a leader may go without renewing before `/healthz`
/// fails (the value client-go's controllers commonly give `HealthzAdaptor`).
pub const LEADER_RENEWAL_TOLERANCE: Duration = Duration::from_secs(20);

/// An extra liveness check consulted by `/healthz`: `Err(reason)` fails the probe.
pub type LivenessCheck = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Readiness and liveness shared between the controller (which sets them) and the `/readyz` and
/// `/healthz` endpoints.
#[derive(Clone, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
    /// Consulted by `/healthz` when set: the leader elector's renewal check while leader
    /// election runs, `None` otherwise.
    liveness: Arc<Mutex<Option<LivenessCheck>>>,
    /// Named checks `/readyz` also consults once the caches are synced (the webhook server's
    /// "serving" check, controller-runtime's `StartedChecker`).
    readiness: Arc<Mutex<Vec<(String, ReadinessCheck)>>>,
    /// Lines `/readyz` adds to its answer without judging readiness by them (the
    /// multi-cluster fleet's state of each member cluster).
    details: Arc<Mutex<Vec<ReadinessDetail>>>,
}

/// Lines of detail `/readyz` prints after its verdict (one per member cluster, say).
pub type ReadinessDetail = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// An extra readiness check consulted by `/readyz`: `false` fails the probe.
pub type ReadinessCheck = Arc<dyn Fn() -> bool + Send + Sync>;

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("ready", &self.is_ready())
            .field("liveness_check", &self.liveness.lock().is_some())
            .finish()
    }
}

impl Health {
    /// Installs (or with `None` removes) the check that `/healthz` consults.
    pub fn set_liveness_check(&self, check: Option<LivenessCheck>) {
        *self.liveness.lock() = check;
    }

    /// What `/healthz` reports: `Ok` unless a liveness check is installed and fails.
    ///
    /// # Errors
    /// The failing check's reason.
    pub fn check_live(&self) -> Result<(), String> {
        // Clone out of the lock: the check may take its own locks.
        let check = self.liveness.lock().clone();
        check.map_or(Ok(()), |check| check())
    }

    /// Marks the controller ready (caches synced) or not (shutting down).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    /// Adds a named check that `/readyz` consults after the caches' (`mgr.AddReadyzCheck`).
    pub fn add_readiness_check(&self, name: &str, check: ReadinessCheck) {
        self.readiness.lock().push((name.to_owned(), check));
    }

    /// Adds lines that `/readyz` prints after its verdict, without failing it: a member cluster
    /// that stops answering is isolated, and the manager stays ready for the others.
    pub fn add_readiness_detail(&self, detail: ReadinessDetail) {
        self.details.lock().push(detail);
    }

    /// The detail lines `/readyz` prints now.
    pub fn readiness_detail(&self) -> Vec<String> {
        let details = self.details.lock().clone();
        details.iter().flat_map(|detail| detail()).collect()
    }

    /// Whether `/readyz` currently answers 200.
    pub fn is_ready(&self) -> bool {
        self.check_ready().is_ok()
    }

    /// What `/readyz` reports: `Ok` once the caches synced and every added check passes.
    ///
    /// # Errors
    /// What is not ready yet.
    pub fn check_ready(&self) -> Result<(), String> {
        if !self.ready.load(Ordering::Relaxed) {
            return Err("informer caches not synced (or shutting down)".to_owned());
        }
        let checks = self.readiness.lock().clone();
        match checks.iter().find(|(_, check)| !check()) {
            Some((name, _)) => Err(format!("{name} not ready")),
            None => Ok(()),
        }
    }
}

/// What one listener serves: health endpoints, metrics, or both.
#[derive(Clone, Default)]
pub struct Endpoints {
    health: Option<Health>,
    metrics: Option<ProcessMetrics>,
}

impl Endpoints {
    /// Serves `/healthz` and `/readyz`.
    pub fn health(health: Health) -> Endpoints {
        Endpoints {
            health: Some(health),
            metrics: None,
        }
    }

    /// Serves `/metrics`: every family registered in `metrics`, as OpenMetrics text.
    pub fn metrics(metrics: ProcessMetrics) -> Endpoints {
        Endpoints {
            health: None,
            metrics: Some(metrics),
        }
    }

    /// Answers one request path with its status, `Content-Type` and body. Pure, so tests need
    /// no socket.
    pub fn respond(&self, path: &str) -> (StatusCode, &'static str, String) {
        let text = |status, body: &str| (status, TEXT_CONTENT_TYPE, body.to_owned());
        match (path, &self.health, &self.metrics) {
            ("/healthz" | "/livez", Some(health), _) => match health.check_live() {
                Ok(()) => text(StatusCode::OK, "ok\n"),
                Err(reason) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("unhealthy: {reason}\n"),
                ),
            },
            ("/readyz", Some(health), _) => {
                let (status, mut body) = match health.check_ready() {
                    Ok(()) => (StatusCode::OK, "ok\n".to_owned()),
                    Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
                };
                for line in health.readiness_detail() {
                    body.push_str(&line);
                    body.push('\n');
                }
                text(status, &body)
            }
            ("/metrics", _, Some(metrics)) => {
                (StatusCode::OK, METRICS_CONTENT_TYPE, metrics.encode())
            }
            _ => text(StatusCode::NOT_FOUND, "not found\n"),
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
                    let (status, content_type, body) = endpoints.respond(request.uri().path());
                    async move { Ok::<_, Infallible>(response(status, content_type, body)) }
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

/// The `Content-Type` of the probe answers.
const TEXT_CONTENT_TYPE: &str = "text/plain; charset=utf-8";

fn response(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::metrics::ProcessMetrics;

    /// Metrics with one sample: this replica leads the Lease `test`.
    fn leading() -> ProcessMetrics {
        let metrics = ProcessMetrics::default();
        metrics.set_leader("test", true);
        metrics
    }

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
    fn readyz_prints_detail_lines_without_judging_by_them() {
        let health = Health::default();
        health.add_readiness_detail(Arc::new(|| {
            vec![
                "[+]cluster/a ok".to_owned(),
                "[-]cluster/b unreachable".to_owned(),
            ]
        }));
        let endpoints = Endpoints::health(health.clone());
        health.set_ready(true);
        assert_eq!(
            endpoints.respond("/readyz"),
            (
                StatusCode::OK,
                TEXT_CONTENT_TYPE,
                "ok\n[+]cluster/a ok\n[-]cluster/b unreachable\n".to_owned()
            )
        );
        health.set_ready(false);
        let (status, _, body) = endpoints.respond("/readyz");
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            body.ends_with("[+]cluster/a ok\n[-]cluster/b unreachable\n"),
            "{body}"
        );
    }

    #[test]
    fn healthz_fails_while_the_liveness_check_fails() {
        let health = Health::default();
        let endpoints = Endpoints::health(health.clone());
        let overdue = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&overdue);
        health.set_liveness_check(Some(Arc::new(move || {
            if flag.load(Ordering::Relaxed) {
                Err("leader lease not renewed for 36s".to_owned())
            } else {
                Ok(())
            }
        })));
        assert_eq!(
            endpoints.respond("/healthz"),
            (StatusCode::OK, TEXT_CONTENT_TYPE, "ok\n".to_owned())
        );
        overdue.store(true, Ordering::Relaxed);
        assert_eq!(
            endpoints.respond("/healthz"),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                TEXT_CONTENT_TYPE,
                "unhealthy: leader lease not renewed for 36s\n".to_owned()
            )
        );
        assert_eq!(
            endpoints.respond("/livez").0,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        // Readiness is a separate question.
        health.set_ready(true);
        assert_eq!(endpoints.respond("/readyz").0, StatusCode::OK);
        let serving = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&serving);
        health.add_readiness_check("webhook", Arc::new(move || flag.load(Ordering::Relaxed)));
        assert_eq!(
            endpoints.respond("/readyz"),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT_CONTENT_TYPE,
                "webhook not ready\n".to_owned()
            )
        );
        serving.store(true, Ordering::Relaxed);
        assert_eq!(endpoints.respond("/readyz").0, StatusCode::OK);
        health.set_liveness_check(None);
        assert_eq!(endpoints.respond("/healthz").0, StatusCode::OK);
    }

    #[test]
    fn each_listener_serves_only_what_it_was_given() {
        let health_only = Endpoints::health(Health::default());
        assert_eq!(health_only.respond("/metrics").0, StatusCode::NOT_FOUND);
        let metrics_only = Endpoints::metrics(leading());
        assert_eq!(metrics_only.respond("/healthz").0, StatusCode::NOT_FOUND);
        let (status, content_type, body) = metrics_only.respond("/metrics");
        assert_eq!(
            (status, content_type),
            (StatusCode::OK, METRICS_CONTENT_TYPE)
        );
        let scrape = prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_owned())))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            scrape.docs.contains_key("leader_election_master_status"),
            "{body}"
        );
    }

    /// Sends `GET path` to a fresh server for `endpoints` and returns the raw HTTP reply.
    async fn get(endpoints: Endpoints, path: &str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let server = tokio::spawn(endpoints.serve(listener));
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut reply = String::new();
        stream
            .read_to_string(&mut reply)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        server.abort();
        reply
    }

    #[tokio::test]
    async fn serves_probes_over_http() {
        let health = Health::default();
        health.set_ready(true);
        let reply = get(Endpoints::health(health), "/readyz").await;
        assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
        assert!(reply.ends_with("ok\n"), "{reply}");
    }

    #[tokio::test]
    async fn serves_metrics_as_openmetrics_text_over_http() {
        let reply = get(Endpoints::metrics(leading()), "/metrics").await;
        let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        let content_type = head
            .lines()
            .filter_map(|line| line.split_once(": "))
            .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            .map(|(_, value)| value);
        assert_eq!(content_type, Some(METRICS_CONTENT_TYPE));
        let scrape = prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_owned())))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            scrape.docs.contains_key("leader_election_master_status"),
            "{body}"
        );
    }
}
