//! The e2e harness: a target API server (kubegen-testserver or a real cluster), objects to
//! create, controllers to start, stop and kill, and polling helpers with deadlines.
//!
//! The controllers run as the `image-police` ServiceAccount bound by exactly deploy/sa.yaml and
//! deploy/rbac.yaml, on both targets: the test server runs with authentication and RBAC on, and
//! the harness applies those manifests as the administrator, then hands the controllers a token
//! of the ServiceAccount (TokenRequest, or on servers without it, such as v1.15, the kubeconfig
//! in `KUBEGEN_E2E_SA_KUBECONFIG`). Leader election therefore uses the Role's namespace,
//! `image-police`, with a Lease name unique to the scenario, so scenarios sharing a cluster do not
//! elect each other.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Namespace};
use kubegen_api::police::v1beta1::{WhiteList, WhiteListStatus};
use kubegen_client::{
    Client, Config, DeleteOptions, GetOptions, ListOptions, LoadOptions, ResourceClient,
};
use kubegen_controller::flags::Flags;
use kubegen_controller::run::SERVICE_ACCOUNT;
use kubegen_e2e_support::poll;
use kubegen_runtime::service_account::{issue_token, kubeconfig_with_token};
use kubegen_runtime::{Health, ProcessMetrics, crds, manifests};
use kubegen_testserver::{ServerOptions, TestServer};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::latency_proxy::LatencyProxy;

/// Lease timings of the e2e controllers: short, so takeover tests take seconds.
pub const LEASE_DURATION: Duration = Duration::from_secs(2);
/// Renew deadline of the e2e controllers.
pub const RENEW_DEADLINE: Duration = Duration::from_millis(1500);
/// Retry period of the e2e controllers.
pub const RETRY_PERIOD: Duration = Duration::from_millis(300);
/// How long any wait may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);
/// The name every scenario gives its (first) WhiteList.
pub const WHITELIST: &str = "allowed-images";
/// The administrator's token on the test server.
const ADMIN_TOKEN: &str = "e2e-admin";

/// Where the scenario runs.
pub struct Env {
    /// The in-process server, when not on a real cluster; held so it runs until the scenario ends.
    _server: Option<TestServer>,
    kubeconfig: PathBuf,
    /// Removed on drop when we wrote it.
    owns_kubeconfig: bool,
    /// The controllers' kubeconfig: the ServiceAccount's token.
    controller_kubeconfig: PathBuf,
    /// Removed on drop when we wrote it.
    owns_controller_kubeconfig: bool,
    /// The leader Lease's name, unique to the scenario; it lives in the ServiceAccount's namespace.
    lease: String,
    client: Client,
    /// The server's URL, as the kubeconfig names it.
    server_url: http::Uri,
}

impl Env {
    /// A fresh kubegen-testserver (authentication and RBAC on) with the CRDs and the
    /// controller's ServiceAccount and RBAC installed.
    pub async fn testserver() -> Env {
        Env::testserver_with_rbac(&deploy_dir().join("rbac.yaml")).await
    }

    /// [`Env::testserver`] with the controller's permissions from `rbac` instead of
    /// deploy/rbac.yaml.
    pub async fn testserver_with_rbac(rbac: &Path) -> Env {
        let mut options = ServerOptions::default();
        options.bearer_token = Some(ADMIN_TOKEN.to_owned());
        options.rbac = true;
        let server = TestServer::start_with(options).await;
        let kubeconfig =
            std::env::temp_dir().join(format!("image-police-e2e-{}.kubeconfig", unique()));
        server
            .write_kubeconfig(&kubeconfig)
            .unwrap_or_else(|e| panic!("kubeconfig: {e}"));
        Env::connect(Some(server), kubeconfig, true, rbac).await
    }

    /// The cluster named by `KUBEGEN_E2E_KUBECONFIG` (an administrator's), with the CRDs and the
    /// controller's ServiceAccount and RBAC installed.
    pub async fn cluster() -> Env {
        let kubeconfig = kubegen_e2e_support::kubeconfig_path();
        Env::connect(None, kubeconfig, false, &deploy_dir().join("rbac.yaml")).await
    }

