//! What every test with a real-cluster variant needs, written once: the client of the cluster
//! named by `KUBEGEN_E2E_KUBECONFIG`, and a namespace of the scenario's own that goes away
//! whatever the scenario asserted.
//!
//! A real-cluster variant is an `#[ignore]`d test whose name ends in `_on_cluster`. Without a
//! cluster, nextest reports it as skipped with its reason; `scripts/test.sh` runs the variants
//! when the variable is set. Asked to run one without the variable (`--run-ignored` by hand),
//! [`cluster_client`] fails it rather than letting it pass: a test that never reached a cluster
//! has checked nothing.

use std::future::Future;
use std::path::PathBuf;

use k8s_openapi::api::core::v1::Namespace;
use kubegen_client::{Client, Config, CreateOptions, DeleteOptions, LoadOptions, ResourceClient};

/// The variable naming the kubeconfig of the real cluster (an administrator's).
pub const KUBECONFIG_VAR: &str = "KUBEGEN_E2E_KUBECONFIG";

/// The path in [`KUBECONFIG_VAR`].
///
/// # Panics
/// When the variable is unset, saying how to set it.
pub fn kubeconfig_path() -> PathBuf {
    match std::env::var_os(KUBECONFIG_VAR) {
        Some(path) => PathBuf::from(path),
        None => panic!(
            "set {KUBECONFIG_VAR} to a kubeconfig to run this against a real cluster \
             (scripts/test.sh runs the _on_cluster tests when it is set)"
        ),
    }
}

/// A client of the cluster in [`KUBECONFIG_VAR`].
///
/// # Panics
/// When the variable is unset, or the kubeconfig it names cannot be loaded (naming the file).
pub async fn cluster_client() -> Client {
    let path = kubeconfig_path();
    let config = Config::load(&LoadOptions::default().kubeconfig_path(path.clone()))
        .await
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    Client::new(config).unwrap_or_else(|e| panic!("a client for {}: {e}", path.display()))
}

/// Runs `scenario(client, namespace)` in a fresh namespace named `<prefix>` plus a random
/// suffix (`generateName`), then deletes the namespace, also when the scenario panicked (whose
/// panic is then resumed). The scenario runs on its own task, so a panic in it cannot skip the
/// deletion.
pub async fn in_scratch_namespace<T, F, Fut>(client: &Client, prefix: &str, scenario: F) -> T
where
    F: FnOnce(Client, String) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let namespaces = ResourceClient::<Namespace>::cluster(client.clone());
    let mut namespace = Namespace::default();
    namespace.metadata.generate_name = Some(prefix.to_owned());
    let created = namespaces
        .create(&namespace, &CreateOptions::default())
        .await
        .unwrap_or_else(|e| panic!("creating a namespace {prefix}…: {e}"));
    let name = created
        .metadata
        .name
        .unwrap_or_else(|| panic!("the server named no namespace for generateName {prefix}"));
    let outcome = tokio::spawn(scenario(client.clone(), name.clone())).await;
    if let Err(e) = namespaces.delete(&name, &DeleteOptions::default()).await {
        panic!("deleting namespace {name}: {e}");
    }
    match outcome {
        Ok(value) => value,
        Err(failure) => std::panic::resume_unwind(failure.into_panic()),
    }
}

/// How long [`poll`] waits before it fails the test: long enough for a real controller-manager
/// and a loaded CI machine, short enough that a hang is reported.
pub const POLL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Calls `attempt` every 50 ms until it returns `Some`, failing the test after
/// [`POLL_DEADLINE`] with `what` in the message.
///
/// # Panics
/// When the deadline passes.
pub async fn poll<T, F, Fut>(what: &str, mut attempt: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + POLL_DEADLINE;
    loop {
        if let Some(value) = attempt().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Every `K` in namespace `ns`, listed in one request.
///
/// # Panics
/// When the list fails: the test fails naming the kind and the namespace.
pub async fn list_in<K: kubegen_client::ApiObject>(client: &Client, ns: &str) -> Vec<K> {
    ResourceClient::<K>::namespaced(client.clone(), ns)
        .list(&kubegen_client::ListOptions::default())
        .await
        .unwrap_or_else(|e| panic!("list {} in {ns}: {e}", K::kind(&())))
        .items
}

/// Waits until each of `nodes` is `Ready` and no longer carries the
/// `node.kubernetes.io/not-ready` taint, which every new Node gets at registration and a
/// cluster's node-lifecycle controller lifts once it is Ready: only then are Pods scheduled
/// there.
///
/// # Panics
/// After [`POLL_DEADLINE`] for a Node that is not yet schedulable.
pub async fn nodes_schedulable(client: &Client, nodes: &[String]) {
    use k8s_openapi::api::core::v1::Node;
    let api = ResourceClient::<Node>::cluster(client.clone());
    for name in nodes {
        poll(
            &format!("Node {name} to be Ready without the not-ready taint"),
            || async {
                let node = api
                    .get(name, &kubegen_client::GetOptions::default())
                    .await
                    .ok()?;
                let ready = node
                    .status
                    .as_ref()?
                    .conditions
                    .as_ref()?
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                let tainted = node
                    .spec
                    .as_ref()
                    .and_then(|s| s.taints.as_ref())
                    .is_some_and(|t| t.iter().any(|t| t.key == "node.kubernetes.io/not-ready"));
                (ready && !tainted).then_some(())
            },
        )
        .await;
    }
}
