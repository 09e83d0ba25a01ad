//! [`TestServer`]: an [`ApiServer`] behind a real socket on 127.0.0.1 (HTTP/1.1 and HTTP/2, plain
//! or TLS), plus a kubeconfig pointing at it. Dropping it closes the listener and every connection,
//! which ends open watch streams.

use std::convert::Infallible;
use std::path::Path;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::apiserver::ApiServer;
use crate::error::Error;
use crate::faults::Faults;
use crate::in_process::InProcess;
use crate::options::ServerOptions;
use crate::pipeline::MAX_REQUEST_BODY;
use crate::tls;

/// A running API server on 127.0.0.1. Shuts down on drop.
///
/// ```no_run
/// # async fn demo() {
/// let server = kubegen_testserver::TestServer::start().await;
/// let kubeconfig = server.kubeconfig_yaml(); // point any client at it
/// # }
/// ```
pub struct TestServer {
    api: ApiServer,
    url: String,
    ca_pem: Option<String>,
    token: Option<String>,
    /// Set to true on drop; every connection task watches it.
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
    /// The controller-manager's task, when it runs.
    controller_manager: Option<JoinHandle<()>>,
    /// The node simulator's task, when it runs.
    node_simulator: Option<JoinHandle<()>>,
}

/// Starts the controller-manager against `server` as an administrator; it stops when `shutdown`
/// turns true (on [`TestServer::stop`] or drop).
fn spawn_controller_manager(server: &TestServer) -> JoinHandle<()> {
    let options = kubegen_controller_manager::ControllerManagerOptions::default()
        .root_ca_pem(server.ca_pem.clone());
    let manager =
        kubegen_controller_manager::ControllerManager::new(server.in_process_client(), options);
    let mut stop = server.shutdown.subscribe();
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
        };
        if let Err(e) = manager.run(stopped).await {
            tracing::warn!(error = %e, "the controller-manager stopped");
        }
    })
}

/// Starts the node simulator against `server` as an administrator; it stops when `shutdown`
/// turns true (on [`TestServer::stop`] or drop).
fn spawn_node_simulator(
    server: &TestServer,
    options: kubegen_nodesim::NodeSimOptions,
) -> JoinHandle<()> {
    let simulator = kubegen_nodesim::NodeSimulator::new(server.in_process_client(), options);
    let mut stop = server.shutdown.subscribe();
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
        };
        if let Err(e) = simulator.run(stopped).await {
            tracing::warn!(error = %e, "the node simulator stopped");
        }
    })
}