    /// Connects as the administrator, installs the CRDs, deploy/sa.yaml and `rbac`, and gets
    /// the controllers their kubeconfig.
    async fn connect(
        server: Option<TestServer>,
        kubeconfig: PathBuf,
        owns_kubeconfig: bool,
        rbac: &Path,
    ) -> Env {
        let mut load = LoadOptions::default();
        load.kubeconfig_path = Some(kubeconfig.clone());
        let config = Config::load(&load)
            .await
            .unwrap_or_else(|e| panic!("config: {e}"));
        let server_url = config.cluster_url().clone();
        let client = Client::new(config).unwrap_or_else(|e| panic!("client: {e}"));
        install_crds(&client).await;
        let identity = [deploy_dir().join("sa.yaml"), rbac.to_path_buf()];
        manifests::create_from_paths(&client, &identity)
            .await
            .unwrap_or_else(|e| panic!("installing the ServiceAccount and RBAC: {e}"));
        let (controller_kubeconfig, owns_controller_kubeconfig) =
            match std::env::var_os("KUBEGEN_E2E_SA_KUBECONFIG").filter(|_| server.is_none()) {
                Some(path) => (PathBuf::from(path), false),
                None => (service_account_kubeconfig(&client, &kubeconfig).await, true),
            };
        Env {
            _server: server,
            kubeconfig,
            owns_kubeconfig,
            controller_kubeconfig,
            owns_controller_kubeconfig,
            lease: format!("image-police-{}", unique()),
            client,
            server_url,
        }
    }

    /// Creates a namespace unique to this scenario run.
    pub async fn namespace(&self, scenario: &str) -> String {
        let name = format!("e2e-{scenario}-{}", unique());
        self.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
            .await;
        name
    }

    /// Creates `object` (JSON with apiVersion and kind).
    pub async fn create(&self, object: Value) {
        manifests::create_object(&self.client, object)
            .await
            .unwrap_or_else(|e| panic!("create: {e}"));
    }

    /// Starts the binary's main loop on its own runtime, as if in its own process.
    pub async fn start_controller(
        &self,
        name: &str,
        leader_elect: bool,
        namespace: &str,
    ) -> Controller {
        self.start_controller_via(None, name, leader_elect, namespace)
            .await
    }

    /// Starts the binary's main loop sharded over a ring of the scenario's own
    /// (`--sharding-ring`), as deploy/deployment.yaml runs it, without waiting for it to become
    /// ready: for controllers that cannot (an informer the RBAC does not allow to list never
    /// syncs).
    pub async fn spawn_sharded_controller(&self, name: &str, namespace: &str) -> Controller {
        let extra = [
            "--webhook-port=0".to_owned(),
            format!("--sharding-ring={}", self.lease),
        ];
        Controller::spawn(self.flags(None, name, false, namespace, &extra)).await
    }

    /// Starts image-police with its admission webhook served on 127.0.0.1:`port`, the
    /// self-signed bootstrap writing into `cert_dir` and injecting its CA into the
    /// ValidatingWebhookConfiguration `configuration`; waits until it is ready (caches synced,
    /// webhook serving).
    pub async fn start_webhook(
        &self,
        namespace: &str,
        port: u16,
        cert_dir: &Path,
        configuration: &str,
    ) -> Controller {
        let webhook = [
            "--webhook-host=127.0.0.1".to_owned(),
            format!("--webhook-port={port}"),
            format!("--webhook-cert-path={}", cert_dir.display()),
            "--webhook-self-signed".to_owned(),
            format!("--webhook-configuration={configuration}"),
        ];
        let flags = self.flags(None, "webhook", false, namespace, &webhook);
        let controller = Controller::spawn(flags).await;
        controller.wait_ready().await;
        controller
    }

    /// The administrator's client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// A [`LatencyProxy`] in front of the target server.
    pub async fn latency_proxy(&self) -> LatencyProxy {
        let host = self.server_url.host().unwrap_or("127.0.0.1");
        let https = self.server_url.scheme_str() == Some("https");
        let port = self
            .server_url
            .port_u16()
            .unwrap_or(if https { 443 } else { 80 });
        LatencyProxy::start(format!("{host}:{port}")).await
    }

    /// [`Env::start_controller`], talking to the server through `proxy` when given.
    pub async fn start_controller_via(
        &self,
        proxy: Option<&LatencyProxy>,
        name: &str,
        leader_elect: bool,
        namespace: &str,
    ) -> Controller {
        let flags = self.flags(proxy, name, leader_elect, namespace, &[]);
        let controller = Controller::spawn(flags).await;
        controller.wait_ready().await;
        controller
    }

    /// The controller's command line for a scenario; `webhook` holds the `--webhook-*` flags
    /// (none: the controller alone, the webhook server disabled).
    fn flags(
        &self,
        proxy: Option<&LatencyProxy>,
        name: &str,
        leader_elect: bool,
        namespace: &str,
        webhook: &[String],
    ) -> Flags {
        let kubeconfig = format!("--kubeconfig={}", self.controller_kubeconfig.display());
        let (lease_namespace, _) = SERVICE_ACCOUNT;
        let mut args = vec![
            "image-police".to_owned(),
            kubeconfig,
            format!("--namespace={namespace}"),
            "--own-namespace=image-police-e2e".to_owned(),
            "--metrics-bind-address=0".to_owned(),
            "--health-probe-bind-address=0".to_owned(),
            "--cache-sync-timeout=30s".to_owned(),
            format!("--leader-elect-identity={name}-{}", unique()),
            format!("--leader-elect-resource-namespace={lease_namespace}"),
            format!("--leader-elect-resource-name={}", self.lease),
            format!(
                "--leader-elect-lease-duration={}ms",
                LEASE_DURATION.as_millis()
            ),
            format!(
                "--leader-elect-renew-deadline={}ms",
                RENEW_DEADLINE.as_millis()
            ),
            format!("--leader-elect-retry-period={}ms", RETRY_PERIOD.as_millis()),
        ];
        if leader_elect {
            args.push("--leader-elect".to_owned());
        }
        if webhook.is_empty() {
            args.push("--webhook-port=0".to_owned());
        }
        args.extend_from_slice(webhook);
        if let Some(proxy) = proxy {
            let scheme = self.server_url.scheme_str().unwrap_or("https");
            let path = self.server_url.path().trim_end_matches('/');
            args.push(format!("--master={scheme}://{}{path}", proxy.addr()));
        }
        Flags::try_parse_from(args).unwrap_or_else(|e| panic!("flags: {e}"))
    }

    /// Waits until Deployment `namespace/name` no longer exists.
    pub async fn wait_deployment_gone(&self, namespace: &str, name: &str) {
        poll(
            &format!("Deployment {namespace}/{name} deleted"),
            || async { (!self.deployment_exists(namespace, name).await).then_some(()) },
        )
        .await;
    }

    /// Whether Deployment `namespace/name` exists.
    pub async fn deployment_exists(&self, namespace: &str, name: &str) -> bool {
        let deployments = ResourceClient::<Deployment>::namespaced(self.client.clone(), namespace);
        match deployments.get(name, &GetOptions::default()).await {
            Ok(_) => true,
            Err(error) if error.is_not_found() => false,
            Err(error) => panic!("get deployment: {error}"),
        }
    }

    /// Waits until `namespace` holds at least `count` Events with `reason`; returns them.
    pub async fn wait_events(&self, namespace: &str, reason: &str, count: usize) -> Vec<Event> {
        let events = ResourceClient::<Event>::namespaced(self.client.clone(), namespace);
        poll(
            &format!("{count} {reason} Events in {namespace}"),
            || async {
                let list = events.list(&ListOptions::default()).await.ok()?;
                let matching: Vec<Event> = list
                    .items
                    .into_iter()
                    .filter(|e| e.reason.as_deref() == Some(reason))
                    .collect();
                (matching.len() >= count).then_some(matching)
            },
        )
        .await
    }