/// Saves the server's objects into `dir` shortly after changes (at most every 200 ms) until the
/// server drops (which saves once more, see `Drop`).
fn spawn_saver(server: &TestServer, dir: std::path::PathBuf) {
    let api = server.api.clone();
    let mut changes = api.inner.storage.subscribe();
    let mut stop = server.shutdown.subscribe();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { break },
                _ = stop.wait_for(|stopped| *stopped) => break,
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            changes.mark_unchanged();
            if let Err(e) = api.save(&dir) {
                tracing::warn!(error = %e, "saving the data directory failed");
            }
        }
    });
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// Plain HTTP on an ephemeral port.
    ///
    /// # Panics
    /// If no port on 127.0.0.1 can be bound (a broken test environment).
    pub async fn start() -> TestServer {
        TestServer::start_with(ServerOptions::default()).await
    }

    /// With options (TLS, bearer token, history size, ...).
    ///
    /// # Panics
    /// If the socket cannot be bound or TLS cannot be set up; use [`TestServer::try_start`] to get
    /// the error instead.
    pub async fn start_with(opts: ServerOptions) -> TestServer {
        match TestServer::try_start(opts).await {
            Ok(server) => server,
            Err(e) => panic!("kubegen-testserver failed to start: {e}"),
        }
    }

    /// Like [`TestServer::start_with`], returning setup errors.
    ///
    /// # Errors
    /// [`Error::BindFailed`], [`Error::TlsSetupFailed`], [`Error::DataDirFailed`].
    pub async fn try_start(opts: ServerOptions) -> Result<TestServer, Error> {
        let port = opts.port;
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|source| Error::BindFailed { port, source })?;
        let address = listener
            .local_addr()
            .map_err(|source| Error::BindFailed { port, source })?;
        let tls = if opts.tls {
            Some(tls::generate(opts.data_dir.as_deref())?)
        } else {
            None
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let token = opts.bearer_token.clone();
        let controller_manager = opts.controller_manager;
        let simulated_nodes = opts.simulated_nodes.clone();
        let data_dir = opts.data_dir.clone();
        let api = match &data_dir {
            Some(dir) => ApiServer::restored(opts, dir)?,
            None => ApiServer::try_new(opts)?,
        };
        *api.inner.address.lock() = address.to_string();
        let (shutdown, stop) = watch::channel(false);
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let acceptor = tls.map(|t| t.acceptor);
        let accept = tokio::spawn(accept_loop(listener, api.clone(), acceptor, stop));
        tracing::info!(url = %format!("{scheme}://{address}"), "kubegen-testserver listening");
        let server = TestServer {
            api,
            url: format!("{scheme}://{address}"),
            ca_pem,
            token,
            shutdown,
            accept,
            controller_manager: None,
            node_simulator: None,
        };
        if let Some(dir) = data_dir {
            spawn_saver(&server, dir);
        }
        let mut server = server;
        if controller_manager {
            server.controller_manager = Some(spawn_controller_manager(&server));
        }
        if let Some(nodes) = simulated_nodes {
            server.node_simulator = Some(spawn_node_simulator(&server, nodes));
        }
        Ok(server)
    }

    /// The base URL, e.g. `http://127.0.0.1:43121`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// A complete kubeconfig (cluster, user, context `kubegen-testserver`, namespace `default`)
    /// with the CA data in TLS mode and the token when one is required.
    pub fn kubeconfig_yaml(&self) -> String {
        let mut cluster = serde_json::json!({"server": self.url});
        if let Some(pem) = &self.ca_pem {
            use base64::Engine;
            cluster["certificate-authority-data"] =
                base64::engine::general_purpose::STANDARD.encode(pem).into();
        }
        let user = match &self.token {
            Some(token) => serde_json::json!({"token": token}),
            None => serde_json::json!({}),
        };
        let name = "kubegen-testserver";
        let config = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": cluster}],
            "users": [{"name": name, "user": user}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
            "current-context": name,
            "preferences": {},
        });
        serde_yaml::to_string(&config).unwrap_or_default()
    }

    /// An administrator's client configuration for this server (what
    /// [`TestServer::kubeconfig_yaml`] says), e.g. for `kubegen_runtime::Manager::new`.
    pub fn config(&self) -> kubegen_client::Config {
        let kubeconfig = kubegen_client::Kubeconfig::parse(&self.kubeconfig_yaml(), Path::new("."));
        let config = kubeconfig.and_then(|kubeconfig| {
            kubegen_client::Config::from_kubeconfig(
                &kubeconfig,
                &kubegen_client::LoadOptions::default(),
            )
        });
        // The kubeconfig is written above from the server's own URL, CA and token.
        #[allow(clippy::expect_used)]
        config.expect("the test server's own kubeconfig is valid")
    }

    /// An administrator's client for this server.
    pub fn client(&self) -> kubegen_client::Client {
        // A client from a valid configuration only fails to build without a TLS provider,
        // which kubegen-client always compiles in.
        #[allow(clippy::expect_used)]
        kubegen_client::Client::new(self.config()).expect("a client for the test server")
    }

    /// An administrator's client that calls this server in-process, for the embedded components
    /// (see [`crate::in_process`]).
    fn in_process_client(&self) -> kubegen_client::Client {
        let transport = InProcess::new(self.api.clone(), self.token.as_deref());
        kubegen_client::Client::with_transport(std::sync::Arc::new(transport), "default")
    }

    /// A client acting as the ServiceAccount `namespace/name`, with a token from the server's
    /// TokenRequest API (what `kubectl create token` asks for). With RBAC on
    /// ([`ServerOptions::rbac`]) it has exactly the permissions bound to the ServiceAccount, as
    /// an operator in a pod has: a test of the operator under its own `deploy/rbac.yaml`.
    ///
    /// # Errors
    /// The TokenRequest failed (no such ServiceAccount), or its answer held no token.
    pub async fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
    ) -> kubegen_client::Result<kubegen_client::Client> {
        use k8s_openapi::api::core::v1::ServiceAccount;
        let accounts =
            kubegen_client::ResourceClient::<ServiceAccount>::namespaced(self.client(), namespace);
        // Read as JSON: k8s-openapi's TokenRequest differs between Kubernetes versions, and
        // this crate compiles for whichever the application picks.
        let request = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
        let create = kubegen_client::CreateOptions::default();
        let issued: serde_json::Value = accounts
            .create_subresource(name, "token", &request, &create)
            .await?;
        let token = issued["status"]["token"].as_str().unwrap_or_default();
        kubegen_client::Client::new(self.config().bearer_token(token))
    }

    /// Writes [`TestServer::kubeconfig_yaml`] to `path`.
    ///
    /// # Errors
    /// The underlying write error.
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig_yaml())
    }

    /// The CA certificate (PEM) in TLS mode.
    pub fn ca_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    /// Fault injection.
    pub fn faults(&self) -> &Faults {
        self.api.faults()
    }

    /// Stops the server gracefully: the controller-manager and the node simulator first (their
    /// informers end their watches while the server still answers), then the listener. Dropping the server stops it
    /// too, without waiting.
    pub async fn stop(mut self) {
        self.shutdown.send_replace(true);
        for task in [self.node_simulator.take(), self.controller_manager.take()]
            .into_iter()
            .flatten()
        {
            let _ = task.await;
        }
    }

    /// The in-process request handler behind the socket (shares the store).
    pub fn api(&self) -> ApiServer {
        self.api.clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // End watch streams cleanly first, so clients see a normal end of stream, not a reset.
        self.api.faults().drop_watches();
        self.shutdown.send_replace(true);
        self.accept.abort();
        if let Some(dir) = &self.api.inner.options.data_dir
            && let Err(e) = self.api.save(dir)
        {
            tracing::warn!(error = %e, "saving the data directory failed");
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    api: ApiServer,
    tls: Option<TlsAcceptor>,
    stop: watch::Receiver<bool>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (api, tls, stop) = (api.clone(), tls.clone(), stop.clone());
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(stream) => serve(stream, peer, api, stop).await,
                    Err(e) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                },
                None => serve(stream, peer, api, stop).await,
            }
        });
    }
}