    /// Waits until the status of WhiteList `namespace/name` satisfies `done`; returns it.
    pub async fn wait_status(
        &self,
        namespace: &str,
        name: &str,
        done: impl Fn(&WhiteListStatus) -> bool,
    ) -> WhiteListStatus {
        let whitelists = ResourceClient::<WhiteList>::namespaced(self.client.clone(), namespace);
        poll(
            &format!("status of WhiteList {namespace}/{name}"),
            || async {
                let status = whitelists
                    .get(name, &GetOptions::default())
                    .await
                    .ok()?
                    .status?;
                done(&status).then_some(status)
            },
        )
        .await
    }

    /// Deletes WhiteList `namespace/name`.
    pub async fn delete_whitelist(&self, namespace: &str, name: &str) {
        let whitelists = ResourceClient::<WhiteList>::namespaced(self.client.clone(), namespace);
        whitelists
            .delete(name, &DeleteOptions::default())
            .await
            .unwrap_or_else(|e| panic!("delete WhiteList {namespace}/{name}: {e}"));
    }

    /// Waits until the scenario's leader Lease's holder satisfies `done` (`None`: no Lease or
    /// released).
    pub async fn wait_lease_holder(&self, done: impl Fn(Option<&str>) -> bool) -> Option<String> {
        let (lease_namespace, _) = SERVICE_ACCOUNT;
        let leases = ResourceClient::<Lease>::namespaced(self.client.clone(), lease_namespace);
        poll("leader Lease holder", || async {
            let holder = match leases.get(&self.lease, &GetOptions::default()).await {
                Ok(lease) => lease
                    .spec
                    .and_then(|s| s.holder_identity)
                    .filter(|h| !h.is_empty()),
                Err(error) if error.is_not_found() => None,
                Err(_) => return None,
            };
            done(holder.as_deref()).then_some(holder)
        })
        .await
    }

    /// Deletes the scenario's namespace and Lease (best effort; matters on a shared cluster).
    pub async fn cleanup(&self, namespace: &str) {
        let namespaces = ResourceClient::<Namespace>::cluster(self.client.clone());
        let _ = namespaces
            .delete(namespace, &DeleteOptions::default())
            .await;
        let (lease_namespace, _) = SERVICE_ACCOUNT;
        let leases = ResourceClient::<Lease>::namespaced(self.client.clone(), lease_namespace);
        let _ = leases.delete(&self.lease, &DeleteOptions::default()).await;
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if self.owns_kubeconfig {
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
        if self.owns_controller_kubeconfig {
            let _ = std::fs::remove_file(&self.controller_kubeconfig);
        }
    }
}

/// One controller "process": its own runtime, so it can be killed without any cleanup.
pub struct Controller {
    runtime: tokio::runtime::Runtime,
    health: Health,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<Result<(), String>>,
    /// The controller's reconcile series.
    pub metrics: kubegen_runtime::metrics::Metrics,
    /// Every metric of the process (what `/metrics` serves).
    pub process: ProcessMetrics,
}

impl Controller {
    /// Builds the manager the binary builds and runs it on a runtime of its own.
    async fn spawn(flags: Flags) -> Controller {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        let (stop, stopped) = oneshot::channel::<()>();
        let (handles, built) = oneshot::channel::<(Health, ProcessMetrics)>();
        let done = runtime.spawn(async move {
            let client = flags.manager.client().await.map_err(|e| format!("{e:#}"))?;
            let manager =
                kubegen_controller::run::manager(&flags, client).map_err(|e| format!("{e:#}"))?;
            let _ = handles.send((manager.health().clone(), manager.metrics().clone()));
            let shutdown = async {
                let _ = stopped.await;
            };
            manager.run(shutdown).await.map_err(|e| format!("{e:#}"))
        });
        let Ok((health, process)) = built.await else {
            let failed = done.await;
            panic!("the controller could not be built: {failed:?}");
        };
        Controller {
            runtime,
            health,
            stop,
            done,
            metrics: process.controller(kubegen_controller::controller::NAME),
            process,
        }
    }