/// Reads a request body, keeping at most `MAX_REQUEST_BODY + 1` bytes: enough for the handler to
/// see that it is too large and answer 413, without holding an arbitrarily large body in memory.
/// The rest is read and dropped rather than left unread, so the client, still sending, is not
/// reset before it reads the answer. A body that breaks off reads as what arrived.
async fn read_body(mut body: Incoming) -> Bytes {
    let mut kept = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        if let Ok(data) = frame.into_data() {
            let room = (MAX_REQUEST_BODY + 1).saturating_sub(kept.len());
            kept.extend_from_slice(&data[..data.len().min(room)]);
        }
    }
    kept.freeze()
}

/// How long a closing connection may take to finish its in-flight responses.
const DRAIN: Duration = Duration::from_secs(5);

/// Serves one connection until the client closes it or the server stops; on stop, in-flight
/// responses (watches end cleanly, see `Drop`) get `DRAIN` to finish.
async fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    stream: S,
    peer: std::net::SocketAddr,
    api: ApiServer,
    mut stop: watch::Receiver<bool>,
) {
    let service = service_fn(move |request: http::Request<Incoming>| {
        let api = api.clone();
        async move {
            let (mut parts, body) = request.into_parts();
            // The audit log's `sourceIPs`.
            parts.extensions.insert(crate::audit::PeerAddr(peer));
            let bytes = read_body(body).await;
            Ok::<_, Infallible>(api.handle(http::Request::from_parts(parts, bytes)).await)
        }
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        _ = async { stop.wait_for(|stopped| *stopped).await.map(|_| ()) } => {
            connection.as_mut().graceful_shutdown();
            tokio::time::timeout(DRAIN, connection).await.unwrap_or(Ok(()))
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