    pub async fn wait_ready(&self) {
        poll("controller ready", || async {
            self.health.is_ready().then_some(())
        })
        .await;
    }

    /// Waits until at least `count` reconciles have finished.
    pub async fn wait_reconciles(&self, count: u64) {
        poll(&format!("{count} reconciles finished"), || async {
            (self.metrics.reconciles_finished() >= count).then_some(())
        })
        .await;
    }

    /// Waits until a reconcile is running.
    pub async fn wait_in_flight(&self) {
        poll("a reconcile in flight", || async {
            (self.metrics.in_flight() > 0).then_some(())
        })
        .await;
    }

    /// SIGTERM: asks the main loop to shut down and returns its result.
    pub async fn stop(self) -> Result<(), String> {
        let _ = self.stop.send(());
        let result = match tokio::time::timeout(DEADLINE, self.done).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(format!("panicked: {join}")),
            Err(_) => Err("did not stop in time".to_owned()),
        };
        self.runtime.shutdown_background();
        result
    }

    /// SIGKILL: drops every task of the controller at once; nothing is released.
    pub fn kill(self) {
        self.runtime.shutdown_background();
    }
}

/// The repository's deploy/ directory.
pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Installs deploy/crd.yaml, or deploy/crd-v1beta1.yaml on a server without
/// apiextensions.k8s.io/v1 (1.15), as discovery says.
async fn install_crds(client: &Client) {
    let deploy = deploy_dir();
    let (v1, v1beta1) = (deploy.join("crd.yaml"), deploy.join("crd-v1beta1.yaml"));
    let (manifest, _) = crds::manifest_for(client, &v1, &v1beta1)
        .await
        .unwrap_or_else(|e| panic!("choosing the CRD manifest: {e}"));
    manifests::create_from_paths(client, &[manifest.to_path_buf()])
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
}

/// A kubeconfig for the same server as `admin_kubeconfig`, with a fresh token of the
/// controller's ServiceAccount; written next to the system temp files.
async fn service_account_kubeconfig(client: &Client, admin_kubeconfig: &Path) -> PathBuf {
    let (namespace, name) = SERVICE_ACCOUNT;
    let token = issue_token(client, namespace, name)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let admin = std::fs::read_to_string(admin_kubeconfig)
        .unwrap_or_else(|e| panic!("{}: {e}", admin_kubeconfig.display()));
    let yaml = kubeconfig_with_token(&admin, &token, namespace).unwrap_or_else(|e| panic!("{e}"));
    let path = std::env::temp_dir().join(format!("image-police-e2e-sa-{}.kubeconfig", unique()));
    std::fs::write(&path, yaml).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// A lower-case suffix unique to this process and moment (valid in DNS-1123 names).
pub fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{:x}{nanos:x}", std::process::id())
}

/// The scenario's WhiteList: nginx 1.27 only.
pub fn whitelist(namespace: &str) -> Value {
    whitelist_allowing(namespace, WHITELIST, "nginx", "1.27")
}

/// WhiteList `namespace/name` allowing `image:tag` only.
pub fn whitelist_allowing(namespace: &str, name: &str, image: &str, tag: &str) -> Value {
    json!({
        "apiVersion": "police.example.com/v1beta1", "kind": "WhiteList",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"images": [{"name": image, "tags": [tag]}]},
    })
}

/// Whether `status` says Ready=True.
pub fn is_ready(status: &WhiteListStatus) -> bool {
    status
        .conditions
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn deployment(namespace: &str, name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "main", "image": image}]}},
        },
    })
}

/// A Deployment the scenario's WhiteList allows.
pub fn allowed_deployment(namespace: &str, name: &str) -> Value {
    deployment(namespace, name, "nginx:1.27")
}

/// A Deployment the scenario's WhiteList forbids (`redis:7.4`).
pub fn forbidden_deployment(namespace: &str, name: &str) -> Value {
    deployment(namespace, name, "redis:7.4")
}
